"""jsonschema-go v0.3.0's ``Schema.Resolve`` checks, with its error texts (``resolve.go``).

AgentClash resolves every schema before validating (``json_validators.go``: an error is
``resolve JSON schema: …``). jsonschema-go does not check a schema against the meta-schema;
``Resolve(nil)`` does, in order, stopping at the first step that fails:

1. structure: a nil subschema (a ``null`` item of ``allOf`` or of ``properties``) is
   ``jsonschema: schema at /allOf/0 is nil``;
2. local checks, every one reported, joined by newlines: ``$defs`` with ``definitions``;
   ``$vocabulary`` outside the 2020-12 meta-schema; a ``pattern`` or ``patternProperties``
   key Go's ``regexp`` refuses (``jsonschema.Schema: <anonymous schema>: pattern: error
   parsing regexp: …``);
3. identifiers: an ``$id`` must parse, have no fragment and resolve to an absolute URI (with
   no base URI, a relative root ``$id`` does not);
4. references: each ``$ref``/``$dynamicRef`` must name this schema or one of its ``$id``s
   (there is no loader: anything else is ``loading x: cannot resolve remote schemas: no
   loader passed to Schema.Resolve``), then an ``$anchor`` or a JSON Pointer that leads to
   a subschema.

Schemas are walked as jsonschema-go walks them: a schema, then its subschemas by keyword
name in byte order, lists in order, maps by key (Go iterates a map in random order where
it reports a nil subschema or a bad ``patternProperties`` key; sorted order is one of
Go's answers). URIs follow :mod:`scoring.compat.gourl`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..compat import gourl
from ..compat.goquote import quote
from ..compat.patterns import PatternError, compile_pattern
from .schema_decode import KIND_OF
from .schema_pointer import PointerError, dereference

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_SUBSCHEMA_KEYWORDS = sorted(k for k, kind in KIND_OF.items()
                             if kind in ("schema", "schemas", "schema_map"))


class ResolveError(ValueError):
    """What ``Schema.Resolve`` returns (``str`` is jsonschema-go's text)."""


def resolve(schema: Any) -> None:
    """Run jsonschema-go's Resolve checks on a decoded schema (:mod:`.schema_decode`).

    Raises:
        ResolveError: at the first step that fails, with jsonschema-go's text.
    """
    _check_structure(schema)
    problems = [p for s in walk(schema) for p in _local_problems(s)]
    if problems:
        raise ResolveError("\n".join(problems))
    bases = _Bases(schema)
    for node in walk(schema):
        for keyword in ("$ref", "$dynamicRef"):
            if isinstance(node, dict) and node.get(keyword):
                _resolve_ref(bases, node, node[keyword])


def children(schema: Any) -> Iterator[tuple[str, Any]]:
    """(JSON Pointer step, subschema) for each direct subschema, in jsonschema-go's order."""
    if not isinstance(schema, dict):
        return
    for keyword in _SUBSCHEMA_KEYWORDS:
        value = schema.get(keyword)
        if isinstance(value, list):
            yield from ((f"/{keyword}/{i}", s) for i, s in enumerate(value))
        elif isinstance(value, dict) and KIND_OF[keyword] == "schema_map":
            yield from ((f"/{keyword}/{_escape(k)}", value[k]) for k in sorted(value))
        elif keyword in schema and KIND_OF[keyword] == "schema":
            yield f"/{keyword}", value


def walk(schema: Any) -> Iterator[Any]:
    """The schema and every subschema below it, preorder."""
    yield schema
    for _, child in children(schema):
        if child is not None:
            yield from walk(child)


def name_of(schema: Any) -> str:
    """``Schema.String``: the ``$id``, else ``anchor <name>``, else ``<anonymous schema>``."""
    if isinstance(schema, dict):
        if schema.get("$id"):
            return str(schema["$id"])
        anchor = schema.get("$anchor") or schema.get("$dynamicAnchor")
        if anchor:
            return f"anchor {anchor}"
    return "<anonymous schema>"


def _escape(segment: str) -> str:
    return segment.replace("~", "~0").replace("/", "~1")


def _check_structure(schema: Any, path: str = "") -> None:
    for step, child in children(schema):
        if child is None:
            raise ResolveError(f"jsonschema: schema at {path + step} is nil")
        _check_structure(child, path + step)


def _local_problems(schema: Any) -> list[str]:
    """``checkLocal``: what is wrong with one schema on its own."""
    if not isinstance(schema, dict):
        return []
    if "$defs" in schema and "definitions" in schema:
        return ["both Defs and Definitions are set; at most one should be"]
    prefix = f"jsonschema.Schema: {name_of(schema)}: "
    problems = []
    if "$vocabulary" in schema and schema.get("$schema") != DRAFT_2020_12:
        problems.append(prefix + "cannot validate a schema with $vocabulary")
    if schema.get("pattern"):
        problems += [prefix + f"pattern: {p}" for p in _regexp_problem(schema["pattern"])]
    for key in sorted(schema.get("patternProperties") or {}):
        problems += [prefix + f"patternProperties[{quote(key)}]: {p}"
                     for p in _regexp_problem(key)]
    return problems


def _regexp_problem(pattern: str) -> list[str]:
    try:
        compile_pattern(pattern)
    except PatternError as err:
        return [str(err)]
    return []


@dataclass
class _Bases:
    """``resolveURIs``: each schema's base (itself, if it has an ``$id``, else the nearest
    enclosing one, else the root), the URI of every base and the anchors in each."""

    root: Any
    uris: dict[str, Any] = field(default_factory=dict)
    base_of: dict[int, Any] = field(default_factory=dict)
    uri_of: dict[int, str] = field(default_factory=dict)
    anchors: dict[int, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.uri_of[id(self.root)] = ""
        self.uris[""] = self.root
        self._visit(self.root, self.root)

    def _visit(self, schema: Any, base: Any) -> None:
        if isinstance(schema, dict) and schema.get("$id"):
            base = self._identify(schema, base)
        self.base_of[id(schema)] = base
        if isinstance(schema, dict):
            for keyword in ("$anchor", "$dynamicAnchor"):
                if schema.get(keyword):  # a duplicate anchor is ignored: the first stays
                    self.anchors.setdefault(id(base), {}).setdefault(schema[keyword], schema)
        for _, child in children(schema):
            self._visit(child, base)

    def _identify(self, schema: dict[str, Any], parent: Any) -> Any:
        given = str(schema["$id"])
        try:
            parsed = gourl.parse(given)
        except gourl.URLError as err:
            raise ResolveError(str(err)) from None
        if parsed.fragment:
            raise ResolveError(f"$id {given} must not have a fragment")
        parent_uri = self.uri_of[id(parent)]
        uri = gourl.resolve_reference(parent_uri, given)
        if not gourl.is_absolute(uri):
            raise ResolveError(f"$id {given} does not resolve to an absolute URI "
                               f"(base is {quote(parent_uri)})")
        self.uris[uri] = schema
        self.uri_of[id(schema)] = uri
        return schema


def _resolve_ref(bases: _Bases, schema: dict[str, Any], ref: str) -> Any:
    """``resolveRef``: the subschema ``ref`` names, or jsonschema-go's error."""
    try:
        gourl.parse(ref)
    except gourl.URLError as err:
        raise ResolveError(str(err)) from None
    base = bases.base_of[id(schema)]
    full = gourl.resolve_reference(bases.uri_of[id(base)], ref)
    document, _, fragment = full.partition("#")
    target = bases.uris.get(document)
    if target is None:
        raise ResolveError(f"loading {document}: cannot resolve remote schemas: "
                           "no loader passed to Schema.Resolve")
    fragment = gourl.unescape_fragment(fragment)
    if fragment and not fragment.startswith("/"):
        found = bases.anchors.get(id(target), {}).get(fragment)
        if found is None:
            raise ResolveError(f"no anchor {quote(fragment)} in {name_of(schema)}")
        return found
    try:
        return dereference(target, fragment)
    except PointerError as err:
        raise ResolveError(f"JSON Pointer {quote(fragment)}: {err}") from None
