"""YAML read the way AgentClash reads it: ``gopkg.in/yaml.v3`` v3.0.1 on PyYAML's parser.

PyYAML does the parsing (tokens, flow and block styles, anchors, tags); this module
configures its loader so that every scalar is resolved by yaml.v3's rules (``resolve.go``),
which are neither YAML 1.1 nor 1.2:

* booleans are only ``true|True|TRUE|false|False|FALSE`` (``yes``, ``on``, ``y`` are
  strings), null is ``~|null|Null|NULL`` or empty;
* integers are Go's ``strconv.ParseInt(s, 0, 64)`` of the text with every ``_`` removed:
  ``0x1F``, ``0o10``, ``0b101`` and the YAML 1.1 octal ``0777`` (= 511); past int64 a
  uint64, past that a float when the text looks like one, else a string;
* floats are ``.5``, ``1e3``, ``1.`` and ``.inf``/``.nan`` spellings; ``12:30`` (YAML 1.1
  sexagesimal) and ``1e400`` (out of range) stay strings;
* ``2026-01-01`` and three RFC 3339-like layouts are timestamps, written back to JSON as
  RFC 3339 text (``2026-01-01T00:00:00Z``);
* quoted and block scalars are strings; an explicit tag resolves as yaml.v3 resolves it.

Those resolution rules live in :mod:`scoring.compat.yamlresolve`.

Decoding follows ``decode.go``: a duplicate mapping key is an error naming both lines, merge
keys (``<<``) never override the mapping's own keys, an anchor may not contain itself, and
excessive aliasing is refused. Only the first document of a stream is read. Decoding into
Go's ``any`` is :func:`to_any`; typed decoding (the pack envelope) lives in
:mod:`scoring.spec.envelope`.
"""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import yaml
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .goquote import quote
from .yamlresolve import (  # noqa: F401 (re-exported: readers of yamlv3 use them)
    BINARY,
    BOOL,
    FLOAT,
    INT,
    MAP,
    MERGE,
    NULL,
    SEQ,
    STR,
    TIMESTAMP,
    Timestamp,
    YAMLError,
    go_parse_int,
    resolve,
    typed_bool,
)

PLAIN = "!evalfleet/plain"
"""The tag this loader gives an untagged plain scalar (yaml.v3's empty tag)."""
NON_SPECIFIC = "!"
_LONG = "tag:yaml.org,2002:"
class GeneralMap(dict[Any, Any]):
    """A mapping with a non-string key: Go's ``map[interface{}]interface{}``.

    ``json.Marshal`` refuses it, so a spec holding one fails to load in AgentClash.
    """


@dataclass(frozen=True)
class Alias:
    """A use of an anchor (``*name``): yaml.v3 counts aliases and refuses cycles."""

    target: Node
    name: str
    start_mark: Any


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader whose scalar tags are left for yaml.v3's resolution."""

    def compose_node(self, parent: Node | None, index: Any) -> Any:
        loader: Any = self  # PyYAML's event methods are untyped
        if loader.check_event(AliasEvent):
            event = loader.peek_event()
            if event.anchor in self.anchors:
                loader.get_event()
                return Alias(self.anchors[event.anchor], event.anchor, event.start_mark)
        return super().compose_node(parent, index)

    def compose_scalar_node(self, anchor: Any) -> ScalarNode:
        loader: Any = self
        event = loader.get_event()
        tag = event.tag
        if tag is None or tag == NON_SPECIFIC:  # yaml.v3 treats "!" as no tag at all
            tag = PLAIN if event.style is None else _LONG + "str"
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
        if anchor is not None:
            self.anchors[anchor] = node
        return node


def compose(text: str) -> Node | None:
    """The first document of ``text`` as a node tree (later documents are never read).

    Raises:
        YAMLError: the first document is not well-formed YAML.
    """
    try:
        loader = _Loader(text)  # the reader rejects unprintable characters here
    except yaml.YAMLError as err:
        raise YAMLError(f"invalid YAML: {one_line(err)}") from None
    try:
        return loader.get_node() if loader.check_node() else None
    except RecursionError:
        raise YAMLError("invalid YAML: nested too deeply") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise YAMLError(f"invalid YAML: {one_line(err)}", mark.line + 1 if mark else None) \
            from None
    finally:
        loader.dispose()


def one_line(err: yaml.YAMLError) -> str:
    """PyYAML's error in one line, without its excerpt or its ``"<unicode string>"`` (the
    text's name, which the caller knows better): ``expected ',' or ']', but got '<stream
    end>' (while parsing a flow sequence at line 2, column 9)``."""
    if not isinstance(err, yaml.MarkedYAMLError) or not err.problem:
        return " ".join(str(err).replace('"<unicode string>", ', "").split())
    mark = err.context_mark
    context = (f" ({err.context} at line {mark.line + 1}, column {mark.column + 1})"
               if err.context and mark else f" ({err.context})" if err.context else "")
    return f"{err.problem}{context}"


