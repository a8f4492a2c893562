"""evalfleet: a distributed evaluation worker fleet.

One namespace for the four packages the repository keeps at its top level
(``scoring/``, ``sandbox/``, ``tasks/``, ``workers/``): ``evalfleet/`` holds a relative
symlink to each, so that the packages stay where the design puts them while every import,
the wheel, mypy and import-linter see one tree, ``evalfleet.scoring`` and so on
(docs/architecture.md, "One namespace").
"""
