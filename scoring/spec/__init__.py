"""The evaluation spec as a document: its models, how packs and specs are read, and the
load-time rules.

:mod:`.models` (the ``evaluation_spec`` as strict pydantic models, normalized on the way
in), :mod:`.loading` (JSON or YAML, bare spec or pack, from a path, text or mapping),
:mod:`.envelope` (the pack around the spec, decoded as AgentClash's typed structs),
:mod:`.cases` (input sets, cases and their artifacts), :mod:`.rules` with
:mod:`.dimension_rules` and :mod:`.rulekit` (AgentClash's ``ValidateEvaluationSpec``: every
finding with its field path and message).
"""