def line_of(node: Node | Alias) -> int | None:
    """The 1-based line a node starts on (None for a node built from a value)."""
    mark = node.start_mark
    return None if mark is None else int(mark.line) + 1


def node_of(value: Any) -> Node:
    """The node tree yaml.v3 would compose from ``value``'s JSON text (JSON is flow YAML):
    strings double-quoted, numbers, booleans and null plain. No text is parsed, so a large
    mapping costs what its size does; the nodes carry no lines.

    ``value`` must be plain JSON (str keys; str, int, finite float, bool, None, list, dict).
    """
    if isinstance(value, dict):
        return MappingNode(_LONG + "map", [(ScalarNode(_LONG + "str", k, None, None, style='"'),
                                            node_of(v)) for k, v in value.items()], None, None)
    if isinstance(value, list):
        return SequenceNode(_LONG + "seq", [node_of(v) for v in value], None, None)
    if isinstance(value, str):
        return ScalarNode(_LONG + "str", value, None, None, style='"')
    if isinstance(value, bool) or value is None:
        return ScalarNode(PLAIN, {True: "true", False: "false", None: "null"}[value], None, None)
    return ScalarNode(PLAIN, repr(value) if isinstance(value, float) else str(value), None, None)


def short_tag(tag: str) -> str:
    """yaml.v3's ``shortTag``: ``tag:yaml.org,2002:x`` → ``!!x``; the plain tag → ``""``."""
    if tag == PLAIN:
        return ""
    return "!!" + tag[len(_LONG):] if tag.startswith(_LONG) else tag


def indicated_string(node: ScalarNode) -> bool:
    """Quoted or block scalars (and explicit ``!!str``) are strings without resolution."""
    return short_tag(node.tag) == STR


def node_tag(node: Node | Alias) -> str:
    """yaml.v3's ``Node.ShortTag``: the tag a node resolves to."""
    if isinstance(node, Alias):
        return node_tag(node.target)
    if isinstance(node, ScalarNode):
        if indicated_string(node):
            return STR
        if node.tag in (PLAIN, NON_SPECIFIC):
            return resolve("", node.value)[0]
        return short_tag(node.tag)
    tag = short_tag(node.tag)
    if tag in ("", NON_SPECIFIC, MAP, SEQ):
        return MAP if isinstance(node, MappingNode) else SEQ
    return tag


def is_null(node: Node | Alias) -> bool:
    return node_tag(node) == NULL


def is_merge(node: Node | Alias) -> bool:
    """A ``<<`` merge key (untagged, ``!`` or ``!!merge``)."""
    return (isinstance(node, ScalarNode) and node.value == "<<"
            and node.tag in (PLAIN, NON_SPECIFIC, _LONG + "merge"))


def scalar_value(node: ScalarNode) -> tuple[str, Any]:
    """The resolved tag and value of a scalar node, as yaml.v3's ``d.scalar`` sees them."""
    if indicated_string(node):
        return STR, node.value
    tag, value = resolve(short_tag(node.tag), node.value)
    if tag == BINARY:
        try:
            data = base64.b64decode(re.sub(r"[\r\n]", "", value), validate=True)
            return BINARY, data.decode("utf-8", "replace")
        except ValueError:
            raise YAMLError("!!binary value contains invalid base64 data") from None
    return tag, value


# -- decoding into Go's any -----------------------------------------------------------------


@dataclass
class Decoder:
    """yaml.v3's decoder state: collected type errors, alias bookkeeping, merge tracking."""

    errors: list[tuple[int | None, str, str]] = field(default_factory=list)
    """``(line, field path, message)`` of each problem, in document order."""
    decode_count: int = 0
    alias_count: int = 0
    alias_depth: int = 0
    active: set[int] = field(default_factory=set)

    def visit(self, node: Node | Alias) -> Node:
        """Count one decode step and follow an alias to its anchor.

        Raises:
            YAMLError: an anchor containing itself, or excessive aliasing.
        """
        self.decode_count += 1
        if self.alias_depth > 0:
            self.alias_count += 1
        if self.alias_count > 100 and self.decode_count > 1000 and \
                self.alias_count / self.decode_count > _allowed_alias_ratio(self.decode_count):
            raise YAMLError("document contains excessive aliasing")
        if isinstance(node, Alias):
            if id(node.target) in self.active:
                raise YAMLError(f"anchor '{node.name}' value contains itself", line_of(node))
            return node.target
        return node

    def duplicates(self, node: MappingNode, path: str) -> bool:
        """Record every duplicate key of a mapping; True when there was one."""
        found = False
        for i, (first, _) in enumerate(node.value):
            for later, _ in node.value[i + 1:]:
                if _same_key(first, later):
                    message = (f"mapping key {quote(_key_text(later))} already defined at "
                               f"line {line_of(first)}")
                    self.errors.append((line_of(later), path, message))
                    found = True
        return found


