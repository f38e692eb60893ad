"""The trace assertion table: one small check per keyword of ai-tester's vocabulary."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from replaygate.assertions import trace_fields as fields
from replaygate.assertions.trace import Trace, TraceCall
from replaygate.assertions.trace_fields import Spec
from replaygate.assertions.trace_match import (
    ArgMatch,
    Rule,
    args_hold,
    compile_args,
    compile_pattern,
    flags_differ,
    json_text,
    search,
)
from replaygate.assertions.trace_paths import allowed_prefixes, escape, path_inputs
from replaygate.assertions.values import short
from replaygate.core.model import Capture, Classification

QUESTION_TOOLS = frozenset({"AskUserQuestion", "Questions"})
DEFAULT_CAPTURE_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Verdict:
    message: str | None  # None: the assertion holds
    classification: str = Classification.SCHEMA_VIOLATION
    rules: frozenset[Rule] = frozenset()
    captures: tuple[Capture, ...] = ()


@dataclass(frozen=True, slots=True)
class Keyword:
    """One assertion type: its fields with their ``prepare`` (ValueError on a bad value)."""

    name: str
    fields: Mapping[str, Callable[[Any, str], Any]]
    required: frozenset[str]
    check: Callable[[Trace, Spec], Verdict]
    one_of: frozenset[str] = frozenset()  # exactly one of these fields must be given


# --- shared pieces of the checks ------------------------------------------------------------


def _args(spec: Spec) -> tuple[ArgMatch, ...]:
    matches: tuple[ArgMatch, ...] = spec.get("args_match", ())
    return matches


def _call_text(spec: Spec) -> str:
    args = ", ".join(match.describe() for match in _args(spec))
    return _tool_text(spec) + (f" with {args}" if args else "")


def _tool_text(spec: Spec) -> str:
    if "tool_pattern" in spec:
        return f"a tool matching {spec['tool_pattern'].pattern!r}"
    return repr(spec["tool"])


def _of_tool(trace: Trace, spec: Spec) -> list[TraceCall]:
    """The calls of the spec's tool: named ``tool``, or matching ``tool_pattern``."""
    if "tool_pattern" in spec:
        return [call for call in trace.calls if search(spec["tool_pattern"], call.name)]
    return [call for call in trace.calls if call.name == spec["tool"]]


def _captures(call: TraceCall, fields: tuple[str, ...], limit: int) -> tuple[Capture, ...]:
    found = []
    for name in fields:
        if call.arguments is None or name not in call.arguments:
            continue
        value = call.arguments[name]
        text = value if isinstance(value, str) else json_text(value)
        found.append(Capture(name, text[:limit], len(text) > limit))
    return tuple(found)


def _limit(spec: Spec) -> int:
    limit: int = spec.get("capture_max_chars", DEFAULT_CAPTURE_CHARS)
    return limit


def _failing(message: str, classification: str, rules: set[Rule]) -> Verdict:
    return Verdict(message, classification, frozenset(rules))


# --- check: (trace, prepared spec) -> Verdict -----------------------------------------------


def _tool_called(trace: Trace, spec: Spec) -> Verdict:
    """call_index: the N-th call of the tool (all its calls counted) must match;
    match_index: the N-th of the calls that match."""
    calls = _of_tool(trace, spec)
    if not calls:
        return _failing(
            f"{_tool_text(spec)} was never called", Classification.TOOL_NOT_INVOKED, set()
        )
    rules: set[Rule] = set()
    index = spec.get("call_index")
    candidates = calls if index is None else calls[index : index + 1]
    matching = [call for call in candidates if args_hold(_args(spec), call.arguments, rules)]
    pick = spec.get("match_index", 0)
    if len(matching) > pick:
        captures = _captures(matching[pick], spec.get("capture", ()), _limit(spec))
        return Verdict(None, rules=frozenset(rules), captures=captures)
    where = f"call {index} of " if index is not None else ""
    counted = f"{len(calls)} call{'s' if len(calls) != 1 else ''} of it, {len(matching)} matching"
    message = f"no {where}{_call_text(spec)} ({counted})"
    return _failing(message, Classification.SCHEMA_VIOLATION, rules)


def _tool_call_sequence(trace: Trace, spec: Spec) -> Verdict:
    calls, cursor, rules = trace.calls, 0, set[Rule]()
    captures: list[Capture] = []
    for number, step in enumerate(spec["sequence"], 1):
        found = next(
            (
                at
                for at in range(cursor, len(calls))
                if calls[at].name == step["tool"]
                and args_hold(_args(step), calls[at].arguments, rules)
            ),
            None,
        )
        if found is None:
            never = all(call.name != step["tool"] for call in calls)
            kind = Classification.TOOL_NOT_INVOKED if never else Classification.WRONG_TOOL
            message = f"step {number} of {len(spec['sequence'])}, {_call_text(step)}, "
            message += f"not found after {number - 1} matched step(s)"
            return _failing(message, kind, rules)
        captures += _captures(calls[found], step.get("capture", ()), _limit(spec))
        cursor = found + 1
    return Verdict(None, rules=frozenset(rules), captures=tuple(captures))


def _no_tool_called(trace: Trace, spec: Spec) -> Verdict:
    rules: set[Rule] = set()
    calls = _of_tool(trace, spec)
    hits = [n for n, call in enumerate(calls) if args_hold(_args(spec), call.arguments, rules)]
    if not hits:
        return Verdict(None, rules=frozenset(rules))
    call = calls[hits[0]]
    shown = short(dict(call.arguments)) if call.arguments is not None else "malformed arguments"
    message = f"{_call_text(spec)} was called ({len(hits)} time(s)), first with {shown}"
    return _failing(message, Classification.WRONG_TOOL, rules)


