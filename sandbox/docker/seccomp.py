"""The sandbox's seccomp profile: Docker's default, except that ``prlimit64`` is self-only.

``seccomp.json`` beside this module is Docker 20.10's default profile (moby
``profiles/seccomp/default.json`` at v20.10.24) with one change: ``prlimit64`` left the
unconditional allow list and is allowed only when its first argument, the pid, is 0, i.e.
on the calling process itself. That is what glibc's ``getrlimit``/``setrlimit`` (and
Python's ``resource`` module) issue, so a process still reads and sets its own limits. On
any other pid the call falls to the profile's default action, ``SCMP_ACT_ERRNO``, which
the runtime turns into EPERM.

Why: with every capability dropped, the kernel still lets a process change the limits of
any other process of the same uid, and the sandbox's pid 1 runs as the untrusted
candidate's uid. Under Docker's default profile a candidate could therefore kill pid 1 (say,
``RLIMIT_CPU`` = 0 on it) or starve it of file descriptors. Nothing a candidate
legitimately needs goes through ``prlimit64`` on another pid.

Docker's API takes a custom profile as the JSON text itself in ``HostConfig.SecurityOpt``
(``seccomp=<json>``), which is what the docker CLI sends for ``--security-opt
seccomp=file.json``; :func:`security_opt` gives that option.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

#: Docker 20.10's default seccomp profile with ``prlimit64`` limited to pid 0.
PROFILE_PATH: Path = Path(__file__).with_name("seccomp.json")


@functools.cache
def security_opt() -> str:
    """``seccomp=<profile JSON>`` for a container's ``security_opt`` (read once)."""
    profile = json.loads(PROFILE_PATH.read_text(encoding="utf-8"))
    return "seccomp=" + json.dumps(profile, separators=(",", ":"))
