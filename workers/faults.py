"""How the command line answers an ordinary fault: one line, perhaps a ``hint:`` line, and
a documented exit code, never a traceback.

:data:`FAULTS` is the one table: an exception type, the exit code it means and what to
say of it. :class:`FaultyGroup` applies it to every command of ``evalfleet``. An exception
the table does not know is a bug of ours: its traceback is printed, then one line saying
so, and the exit code is :data:`EXIT_INTERNAL`.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import click
import kombu.exceptions
import redis
from pydantic import ValidationError

from evalfleet.scoring import FieldError
from evalfleet.tasks.checking.submissions import SubmissionError

from .hints import spec_hint, submission_hint
from .refusal import EXIT_INVALID, PackRefused

EXIT_OK = 0
#: A verdict that is no (an unsound pack, a worker not live) or nothing found (an unknown
#: run, a result not there yet).
EXIT_NO = 1
# EXIT_INVALID (2, workers.refusal): usage, a missing or unreadable file, a bad pack,
# submission or setting.
#: Redis is unreachable, refuses the password, or refuses writes (full).
EXIT_REDIS = 3
#: The archive (its object store) is unreachable, refuses, or holds an altered object.
EXIT_ARCHIVE = 4
#: A bug of evalfleet's (the traceback is printed): ``EX_SOFTWARE``.
EXIT_INTERNAL = 70

#: The exit codes as ``evalfleet --help`` and docs/operations.md list them.
EXIT_CODES = {EXIT_OK: "success", EXIT_NO: "a verdict of no, or nothing found (unknown run)",
              EXIT_INVALID: "invalid input: usage, a missing or unreadable file, a bad pack, "
                            "submission or setting",
              EXIT_REDIS: "Redis unreachable, refusing the password, or full",
              EXIT_ARCHIVE: "the archive unreadable (its store down or refusing, or an "
                            "altered object)",
              EXIT_INTERNAL: "internal error (a bug: the traceback is printed)"}

#: Where a command keeps the Redis URL it talks to (``ctx.meta``), for the fault line.
REDIS_URL_META = "evalfleet.redis_url"
REDIS_HOW = "start it, or give the fleet's with --redis-url or EVALFLEET_REDIS_URL"


class Answer(NamedTuple):
    """What the command line says of a fault, and the exit code."""

    lines: list[str]
    exit_code: int


Say = Callable[[Any, str], list[str]]
"""What to say of an exception, given the Redis URL the command talks to (or ``""``)."""


def address(url: str) -> str:
    """A Redis URL without its password: ``redis://127.0.0.1:6379/0``."""
    parts = urlsplit(url)
    if not parts.hostname:
        return url or "Redis"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}{parts.path}"


def _unreachable(err: Exception, url: str) -> list[str]:
    said = str(err)
    why = re.search(r"connecting to \S+?\.? (.+?)\.?$", said)
    reason = why.group(1) if why else said.rstrip(".")
    return [f"Redis at {address(url)} is unreachable ({reason}): {REDIS_HOW}"]


def _refused(err: Exception, url: str) -> list[str]:
    said = "refused the password" if urlsplit(url).password else "wants a password"
    return [f"Redis at {address(url)} {said}: give redis://:PASSWORD@HOST:PORT/DB with "
            f"--redis-url or EVALFLEET_REDIS_URL"]


def _kombu(err: Exception, url: str) -> list[str]:
    """kombu's wrapper of a Redis error: what the Redis error says."""
    cause = answer(err.__cause__, url) if err.__cause__ is not None else None
    return cause.lines if cause else _unreachable(err, url)


def _full(err: Exception, url: str) -> list[str]:
    return [f"Redis at {address(url)} refuses writes ({str(err).rstrip('.')}): "
            f"free memory or raise its maxmemory"]


def _not_enqueued(err: Any, url: str) -> list[str]:
    """The platform client's ``SubmitError``: why (its cause's line), and, when part of a
    batch went in, which runs to submit again."""
    cause = answer(err.__cause__, url) if err.__cause__ is not None else None
    line = cause.lines[0] if cause else f"Redis at {address(url)}: {err}"
    if err.enqueued or err.uncertain:
        line += (f"; not enqueued (submit them again): {', '.join(err.not_enqueued)}; "
                 f"enqueued: {', '.join(err.enqueued) or '-'}")
    return [line]


def _archive(err: Exception, url: str) -> list[str]:
    return [f"the archive could not be read: {err}",
            "hint: start the object store, or give the fleet's with --archive-url or "
            "EVALFLEET_ARCHIVE__URL (none: Redis only)"]


def _file(err: OSError, url: str) -> list[str]:
    if err.filename is None:
        return [str(err)]
    return [f"{err.filename}: cannot be read: {err.strerror or err}"]