def _output(trace: Trace, spec: Spec, wanted: bool) -> Verdict:
    pattern = spec["pattern"]
    rules = {Rule.INLINE_FLAGS} if flags_differ(pattern) else set()
    if search(pattern, trace.final_output) is wanted:
        return Verdict(None, rules=frozenset(rules))
    verb = "does not match" if wanted else "matches"
    message = f"the final output {short(trace.final_output)} {verb} {short(pattern.pattern)}"
    return _failing(message, Classification.SCHEMA_VIOLATION, rules)


def _output_contains(trace: Trace, spec: Spec) -> Verdict:
    return _output(trace, spec, True)


def _no_output_contains(trace: Trace, spec: Spec) -> Verdict:
    return _output(trace, spec, False)


def _turn_count_at_most(trace: Trace, spec: Spec) -> Verdict:
    count, recorded = trace.turn_count, trace.turns_used
    # ai-tester reads turnsUsed: the rule is ours only where the counted turns are more
    rules = {Rule.TURN_COUNT} if recorded is not None and recorded != count else set()
    if count <= spec["max"]:
        return Verdict(None, rules=frozenset(rules))
    message = f"{count} turns, more than {spec['max']}"
    return _failing(message, Classification.BUDGET_EXCEEDED, rules)


def _max_turns(trace: Trace, spec: Spec) -> Verdict:
    """The scenario's own max_turns: a run the recorder stopped at the cap fails."""
    count = trace.turn_count
    if not trace.stopped_at_cap and count <= spec["max"]:
        return Verdict(None)
    message = f"the run hit max_turns {spec['max']} ({count} turns)"
    return _failing(message, Classification.BUDGET_EXCEEDED, {Rule.MAX_TURNS})


def _token_budget(trace: Trace, spec: Spec) -> Verdict:
    total, recorded = trace.total_tokens, trace.tokens
    rules = {Rule.TOKEN_COUNT} if recorded is not None and recorded != total else set()
    if total <= spec["max"]:
        return Verdict(None, rules=frozenset(rules))
    message = f"{total} tokens, more than the budget of {spec['max']:g}"
    return _failing(message, Classification.BUDGET_EXCEEDED, rules)


def _no_unanswered_questions(trace: Trace, spec: Spec) -> Verdict:
    """Counted per question (a batch asks several); the recorder's own count is a floor."""
    counted = sum(
        c.questions for c in trace.calls if c.name in QUESTION_TOOLS and c.answered is False
    )
    recorded = trace.unanswered
    rules = {Rule.UNANSWERED_COUNT} if recorded is not None and recorded != counted else set()
    unanswered = max(counted, recorded or 0)
    if not unanswered:
        return Verdict(None, rules=frozenset(rules))
    message = f"{unanswered} question(s) to the user had no matching scripted answer"
    if recorded is not None and recorded > counted:
        message += f" (the trace records {recorded}; its calls show {counted})"
    return _failing(message, Classification.UNANSWERED_QUESTION, rules)


def _no_path_escape(trace: Trace, spec: Spec) -> Verdict:
    sandbox = spec.get("root") or trace.sandbox
    if not sandbox:
        message = "no sandbox root: the trace records none and the assertion sets no 'root'"
        return Verdict(message, Classification.PATH_ESCAPE)
    prefixes = allowed_prefixes(sandbox, spec.get("allow_outside", ()))
    tools = spec.get("tools")
    rules: set[Rule] = set()
    escaped = [
        f"{call.name} {field} {raw!r} -> {path}"
        for call in trace.calls
        if tools is None or call.name in tools
        for field, raw in path_inputs(call)
        if (path := escape(call, field, raw, prefixes, rules)) is not None
    ]
    if not escaped:
        return Verdict(None, rules=frozenset(rules))
    message = f"{len(escaped)} path(s) leave the sandbox {sandbox}: " + "; ".join(escaped[:3])
    return _failing(message, Classification.PATH_ESCAPE, rules)


_CAPTURE = {"capture": fields.texts, "capture_max_chars": fields.positive}
_ARGS = {"tool": fields.text, "tool_pattern": compile_pattern, "args_match": compile_args}
_TOOL = frozenset({"tool", "tool_pattern"})
_PATTERN = {"pattern": compile_pattern}

KEYWORDS: dict[str, Keyword] = {
    k.name: k
    for k in (
        Keyword(
            "tool_called",
            {**_ARGS, "call_index": fields.count, "match_index": fields.count, **_CAPTURE},
            frozenset(),
            _tool_called,
            _TOOL,
        ),
        Keyword(
            "tool_call_sequence",
            {"sequence": fields.steps, "capture_max_chars": fields.positive},
            frozenset({"sequence"}),
            _tool_call_sequence,
        ),
        Keyword("no_tool_called", _ARGS, frozenset(), _no_tool_called, _TOOL),
        Keyword("output_contains", _PATTERN, frozenset({"pattern"}), _output_contains),
        Keyword("no_output_contains", _PATTERN, frozenset({"pattern"}), _no_output_contains),
        Keyword(
            "turn_count_at_most", {"max": fields.positive}, frozenset({"max"}), _turn_count_at_most
        ),
        Keyword("token_budget", {"max": fields.amount}, frozenset({"max"}), _token_budget),
        Keyword(
            "no_path_escape",
            {"root": fields.text, "tools": fields.texts, "allow_outside": fields.texts},
            frozenset(),
            _no_path_escape,
        ),
        Keyword("no_unanswered_questions", {}, frozenset(), _no_unanswered_questions),
        Keyword("max_turns", {"max": fields.positive}, frozenset({"max"}), _max_turns),
    )
}
COMMON_FIELDS = ("id", "type", "weight")
