"""Connexity test cases (the 1.0.0 schema document's shape and the current one) with their
recorded transcripts: the deterministic part of each case as trace assertions."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from replaygate.assertions.trace import ASSISTANT, Trace, Turn
from replaygate.assertions.trace_compile import NotEvaluated, TraceAssertion
from replaygate.assertions.trace_match import ArgMatch
from replaygate.core.errors import PackError
from replaygate.core.model import Problem
from replaygate.core.places import where
from replaygate.loading import files, json_reader, traces, yaml_reader
from replaygate.loading.contract import Contract, GoldenCase, trace_only_contract
from replaygate.loading.files import shown_path
from replaygate.loading.fixtures import CaseInput, shape_line
from replaygate.loading.normalize import FixtureShapeError, normalize_response
from replaygate.loading.packs import Pack, contract_path, validate

if TYPE_CHECKING:
    from replaygate.loading.formats.registry import PeerOptions

TRANSCRIPT_SUFFIX = ".transcript.json"
MAX_NAME = 255


class Difficulty(StrEnum):
    NORMAL = "normal"
    HARD = "hard"


class CaseStatus(StrEnum):
    DRAFT = "draft"
    ACTIVE = "active"
    ARCHIVED = "archived"


class FirstTurn(StrEnum):
    AGENT = "agent"
    USER = "user"


ENUMS: dict[str, type[StrEnum]] = {
    "difficulty": Difficulty,
    "status": CaseStatus,
    "first_turn": FirstTurn,
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Persona(_Model):
    type: str
    description: str
    instructions: str


class MockResponse(_Model):
    expected_params: dict[str, Any] | None = None
    response: dict[str, Any]


class ExpectedToolCall(_Model):
    tool: str = Field(min_length=1)
    expected_params: dict[str, Any] | None = None
    mock_responses: list[MockResponse] | None = None


class TestCaseModel(_Model):
    """Both shapes' keys; the enums and the name length are checked before, in our words."""

    id: str | None = None
    name: str
    description: str | None = None
    difficulty: str = "normal"
    tags: list[str] = []
    status: str = "active"
    persona: Persona | None = None  # 1.0.0
    initial_message: str | None = None  # 1.0.0
    max_turns: int | None = Field(default=None, gt=0)  # 1.0.0; now per run
    persona_context: str | None = None
    first_turn: str = "user"
    first_message: str | None = None
    user_context: dict[str, Any] | None = None
    expected_outcomes: dict[str, Any] | list[str] | None = None
    expected_tool_calls: list[ExpectedToolCall] | None = None
    evaluation_criteria_override: str | None = None
    agent_id: str | None = None
    source_call_id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


def _constraints(raw: Mapping[str, Any], shown: str) -> None:
    name = raw.get("name")
    if isinstance(name, str) and not 0 < len(name) <= MAX_NAME:
        message = f"name: must be 1 to {MAX_NAME} characters, got {len(name)}"
        raise PackError(shown, yaml_reader.line_of(raw, ("name",)), message)
    for key, enum in ENUMS.items():
        value = raw.get(key)
        if key in raw and value not in set(enum):
            allowed = ", ".join(enum)
            message = f"{key}: {json.dumps(value)} is not one of {allowed}"
            raise PackError(shown, yaml_reader.line_of(raw, (key,)), message)


def read_case(path: Path, shown: str) -> tuple[TestCaseModel, Any]:
    """The test case and its raw mapping (with lines: JSON is read by the YAML reader here)."""
    text = files.read_text(path, shown=shown, max_bytes=files.MAX_JSON_BYTES)
    json_reader.parse_json(text, shown=shown)  # JSON's own rules first (no NaN, no duplicates)
    raw = yaml_reader.parse_yaml(text, shown=shown)
    if not isinstance(raw, Mapping):
        raise PackError(shown, 1, "a Connexity test case must be a JSON object")
    _constraints(raw, shown)
    return validate(TestCaseModel, raw, shown), raw


def _line(raw: Any, *loc: str | int) -> int:
    return yaml_reader.line_of(raw, loc) or 1


def _expected_call(index: int, call: ExpectedToolCall, raw: Any, shown: str) -> TraceAssertion:
    params = call.expected_params or {}
    matches = tuple(ArgMatch(key, None, None, value) for key, value in params.items())
    spec = {"tool": call.tool, "args_match": matches} if matches else {"tool": call.tool}
    locator = f"expected_tool_calls[{index}]"
    line = _line(raw, "expected_tool_calls", index)
    return TraceAssertion(locator, "tool_called", spec, 1.0, locator, shown, line)


def _judged(model: TestCaseModel, raw: Any, shown: str) -> list[NotEvaluated]:
    found = []
    outcomes = model.expected_outcomes
    if isinstance(outcomes, dict):
        for key, value in outcomes.items():
            line = _line(raw, "expected_outcomes", key)
            reason = f"needs a judge: {key} = {json.dumps(value)}"
            found.append(NotEvaluated(key, "expected_outcome", reason, shown, line))
    for index, statement in enumerate(outcomes if isinstance(outcomes, list) else ()):
        line = _line(raw, "expected_outcomes", index)
        ident = f"expected_outcomes[{index}]"
        found.append(
            NotEvaluated(ident, "expected_outcome", f"needs a judge: {statement}", shown, line)
        )
    if model.evaluation_criteria_override:
        name = "evaluation_criteria_override"
        reason = f"needs a judge: {model.evaluation_criteria_override}"
        found.append(NotEvaluated(name, name, reason, shown, _line(raw, name)))
    return found


