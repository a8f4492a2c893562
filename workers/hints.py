"""``hint: did you mean "weight"?``: the field a person probably meant by an unknown one.

The field names known at a path are read from the pydantic model the document decodes
into (a pack's spec: :class:`~scoring.EvaluationSpec`; a submission:
:class:`~tasks.messages.Submission`), and the closest one is offered when it is close
enough (:func:`difflib.get_close_matches`).
"""

from __future__ import annotations

import difflib
import re
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from evalfleet.scoring import EvaluationSpec
from evalfleet.tasks.messages import Submission

#: Where a pack's spec starts in a pack's field paths (a pack, or a bare spec).
SPEC_ROOTS = ("version.evaluation_spec.", "evaluation_spec.")
_UNKNOWN = re.compile(r'^unknown field "(?P<name>.+)"$')


def spec_hint(field: str, message: str) -> str | None:
    """The hint for a pack problem (None unless it is an unknown field of the spec)."""
    root = next((r for r in SPEC_ROOTS if field.startswith(r)), None)
    return None if root is None else hint(EvaluationSpec, field.removeprefix(root), message)


def submission_hint(field: str, message: str) -> str | None:
    """The hint for a submission problem (None unless it is an unknown field)."""
    return hint(Submission, field, message)


def hint(model: type[BaseModel], field: str, message: str) -> str | None:
    """``hint: did you mean "<name>"?`` for an unknown field at ``field`` (a path below
    ``model``: ``scorecard.dimensions[1].weigth``), else None."""
    unknown = _UNKNOWN.match(message)
    if unknown is None:
        return None
    parents = [p for p in re.split(r"\.|\[\d+\]", field) if p][:-1]
    known = sorted(names_at(model, parents))
    close = difflib.get_close_matches(unknown["name"], known, n=1)
    return f'hint: did you mean "{close[0]}"?' if close else None


def names_at(model: type[BaseModel], parents: list[str]) -> set[str]:
    """The field names (and aliases) of the models found below ``model`` at ``parents``."""
    types: list[Any] = [model]
    for part in parents:
        types = [inner for t in types for inner in _inside(t, part)]
    return {name for t in types for m in _models(t) for key, info in m.model_fields.items()
            for name in (key, info.alias) if name}


def _inside(annotation: Any, part: str) -> list[Any]:
    """What sits at ``part`` inside a value of ``annotation`` (a field, a map's value)."""
    found = []
    for option in _options(annotation):
        if isinstance(option, type) and issubclass(option, BaseModel):
            found += [f.annotation for k, f in option.model_fields.items()
                      if part in (k, f.alias)]
        elif get_origin(option) is dict:
            found.append(get_args(option)[-1])
    return [inner for f in found for inner in _options(f)]


def _options(annotation: Any) -> list[Any]:
    """A union's members and a list's items, unwrapped (``list[A | None]`` → ``[A]``)."""
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        return [o for a in get_args(annotation) if a is not NoneType for o in _options(a)]
    if origin is list:
        return _options(get_args(annotation)[0])
    if get_origin(annotation) is not None and hasattr(annotation, "__metadata__"):
        return _options(get_args(annotation)[0])  # Annotated[...]
    return [annotation]


def _models(annotation: Any) -> list[type[BaseModel]]:
    return [o for o in _options(annotation) if isinstance(o, type) and issubclass(o, BaseModel)]