def _bad_parameter(err: click.BadParameter, url: str) -> list[str]:
    return [f"{err.format_message()} (see --help)"]


def _pack(err: PackRefused, url: str) -> list[str]:
    return _problems(err.path, err.errors, spec_hint)


def _submission(err: SubmissionError, url: str) -> list[str]:
    return _problems(err.path, err.problems, submission_hint)


def _problems(path: Path, problems: list[FieldError],
              hint: Callable[[str, str], str | None]) -> list[str]:
    """A line per problem naming the file and the field (AgentClash's message as it is),
    each unknown field's hint on a line of its own."""
    lines = []
    for problem in problems:
        text = str(problem).removesuffix(f": {path}")  # "cannot be read: …: <path>"
        if problem.field in ("", "manifest"):  # the file as a whole: named by its path
            text = str(problem._replace(field="")).lstrip().removesuffix(f": {path}")
        lines.append(f"{path}: {text}")
        if found := hint(problem.field, problem.message):
            lines.append(found)
    return lines


def _invalid(err: ValidationError, url: str) -> list[str]:
    """A setting (``EVALFLEET_*``) or a document that does not validate."""
    if err.title == "Settings":
        return [f"EVALFLEET_{'__'.join(str(p) for p in e['loc']).upper()}: {e['msg']}"
                for e in err.errors()]
    return [f"{err.title}: {'.'.join(str(p) for p in e['loc'])} {e['msg']}"
            for e in err.errors()]


#: Exception type → (exit code, what to say). The most specific type of an exception (or
#: of what it was raised from) wins.
FAULTS: dict[type[BaseException], tuple[int, Say]] = {
    redis.AuthenticationError: (EXIT_REDIS, _refused),
    redis.ConnectionError: (EXIT_REDIS, _unreachable),
    redis.TimeoutError: (EXIT_REDIS, _unreachable),
    redis.OutOfMemoryError: (EXIT_REDIS, _full),
    redis.ReadOnlyError: (EXIT_REDIS, _full),
    kombu.exceptions.OperationalError: (EXIT_REDIS, _kombu),
    click.BadParameter: (EXIT_INVALID, _bad_parameter),
    OSError: (EXIT_INVALID, _file),
    PackRefused: (EXIT_INVALID, _pack),
    SubmissionError: (EXIT_INVALID, _submission),
    ValidationError: (EXIT_INVALID, _invalid),
}
#: The same for types of modules the command line does not import up front (by
#: ``module.QualifiedName``; a type of a module never loaded was never raised).
FAULTS_BY_NAME: dict[str, tuple[int, Say]] = {
    "evalfleet.tasks.platform.client.SubmitError": (EXIT_REDIS, _not_enqueued),
    "evalfleet.tasks.archive.errors.StoreError": (EXIT_ARCHIVE, _archive),
    "evalfleet.tasks.archive.record.RecordError": (EXIT_ARCHIVE, _archive),
}


def answer(err: BaseException, redis_url: str = "") -> Answer | None:
    """What to say of ``err`` (or of the exception it was raised from), None for a bug."""
    for raised in _chain(err):
        for kind in type(raised).__mro__:
            found = FAULTS.get(kind) or FAULTS_BY_NAME.get(f"{kind.__module__}.{kind.__qualname__}")
            if found is not None:
                return Answer(found[1](raised, redis_url), found[0])
    return None


def _chain(err: BaseException) -> Iterator[BaseException]:
    """``err``, then what it was raised from (``raise … from``), outermost first."""
    seen: BaseException | None = err
    while seen is not None:
        yield seen
        seen = seen.__cause__


class FaultyGroup(click.Group):
    """A command group whose commands answer ordinary faults by :data:`FAULTS`."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.Abort, click.UsageError) as err:
            if isinstance(err, click.BadParameter):
                _exit(answer(err) or Answer([str(err)], EXIT_INVALID))
            raise
        except click.ClickException:
            raise
        except Exception as err:
            found = answer(err, ctx.meta.get(REDIS_URL_META, ""))
            if found is None:
                traceback.print_exc()
                found = Answer(["evalfleet: internal error (a bug: please report it with "
                                "the traceback above)"], EXIT_INTERNAL)
            _exit(found)


def _exit(found: Answer) -> None:
    for line in found.lines:
        click.echo(line, err=True)
    raise SystemExit(found.exit_code)


def epilog() -> str:
    """The exit codes, for ``evalfleet --help``."""
    codes = "\n".join(f"  {code:<3} {meaning}" for code, meaning in EXIT_CODES.items())
    return f"\b\nExit codes:\n{codes}"
