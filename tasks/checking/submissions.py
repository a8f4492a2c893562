"""Submissions from disk, for people: a directory of files or one submission document.

* ``FILE`` (``.json``/``.yaml``/``.yml``): a :class:`~tasks.messages.Submission` document.
* ``DIR``: every file below it is seeded into the workspace (text when it is UTF-8, else
  base64; mode bits kept), and an optional ``submission.yaml``/``submission.json`` at its
  top adds ``commands``, ``final_output`` and ``events``.

YAML is read with the rules packs are read with (yaml.v3's, :mod:`scoring.compat.yamlv3`):
``no`` stays the text ``no``, ``1e3`` is 1000, a date is its RFC 3339 text.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from evalfleet.scoring import FieldError
from evalfleet.scoring.compat import yamlresolve, yamlv3

from ..messages import Submission, SubmissionFile

#: The submission document a submission directory may hold at its top.
DOCUMENTS = ("submission.yaml", "submission.yml", "submission.json")


class SubmissionError(ValueError):
    """A submission that cannot be read or is not valid.

    ``path`` is the file at fault (a directory's ``submission.yaml``, or the directory when
    its files are at fault); ``problems`` name each field (``commands[0].run``), or ``""``
    for the file as a whole.
    """

    def __init__(self, path: Path, problems: list[FieldError]) -> None:
        self.path, self.problems = path, problems
        super().__init__(f"{path}: " + "; ".join(str(p).lstrip() for p in problems))


def load_submission(path: Path) -> Submission:
    """The submission at ``path``.

    Raises:
        SubmissionError: ``path`` (or a file below it) cannot be read, or is not a valid
            submission.
    """
    if path.is_dir():
        return _from_dir(path)
    return _validated(_document(path), path)


def _validated(data: Any, path: Path) -> Submission:
    try:
        return Submission.model_validate(data)
    except ValidationError as err:
        raise SubmissionError(path, field_problems(err)) from None


def field_problems(err: ValidationError) -> list[FieldError]:
    """One problem per field: a value no branch of a union takes is reported once, at the
    field, with its first branch's message (``commands[0].run Input should be a valid
    string``)."""
    found: dict[str, FieldError] = {}
    for error in err.errors():
        field = _field_path(error["loc"])
        if field not in found:
            message = (f'unknown field "{error["loc"][-1]}"'
                       if error["type"] == "extra_forbidden" else str(error["msg"]))
            found[field] = FieldError(field, message)
    return list(found.values())


def _field_path(loc: tuple[Any, ...]) -> str:
    """``loc`` as a document path, up to a union's branch name (which is no field)."""
    annotation: Any = Submission
    path = ""
    for part in loc:
        if _branches(annotation) > 1:
            break
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
        annotation = _inner(annotation, part)
    return path.lstrip(".")


def _branches(annotation: Any) -> int:
    union = get_origin(annotation) in (Union, UnionType)
    return len([a for a in get_args(annotation) if a is not NoneType]) if union else 1


def _inner(annotation: Any, part: Any) -> Any:
    """The type found at ``part`` inside ``annotation`` (None when unknown)."""
    args = [a for a in get_args(annotation) if a is not NoneType]
    if get_origin(annotation) in (Union, UnionType) and len(args) == 1:
        annotation = args[0]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get(str(part))
        return field.annotation if field else None
    return get_args(annotation)[-1] if get_origin(annotation) in (dict, list) else None


def _document(path: Path) -> Any:
    text = _text(path)
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise SubmissionError(path, [FieldError("", f"invalid JSON: {err.msg}",
                                                    err.lineno)]) from None
    return _yaml(text, path)


def _yaml(text: str, path: Path) -> Any:
    """A YAML document decoded as a pack is (yaml.v3), written as JSON would carry it."""
    try:
        node = yamlv3.compose(text)
        decoder = yamlv3.Decoder()
        data = None if node is None else yamlv3.to_any(node, decoder)
        if decoder.errors:
            raise SubmissionError(path, [FieldError(where, message, line)
                                         for line, where, message in decoder.errors])
        return yamlv3.to_json(data)
    except yamlresolve.YAMLError as err:
        raise SubmissionError(path, [FieldError("", str(err), err.line)]) from None
    except yamlv3.MarshalError as err:
        raise SubmissionError(path, [FieldError(err.path, str(err))]) from None


def _text(path: Path) -> str:
    try:
        return _bytes(path).decode("utf-8")
    except UnicodeDecodeError as err:
        raise SubmissionError(path, [FieldError("", f"cannot be read: not UTF-8 "
                                                    f"({err.reason})")]) from None


def _bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise SubmissionError(path, [FieldError("", f"cannot be read: "
                                                    f"{err.strerror or err}")]) from None


def _from_dir(root: Path) -> Submission:
    document = next((root / m for m in DOCUMENTS if (root / m).is_file()), None)
    base = (_document(document) if document else None) or {}
    if not isinstance(base, dict):
        raise SubmissionError(document or root, [FieldError("", "must be a mapping")])
    files = {str(p.relative_to(root)): _file(p) for p in sorted(root.rglob("*"))
             if p.is_file() and p != document}
    return _validated({**base, "files": {**files, **(base.get("files") or {})}},
                      document or root)


def _file(path: Path) -> SubmissionFile:
    data, mode = _bytes(path), path.stat().st_mode & 0o777
    try:
        return SubmissionFile(content=data.decode("utf-8"), mode=mode)
    except UnicodeDecodeError:
        return SubmissionFile(content=base64.b64encode(data).decode(), encoding="base64",
                              mode=mode)