def _same_key(left: Node | Alias, right: Node | Alias) -> bool:
    """yaml.v3 compares a key's node kind and raw text (``Kind``, ``Value``)."""
    return type(left) is type(right) and _key_text(left) == _key_text(right)


def _key_text(node: Node | Alias) -> str:
    if isinstance(node, Alias):
        return node.name
    return str(node.value) if isinstance(node, ScalarNode) else ""


def _allowed_alias_ratio(decode_count: int) -> float:
    low, high = 400_000, 4_000_000
    if decode_count <= low:
        return 0.99
    if decode_count >= high:
        return 0.10
    return 0.99 - 0.89 * ((decode_count - low) / (high - low))


def to_any(node: Node | Alias, decoder: Decoder, path: str = "") -> Any:
    """Decode a node into Go's ``any``: what yaml.v3 gives a ``map[string]any`` field."""
    target = decoder.visit(node)
    if isinstance(node, Alias):
        decoder.alias_depth += 1
        decoder.active.add(id(target))
        try:
            return to_any(target, decoder, path)
        finally:
            decoder.active.discard(id(target))
            decoder.alias_depth -= 1
    if is_null(target):
        return None
    if isinstance(target, ScalarNode):
        return scalar_value(target)[1]
    if isinstance(target, SequenceNode):
        return [to_any(item, decoder, f"{path}[{i}]") for i, item in enumerate(target.value)]
    assert isinstance(target, MappingNode)
    return _mapping_any(target, decoder, path)


def _mapping_any(node: MappingNode, decoder: Decoder, path: str) -> Any:
    if decoder.duplicates(node, path):
        return None
    string_keys = all(node_tag(k) in (STR, MERGE) for k, _ in node.value)
    out: dict[Any, Any] = {} if string_keys else GeneralMap()
    merged: set[Any] = set()
    merge_node = None
    for key_node, value_node in node.value:
        if is_merge(key_node):
            merge_node = value_node
            continue
        key = _map_key(key_node, decoder, string_keys)
        merged.add(key)
        out[key] = to_any(value_node, decoder, _child(path, key))
    if merge_node is not None:
        _merge_any(merge_node, decoder, out, merged, path)
    return out


def _map_key(node: Node | Alias, decoder: Decoder, string_keys: bool) -> Any:
    key = to_any(node, decoder)
    if isinstance(key, dict | list):
        raise YAMLError(f"invalid map key: {key!r}", line_of(node))
    return key


def _merge_any(node: Node | Alias, decoder: Decoder, out: dict[Any, Any], seen: set[Any],
               path: str) -> None:
    sources = node.value if isinstance(node, SequenceNode) else [node]
    for source in sources:
        target = source.target if isinstance(source, Alias) else source
        if not isinstance(target, MappingNode):
            raise YAMLError("map merge requires map or sequence of maps as the value",
                            line_of(source))
        merged = to_any(source, decoder, path)
        for key, value in (merged or {}).items():
            if key not in seen:
                seen.add(key)
                out[key] = value


def _child(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


# -- Go's json.Marshal of what yaml.v3 decoded ---------------------------------------------


class MarshalError(ValueError):
    """``json.Marshal`` refuses the value (NaN, ±Inf, a non-string-keyed map)."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


def to_json(value: Any, path: str = "") -> Any:
    """The JSON value ``json.Marshal`` writes for a decoded value, read back as JSON.

    A float with no fraction in Go's output is an integer again (``1e3`` → ``1000``), a
    timestamp is its RFC 3339 text, and a mapping's keys come in Go's order (``json.Marshal``
    writes a ``map[string]any`` sorted by key, so a later decode of that JSON meets them so).

    Raises:
        MarshalError: NaN or ±Inf (``json: unsupported value: NaN``) or a mapping with a
            non-string key (``json: unsupported type: map[interface {}]interface {}``).
    """
    if isinstance(value, GeneralMap):
        raise MarshalError("json: unsupported type: map[interface {}]interface {}", path)
    if isinstance(value, dict):
        return {k: to_json(value[k], _child(path, k)) for k in sorted(value)}
    if isinstance(value, list):
        return [to_json(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Timestamp):
        return value.rfc3339
    if isinstance(value, float):
        return _float_json(value, path)
    return value


def _float_json(value: float, path: str) -> int | float:
    if math.isnan(value):
        raise MarshalError("json: unsupported value: NaN", path)
    if math.isinf(value):
        raise MarshalError(f"json: unsupported value: {'+' if value > 0 else '-'}Inf", path)
    if value == int(value) and abs(value) < 1e21:
        return int(Decimal(repr(value)))  # Go prints the shortest digits: 9223372036854776000
    return value
