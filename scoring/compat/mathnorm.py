"""math_equivalence's text normalization: LaTeX-ish answer → plain expression (docs/scoring.md
§5.11).

Applied to each side, in this order: trim; optionally keep the text after the **last**
answer delimiter; strip enclosing ``$$…$$`` / ``$…$`` repeatedly; newlines → spaces; delete
commas; ``−``/``–`` → ``-``; ``×``/``·`` → ``*``; ``÷`` → ``/``; delete ``\\left``,
``\\right``; ``\\cdot``/``\\times`` → ``*``; delete ``\\!``, ``\\,``, ``\\;``, ``\\:``;
``\\boxed{X}`` → ``(X)``; ``\\frac{A}{B}`` → ``((A)/(B))``; ``\\sqrt{X}`` → ``sqrt(X)`` and
``\\sqrt[n]{X}`` → ``(((X)^(1/(n))))``; ``√x`` → ``sqrt(x)``; braces → parentheses; runs of
ASCII whitespace → one space; trim. An empty result or a malformed group is an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .mathexpr import MathSyntaxError

_Rewrite = Callable[[str, int], tuple[str, int]]
"""Rewrites one command whose name ends at the index: (replacement, index after it)."""

_GO_SPACE = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
             "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_BYTE_SPACE = "\t\n\v\f\r "
# A fixed internal pattern (not pack input): ASCII whitespace runs, as Go's collapse.
_ASCII_SPACE_RUN = re.compile(r"[\t\n\f\r ]+")
_REPLACEMENTS = (
    ("\r\n", "\n"), ("\n", " "), (",", ""), ("−", "-"), ("–", "-"), ("×", "*"), ("·", "*"),
    ("÷", "/"), ("\\left", ""), ("\\right", ""), ("\\cdot", "*"), ("\\times", "*"),
    ("\\!", ""), ("\\,", ""), ("\\;", ""), ("\\:", ""),
)
_SQRT_STOP = _GO_SPACE + "+-*/^(){}"


def normalize(raw: str, delimiter: str | None = None, max_length: int | None = None) -> str:
    """The plain expression text of one side.

    Args:
        raw: the answer as given.
        delimiter: when set, only the text after its last occurrence is kept.
        max_length: when set, the most characters the expression (after the delimiter and
            ``$`` delimiters) may have: evalfleet's limit on the candidate's side.

    Raises:
        MathSyntaxError: for an empty result, a malformed ``\\boxed``/``\\frac``/``\\sqrt``
            or an expression past ``max_length``.
    """
    text = raw.strip(_GO_SPACE)
    if delimiter is not None:
        text = _after_last(text, delimiter)
    text = _strip_math_delimiters(text)
    if max_length is not None and len(text) > max_length:
        raise MathSyntaxError(f"expression is too large ({len(text)} characters, at most "
                              f"{max_length})")
    for old, new in _REPLACEMENTS:
        text = text.replace(old, new)
    text = _latex_commands(text.strip(_GO_SPACE))
    text = _ASCII_SPACE_RUN.sub(" ", text.replace("{", "(").replace("}", ")")).strip(_GO_SPACE)
    if not text:
        raise MathSyntaxError("expression is empty")
    return text


def _after_last(text: str, delimiter: str) -> str:
    if not delimiter or delimiter not in text:
        return text.strip(_GO_SPACE)
    return text[text.rindex(delimiter) + len(delimiter):].strip(_GO_SPACE)


def _strip_math_delimiters(text: str) -> str:
    while True:
        text = text.strip(_GO_SPACE)
        if len(text) >= 4 and text.startswith("$$") and text.endswith("$$"):
            text = text[2:-2]
        elif len(text) >= 2 and text.startswith("$") and text.endswith("$"):
            text = text[1:-1]
        else:
            return text


def _latex_commands(text: str) -> str:
    text = _rewrite_all(text, "\\boxed", _boxed)
    text = _rewrite_all(text, "\\frac", _frac)
    text = _rewrite_all(text, "\\sqrt", _sqrt)
    return _unicode_sqrt(text)


def _rewrite_all(text: str, command: str, rewrite: _Rewrite) -> str:
    """Replace every ``command`` (leftmost first) with ``rewrite``'s output."""
    while (start := text.find(command)) >= 0:
        replacement, end = rewrite(text, start + len(command))
        text = text[:start] + replacement + text[end:]
    return text


def _boxed(text: str, index: int) -> tuple[str, int]:
    content, end = _group(text, _skip_space(text, index), "{", "}",
                          "\\boxed must be followed by braces")
    return f"({content})", end


def _frac(text: str, index: int) -> tuple[str, int]:
    numerator, index = _group(text, _skip_space(text, index), "{", "}",
                              "\\frac must have a numerator group")
    denominator, end = _group(text, _skip_space(text, index), "{", "}",
                              "\\frac must have a denominator group")
    return f"(({numerator})/({denominator}))", end


def _sqrt(text: str, index: int) -> tuple[str, int]:
    index, root = _skip_space(text, index), ""
    if index < len(text) and text[index] == "[":
        root, index = _group(text, index, "[", "]", "")
        index = _skip_space(text, index)
    radicand, end = _group(text, index, "{", "}", "\\sqrt must have a radicand group")
    if root.strip(_GO_SPACE):
        return f"((({radicand})^(1/({root}))))", end
    return f"sqrt({radicand})", end


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in _BYTE_SPACE:
        index += 1
    return index


def _group(text: str, start: int, open_: str, close: str, missing: str) -> tuple[str, int]:
    """The balanced ``open_…close`` group at ``start``: (content, index after it)."""
    if start >= len(text) or text[start] != open_:
        raise MathSyntaxError(missing or f"expected '{open_}' at offset {start}")
    depth = 0
    for index in range(start, len(text)):
        depth += (text[index] == open_) - (text[index] == close)
        if depth == 0:
            return text[start + 1:index], index + 1
    raise MathSyntaxError(f"unbalanced '{open_}' '{close}' group")


def _unicode_sqrt(text: str) -> str:
    out, index = [], 0
    while index < len(text):
        if text[index] != "√":
            out.append(text[index])
            index += 1
            continue
        piece, index = _unicode_sqrt_at(text, index)
        out.append(piece)
    return "".join(out)


def _unicode_sqrt_at(text: str, index: int) -> tuple[str, int]:
    """``√`` followed by a bare token becomes ``sqrt(token)``; otherwise just ``sqrt``."""
    start = index + 1
    while start < len(text) and text[start] in _GO_SPACE:
        start += 1
    end = start
    while end < len(text) and text[end] not in _SQRT_STOP:
        end += 1
    if end == start:
        return "sqrt", index + 1
    return f"sqrt({text[start:end]})", end
