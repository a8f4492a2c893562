"""The POSIX ``sh`` snippets the driver runs inside a sandbox (busybox ``sh`` suffices).

Paths and numbers are passed as positional arguments (``"$1"``), never spliced into the
script, so a hostile file name is just a string.
"""

from __future__ import annotations

#: Kill every process of the calling uid but this shell, until none is left.
#: ``kill -9 -1`` spares the caller and pid 1; the keep-alive runs as another uid. Note
#: that kill(-1) succeeds whenever *any* other process exists (EPERM ones count), so the
#: loop checks /proc itself: a directory owned by our uid is a process still alive (or a
#: zombie init has not reaped yet).
STOP = r"""
me=$$; tries=0
while [ "$tries" -lt 500 ]; do
  kill -9 -1 2>/dev/null
  left=0
  for d in /proc/[0-9]*; do
    [ "$d" = "/proc/$me" ] && continue
    [ -O "$d" ] && left=$((left + 1))
  done
  [ "$left" -eq 0 ] && exit 0
  tries=$((tries + 1))
done
echo "processes left: $left" >&2
exit 1
"""

#: ``$1`` = directory, ``$2`` = entry cap + 1. One ``size|type|./name`` line per entry,
#: never following links (``stat`` without ``-L``); ``head`` stops ``find`` at the cap.
LIST = r"""
cd -- "$1" 2>/dev/null || { echo "cannot open directory" >&2; exit 3; }
find . -mindepth 1 -exec stat -c '%s|%F|%n' {} + 2>/dev/null | head -n "$2"
"""

#: The memory cgroup's OOM-kill counter: cgroup v1 ``memory.oom_control``, v2 ``memory.events``.
OOM_COUNT = r"""
for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do
  [ -r "$f" ] && { grep '^oom_kill ' "$f"; exit 0; }
done
exit 1
"""
