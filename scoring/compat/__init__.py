"""Compatibility helpers: how AgentClash's Go code reads and writes values, redone in
Python so that every score, reason and message matches field for field.

Go's ``encoding/json`` (:mod:`.gojsonscan`, :mod:`.gojson`, :mod:`.godecode`,
:mod:`.lenient`, :mod:`.jsondoc`), its string quoting, float parsing, paths and times
(:mod:`.goquote`, :mod:`.gofloat`, :mod:`.gopath`, :mod:`.gotime`), ``gopkg.in/yaml.v3``
(:mod:`.yamlv3`), RE2 as Go's ``regexp`` compiles it (:mod:`.patterns`), text
normalization and JSON-to-text (:mod:`.textnorm`, :mod:`.textform`), JSONPath and its
comparators (:mod:`.jsonpath`, :mod:`.jsoncompare`), math_equivalence's expression language
(:mod:`.mathexpr`, :mod:`.mathnorm`, :mod:`.mathcanon`) and the BLEU/ROUGE/chrF arithmetic
(:mod:`.generation`). Nothing here knows the spec or the scorecard.
"""

from __future__ import annotations

from . import yamlv3
from .gojson import UnmarshalError, as_float64, unmarshal
from .textnorm import split_words

__all__ = ["UnmarshalError", "as_float64", "split_words", "unmarshal", "yamlv3"]