def contract(model: TestCaseModel, raw: Any, path: Path, pack_dir: Path, root: Path) -> Contract:
    shown = shown_path(path, root)
    checks = [
        _expected_call(i, call, raw, shown)
        for i, call in enumerate(model.expected_tool_calls or ())
    ]
    if model.max_turns is not None:
        limit = {"max": model.max_turns}
        line = _line(raw, "max_turns")
        checks.append(
            TraceAssertion("max_turns", "turn_count_at_most", limit, 1.0, "max_turns", shown, line)
        )
    line = _line(raw, "name")
    case = GoldenCase(model.name, path.name, True, None, None, line, line)
    return trace_only_contract(
        contract_path(path, pack_dir, root),
        shown,
        model.name,
        raw,
        golden_cases=(case,),
        trace_assertions=tuple(checks),
        not_evaluated=tuple(_judged(model, raw, shown)),
    )


def transcript_trace(messages: Any) -> Trace:
    """Connexity's transcript: one assistant turn per agent response (its assistant and tool
    messages up to the next user message), so the turn count is the number of exchanges."""
    if not isinstance(messages, list):
        raise FixtureShapeError("transcript: expected a list of turns")
    flat = traces.from_messages(messages, "transcript", roles=traces.TURN_ROLES)
    turns: list[Turn] = []
    for turn in flat.turns:
        if turn.role not in (ASSISTANT, "tool"):
            turns.append(turn)
        elif turns and turns[-1].role == ASSISTANT:
            last = turns[-1]
            text = turn.text if turn.role == ASSISTANT and turn.text else last.text
            turns[-1] = Turn(ASSISTANT, text, last.calls + turn.calls, last.usage)
        else:
            turns.append(Turn(ASSISTANT, turn.text if turn.role == ASSISTANT else "", turn.calls))
    return Trace(tuple(turns), flat.final_output)


def case_input(path: Path, root: Path) -> CaseInput | str:
    transcript = path.with_name(path.name.removesuffix(".json") + TRANSCRIPT_SUFFIX)
    shown = shown_path(transcript, root)
    if not transcript.is_file():
        return f"no recorded transcript at {shown}"
    try:
        found = files.resolve_inside(
            path.parent, transcript.name, root=path.parent, what="transcript", file=shown, line=None
        )
        trace = transcript_trace(json_reader.load_json(found, shown=shown))
        document, calls = normalize_response(traces.legacy_response({}, trace))
    except PackError as exc:
        return str(exc)
    except FixtureShapeError as exc:
        line = shape_line(found, shown, exc.loc) if exc.loc else None
        return f"{where(shown, line)}: {exc}"
    return CaseInput({}, {}, document, calls, shown, trace=trace, inputs=(shown,))


def _selected(model: TestCaseModel, options: PeerOptions) -> bool:
    if model.status != CaseStatus.ACTIVE:
        return False
    if options.tags and not set(options.tags) & set(model.tags):
        return False
    return options.difficulty is None or model.difficulty == options.difficulty


def _nothing_selected(active: list[TestCaseModel], options: PeerOptions) -> str:
    wanted = []
    if options.tags:
        wanted.append("tag " + " or ".join(map(repr, options.tags)))
    if options.difficulty is not None:
        wanted.append(f"difficulty {options.difficulty!r}")
    tags = ", ".join(sorted({tag for model in active for tag in model.tags})) or "none"
    levels = ", ".join(sorted({model.difficulty for model in active}))
    return (
        f"no active Connexity test case has {' and '.join(wanted)} "
        f"(tags present: {tags}; difficulties present: {levels})"
    )


def pack(
    found: list[Any], directory: Path, root: Path, options: PeerOptions, problems: list[Problem]
) -> Pack | None:
    """The selected test cases of ``found`` (peer files), each a contract with one case; a
    filter that selects none of the active cases read is a problem."""
    contracts, active, selected = [], [], 0
    for item in found:
        try:
            model, raw = read_case(item.path, item.shown)
            active += [model] if model.status == CaseStatus.ACTIVE else []
            if not _selected(model, options):
                continue
            selected += 1
            built = contract(model, raw, item.path, directory, root)
        except PackError as exc:
            problems.append(Problem(exc.file, exc.line, exc.message))
            continue
        contracts.append(replace(built, case_inputs={model.name: case_input(item.path, root)}))
    shown = shown_path(directory, root)
    if active and not selected:  # only a filter can leave out an active case
        problems.append(Problem(shown, None, _nothing_selected(active, options)))
    if not contracts:
        return None
    return Pack(
        "connexity", "Connexity test cases", directory, shown, root, directory, directory,
        directory, tuple(contracts), {},
    )  # fmt: skip
