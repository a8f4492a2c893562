"""Development tools of the tasks layer: the stub judge server the demo and tests use.

:mod:`~tasks.devtools.judge_stub` answers both judge wire APIs on 127.0.0.1 as the caller
scripts it. Nothing here runs in production: the worker process never imports this
package (an import-linter contract in pyproject.toml says so).
"""
