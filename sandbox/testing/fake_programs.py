"""The programs :mod:`sandbox.testing.fake_shell` knows, as one explicit table."""

from __future__ import annotations

from collections.abc import Mapping

from evalfleet.sandbox.testing.fake_shell import Exit, Program, Shell, Timeout, run_script

#: What ``yes`` would print before the Docker driver kills it at the cap.
ENDLESS = b"y\n" * (1 << 16)


def echo(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``echo [-n] words…``."""
    newline = argv[1:2] != ["-n"]
    words = argv[2:] if not newline else argv[1:]
    shell.emit(1, " ".join(words).encode() + (b"\n" if newline else b""))
    return 0


def cat(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``cat [files…]`` (stdin when none)."""
    if len(argv) == 1:
        shell.emit(1, stdin)
        return 0
    status = 0
    for name in argv[1:]:
        data = shell.fs.read(shell.path(name))
        if data is None:
            shell.emit(2, f"cat: {name}: No such file or directory\n".encode())
            status = 1
        else:
            shell.emit(1, data)
    return status


def head(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``head -c N [file]`` (``/dev/zero`` and ``/dev/urandom`` give zeros)."""
    count = int(argv[2]) if argv[1:2] == ["-c"] else 10
    source = argv[3] if len(argv) > 3 else None
    if source in {"/dev/zero", "/dev/urandom"}:
        for _ in range(0, count, 1 << 20):
            shell.emit(1, bytes(min(1 << 20, count)))
            count -= 1 << 20
        return 0
    data = stdin if source is None else shell.fs.read(shell.path(source)) or b""
    shell.emit(1, data[:count])
    return 0


def sleep(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``sleep N``: advances virtual time; past the timeout the command is killed."""
    shell.elapsed_s += float(argv[1]) if len(argv) > 1 else 0.0
    if shell.elapsed_s > shell.timeout_s:
        raise Timeout
    return 0


def yes(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``yes``: endless output, cut by the cap."""
    while True:
        shell.emit(1, ENDLESS)


def mkdir(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``mkdir [-p] dirs…``."""
    for name in argv[1:]:
        if name != "-p":
            shell.fs.mkdir(shell.path(name))
    return 0


def rm(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``rm [-f] files…``."""
    for name in argv[1:]:
        if not name.startswith("-"):
            shell.fs.remove(shell.path(name))
    return 0


def mv(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``mv [-f] source target`` (one file)."""
    source, target = (shell.path(name) for name in argv[-2:])
    data = shell.fs.read(source)
    if data is None or not shell.fs.write(target, data):
        shell.emit(2, f"mv: cannot move '{argv[-2]}'\n".encode())
        return 1
    shell.fs.remove(source)
    return 0


def ln(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``ln -s target link``."""
    shell.fs.links[shell.path(argv[-1])] = argv[-2]
    return 0


def sh(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``sh -c script``, ``sh -lc script`` or ``sh file``."""
    if len(argv) > 2 and argv[1] in {"-c", "-lc"}:
        return run_script(shell, argv[2], stdin)
    script = shell.fs.read(shell.path(argv[1])) if len(argv) > 1 else stdin
    return run_script(shell, (script or b"").decode())


def exit_(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``exit [N]``."""
    raise Exit(int(argv[1]) if len(argv) > 1 else 0)


def id_(shell: Shell, argv: list[str], stdin: bytes) -> int:
    """``id -u``."""
    shell.emit(1, f"{shell.uid}\n".encode())
    return 0


def constant(status: int) -> Program:
    """A program that does nothing and exits ``status`` (``true``, ``false``, ``:``)."""
    return lambda shell, argv, stdin: status


#: The fake's programs; anything else exits 127.
PROGRAMS: Mapping[str, Program] = {
    ":": constant(0),
    "cat": cat,
    "echo": echo,
    "exit": exit_,
    "false": constant(1),
    "head": head,
    "id": id_,
    "ln": ln,
    "mkdir": mkdir,
    "mv": mv,
    "rm": rm,
    "sh": sh,
    "sleep": sleep,
    "true": constant(0),
    "yes": yes,
}
