"""Models of every pack file: pack.yaml, contracts and the NR allowlist, and the keys of the
fixture and recording format. Shape and types, nothing else.

Extra keys are refused and types are strict (YAML's ``yes`` is not a string,
``"true"`` is not a boolean). Loading turns validation errors into one-line
problems located by line (model_errors.py); compiling into evaluable contracts lives in
contract.py. Each model is declared once, by its annotations: ``@record`` derives its schema
(records.py).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, Literal

from replaygate.loading import choices
from replaygate.loading.model_errors import version_problem
from replaygate.loading.records import EMPTY, Bounds, Check, Record, record

Named = Annotated[str, Bounds(min_length=1)]  # a text that must not be empty
# Enumerated values, checked against the documented sets with the nearest value (choices.py)
ErrorCode = Annotated[str, Check(choices.error_code)]
_PROVIDER_MODE = choices.member(choices.PROVIDER_MODES, "a provider mode")
_RETRY_ON = choices.member(choices.RETRY_ON, "a retry condition")


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


@record
class PackPaths(Record):
    contracts_dir: str | None = None
    golden_dir: str | None = None
    negative_golden_dir: str | None = None


@record
class RecordingsSettings(Record):
    max_age_days: Annotated[int, Bounds(gt=0)] = 90


@record
class PackModel(Record):
    pack_id: Named
    name: str | None = None
    version: str | None = None
    schema_version: Annotated[str, Check(_known(PackSchemaVersion))] | None = None
    provider: str | None = None
    default_model: str | None = None
    paths: PackPaths | None = None
    contracts: list[str] | None = None
    recordings: RecordingsSettings | None = None
    redact: list[str] | None = None  # JSONPaths into recorded responses


@record
class ExpectedCallModel(Record):
    name: Named
    argument_invariants: list[dict[str, Any]] = EMPTY


@record
class AssertionsModel(Record):
    output_invariants: list[dict[str, Any]] = EMPTY
    input_invariants: list[dict[str, Any]] = EMPTY


@record
class GoldenCaseModel(Record):
    id: Named
    input_ref: Named
    expect_ok: bool
    expected_error: ErrorCode | None = None
    provider_modes: list[Annotated[str, Check(_PROVIDER_MODE)]] | None = None


@record
class TimeoutsModel(Record):
    total_ms: Annotated[int, Bounds(gt=0)] = 30000
    connect_ms: Annotated[int, Bounds(gt=0)] = 10000


@record
class RetriesModel(Record):
    max_attempts: Annotated[int, Bounds(ge=0)] = 0
    retry_on: list[Annotated[str, Check(_RETRY_ON)]] = EMPTY
    backoff_ms: Annotated[int, Bounds(ge=0)] = 500


@record
class On429Model(Record):
    respect_retry_after: bool = True
    max_sleep_seconds: Annotated[float, Bounds(ge=0)] = 60


@record
class RateLimitsModel(Record):
    on_429: On429Model | None = None


@record
class ContractModel(Record):
    tool: Named
    expect_tools: list[str] | None = None
    tool_order: Literal["any", "strict"] = "any"
    tool_call_match_mode: Literal["lenient", "strict"] = "lenient"
    pass_threshold: Annotated[float, Bounds(ge=0.0, le=1.0)] = 1.0
    expected_tool_calls: list[ExpectedCallModel] | None = None
    assertions: AssertionsModel | None = None
    golden_cases: Annotated[list[GoldenCaseModel], Bounds(min_length=1)]
    timeouts: TimeoutsModel | None = None
    retries: RetriesModel | None = None
    rate_limits: RateLimitsModel | None = None
    allowed_errors: list[ErrorCode] = EMPTY
    trace_assertions: list[dict[str, Any]] | None = None


@record
class AllowlistEntryModel(Record):
    contract_path: Named
    reason_code: Named
    owner: Named
    expiry_date: Named
    rationale: Named


@record
class AllowlistModel(Record):
    version: Annotated[str, Check(_known(AllowlistVersion))]
    entries: list[AllowlistEntryModel] = EMPTY


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
    "response", "raw", "model_override", "base_url", "api_version", "api_key_env",
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
