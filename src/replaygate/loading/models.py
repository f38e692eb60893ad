"""Models of every pack file: pack.yaml, contracts and the NR allowlist, and the keys of the
fixture and recording format. Shape and types, nothing else.

Extra keys are refused and types are strict (YAML's ``yes`` is not a string,
``"true"`` is not a boolean). Loading turns validation errors into one-line
problems located by line (model_errors.py); compiling into evaluable contracts lives in
contract.py. Each model is built with ``record(...)`` (records.py).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Literal

# `Model`, `Record` and `validation_errors` are re-exported for loading/pack.py, which the
# run-path rewrite owns: it should import them from records.py and model_errors.py
from replaygate.loading.model_errors import validation_errors as validation_errors
from replaygate.loading.model_errors import version_problem
from replaygate.loading.records import Model as Model
from replaygate.loading.records import Record as Record
from replaygate.loading.records import (
    boolean,
    checked,
    list_of,
    mapping,
    nested,
    number,
    one_of,
    optional,
    record,
    text,
    whole,
)


class PackSchemaVersion(StrEnum):
    V0_1 = "v0.1"


class BoundaryVersion(StrEnum):
    V1_0 = "1.0"


class AllowlistVersion(StrEnum):
    V1_0 = "1.0"


def _known(versions: type[StrEnum]) -> Callable[[str], str]:
    def check(value: str) -> str:
        problem = version_problem(value, versions)
        if problem is not None:
            raise ValueError(problem)
        return value

    return check


@record(
    contracts_dir=optional(text()),
    golden_dir=optional(text()),
    negative_golden_dir=optional(text()),
)
class PackPaths(Record):
    contracts_dir: str | None
    golden_dir: str | None
    negative_golden_dir: str | None


@record(max_age_days=whole(gt=0).or_default(90))
class RecordingsSettings(Record):
    max_age_days: int


@record(
    pack_id=text(min_length=1),
    name=optional(text()),
    version=optional(text()),
    schema_version=optional(checked(text(), _known(PackSchemaVersion))),
    provider=optional(text()),
    default_model=optional(text()),
    paths=optional(nested(PackPaths)),
    contracts=optional(list_of(text())),
    recordings=optional(nested(RecordingsSettings)),
    redact=optional(list_of(text())),  # JSONPaths into recorded responses
)
class PackModel(Record):
    pack_id: str
    name: str | None
    version: str | None
    schema_version: str | None
    provider: str | None
    default_model: str | None
    paths: PackPaths | None
    contracts: list[str] | None
    recordings: RecordingsSettings | None
    redact: list[str] | None


@record(name=text(min_length=1), argument_invariants=list_of(mapping()).or_empty())
class ExpectedCallModel(Record):
    name: str
    argument_invariants: list[dict[str, Any]]


@record(
    output_invariants=list_of(mapping()).or_empty(),
    input_invariants=list_of(mapping()).or_empty(),
)
class AssertionsModel(Record):
    output_invariants: list[dict[str, Any]]
    input_invariants: list[dict[str, Any]]


@record(
    id=text(min_length=1),
    input_ref=text(min_length=1),
    expect_ok=boolean(),
    expected_error=optional(text()),
    provider_modes=optional(list_of(text())),
)
class GoldenCaseModel(Record):
    id: str
    input_ref: str
    expect_ok: bool
    expected_error: str | None
    provider_modes: list[str] | None


@record(total_ms=whole(gt=0).or_default(30000), connect_ms=whole(gt=0).or_default(10000))
class TimeoutsModel(Record):
    total_ms: int
    connect_ms: int


@record(
    max_attempts=whole(ge=0).or_default(0),
    retry_on=list_of(text()).or_empty(),
    backoff_ms=whole(ge=0).or_default(500),
)
class RetriesModel(Record):
    max_attempts: int
    retry_on: list[str]
    backoff_ms: int


@record(
    respect_retry_after=boolean().or_default(True),
    max_sleep_seconds=number(ge=0).or_default(60),
)
class On429Model(Record):
    respect_retry_after: bool
    max_sleep_seconds: float


@record(on_429=optional(nested(On429Model)))
class RateLimitsModel(Record):
    on_429: On429Model | None


@record(
    tool=text(min_length=1),
    expect_tools=optional(list_of(text())),
    tool_order=one_of("any", "strict").or_default("any"),
    tool_call_match_mode=one_of("lenient", "strict").or_default("lenient"),
    pass_threshold=number(ge=0.0, le=1.0).or_default(1.0),
    expected_tool_calls=optional(list_of(nested(ExpectedCallModel))),
    assertions=optional(nested(AssertionsModel)),
    golden_cases=list_of(nested(GoldenCaseModel), min_length=1),
    timeouts=optional(nested(TimeoutsModel)),
    retries=optional(nested(RetriesModel)),
    rate_limits=optional(nested(RateLimitsModel)),
    allowed_errors=list_of(text()).or_empty(),
    trace_assertions=optional(list_of(mapping())),
)
class ContractModel(Record):
    tool: str
    expect_tools: list[str] | None
    tool_order: Literal["any", "strict"]
    tool_call_match_mode: Literal["lenient", "strict"]
    pass_threshold: float
    expected_tool_calls: list[ExpectedCallModel] | None
    assertions: AssertionsModel | None
    golden_cases: list[GoldenCaseModel]
    timeouts: TimeoutsModel | None
    retries: RetriesModel | None
    rate_limits: RateLimitsModel | None
    allowed_errors: list[str]
    trace_assertions: list[dict[str, Any]] | None


@record(
    contract_path=text(min_length=1),
    reason_code=text(min_length=1),
    owner=text(min_length=1),
    expiry_date=text(min_length=1),
    rationale=text(min_length=1),
)
class AllowlistEntryModel(Record):
    contract_path: str
    reason_code: str
    owner: str
    expiry_date: str
    rationale: str


@record(
    version=checked(text(), _known(AllowlistVersion)),
    entries=list_of(nested(AllowlistEntryModel)).or_empty(),
)
class AllowlistModel(Record):
    version: str
    entries: list[AllowlistEntryModel]


# The fixture and recording format (docs/contracts.md), object by object: the keys each object
# may hold. Values are checked where they are read (normalize.py). Provider extras are the
# fields OpenAI and Anthropic put in requests and responses that a recording keeps as is.
BOUNDARY_KEYS = (
    "boundary_version",
    "provider",
    "model_id",
    "tool_schema_hash",
    "system_prompt_hash",
    "messages_hash",
    "tool_choice_mode",
)
REQUEST_EXTRAS = (
    "top_p", "max_completion_tokens", "stop", "seed", "n", "response_format",
    "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "user",
    "metadata", "store", "reasoning_effort", "service_tier", "system", "stop_sequences", "top_k",
    "thinking", "stream",
)  # fmt: skip
RESPONSE_EXTRAS = (
    "id", "object", "type", "created", "model", "role", "usage", "finish_reason",
    "stop_reason", "stop_sequence", "system_fingerprint", "service_tier", "refusal",
)  # fmt: skip

# A response that is a whole run (loading/traces.py, docs/traces.md).
TRACE_KEYS = ("messages", "turns", "final_output", "sandbox")


class FixtureObject(StrEnum):
    """The objects of a fixture or recording whose keys are checked."""

    FIXTURE = "fixture"
    REQUEST = "request"
    TOOL = "tool"
    TOOL_WRAPPER = "tool_wrapper"
    TOOL_FUNCTION = "tool_function"
    RESPONSE = "response"
    TOOL_CALL = "tool_call"
    TOOL_CALL_WRAPPER = "tool_call_wrapper"
    TOOL_CALL_FUNCTION = "tool_call_function"
    ERROR = "error"


_F = FixtureObject
FIXTURE_KEYS: dict[FixtureObject, frozenset[str]] = {
    _F.FIXTURE: frozenset({*BOUNDARY_KEYS, "request", "response"}),
    _F.REQUEST: frozenset(
        {"messages", "tools", "tool_choice", "parallel_tool_calls", "temperature", "max_tokens"}
        | set(REQUEST_EXTRAS)
    ),
    _F.TOOL: frozenset(
        {"type", "name", "description", "parameters", "input_schema", "strict", "cache_control"}
    ),
    _F.TOOL_WRAPPER: frozenset({"type", "function"}),
    _F.TOOL_FUNCTION: frozenset({"name", "description", "parameters", "strict"}),
    _F.RESPONSE: frozenset(
        {"success", "tool_calls", "content", "error", *RESPONSE_EXTRAS, *TRACE_KEYS}
    ),
    _F.TOOL_CALL: frozenset({"id", "type", "name", "arguments", "input", "caller"}),
    _F.TOOL_CALL_WRAPPER: frozenset({"id", "type", "function"}),
    _F.TOOL_CALL_FUNCTION: frozenset({"name", "arguments"}),
    _F.ERROR: frozenset({"code", "message", "type", "param"}),
}
# A sidecar recording holds what a fixture holds; its `response` wins over the fixture's.
RECORDING_KEYS = FIXTURE_KEYS
# A recording written by `replaygate record` (docs/recordings.md) has a top level of its own
# (its `identity` and `raw` are checked by loading/recording.py) and a fixture's `response`.
RECORDED_FIELDS = (
    "recording_version", "replaygate_version", "recorded_at", "provider", "model", "identity",
    "response", "raw", "model_override", "base_url", "api_version",
)  # fmt: skip
RECORDED_KEYS = {**FIXTURE_KEYS, _F.FIXTURE: frozenset(RECORDED_FIELDS)}
FIXTURE_PLACES: dict[str, str] = {
    **dict.fromkeys(FIXTURE_KEYS[_F.FIXTURE], "at the top level"),
    **dict.fromkeys(FIXTURE_KEYS[_F.TOOL], "in an item of `request.tools`"),
    **dict.fromkeys(FIXTURE_KEYS[_F.TOOL_CALL], "in an item of `response.tool_calls`"),
    **dict.fromkeys(FIXTURE_KEYS[_F.REQUEST], "under `request:`"),
    **dict.fromkeys(FIXTURE_KEYS[_F.RESPONSE], "under `response:`"),
    "model": "at the top level, as `model_id`",
}
