"""``docs/settings.md``: every setting of :class:`workers.settings.Settings`, generated.

One table per section (the top level, then each nested model: ``profiles.<name>``,
``judges``, ``judges.providers.<key>``, ``preflight``, ``signing``), each row a variable:
its ``EVALFLEET_…`` name (``__`` nesting), type and bounds, default, and meaning (the
field's attribute docstring, read from the source with :mod:`ast`, as pydantic's
``use_attribute_docstrings`` does). A field without a docstring is an error: the docs
would have a hole. :mod:`workers.devtools.generated` writes the file and the unit tests
compare it.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import json
import textwrap
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from evalfleet.workers.settings import SECRETS_DIR, Settings

PATH = Path("docs/settings.md")

HEADER = f"""\
<!-- GENERATED from workers/settings.py by `.venv/bin/python -m evalfleet.workers.devtools.\
generated`: do not edit; edit the field's docstring and regenerate (a unit test compares). -->
# Settings

Every setting of a worker and of the command line, read once from the environment at the
process edge (`workers/settings.py`). Names take the prefix `EVALFLEET_`; a nested section
adds `__` and its field (`EVALFLEET_PROFILES__DEFAULT__MEMORY_MB=1024`); lists and maps are
JSON (`EVALFLEET_QUEUES='["default", "gpu"]'`). When `{SECRETS_DIR}` exists, a top-level
setting may also be a file there named like its variable in lower case
(`{SECRETS_DIR}/evalfleet_redis_url`); the environment wins. Unknown `EVALFLEET_` names are
ignored.
"""


class MissingDocstring(Exception):
    """A settings field has no attribute docstring, so the docs would not say what it means."""


def field_docs(model: type[BaseModel]) -> dict[str, str]:
    """The attribute docstrings of a model's own fields, each as one line."""
    (node,) = ast.parse(textwrap.dedent(inspect.getsource(model))).body
    body = node.body if isinstance(node, ast.ClassDef) else []
    docs = {}
    for statement, following in itertools.pairwise(body):
        if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)):
            docs[statement.target.id] = " ".join(
                inspect.cleandoc(following.value.value).split())
    return docs


def nested_model(annotation: Any) -> type[BaseModel] | None:
    """The model a field nests, directly or as the values of a map (``dict[str, M]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) is dict:
        return nested_model(get_args(annotation)[1])
    return None


def type_name(annotation: Any) -> str:
    """A type as an operator reads it: ``int``, ``str or unset``, ``"off" or "flag"``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        return " or ".join("unset" if a is type(None) else type_name(a) for a in args)
    if origin is Literal:
        return " or ".join(json.dumps(a) for a in args)
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(type_name(a) for a in args)}] (JSON)"
    if annotation is SecretStr:
        return "secret"
    return "path" if annotation is Path else str(getattr(annotation, "__name__", annotation))


BOUNDS = {annotated_types.Gt: ("> ", "gt"), annotated_types.Ge: ("≥ ", "ge"),
          annotated_types.MinLen: ("length ≥ ", "min_length")}


def bounds(field: FieldInfo) -> str:
    """A field's constraints (``> 0``), from pydantic's metadata."""
    found = [sign + str(getattr(m, attr)) for m in field.metadata
             for kind, (sign, attr) in BOUNDS.items() if isinstance(m, kind)]
    return ", ".join(found)


def default(field: FieldInfo) -> str:
    """A field's default as the environment would spell it; ``required`` when it has none."""
    factory = field.default_factory
    if factory is None:
        return "required" if field.default is PydanticUndefined else spelled(field.default)
    if isinstance(factory, type) and issubclass(factory, BaseModel):
        return "the defaults below"
    if inspect.isfunction(factory) and factory.__name__ != "<lambda>" and factory.__doc__:
        return factory.__doc__.strip()  # computed at start: say how
    value = factory()  # type: ignore[call-arg]
    if value and isinstance(value, dict) and all(isinstance(v, BaseModel) for v in value.values()):
        return "keys " + ", ".join(f"`{k}`" for k in value) + " (defaults below)"
    return spelled(value)


def spelled(value: Any) -> str:
    """A default value in backticks, as it would be written in the environment."""
    if value is None:
        return "unset"
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if isinstance(value, bool | list | dict):
        return f"`{json.dumps(value)}`"
    return f"`{value}`" if str(value) else '`""`'


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def row(variable: str, field: FieldInfo, meaning: str) -> str:
    """One table row: variable, type and bounds, default, meaning."""
    kind = type_name(field.annotation)
    limits = bounds(field)
    kind = f"{kind}, {limits}" if limits else kind
    return (f"| `{variable}` | {cell(kind)} | {cell(default(field))} | {cell(meaning)} |")


def section(model: type[BaseModel], prefix: str, title: str) -> list[str]:
    """The Markdown of one model: its table, then the sections of the models it nests.

    Raises:
        MissingDocstring: a field of the model (or of one it nests) has no docstring.
    """
    intro = " ".join(inspect.cleandoc(model.__doc__ or "").split())
    lines = ["", f"## {title}", "", intro, "",
             "| variable | type | default | meaning |", "|---|---|---|---|"]
    lines += [row(f"{prefix}{name.upper()}", field, doc) for name, field, doc in documented(model)]
    for inner, inner_prefix, path in nested_sections(model, prefix, title):
        lines += section(inner, inner_prefix, path)
    return lines


def documented(model: type[BaseModel]) -> list[tuple[str, FieldInfo, str]]:
    """Each field of the model with its docstring.

    Raises:
        MissingDocstring: a field has none.
    """
    docs = field_docs(model)
    missing = [name for name in model.model_fields if name not in docs]
    if missing:
        raise MissingDocstring(f"{model.__name__}.{missing[0]} has no docstring")
    return [(name, field, docs[name]) for name, field in model.model_fields.items()]


def nested_sections(model: type[BaseModel], prefix: str,
                    title: str) -> list[tuple[type[BaseModel], str, str]]:
    """The models a model nests: each with its variables' prefix and its section's title
    (a map of models, such as ``profiles``, puts ``<PROFILE>`` where its key goes)."""
    found: list[tuple[type[BaseModel], str, str]] = []
    for name, field in model.model_fields.items():
        inner = nested_model(field.annotation)
        variable, path = f"{prefix}{name.upper()}", f"{title}.{name}".removeprefix("Top level.")
        if inner is None:
            continue
        direct = inner is field.annotation  # else the values of a map
        if direct:
            found.append((inner, f"{variable}__", path))
        else:
            key = name.removesuffix("es") if name.endswith("ches") else name.rstrip("s")
            found.append((inner, f"{variable}__<{key.upper()}>__", f"{path}.<{key}>"))
    return found


def render() -> str:
    """The whole of ``docs/settings.md``."""
    return HEADER + "\n".join(section(Settings, "EVALFLEET_", "Top level")) + "\n"


def settings_doc(root: Path) -> str:
    """What :mod:`workers.devtools.generated` writes to ``docs/settings.md`` (``root``
    unused: the source is the imported model)."""
    return render()
