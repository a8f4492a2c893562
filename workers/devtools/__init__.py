"""Development tools of the process edge: a fleet and an engine on this machine, the demo.

:mod:`~workers.devtools.local_fleet` starts a private Redis and worker node processes on
loopback, :mod:`~workers.devtools.local_engine` a sandbox engine container on the local
Docker engine, and :mod:`~workers.devtools.demo` runs the example packs through such a
fleet (``evalfleet demo``). :mod:`~workers.devtools.generated` writes the files generated
from other sources (:mod:`~workers.devtools.manifests`: the Kubernetes manifests that copy
the alerts, the dashboard and the queue names; :mod:`~workers.devtools.settings_doc`:
docs/settings.md from the settings model). The tests, the benchmarks and the README's
quick start use them; the worker process never imports this package (an import-linter
contract in pyproject.toml says so, and ``workers.cli`` imports the demo only when it runs).
"""
