"""tool_call_assertion: assertions over the run's tool-call trace (docs/scoring.md §5.20).

Config (strict, required): ``tool_name``, ``must_call``, ``count`` / ``min_count`` /
``max_count``, ``arguments_contain`` (a JSON object fragment), ``ordered_tools`` and
``order_mode`` (``subsequence``, the default when ordered_tools is given, or ``exact``).
The target is the literal ``tool_calls``: the check reads the trace, never a text.

Failed calls are ignored for matching and ordering. A call matches when its name equals
``tool_name`` (if set) and its arguments contain the fragment (if set): objects key by key,
recursively; arrays order-free, each expected element consuming a distinct actual one;
scalars by equality with numbers as float64. Presence is asserted when ``must_call`` is
set, or implicitly (must_call true) when no count field is set and a name or fragment is.
Every check must pass for score 1; the reasons are joined with ``"; "``. The evidence holds
counts, indices and tool names only, never arguments.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import Field

from ..compat import gojson
from ..compat.textnorm import go_quote
from ..errors import FieldError
from ..record.evidence import ToolCall
from ..record.references import source
from .base import CheckInput, Kind, Outcome, StrictConfig

ORDER_MODES = ("subsequence", "exact")


class ToolCallAssertionConfig(StrictConfig):
    """The declared assertions; ``null`` means "not set", as in Go."""

    tool_name: str | None = None
    must_call: bool | None = None
    count: int | None = None
    min_count: int | None = None
    max_count: int | None = None
    arguments_contain: Any = Field(default=None)
    """Raw JSON; set (even to null) when the key is present — see :attr:`has_fragment`."""
    ordered_tools: list[str | None] | None = None
    order_mode: str | None = None

    @property
    def name(self) -> str:
        return (self.tool_name or "").strip()

    @property
    def has_fragment(self) -> bool:
        return "arguments_contain" in self.model_fields_set

    @property
    def order(self) -> list[str]:
        return [(tool or "").strip() for tool in self.ordered_tools or []]

    @property
    def mode(self) -> str:
        mode = (self.order_mode or "").strip()
        return "subsequence" if not mode and self.order else mode

    @property
    def has_count(self) -> bool:
        return self.count is not None or self.min_count is not None or self.max_count is not None

    @property
    def has_presence(self) -> bool:
        if self.must_call is not None:
            return True
        return not self.has_count and (bool(self.name) or self.has_fragment)

    @property
    def has_any(self) -> bool:
        return (bool(self.name) or self.must_call is not None or self.has_count
                or self.has_fragment or bool(self.order))


def _count_rules(config: ToolCallAssertionConfig, path: str) -> list[FieldError]:
    errors = [FieldError(f"{path}.{name}", "must be greater than or equal to 0")
              for name in ("count", "min_count", "max_count")
              if (getattr(config, name) or 0) < 0]
    if config.count is not None and (config.min_count is not None or config.max_count is not None):
        errors.append(FieldError(f"{path}.count", "cannot be combined with min_count or max_count"))
    if (config.min_count is not None and config.max_count is not None
            and config.min_count > config.max_count):
        errors.append(FieldError(f"{path}.min_count", "must be less than or equal to max_count"))
    return errors


def _must_call_rules(config: ToolCallAssertionConfig, path: str) -> list[FieldError]:
    if config.must_call is None or not config.has_count:
        return []
    conflicts = (
        (config.must_call and config.count == 0, "cannot be true when count is 0"),
        (config.must_call and config.max_count == 0, "cannot be true when max_count is 0"),
        (not config.must_call and (config.count or 0) > 0,
         "cannot be false when count is greater than 0"),
        (not config.must_call and (config.min_count or 0) > 0,
         "cannot be false when min_count is greater than 0"),
    )
    return [FieldError(f"{path}.must_call", message) for conflict, message in conflicts if conflict]


def _shape_rules(config: ToolCallAssertionConfig, path: str) -> list[FieldError]:
    errors = []
    if config.has_fragment and not isinstance(config.arguments_contain, dict):
        errors.append(FieldError(f"{path}.arguments_contain", "must be a JSON object"))
    errors += [FieldError(f"{path}.ordered_tools[{i}]", "must not be empty")
               for i, tool in enumerate(config.order) if not tool]
    if config.mode:
        if config.mode not in ORDER_MODES:
            errors.append(FieldError(f"{path}.order_mode", 'must be "subsequence" or "exact"'))
        if not config.order:
            errors.append(FieldError(f"{path}.ordered_tools", "is required when order_mode is set"))
    if not config.has_any:
        errors.append(FieldError(path, "must declare at least one tool call assertion"))
    return errors


def config_rules(config: ToolCallAssertionConfig, path: str) -> list[FieldError]:
    """Load-time rules for a decoded config, in AgentClash's order (paths under ``path``)."""
    return _count_rules(config, path) + _must_call_rules(config, path) + _shape_rules(config, path)


