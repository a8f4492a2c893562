"""Test doubles and the contract checks: production code never imports this package.

:mod:`~sandbox.testing.fake` is the in-memory sandbox the unit tests run the pipeline on
(with its file tree, tiny shell and programs in ``fake_fs``, ``fake_shell`` and
``fake_programs``); :mod:`~sandbox.testing.contract` holds the conformance checks that
``tests/contract`` runs against the fake and the Docker driver alike. An import-linter
contract in pyproject.toml keeps the worker's modules from importing any of it.
"""
