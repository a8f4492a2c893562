"""The forgeries of the battery that know the answers: built from the pack's reference
submission (:attr:`~tasks.checking.forgeries.kit.Target.reference`) and the case the agent sees
(:attr:`~tasks.checking.forgeries.kit.Target.visible`), so ``evalfleet check`` builds them for each
case it checks. Neither implements the task where it is judged:

* the **memorizer** answers only the visible case's inputs (the reference's answers, as if
  memorized) and nothing for any other: it wins a pack whose hidden tests ask nothing the
  agent was not shown;
* the **probe start-up hooks** leave the deliverable empty and plant Python start-up hooks
  in the candidate's user site that answer for it (the reference, loaded in its place):
  they win wherever the candidate's code runs with the user site of a ``HOME`` it owns
  (issue 39: a probe did).

A pack whose reference has no Python deliverable gets neither (nothing to memorize or load).
"""

from __future__ import annotations

import posixpath
import textwrap

from .kit import NOTHING, Builder, Forgery, Target, planted, submission

#: What a memorizer's win tells the pack's author.
ONLY_VISIBLE = ("the hidden tests exercise only the inputs of the case the agent sees: a "
                "submission that memorized their answers passes; test inputs the case does "
                "not show")


def _python(aim: Target) -> list[tuple[str, str]]:
    """The reference's Python deliverables, ``(path, source)``, top-level modules first."""
    return [(path, source) for path, source in aim.reference if path.endswith(".py")]


def _memorizing(source: str, visible: tuple[str, ...]) -> str:
    """A module whose public functions give the reference's answer when every argument
    is one of the case's visible values, and ``None`` otherwise; run as a script, it
    answers only visible arguments."""
    return textwrap.dedent(f"""\
        import sys

        _VISIBLE = frozenset({sorted(set(visible))!r})
        _REAL = {{"__name__": __name__, "__file__": __file__}}
        exec(compile({source!r}, __file__, "exec"), _REAL)


        def _seen(values):
            return all(str(value) in _VISIBLE for value in values)


        def _memorized(real):
            def answer(*args, **kwargs):
                return real(*args, **kwargs) if _seen((*args, *kwargs.values())) else None
            return answer


        for _name, _value in list(_REAL.items()):
            if (not _name.startswith("_") and callable(_value)
                    and getattr(_value, "__module__", None) == __name__):
                globals()[_name] = _memorized(_value)
        if __name__ == "__main__" and not _seen(sys.argv[1:]):
            raise SystemExit(1)
        """)


def memorizer(aim: Target) -> Forgery | None:
    """The reference's answers for the visible inputs only."""
    sources = _python(aim)
    if not sources:
        return None
    files = {path: _memorizing(source, aim.visible) for path, source in sources}
    return Forgery("memorizer", "the deliverable answers the visible case's inputs (the "
                   "reference's answers, as if memorized) and nothing else",
                   submission(planted(aim, **files)), means=ONLY_VISIBLE)


def startup_hook(modules: dict[str, str]) -> str:
    """A ``usercustomize`` that puts each module (name → source) in ``sys.modules``."""
    return textwrap.dedent(f"""\
        import sys, types

        for _name, _source in {modules!r}.items():
            _module = types.ModuleType(_name)
            _module.__file__ = _name + ".py"
            exec(compile(_source, _module.__file__, "exec"), _module.__dict__)
            sys.modules[_name] = _module
        """)


def _planting(hook: str) -> str:
    """A script planting ``hook`` as ``usercustomize``, ``sitecustomize`` and a ``.pth`` in
    the user site of every ``HOME`` the candidate owns (the workspace, ``/tmp``)."""
    return textwrap.dedent(f"""\
        import os, site
        for home in ("/workspace", "/tmp"):
            os.environ["HOME"] = home
            site.USER_BASE = site.USER_SITE = None
            where = site.getusersitepackages()
            os.makedirs(where, exist_ok=True)
            for name in ("usercustomize.py", "sitecustomize.py"):
                open(os.path.join(where, name), "w").write({hook!r})
            open(os.path.join(where, "answers.pth"), "w").write("import usercustomize\\n")
            for folder, _, names in os.walk(os.path.join(home, ".local")):
                os.chmod(folder, 0o755)
                for name in names:
                    os.chmod(os.path.join(folder, name), 0o644)
        """)


def probe_hooks(aim: Target) -> Forgery | None:
    """An empty deliverable, and start-up hooks that load the reference in its place."""
    modules = {posixpath.basename(path)[:-3]: source for path, source in _python(aim)
               if "/" not in path.strip("/")}
    if not modules:
        return None
    plant = _planting(startup_hook(modules))
    return Forgery("probe start-up hooks", "the deliverable does nothing; usercustomize, "
                   "sitecustomize and a .pth in the candidate's user site load the "
                   "reference in its place for any Python that reads that site",
                   submission(planted(aim, NOTHING, **{"plant.py": plant}), "python3 plant.py"))


#: This module's part of :data:`tasks.checking.forgeries.battery.FORGERIES`, in the report's order.
FORGERIES: dict[str, Builder] = {"memorizer": memorizer, "probe start-up hooks": probe_hooks}
