"""Go's ``encoding/json`` decoding rules, applied to a decoded JSON value before pydantic.

AgentClash decodes the ``evaluation_spec`` (and every strict validator config) with
``json.Decoder.DisallowUnknownFields``; the lenient configs with plain ``json.Unmarshal``.
Where Go differs from a plain pydantic model, :func:`conform` rewrites the value first:

* a key matches a field by its JSON name exactly, else case-insensitively (``Weight``
  sets ``weight``; Go also folds ``K`` Kelvin sign and ``ſ``); when two keys land on one
  field the later wins, and two objects for one struct field merge;
* ``null`` leaves a field at its zero value (except where the field keeps raw JSON), and
  a ``null`` item of a typed list is that type's zero value (``""``, ``0``, ``{}``);
* integers must fit the Go type (``int32`` for ``version_number`` and
  ``runtime_limits.max_iterations``, ``int64`` elsewhere), see :data:`Int32`/:data:`Int64`.

Non-finite floats cannot occur in JSON; a spec given as a Python mapping that holds one is
refused by :func:`non_finite`, with the field's path.
"""

from __future__ import annotations

import math
import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, Field

from ..errors import FieldError

INT32_RANGE = (-(1 << 31), (1 << 31) - 1)
INT64_RANGE = (-(1 << 63), (1 << 63) - 1)
Int32 = Annotated[int, Field(ge=INT32_RANGE[0], le=INT32_RANGE[1])]
"""A Go ``int32`` field."""
Int64 = Annotated[int, Field(ge=INT64_RANGE[0], le=INT64_RANGE[1])]
"""A Go ``int``/``int64`` field."""
_ZERO: dict[Any, Any] = {str: "", int: 0, float: 0.0, bool: False}
_FOLD = {"\u212a": "k", "\u017f": "s"}


def conform(model: type[BaseModel], value: Any) -> Any:
    """``value`` with its keys and nulls mapped onto ``model`` as Go maps them."""
    return _conform(model, value)


def _conform(annotation: Any, value: Any) -> Any:
    target = unwrap(annotation)
    if value is None or target is Any:
        return value
    if isinstance(target, type) and issubclass(target, BaseModel):
        return _object(target, value) if isinstance(value, dict) else value
    origin = get_origin(target)
    if origin is list and isinstance(value, list):
        (item,) = get_args(target) or (Any,)
        return [_zero(item) if v is None else _conform(item, v) for v in value]
    if origin is dict and isinstance(value, dict):
        item = (get_args(target) or (Any, Any))[1]
        return {k: _conform(item, v) for k, v in value.items()}
    return value


def unwrap(annotation: Any) -> Any:
    """``X | None`` → ``X``; ``Annotated[X, ...]`` → ``X``; other unions stay as they are."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            options = [a for a in get_args(annotation) if a is not type(None)]
            if len(options) != 1:
                return Any
            annotation = options[0]
        else:
            return annotation


def _zero(annotation: Any) -> Any:
    target = unwrap(annotation)
    if isinstance(target, type) and issubclass(target, BaseModel):
        return {}
    return _ZERO.get(target)


def _object(model: type[BaseModel], value: dict[str, Any]) -> dict[str, Any]:
    names = {info.alias or name: name for name, info in model.model_fields.items()}
    out: dict[str, Any] = {}
    for key, item in value.items():
        json_name = match_field(str(key), names)
        if json_name is None:
            out[key] = item  # unknown: the model's strictness decides
            continue
        annotation = model.model_fields[names[json_name]].annotation
        if item is None and unwrap(annotation) is not Any:
            continue  # Go: null into a typed field is a no-op
        item = _conform(annotation, item)
        previous = out.get(json_name)
        if isinstance(previous, dict) and isinstance(item, dict) and _is_model(annotation):
            item = {**previous, **item}
        out[json_name] = item
    return out


def _is_model(annotation: Any) -> bool:
    target = unwrap(annotation)
    return isinstance(target, type) and issubclass(target, BaseModel)


def match_field(key: str, names: Any) -> str | None:
    """The JSON field name ``key`` sets: an exact match, else a case-insensitive one."""
    if key in names:
        return key
    folded = fold(key)
    return next((name for name in names if fold(name) == folded), None)


def fold(text: str) -> str:
    """Go's key folding for ``encoding/json`` field matching (simple case folding)."""
    return "".join(_FOLD.get(c, c) for c in text).lower()


def non_finite(value: Any, path: str) -> list[FieldError]:
    """A finding for every NaN or ±Inf number inside ``value`` (JSON has none)."""
    if isinstance(value, float) and not math.isfinite(value):
        return [FieldError(path, "must be a finite number")]
    if isinstance(value, dict):
        return [f for k, v in value.items() for f in non_finite(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [f for i, v in enumerate(value) for f in non_finite(v, f"{path}[{i}]")]
    return []
