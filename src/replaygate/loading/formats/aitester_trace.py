"""ai-tester run traces (schema 1.1.0 from the TypeScript tool, 2.0.0 from the Rust one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from replaygate.assertions.trace import Trace, TraceCall, Turn, Usage
from replaygate.assertions.trace_assertions import QUESTION_TOOLS
from replaygate.core.errors import PackError
from replaygate.loading.fixtures import Recorded
from replaygate.loading.model_errors import format_loc, validation_errors

TOOL = "ai-tester"
VERSIONS = ("1.1.0", "2.0.0")
Count = Annotated[int, Field(ge=0)]  # a negative token count would lower a budget's total


class _Read(BaseModel):
    # Keys we do not use are ignored: the Rust traces add fields from version to version.
    model_config = ConfigDict(
        extra="ignore", strict=True, frozen=True, alias_generator=to_camel, populate_by_name=True
    )


class _Budget(_Read):
    name: str = ""
    path: str | None = None
    token_budget: float | None = None


class _Scenario(_Budget):
    name: str = Field(min_length=1)  # the scenario's id: how the run finds its scenario


class _Runner(_Read):
    max_turns: int | None = None
    max_turns_user_set: bool | None = None
    turns_used: int | None = None
    hit_max_turns: bool | None = None
    sandbox_path: str | None = None
    stopped_reason: str | None = None


class _Usage(_Read):
    input_tokens: Count = 0
    cache_creation_input_tokens: Count = 0
    cache_read_input_tokens: Count = 0
    output_tokens: Count = 0


class _Call(_Read):
    id: str
    name: str = Field(min_length=1)
    input: dict[str, Any]
    result_content: str | None = None
    result_is_error: bool = False
    answered: dict[str, Any] | None = None


class _Turn(_Read):
    role: str
    text_deltas: list[str] = []
    tool_calls: list[_Call] = []
    usage: _Usage | None = None


class _Summary(_Read):
    unanswered_questions: Count = 0


class _Assertion(_Read):
    id: str
    type: str
    passed: bool = Field(alias="pass")


class _Scoring(_Read):
    overall_pass: bool | None = None


class _Cost(_Read):
    input_tokens: Count = 0
    output_tokens: Count = 0
    cache_creation_tokens: Count = 0
    cache_read_tokens: Count = 0


class _Error(_Read):
    kind: str
    message: str


class TraceFile(_Read):
    schema_version: Literal["1.1.0", "2.0.0"]
    run_id: str
    skill: _Budget | None = None
    scenario: _Scenario
    runner: _Runner
    turns: list[_Turn]
    final_output: str = ""
    tool_call_summary: _Summary | None = None
    assertions: list[_Assertion] = []
    scoring: _Scoring | None = None
    cost: _Cost | None = None
    errors: list[_Error] = []


@dataclass(frozen=True, slots=True)
class Run:
    """One ai-tester run as replaygate judges it."""

    run_id: str
    scenario: str  # the scenario's id
    scenario_path: str | None  # where ai-tester read the scenario from
    budget: float | None  # the token budget the trace recorded (scenario's, else the skill's)
    trace: Trace
    recorded: Recorded
    errors: tuple[str, ...]  # runtime errors: ai-tester evaluated nothing


def read_run(data: Any, shown: str) -> Run:
    """A parsed trace file as a run; PackError names what is wrong."""
    version = data.get("schemaVersion") if isinstance(data, dict) else None
    if version not in VERSIONS:
        found = repr(version) if isinstance(version, str) else "none"
        message = f"not an ai-tester trace: schemaVersion is {found}, expected 1.1.0 or 2.0.0"
        raise PackError(shown, None, message)
    try:
        model = TraceFile.model_validate(data)
    except ValidationError as exc:
        loc, message = validation_errors(exc, data)[0]
        where = format_loc(loc)
        text = message if message.startswith(where) else f"{where}: {message}"
        raise PackError(shown, None, f"ai-tester trace: $.{text}") from None
    return _run(model)


def _run(model: TraceFile) -> Run:
    budget = model.scenario.token_budget
    if budget is None and model.skill is not None:
        budget = model.skill.token_budget
    recorded = Recorded(
        TOOL,
        model.scoring.overall_pass if model.scoring else None,
        {item.id: item.passed for item in model.assertions},
    )
    errors = tuple(f"{error.kind}: {error.message}" for error in model.errors)
    return Run(
        model.run_id,
        model.scenario.name,
        model.scenario.path,
        budget,
        _trace(model),
        recorded,
        errors,
    )


def _trace(model: TraceFile) -> Trace:
    runner, cost, summary = model.runner, model.cost, model.tool_call_summary
    tokens = None
    if cost is not None:
        tokens = cost.input_tokens + cost.output_tokens
        tokens += cost.cache_creation_tokens + cost.cache_read_tokens
    return Trace(
        tuple(_turn(turn) for turn in model.turns),
        model.final_output,
        sandbox=runner.sandbox_path,
        turns_used=runner.turns_used,
        tokens=tokens,
        stopped_at_cap=bool(runner.hit_max_turns) or runner.stopped_reason == "max_turns",
        unanswered=summary.unanswered_questions if summary is not None else None,
    )


def _turn(turn: _Turn) -> Turn:
    usage = None
    if turn.usage is not None:
        u = turn.usage
        usage = Usage(
            u.input_tokens,
            u.output_tokens,
            u.cache_creation_input_tokens,
            u.cache_read_input_tokens,
        )
    return Turn(turn.role, "".join(turn.text_deltas), tuple(map(_call, turn.tool_calls)), usage)


def _call(call: _Call) -> TraceCall:
    answered = (call.answered is not None) if call.name in QUESTION_TOOLS else None
    return TraceCall(
        call.name, call.input, call.id, call.result_content, call.result_is_error, answered
    )
