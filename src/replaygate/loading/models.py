"""Models of every pack file: pydantic models of pack.yaml, contracts and the NR allowlist, and
the keys of the fixture and recording format. Shape and types, nothing else.

Extra keys are refused and types are strict (YAML's ``yes`` is not a string,
``"true"`` is not a boolean). Loading turns validation errors into one-line
problems located by line; compiling into evaluable contracts lives in contract.py.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from replaygate.assertions.values import yaml_reading
from replaygate.loading.files import excerpt


class PackSchemaVersion(StrEnum):
    V0_1 = "v0.1"


class BoundaryVersion(StrEnum):
    V1_0 = "1.0"


class AllowlistVersion(StrEnum):
    V1_0 = "1.0"


def version_problem(value: object, known: type[StrEnum]) -> str | None:
    """Why ``value`` is not a version of ``known``, or None when it is one."""
    if value in set(known):
        return None
    return f"{_shown(value)} is not a version this replaygate knows (known: {', '.join(known)})"


def _known(versions: type[StrEnum]) -> AfterValidator:
    def check(value: str) -> str:
        problem = version_problem(value, versions)
        if problem is not None:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class PackPaths(_Strict):
    contracts_dir: str | None = None
    golden_dir: str | None = None
    negative_golden_dir: str | None = None


class RecordingsSettings(_Strict):
    max_age_days: int = Field(default=90, gt=0)


class PackModel(_Strict):
    pack_id: str = Field(min_length=1)
    name: str | None = None
    version: str | None = None
    schema_version: Annotated[str, _known(PackSchemaVersion)] | None = None
    provider: str | None = None
    default_model: str | None = None
    paths: PackPaths | None = None
    contracts: list[str] | None = None
    recordings: RecordingsSettings | None = None
    redact: list[str] | None = None  # JSONPaths into recorded responses


class ExpectedCallModel(_Strict):
    name: str = Field(min_length=1)
    argument_invariants: list[dict[str, Any]] = []


class AssertionsModel(_Strict):
    output_invariants: list[dict[str, Any]] = []
    input_invariants: list[dict[str, Any]] = []


class GoldenCaseModel(_Strict):
    id: str = Field(min_length=1)
    input_ref: str = Field(min_length=1)
    expect_ok: bool
    expected_error: str | None = None
    provider_modes: list[str] | None = None


class TimeoutsModel(_Strict):
    total_ms: int = Field(default=30000, gt=0)
    connect_ms: int = Field(default=10000, gt=0)


class RetriesModel(_Strict):
    max_attempts: int = Field(default=0, ge=0)
    retry_on: list[str] = []
    backoff_ms: int = Field(default=500, ge=0)


class On429Model(_Strict):
    respect_retry_after: bool = True
    max_sleep_seconds: float = Field(default=60, ge=0)


class RateLimitsModel(_Strict):
    on_429: On429Model | None = None


class ContractModel(_Strict):
    tool: str = Field(min_length=1)
    expect_tools: list[str] | None = None
    tool_order: Literal["any", "strict"] = "any"
    tool_call_match_mode: Literal["lenient", "strict"] = "lenient"
    pass_threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    expected_tool_calls: list[ExpectedCallModel] | None = None
    assertions: AssertionsModel | None = None
    golden_cases: list[GoldenCaseModel] = Field(min_length=1)
    timeouts: TimeoutsModel | None = None
    retries: RetriesModel | None = None
    rate_limits: RateLimitsModel | None = None
    allowed_errors: list[str] = []
    trace_assertions: list[dict[str, Any]] | None = None


class AllowlistEntryModel(_Strict):
    contract_path: str = Field(min_length=1)
    reason_code: str = Field(min_length=1)
    owner: str = Field(min_length=1)
    expiry_date: str = Field(min_length=1)
    rationale: str = Field(min_length=1)


class AllowlistModel(_Strict):
    version: Annotated[str, _known(AllowlistVersion)]
    entries: list[AllowlistEntryModel] = []


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
    "thinking",
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
    "response", "raw", "model_override", "base_url",
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


def unknown_key(key: str, here: Collection[str], places: Mapping[str, str]) -> str:
    """The message for an unknown key: where it belongs when that is elsewhere, else the
    nearest key of this mapping (or of any other)."""
    if key in places:
        return f"`{key}` belongs {places[key]}, not here"
    close = _closest(key, here) or _closest(key, places)
    hint = f" (did you mean '{close}'?)" if close else ""
    return f"unknown key '{excerpt(key)}'{hint}"


def _closest(key: str, choices: Collection[str]) -> str | None:
    close = difflib.get_close_matches(key, list(choices), n=1, cutoff=0.75)
    return close[0] if close else None


def _submodel(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model inside a field's annotation, and whether it is the item of a list."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin = getattr(annotation, "__origin__", None)
    for arg in get_args(annotation):
        model, in_list = _submodel(arg)
        if model is not None:
            return model, in_list or origin is list
    return None, False


def _places(root: type[BaseModel]) -> list[tuple[type[BaseModel], str]]:
    """Each model of a document with where its keys go: "under `paths:`"."""
    found = [(root, "at the top level")]
    pending: list[tuple[type[BaseModel], str]] = [(root, "")]
    while pending:
        model, prefix = pending.pop()
        for name, field in model.model_fields.items():
            inner, in_list = _submodel(field.annotation)
            if inner is not None:
                where = f"{prefix}{name}"
                found.append(
                    (inner, f"in each item of `{where}:`" if in_list else f"under `{where}:`")
                )
                pending.append((inner, f"{where}."))
    return found


def _model_at(root: type[BaseModel], loc: tuple[str | int, ...]) -> type[BaseModel]:
    model = root
    for part in loc:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        inner = _submodel(field.annotation)[0] if field is not None else None
        if inner is None:
            continue
        model = inner
    return model


def _unknown_model_key(root: type[BaseModel] | None, loc: tuple[str | int, ...]) -> str:
    key = str(loc[-1])
    if root is None:
        return unknown_key(key, (), {})
    here = _model_at(root, loc[:-1])
    places = {
        name: place
        for model, place in reversed(_places(root))
        if model is not here
        for name in model.model_fields
        if name not in here.model_fields
    }
    return unknown_key(key, here.model_fields, places)


_TYPE_WORDS = {
    "string_type": "a string",
    "bool_type": "true or false",
    "int_type": "an integer",
    "float_type": "a number",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}
_BOUNDS = {
    "greater_than": ("gt", "greater than"),
    "greater_than_equal": ("ge", "at least"),
    "less_than": ("lt", "less than"),
    "less_than_equal": ("le", "at most"),
}


def format_loc(loc: tuple[str | int, ...]) -> str:
    """Render a pydantic location as ``golden_cases[0].expect_ok``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _shown(value: Any) -> str:
    """A value as its author wrote it in YAML or JSON."""
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return str(value).lower()
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _words(error: Any) -> str:
    """The message of one pydantic error, in our words, without its location."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    if kind in _TYPE_WORDS:
        return f"expected {_TYPE_WORDS[kind]}, got {_shown(value)}"
    if kind == "missing":
        return "required key is missing"
    if kind == "too_short":
        least = ctx.get("min_length", 1)
        items = "one item" if least == 1 else f"{least} items"
        return f"needs at least {items}, got {len(value) if value else 'none'}"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "literal_error":
        # pydantic's own list: quoted strings, bare numbers, joined by commas and "or"
        found = re.findall(r"'([^']*)'|([^\s,']+)", str(ctx.get("expected", "")))
        allowed = [text or bare for text, bare in found if text or bare != "or"]
        return f"must be one of {', '.join(allowed)}, got {_shown(value)}"
    if kind in _BOUNDS:
        key, phrase = _BOUNDS[kind]
        return f"must be {phrase} {ctx.get(key)}, got {_shown(value)}"
    if kind == "value_error":
        return str(ctx.get("error", f"{_shown(value)} is not accepted here"))
    return f"{_shown(value)} is not accepted here"


def describe_error(error: Any, root: type[BaseModel] | None = None) -> str:
    """One-line message for one pydantic error (without file and line)."""
    loc: tuple[str | int, ...] = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return _unknown_model_key(root, loc)
    if kind == "invalid_key":
        return key_problem(error["input"])
    return f"{format_loc(loc)}: {_words(error)}"


def key_problem(key: Any) -> str:
    """The message for a mapping key that YAML read as something other than a string."""
    if isinstance(key, bool):
        reading = f"{str(key).lower()} by YAML (yes/no/on/off are booleans there)"
        return f"a key is read as {reading}; quote it"
    if key is None:
        return "a key is read as null by YAML (`~` and `null` are null there); quote it"
    return f"keys must be strings, got {yaml_reading(key)}; quote it"


Loc = tuple[str | int, ...]


def validation_errors(
    exc: ValidationError,
    data: Any,
    root: type[BaseModel] | None = None,
    line_of: Callable[[Loc], int | None] | None = None,
) -> list[tuple[Loc, str]]:
    """(location, message) for each error of validating ``data``, unknown keys first (each
    group in line order when ``line_of`` is given); union-branch duplicates folded, and a
    missing key left out when an unknown key beside it is its misspelling."""
    seen: dict[Loc, tuple[str, str]] = {}
    for reported in exc.errors(include_url=False):
        error = _as_key_error(reported, data)
        loc = _input_loc(tuple(error["loc"]), data)
        if error["type"] == "missing":  # the one part that is not in the input by definition
            loc += error["loc"][-1:]
        seen.setdefault(loc, (error["type"], describe_error({**error, "loc": loc}, root)))
    unknown = {loc: message for loc, (kind, message) in seen.items() if kind == "extra_forbidden"}
    misspelt = {(*loc[:-1], _misspelling(root, loc)) for loc in unknown}
    rest = [
        (loc, message)
        for loc, (kind, message) in seen.items()
        if kind != "extra_forbidden" and not (kind == "missing" and loc in misspelt)
    ]
    if line_of is not None:
        rest.sort(key=lambda error: line_of(error[0]) or 0)
        return [*sorted(unknown.items(), key=lambda error: line_of(error[0]) or 0), *rest]
    return [*unknown.items(), *rest]


def _misspelling(root: type[BaseModel] | None, loc: Loc) -> str | None:
    """The key of this mapping that the unknown key at ``loc`` is closest to."""
    return _closest(str(loc[-1]), _model_at(root, loc[:-1]).model_fields) if root else None


def _as_key_error(error: Any, data: Any) -> Any:
    """``error``, as an ``invalid_key`` whose location ends with the key itself when it is
    about a key that is not a string.

    Pydantic writes such a key as text (``'None'``, ``'3.5'``), which is no key of the
    input, and for a ``dict[str, ...]`` adds ``'[key]'`` and calls it a ``string_type``:
    the location would stop at the mapping, and the message get the mapping's line. (An
    integer key, and a boolean one, it keeps as the number: ``1`` for ``true``.)
    """
    loc: Loc = tuple(error["loc"])
    key = error["input"]
    if error["type"] == "invalid_key":
        return {**error, "loc": (*loc[:-1], key)}
    if len(loc) >= 2 and loc[-1] == "[key]" and not isinstance(key, str):
        mapping = _node_at(data, loc[:-2])
        if isinstance(mapping, dict) and _has_key(mapping, key):
            return {**error, "type": "invalid_key", "loc": (*loc[:-2], key)}
    return error


def _has_key(mapping: dict[Any, Any], key: Any) -> bool:
    try:
        return key in mapping
    except TypeError:  # an unhashable value: no key (YAML keys are scalars here)
        return False


def _node_at(data: Any, loc: Loc) -> Any:
    node = data
    for part in loc:
        if _holds(node, part):
            node = node[part]
    return node


def _input_loc(loc: Loc, data: Any) -> Loc:
    """The parts of ``loc`` that are keys or indices in ``data``.

    Pydantic adds parts of its own (``[key]`` for a bad mapping key, a union branch's
    type name): those match nothing in the input and are left out. A key of any
    shape, ``Timeouts`` or ``a[b`` included, is kept, because it is in the input.
    A missing key is not in the input either: the caller adds it back.
    """
    kept: list[str | int] = []
    node = data
    for part in loc:
        if _holds(node, part):
            node = node[part]
            kept.append(part)
    return tuple(kept)


def _holds(node: Any, part: str | int) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