def contains(actual: Any, fragment: Any) -> bool:
    """Whether the decoded ``actual`` arguments contain the JSON ``fragment``."""
    if isinstance(fragment, dict):
        return isinstance(actual, dict) and all(
            key in actual and contains(actual[key], value) for key, value in fragment.items())
    if isinstance(fragment, list):
        if not isinstance(actual, list) or len(fragment) > len(actual):
            return False
        unused = list(range(len(actual)))
        for expected in fragment:
            hit = next((i for i in unused if contains(actual[i], expected)), None)
            if hit is None:
                return False
            unused.remove(hit)
        return True
    return gojson.equal(actual, fragment)


def _arguments_match(call: ToolCall, config: ToolCallAssertionConfig) -> bool:
    if not config.has_fragment:
        return True
    try:
        arguments = gojson.unmarshal(call.arguments)
    except gojson.UnmarshalError:
        return False
    return contains(arguments, config.arguments_contain)


def matches(config: ToolCallAssertionConfig, trace: list[ToolCall]) -> list[int]:
    """Indices (in the whole trace) of the successful calls that match name and fragment."""
    return [i for i, call in enumerate(trace)
            if not call.failed and (not config.name or call.name == config.name)
            and _arguments_match(call, config)]


def _go_list(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"


def _is_subsequence(observed: list[str], expected: list[str]) -> bool:
    remaining = iter(observed)
    return all(any(name == tool for name in remaining) for tool in expected)


def _order_problem(config: ToolCallAssertionConfig, observed: list[str]) -> str:
    expected = config.order
    if not expected:
        return ""
    if config.mode == "subsequence":
        return "" if _is_subsequence(observed, expected) else (
            f"observed tool order {_go_list(observed)} does not contain expected "
            f"subsequence {_go_list(expected)}")
    if config.mode == "exact":
        return "" if observed == expected else (
            f"observed tool order {_go_list(observed)} does not exactly match expected "
            f"order {_go_list(expected)}")
    return f"unsupported order_mode {go_quote(config.mode)}"


def _count_problems(config: ToolCallAssertionConfig, matched: int) -> list[str]:
    problems = []
    if config.has_presence:
        must_call = True if config.must_call is None else config.must_call
        if must_call and matched == 0:
            problems.append("expected matching tool call was not observed")
        if not must_call and matched > 0:
            problems.append("forbidden matching tool call was observed")
    if config.count is not None and matched != config.count:
        problems.append(f"matched tool call count {matched} != expected {config.count}")
    if config.min_count is not None and matched < config.min_count:
        problems.append(f"matched tool call count {matched} < min_count {config.min_count}")
    if config.max_count is not None and matched > config.max_count:
        problems.append(f"matched tool call count {matched} > max_count {config.max_count}")
    return problems


def assess(config: ToolCallAssertionConfig, trace: list[ToolCall]) -> Outcome:
    """All assertions of ``config`` over the tool-call ``trace``."""
    matched = matches(config, trace)
    observed = [call.name for call in trace if not call.failed]
    order_problem = _order_problem(config, observed)
    problems = _count_problems(config, len(matched)) + ([order_problem] if order_problem else [])
    first = trace[matched[0]] if matched else None
    located = source("tool_call", (first.sequence, first.event_type), "tool_calls") \
        if first is not None and first.sequence > 0 else None
    return replace(Outcome.check(
        not problems, "", "; ".join(problems),
        tool_name=config.name or None, observed_count=len(observed),
        failed_count=len(trace) - len(observed), matched_count=len(matched),
        matched_indices=matched, observed_tool_names=observed, expected_count=config.count,
        expected_min_count=config.min_count, expected_max_count=config.max_count,
        expected_order=config.order or None, expected_order_mode=config.mode or None,
        arguments_contain_set=config.has_fragment), source=located)


def check(given: CheckInput) -> Outcome:
    if given.decl.config is None:
        return Outcome.broken(
            "parse tool_call_assertion config: tool_call_assertion config is required")
    config = given.config
    if not isinstance(config, ToolCallAssertionConfig):
        return Outcome.broken("invalid tool_call_assertion config")
    problems = config_rules(config, "config")
    if problems:
        return Outcome.broken("invalid tool_call_assertion config: "
                             + "; ".join(str(problem) for problem in problems))
    return assess(config, given.evidence.tool_calls)


KIND = Kind("tool_call_assertion", check, config=ToolCallAssertionConfig, strictness="strict",
            expected="omitted", resolves_target=False, config_rules=config_rules,
            config_required=True, go_struct="toolCallAssertionConfig")
