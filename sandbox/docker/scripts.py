"""The POSIX ``sh`` snippets the driver runs inside a sandbox (busybox ``sh`` suffices).

Paths and numbers are passed as positional arguments (``"$1"``), never spliced into the
script, so a hostile file name is just a string.
"""

from __future__ import annotations

from evalfleet.sandbox import room

#: A function that kills every process of the calling uid but this shell, until none is
#: left. ``kill -9 -1`` spares the caller and pid 1 (Docker's init, or the supervisor, which
#: runs as our uid and is skipped); the keep-alive runs as another uid. kill(-1) succeeds
#: whenever *any* other process exists (EPERM ones count), so the loop checks /proc
#: itself: a directory owned by our uid is a process still alive (or a zombie init has
#: not reaped yet).
STOP_FUNCTION = r"""
stop_candidate() {
  me=$$; tries=0
  while [ "$tries" -lt 500 ]; do
    kill -9 -1 2>/dev/null
    left=0
    for d in /proc/[0-9]*; do
      [ "$d" = "/proc/$me" ] || [ "$d" = /proc/1 ] && continue
      [ -O "$d" ] && left=$((left + 1))
    done
    [ "$left" -eq 0 ] && return 0
    tries=$((tries + 1))
  done
  echo "processes left: $left" >&2
  return 1
}
"""

#: Stop the candidate (exit 0 when every process is gone).
STOP = STOP_FUNCTION + "stop_candidate\n"

#: A function making each path (relative to the cwd) writable from scratch: a link or a
#: non-directory on the way to it is removed, and so is whatever is at the path itself
#: (made removable first). As the candidate's uid, on the candidate's own files: what a
#: submission leaves where the pack's files go can never block them.
CLEAR_FUNCTION = r"""
clear_paths() {
  for rel in "$@"; do
    pre=; rest=$rel
    while [ "${rest#*/}" != "$rest" ]; do
      pre=${pre:+$pre/}${rest%%/*}; rest=${rest#*/}
      if [ -L "$pre" ] || { [ -e "$pre" ] && [ ! -d "$pre" ]; }; then rm -f -- "$pre"; fi
    done
    if [ -L "$rel" ]; then rm -f -- "$rel"
    elif [ -e "$rel" ]; then chmod -R u+rwx -- "$rel" 2>/dev/null; rm -rf -- "$rel"; fi
  done
}
"""

#: ``$1`` workspace, then the files' paths relative to it: clear them, extract the tar on
#: stdin. A failure of ``tar`` itself says why on stderr (exit status of ``tar``).
EXTRACT = CLEAR_FUNCTION + r"""
cd -- "$1" || exit 96; shift
clear_paths "$@"
exec tar -xf - -C .
"""

#: Stop the candidate (exit 97 when it cannot), then :data:`EXTRACT`.
STOP_AND_EXTRACT = STOP_FUNCTION + CLEAR_FUNCTION + r"""
stop_candidate || exit 97
cd -- "$1" || exit 96; shift
clear_paths "$@"
exec tar -xf - -C .
"""

#: Stop the candidate; ``$1`` the cap in bytes, ``$2`` workspace, then the deliverables
#: (relative): a tar on stdout of those that exist (links as links: the host keeps regular
#: files only), cut at the cap inside the sandbox; nothing at all when none does. Without
#: the cut, sparse files (gigabytes that take no space) kept the tar streaming past the
#: host's grace period, and the channel was dropped: a run voided by the candidate.
#: ``tar``'s complaints (a directory it cannot read, once per path) are not read.
EXPORT = STOP_FUNCTION + r"""
stop_candidate || exit 97
cap=$1; shift
cd -- "$1" || exit 96; shift
n=$#
for p do
  if [ -e "$p" ] || [ -L "$p" ]; then set -- "$@" "$p"; fi
done
shift "$n"
[ "$#" -gt 0 ] || exit 0
tar -cf - -- "$@" 2>/dev/null | head -c "$cap"
"""

#: A function printing one ``size|type|./name`` line per entry below ``.``, never following
#: links, down to ``$1`` levels, each line cut after ``$2`` bytes: GNU find's ``-printf``
#: where there is one (type ``f``, ``d``, ``l``, ...), else ``stat`` (type ``regular
#: file``, ``directory``, ...). Not GNU ``stat``, which asks for ``statx`` with a flag that
#: gVisor's 2022 builds refuse (EINVAL). An entry whose name holds a newline is left out,
#: and everything below it: its path would read as two lines, the second one an entry of
#: the candidate's choosing that is not there. A directory that cannot be read (or
#: entered) gets a second line, ``0|!|./name``: what is below it is not listed, and the
#: host says so. The depth and the cut bound the work whatever the tree's shape: a path
#: grows with its depth, and every line of an unbounded ``find`` repeats it.
ENTRIES_FUNCTION = r"""
entries() {
  nl='
'
  if find . -maxdepth 0 -printf '' 2>/dev/null; then
    find . -mindepth 1 -maxdepth "$1" -name "*$nl*" -prune -o -printf '%s|%y|%p\n' \
      \( -type d \( ! -readable -o ! -executable \) -printf '0|!|%p\n' -o -true \) 2>/dev/null
  else
    find . -mindepth 1 -maxdepth "$1" -name "*$nl*" -prune -o -exec stat -c '%s|%F|%n' {} + \
      -type d ! -perm -u=rx -exec stat -c '0|!|%n' {} + 2>/dev/null
  fi | cut -b "1-$2"
}
"""

#: ``$1`` = directory, ``$2`` = entry cap + 1, ``$3`` depth + 1, ``$4`` the line cut;
#: ``head`` stops ``find`` at the cap.
LIST = ENTRIES_FUNCTION + r"""
cd -- "$1" 2>/dev/null || { echo "cannot open directory" >&2; exit 3; }
entries "$3" "$4" | head -n "$2"
"""

