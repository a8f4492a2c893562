"""yaml.v3's timestamps: Go's ``time.Parse`` on four layouts, written back as JSON writes them.

yaml.v3 (``resolve.go``, ``parseTimestamp``) calls a plain scalar a timestamp when it
starts with four digits and ``-`` and one of these layouts parses it, in order:

* ``2006-1-2T15:4:5.999999999Z07:00`` (and the same with a lower-case ``t``),
* ``2006-1-2 15:4:5.999999999`` (no zone: UTC; the space matches a run of spaces),
* ``2006-1-2``.

Go's parser reads a month, day, hour, minute or second as one or two digits, range-checks
each (the day against the month, leap years included), takes an optional fraction after
``.`` or ``,`` and a zone of ``Z`` or ``±hh:mm``. ``json.Marshal`` then writes RFC 3339 with
nanoseconds: ``2026-01-01T00:00:00Z``, ``…T10:00:00.5+05:00``.

The fraction is read as Go 1.25 reads it (AgentClash ships Go 1.25): every digit is taken
and the value is truncated to nanoseconds (``time/format.go``, the ``stdFracSecond9`` case
of ``parse`` and ``parseNanoseconds``), so ``10:00:00.1234567891Z`` is a timestamp at
``.123456789``. Go 1.19 stopped after nine digits and then failed on the tenth, leaving
such a scalar a string.
"""

from __future__ import annotations

import calendar
import re
from typing import NamedTuple

_CLOCK = re.compile(r"([0-9][0-9]?):([0-9][0-9]?):([0-9][0-9]?)(?:[.,]([0-9]+))?")
_DATE = re.compile(r"([0-9]{4})-([0-9][0-9]?)-([0-9][0-9]?)")
_ZONE = re.compile(r"Z|([+-])([0-9][0-9]):([0-9][0-9])")


class _Date(NamedTuple):
    year: int
    month: int
    day: int
    rest: str


def parse_yaml_timestamp(text: str) -> str | None:
    """The RFC 3339 text of a yaml.v3 timestamp, or None when ``text`` is not one."""
    if len(text) < 5 or text[4] != "-" or any(c not in "0123456789" for c in text[:4]):
        return None
    date = _date(text)
    if date is None:
        return None
    if not date.rest:
        return _format(date, (0, 0, 0, ""), "Z")
    if date.rest[0] in "Tt":
        return _with_zone(date, date.rest[1:])
    if date.rest[0] == " ":
        clock = _clock(date.rest.lstrip(" "))
        return _format(date, clock[0], "Z") if clock and not clock[1] else None
    return None


def _date(text: str) -> _Date | None:
    match = _DATE.match(text)
    if match is None:
        return None
    year, month, day = (int(g) for g in match.groups())
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year or 2000, month)[1]:
        return None
    return _Date(year, month, day, text[match.end():])


def _clock(text: str) -> tuple[tuple[int, int, int, str], str] | None:
    match = _CLOCK.match(text)
    if match is None:
        return None
    hour, minute, second = (int(g) for g in match.groups()[:3])
    if hour >= 24 or minute >= 60 or second >= 60:
        return None
    return (hour, minute, second, match.group(4) or ""), text[match.end():]


def _with_zone(date: _Date, text: str) -> str | None:
    clock = _clock(text)
    if clock is None:
        return None
    zone = _ZONE.fullmatch(clock[1])
    if zone is None:
        return None
    if zone.group(0) == "Z":
        return _format(date, clock[0], "Z")
    sign, hours, minutes = zone.groups()
    if int(hours) > 24 or int(minutes) > 60:
        return None
    total = int(hours) * 60 + int(minutes)
    offset = "Z" if total == 0 else f"{sign}{total // 60:02d}:{total % 60:02d}"
    return _format(date, clock[0], offset)


def _format(date: _Date, clock: tuple[int, int, int, str], zone: str) -> str:
    hour, minute, second, fraction = clock
    fraction = fraction[:9].ljust(9, "0").rstrip("0")
    dot = f".{fraction}" if fraction else ""
    return (f"{date.year:04d}-{date.month:02d}-{date.day:02d}"
            f"T{hour:02d}:{minute:02d}:{second:02d}{dot}{zone}")
