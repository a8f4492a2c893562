"""A tiny shell for :mod:`sandbox.testing.fake`: enough POSIX ``sh`` to run the contract suite.

It understands ``;``, ``&&``, ``||``, ``|``, ``&``, newlines, the redirections ``>``,
``>>``, ``<``, ``2>``, ``2>&1``, ``while :; do …; done`` and the programs in
:data:`PROGRAMS`. A background job (``… &``) is kept and re-run at every later command
until the candidate is stopped, which is how the fake models a process that keeps
tampering with files. Anything else exits 127, as a real shell does for a missing program.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from evalfleet.sandbox.testing.fake_fs import FakeFS

OPERATORS = {";", "&&", "||", "&", "|", "\n"}


class Overflow(Exception):
    """An output stream passed its cap: the command is killed, as the Docker driver does."""


class Timeout(Exception):
    """Virtual time passed the command's timeout (``sleep`` advances it)."""


class Exit(Exception):
    """``exit N``."""

    def __init__(self, code: int) -> None:
        self.code = code


@dataclass
class Shell:
    """State of one command run: files, directory, streams, caps and virtual time."""

    fs: FakeFS
    programs: Mapping[str, Program]
    cwd: str
    cap: int
    timeout_s: float
    uid: int = 1000
    elapsed_s: float = 0.0
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    background: list[list[str]] = field(default_factory=list)

    def emit(self, stream: int, data: bytes) -> None:
        """Append to stdout (1) or stderr (2), cutting at the cap."""
        buffer = self.stdout if stream == 1 else self.stderr
        room = self.cap - len(buffer)
        buffer += data[:max(room, 0)]
        if len(data) > room:
            setattr(self, "stdout_truncated" if stream == 1 else "stderr_truncated", True)
            raise Overflow

    def child(self, cap: int) -> Shell:
        """A shell for one program: same files, clock and jobs, fresh streams."""
        return Shell(fs=self.fs, programs=self.programs, cwd=self.cwd, cap=cap,
                     timeout_s=self.timeout_s, uid=self.uid, elapsed_s=self.elapsed_s,
                     background=self.background)

    def path(self, name: str) -> str:
        """``name`` resolved against the current directory."""
        return posixpath.normpath(posixpath.join(self.cwd, name))


def tokenize(script: str) -> list[str]:
    """Split a script into words and operators (newlines are kept as ``;``)."""
    lexer = shlex.shlex(script.replace("\n", " ; "), posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def run_script(shell: Shell, script: str, stdin: bytes = b"") -> int:
    """Run a whole script; returns its exit status."""
    try:
        return run_tokens(shell, tokenize(script), stdin)
    except Exit as done:
        return done.code


def run_tokens(shell: Shell, tokens: list[str], stdin: bytes) -> int:
    """Run a token list: ``while`` loops, then statements joined by operators."""
    status, index = 0, 0
    operator = ";"
    while index < len(tokens):
        statement, index, next_op = _statement(tokens, index)
        if next_op == "&":
            shell.background.append(statement)
        elif operator == ";" or (operator == "&&") == (status == 0):
            status = run_pipeline(shell, statement, stdin)
        operator = next_op if next_op != "&" else ";"
    return status


def _statement(tokens: list[str], index: int) -> tuple[list[str], int, str]:
    """The statement at ``index`` (a whole ``while … done`` counts as one)."""
    end, depth = index, 0
    while end < len(tokens):
        token = tokens[end]
        depth += {"while": 1, "done": -1}.get(token, 0)
        if depth == 0 and token in OPERATORS - {"|"}:
            return tokens[index:end], end + 1, token
        end += 1
    return tokens[index:end], end, ";"


def run_pipeline(shell: Shell, statement: list[str], stdin: bytes) -> int:
    """Run ``a | b | c`` (each stage's stdout feeds the next) or a ``while`` loop."""
    if statement[:1] == ["while"]:
        body = statement[statement.index("do") + 1:-1]
        return run_tokens(shell, body, stdin)  # a loop body runs once per tick in the fake
    stages = _split(statement, "|")
    for stage in stages[:-1]:
        piped = shell.child(cap=1 << 30)
        run_simple(piped, stage, stdin)
        stdin = bytes(piped.stdout)
    return run_simple(shell, stages[-1], stdin)


def run_simple(shell: Shell, words: list[str], stdin: bytes) -> int:
    """Run one simple command with its redirections."""
    argv, redirects = _redirections(words)
    if not argv:
        return 0
    if "<" in redirects:
        stdin = shell.fs.read(shell.path(redirects["<"])) or b""
    sink = shell.child(cap=shell.cap)
    try:
        status = shell.programs.get(argv[0], _not_found)(sink, argv, stdin)
    finally:
        shell.elapsed_s = sink.elapsed_s
        shell.stdout_truncated |= sink.stdout_truncated
        shell.stderr_truncated |= sink.stderr_truncated
        _route(shell, sink, redirects)
    return status


def _route(shell: Shell, sink: Shell, redirects: dict[str, str]) -> None:
    out, err = bytes(sink.stdout), bytes(sink.stderr)
    if redirects.get("2>") == "&1":
        out, err = out + err, b""
    if redirects.get(">&") == "2":
        out, err = b"", err + out
    for op, stream in ((">", out), (">>", out), ("2>", err)):
        target = redirects.get(op)
        if target and target != "&1":
            if target != "/dev/null":
                shell.fs.write(shell.path(target), stream, append=op == ">>")
            out, err = (b"", err) if op != "2>" else (out, b"")
    shell.emit(1, out)
    shell.emit(2, err)


def _redirections(words: list[str]) -> tuple[list[str], dict[str, str]]:
    argv: list[str] = []
    redirects: dict[str, str] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if word in {">", ">>", "<", ">&"} and index + 1 < len(words):
            if argv and argv[-1] == "2" and word in {">", ">&"}:
                argv.pop()
                word, words[index + 1] = "2>", ("&" if word == ">&" else "") + words[index + 1]
            redirects[word] = words[index + 1]
            index += 2
            continue
        argv.append(word)
        index += 1
    return argv, redirects


def _split(words: list[str], separator: str) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for word in words:
        if word == separator:
            parts.append([])
        else:
            parts[-1].append(word)
    return parts


def _not_found(shell: Shell, argv: list[str], stdin: bytes) -> int:
    shell.emit(2, f"sh: 1: {argv[0]}: not found\n".encode())
    return 127


Program = Callable[[Shell, list[str], bytes], int]