#: The memory cgroup's OOM-kill counter: cgroup v1 ``memory.oom_control``, v2 ``memory.events``.
OOM_COUNT = r"""
for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do
  [ -r "$f" ] && { grep '^oom_kill ' "$f"; exit 0; }
done
exit 1
"""

#: The sandbox's own cgroup counters, as seen inside it (for a worker that cannot see the
#: host's cgroups): ``memory_peak_bytes N``, then ``cpu_ns N`` (v1) or ``usage_usec N`` (v2).
#: Kernel files on a read-only mount: nothing of the candidate's can change them.
USAGE = r"""
for f in /sys/fs/cgroup/memory/memory.max_usage_in_bytes /sys/fs/cgroup/memory.peak; do
  [ -r "$f" ] && { echo "memory_peak_bytes $(cat "$f")"; break; }
done
for f in /sys/fs/cgroup/cpuacct/cpuacct.usage /sys/fs/cgroup/cpu,cpuacct/cpuacct.usage; do
  [ -r "$f" ] && { echo "cpu_ns $(cat "$f")"; break; }
done
[ -r /sys/fs/cgroup/cpu.stat ] && grep '^usage_usec ' /sys/fs/cgroup/cpu.stat
exit 0
"""

#: Stop the candidate, then every check in one stream. Arguments: nonce, capture budget
#: left, listing cap + 1, then per check ``F path per-file-cap`` or ``L path depth+1:cut``. Each
#: check answers ``@nonce index status [size]``; a ``file`` is followed by exactly
#: ``min(size, cap, budget left)`` bytes; a listing by ``LIST`` lines and an ``end`` line.
#: The nonce is chosen by the host after the candidate stopped, so no file name can forge
#: a header. The budget is charged with each readable file's full size (§7.2).
COLLECT = STOP_FUNCTION + ENTRIES_FUNCTION + r"""
stop_candidate || exit 97
nonce=$1; left=$2; lcap=$3; shift 3; i=0
while [ "$#" -ge 3 ]; do
  kind=$1; p=$2; cap=$3; shift 3
  if [ "$kind" = L ]; then
    echo "@$nonce $i list"
    ( cd -- "$p" 2>/dev/null || { echo "@$nonce $i nodir"; exit 0; }
      entries "${cap%:*}" "${cap#*:}" | head -n "$lcap" )
    echo "@$nonce $i end"
  elif [ -L "$p" ]; then echo "@$nonce $i link"
  elif [ ! -e "$p" ]; then echo "@$nonce $i missing"
  elif [ ! -f "$p" ]; then echo "@$nonce $i other"
  elif [ ! -r "$p" ]; then echo "@$nonce $i unreadable"
  else
    size=$(wc -c < "$p") || size=0; size=$((size))
    n=$cap; [ "$left" -lt "$n" ] && n=$left; [ "$n" -lt 0 ] && n=0
    echo "@$nonce $i file $size"
    [ "$n" -gt 0 ] && head -c "$n" < "$p"
    left=$((left - size))
  fi
  i=$((i + 1))
done
"""

#: Seed, then become the candidate's first command: ``$1`` workspace, ``$2`` nonce, then
#: the command's argv. The tar is on stdin; the command gets an empty stdin, as an exec of
#: its own would. Nothing of the driver is left once the command runs (``exec``), so there
#: is nothing for the candidate to kill. On failure: ``@nonce seed`` on stderr, exit 97,
#: and the host seeds and runs the command separately.
SEED_THEN_EXEC = r"""
wd=$1; nonce=$2; shift 2
err=$(tar -xf - -C "$wd" 2>&1 >/dev/null) || { echo "@$nonce seed $err" >&2; exit 97; }
exec "$@" </dev/null
"""

#: What every request as the judge does first: the parts of its room exist (the supervisor
#: makes them at the start; ``mkdir`` only when one is missing: a fork costs a millisecond
#: on runc and several under gVisor), and no report is left where this test writes its
#: own (``$REPORT``).
JUDGE_PREP = (f"for d in {' '.join(room.PARTS)}; do [ -d \"$d\" ] || "
              f"{{ mkdir -p -- {' '.join(room.PARTS)} 2>/dev/null; break; }}; done\n"
              '[ -z "${REPORT:-}" ] || rm -f -- "$REPORT"\n')

#: As the judge: :data:`JUDGE_PREP`, then extract the tar on stdin into the room (``$1``).
ROOM_EXTRACT = JUDGE_PREP + 'exec tar -xf - -C "$1"\n'

#: A later test as the judge: :data:`JUDGE_PREP`, then become the test (the argv).
JUDGE_TEST = JUDGE_PREP + 'exec "$@" </dev/null\n'

#: The first test, as the judge, once pid 1 has stopped every other process (the request's
#: ``stop_first``): extract the tar on stdin (if ``$3`` is 1) into ``$1`` (the workspace,
#: or the judge's room), enter ``$4`` and become the test command (the rest of the argv).
#: On failure: ``@nonce <step>`` on stderr, exit 97, and the host writes the files step by
#: step (into the workspace as the candidate, clearing what is in the way) and runs the
#: test by itself.
SEED_THEN_TEST = JUDGE_PREP + r"""
wd=$1; nonce=$2; seed=$3; dir=$4; shift 4
if [ "$seed" = 1 ]; then
  err=$(tar -xf - -C "$wd" 2>&1 >/dev/null) || { echo "@$nonce seed $err" >&2; exit 97; }
fi
cd -- "$dir" 2>/dev/null || { echo "@$nonce cd" >&2; exit 97; }
exec "$@" </dev/null
"""
