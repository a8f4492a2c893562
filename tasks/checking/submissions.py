"""Submissions from disk, for people: a directory of files or one submission document.

* ``FILE`` (``.json``/``.yaml``/``.yml``): a :class:`~tasks.messages.Submission` document.
* ``DIR``: every file below it is seeded into the workspace (text when it is UTF-8, else
  base64; mode bits kept), and an optional ``submission.yaml``/``submission.json`` at its
  top adds ``commands``, ``final_output`` and ``events``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import yaml

from ..messages import Submission, SubmissionFile

MANIFESTS = ("submission.yaml", "submission.yml", "submission.json")


def load_submission(path: Path) -> Submission:
    """The submission at ``path``.

    Raises:
        ValueError: the file is not a valid submission document.
        FileNotFoundError: ``path`` does not exist.
    """
    if path.is_dir():
        return _from_dir(path)
    return Submission.model_validate(_document(path))


def _document(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def _from_dir(root: Path) -> Submission:
    manifest = next((root / m for m in MANIFESTS if (root / m).is_file()), None)
    base = _document(manifest) if manifest else {}
    files = {str(p.relative_to(root)): _file(p) for p in sorted(root.rglob("*"))
             if p.is_file() and p != manifest}
    return Submission.model_validate({**(base or {}), "files": {**files,
                                                                 **(base or {}).get("files", {})}})


def _file(path: Path) -> SubmissionFile:
    data, mode = path.read_bytes(), path.stat().st_mode & 0o777
    try:
        return SubmissionFile(content=data.decode("utf-8"), mode=mode)
    except UnicodeDecodeError:
        return SubmissionFile(content=base64.b64encode(data).decode(), encoding="base64",
                              mode=mode)
