"""Pydantic models of pack.yaml and contract files: shape and types, nothing else.

Extra keys are refused and types are strict (YAML's ``yes`` is not a string,
``"true"`` is not a boolean). Loading turns validation errors into one-line
problems located by line; compiling into evaluable contracts lives in contract.py.
"""

from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class PackPaths(_Strict):
    contracts_dir: str | None = None
    golden_dir: str | None = None
    negative_golden_dir: str | None = None


class PackModel(_Strict):
    pack_id: str = Field(min_length=1)
    name: str | None = None
    version: str | None = None
    schema_version: str | None = None
    provider: str | None = None
    default_model: str | None = None
    paths: PackPaths | None = None
    contracts: list[str] | None = None


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


class RetriesModel(_Strict):
    max_attempts: int = Field(default=0, ge=0)
    retry_on: list[str] = []


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


class AllowlistEntryModel(_Strict):
    contract_path: str = Field(min_length=1)
    reason_code: str = Field(min_length=1)
    owner: str = Field(min_length=1)
    expiry_date: str = Field(min_length=1)
    rationale: str = Field(min_length=1)


class AllowlistModel(_Strict):
    version: str
    entries: list[AllowlistEntryModel] = []


def _field_names(*models: type[BaseModel]) -> frozenset[str]:
    return frozenset(name for model in models for name in model.model_fields)


KNOWN_KEYS = _field_names(
    PackModel,
    PackPaths,
    ContractModel,
    ExpectedCallModel,
    AssertionsModel,
    GoldenCaseModel,
    TimeoutsModel,
    RetriesModel,
    On429Model,
    RateLimitsModel,
    AllowlistModel,
    AllowlistEntryModel,
)

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


def format_loc(loc: tuple[str | int, ...]) -> str:
    """Render a pydantic location as ``golden_cases[0].expect_ok``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_error(error: Any) -> str:
    """One-line message for one pydantic error (without file and line)."""
    loc: tuple[str | int, ...] = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        key = str(loc[-1])
        close = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.75)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return f"unknown key '{key}'{hint}"
    if kind == "invalid_key":
        key = error["input"]
        if isinstance(key, bool):
            return (
                f"a key is read as {str(key).lower()} by YAML (yes/no/on/off are "
                "booleans there); quote it"
            )
        return f"keys must be strings, got {_short(key)}; quote it"
    if kind == "missing":
        return f"{format_loc(loc)}: required key is missing"
    if kind in _TYPE_WORDS:
        return f"{format_loc(loc)}: expected {_TYPE_WORDS[kind]}, got {_short(error['input'])}"
    return f"{format_loc(loc)}: {error['msg']}"


def validation_errors(exc: ValidationError) -> list[tuple[tuple[str | int, ...], str]]:
    """(location, message) for each error; union-branch duplicates folded."""
    seen: dict[tuple[str | int, ...], str] = {}
    for error in exc.errors(include_url=False):
        loc = tuple(part for part in error["loc"] if not _is_union_tag(part))
        seen.setdefault(loc, describe_error({**error, "loc": loc}))
    return list(seen.items())


def _is_union_tag(part: str | int) -> bool:
    # pydantic names the branch it tried in a union ("list[str]", "PackPaths"): not a real key.
    return isinstance(part, str) and (part[:1].isupper() or "[" in part)
