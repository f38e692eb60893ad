"""Our models validate exactly as the pydantic models they replace did.

loading/models.py and loading/recording.py declare their pydantic-core schemas by hand, to
spare the start-up pydantic's Python layer costs. The pydantic models below are the ones
those files held before (the oracle): on generated documents, both give the same values, or
the same errors and the same one-line messages.
"""

from __future__ import annotations

import copy
import pickle
from datetime import datetime
from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from replaygate.loading import choices, models, recording
from replaygate.loading.models import Record, validation_errors

HASH = r"^sha256:[0-9a-f]{64}$"


def _known(versions: Any) -> AfterValidator:
    def check(value: str) -> str:
        problem = models.version_problem(value, versions)
        if problem is not None:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


def _checked(check: Any) -> AfterValidator:
    return AfterValidator(check)


MODE = Annotated[str, _checked(choices.member(choices.PROVIDER_MODES, "a provider mode"))]
RETRY = Annotated[str, _checked(choices.member(choices.RETRY_ON, "a retry condition"))]
CODE = Annotated[str, _checked(choices.error_code)]


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
    schema_version: Annotated[str, _known(models.PackSchemaVersion)] | None = None
    provider: str | None = None
    default_model: str | None = None
    paths: PackPaths | None = None
    contracts: list[str] | None = None
    recordings: RecordingsSettings | None = None
    redact: list[str] | None = None


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
    expected_error: CODE | None = None
    provider_modes: list[MODE] | None = None


class TimeoutsModel(_Strict):
    total_ms: int = Field(default=30000, gt=0)
    connect_ms: int = Field(default=10000, gt=0)


class RetriesModel(_Strict):
    max_attempts: int = Field(default=0, ge=0)
    retry_on: list[RETRY] = []
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
    allowed_errors: list[CODE] = []
    trace_assertions: list[dict[str, Any]] | None = None


class AllowlistEntryModel(_Strict):
    contract_path: str = Field(min_length=1)
    reason_code: str = Field(min_length=1)
    owner: str = Field(min_length=1)
    expiry_date: str = Field(min_length=1)
    rationale: str = Field(min_length=1)


class AllowlistModel(_Strict):
    version: Annotated[str, _known(models.AllowlistVersion)]
    entries: list[AllowlistEntryModel] = []


class IdentityModel(_Strict):
    request_hash: str = Field(pattern=HASH)
    messages_hash: str = Field(pattern=HASH)
    tool_schema_hash: str = Field(pattern=HASH)
    system_prompt_hash: str | None = Field(pattern=HASH)
    model: str
    settings: dict[str, Any]


class RawModel(_Strict):
    status: int
    body: Any


class RecordingModel(_Strict):
    recording_version: Literal[1]
    replaygate_version: str
    recorded_at: datetime = Field(strict=False)
    provider: Literal["openai", "openai-responses", "anthropic", "openai-compatible"]
    model: str = Field(min_length=1)
    identity: IdentityModel
    response: dict[str, Any]
    raw: RawModel
    model_override: bool = False
    base_url: str | None = Field(default=None, min_length=1)

    @field_validator("recorded_at", mode="before")
    @classmethod
    def _written_as_text(cls, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError(
                f"expected a date and time such as 2026-11-26T09:00:00Z, got {value!r}"
            )
        return value


PAIRS: list[tuple[type[BaseModel], type[Record]]] = [
    (PackPaths, models.PackPaths),
    (RecordingsSettings, models.RecordingsSettings),
    (PackModel, models.PackModel),
    (ExpectedCallModel, models.ExpectedCallModel),
    (AssertionsModel, models.AssertionsModel),
    (GoldenCaseModel, models.GoldenCaseModel),
    (TimeoutsModel, models.TimeoutsModel),
    (RetriesModel, models.RetriesModel),
    (On429Model, models.On429Model),
    (RateLimitsModel, models.RateLimitsModel),
    (ContractModel, models.ContractModel),
    (AllowlistEntryModel, models.AllowlistEntryModel),
    (AllowlistModel, models.AllowlistModel),
    (IdentityModel, recording.IdentityModel),
    (RawModel, recording.RawModel),
    (RecordingModel, recording.RecordingModel),
]
TOP = [
    (oracle, ours)
    for oracle, ours in PAIRS
    if oracle in (PackModel, ContractModel, AllowlistModel, RecordingModel)
]

# Values each key may get: right and wrong types, the bounds' edges, YAML's surprises.
SCALARS = st.sampled_from(
    [
        None, True, False, 0, 1, -1, 90, 0.0, 0.5, 1.0, 1.5, -0.1, float("inf"), float("nan"),
        "", "x", "any", "strict", "lenient", "v0.1", "v9", "1.0", "openai", "anthropic",
        "2026-11-26T09:00:00Z", "2026-11-26", "yesterday", "sha256:" + "a" * 64, "sha256:x",
        "1", 10**30, "recorded", "recoded", "5xx", "rate_limt", "wrong_tool", "overloaded",
    ]
)  # fmt: skip
# misspellings, and every key of every model: one out of its place gets a hint of where it
# belongs ("under `paths:`", "in each item of `golden_cases:`"), read from the models' keys
MODEL_KEYS = sorted({name for oracle, _ in PAIRS for name in oracle.model_fields})
MISSPELT = ["Tool", "a[b", "x", "tool ", "golden_case", "expect_tool", "", "1"]
KEYS = st.sampled_from([*MISSPELT, *MODEL_KEYS])
ODD_KEYS = st.sampled_from([1, True, None, 2.5])


def documents(oracle: type[BaseModel], depth: int = 0) -> st.SearchStrategy[Any]:
    """Mappings with a random part of ``oracle``'s keys, odd values and unknown keys."""
    named = {name: _values(field.annotation, depth) for name, field in oracle.model_fields.items()}
    mapping = st.fixed_dictionaries({}, optional=named)
    extra = st.dictionaries(KEYS | ODD_KEYS, SCALARS, max_size=2)
    whole = st.builds(lambda known, more: {**more, **known}, mapping, extra)
    return whole | SCALARS if depth else whole


def _values(annotation: Any, depth: int) -> st.SearchStrategy[Any]:
    plain = (
        SCALARS
        | st.lists(SCALARS, max_size=3)
        | st.dictionaries(KEYS | ODD_KEYS, SCALARS, max_size=2)
    )
    inner = models._submodel(annotation)[0]
    if inner is None or depth > 2:
        return plain
    nested = documents(inner, depth + 1)
    return plain | nested | st.lists(nested, max_size=3)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return {name: _plain(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, Record):
        return {name: _plain(item) for name, item in vars(value).items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _errors(exc: ValidationError) -> list[tuple[Any, ...]]:
    return [
        (
            e["type"],
            e["loc"],
            repr(e["input"]),
            repr({k: v for k, v in (e.get("ctx") or {}).items() if k != "class_name"}),
        )
        for e in exc.errors(include_url=False)
    ]


def _same(oracle: type[BaseModel], ours: type[Record], data: Any) -> None:
    try:
        expected = oracle.model_validate(data)
    except ValidationError as exc:
        with pytest.raises(ValidationError) as caught:
            ours.model_validate(data)
        assert _errors(caught.value) == _errors(exc)
        assert validation_errors(caught.value, data, ours) == validation_errors(exc, data, oracle)
        return
    assert repr(_plain(ours.model_validate(data))) == repr(_plain(expected))


@pytest.mark.parametrize(("oracle", "ours"), PAIRS, ids=lambda model: model.__name__)
def test_each_model_has_the_keys_of_the_one_it_replaces(
    oracle: type[BaseModel], ours: type[Record]
) -> None:
    assert list(ours.__keys__) == list(oracle.model_fields)
    assert list(ours.__annotations__) == list(oracle.model_fields)


@pytest.mark.parametrize(("oracle", "ours"), TOP, ids=lambda model: model.__name__)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_documents_validate_as_the_pydantic_models_did(
    oracle: type[BaseModel], ours: type[Record], data: st.DataObject
) -> None:
    _same(oracle, ours, data.draw(documents(oracle)))


@pytest.mark.parametrize(("oracle", "ours"), PAIRS, ids=lambda model: model.__name__)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_each_nested_model_validates_as_before(
    oracle: type[BaseModel], ours: type[Record], data: st.DataObject
) -> None:
    _same(oracle, ours, data.draw(documents(oracle, depth=1)))


@pytest.mark.parametrize(
    ("key", "place"),
    [
        ("input_ref", "in each item of `golden_cases:`"),
        ("argument_invariants", "in each item of `expected_tool_calls:`"),
        ("max_attempts", "under `retries:`"),
        ("on_429", "under `rate_limits:`"),
    ],
)
def test_a_key_out_of_its_place_says_where_it_belongs(key: str, place: str) -> None:
    data = {"tool": "t", "golden_cases": [{"id": "a", "input_ref": "b", "expect_ok": True}]}
    data[key] = 1
    with pytest.raises(ValidationError) as caught:
        models.ContractModel.model_validate(data)
    errors = validation_errors(caught.value, data, models.ContractModel)
    assert errors == [((key,), f"`{key}` belongs {place}, not here")]


def test_a_model_compares_copies_and_pickles_by_value() -> None:
    contract = models.ContractModel.model_validate(
        {"tool": "t", "golden_cases": [{"id": "a", "input_ref": "a.json", "expect_ok": True}]}
    )
    again = models.ContractModel.model_validate(
        {"tool": "t", "golden_cases": [{"id": "a", "input_ref": "a.json", "expect_ok": True}]}
    )
    assert contract == again and contract is not again
    assert contract != models.ContractModel.model_validate({**vars(again), "tool": "u"})
    assert copy.deepcopy(contract) == contract
    assert pickle.loads(pickle.dumps(contract)) == contract
    assert repr(contract).startswith("ContractModel(tool='t', expect_tools=None,")
    assert "GoldenCaseModel(id='a', input_ref='a.json', expect_ok=True" in repr(contract)


def test_a_model_is_built_only_by_validation() -> None:
    with pytest.raises(TypeError, match="model_validate"):
        models.TimeoutsModel()
    assert vars(models.TimeoutsModel.defaults()) == {"total_ms": 30000, "connect_ms": 10000}


def test_a_model_is_read_only() -> None:
    paths = models.PackPaths.model_validate({"golden_dir": "g"})
    with pytest.raises(AttributeError, match="read-only"):
        paths.golden_dir = "elsewhere"  # type: ignore[misc]
    assert paths.golden_dir == "g"


def test_keys_and_annotations_must_agree() -> None:
    with pytest.raises(TypeError, match="differ from the annotations"):

        @models.record(a=models.text())
        class Wrong(Record):
            b: str


def _shipped() -> list[tuple[str, Any]]:
    from pathlib import Path

    import yaml

    repository = Path(__file__).parent.parent
    found = []
    for path in sorted(
        [*repository.glob("packs/**/*.yaml"), *repository.glob("tests/cases/**/*.yaml")]
    ):
        try:
            found.append((str(path.relative_to(repository)), yaml.safe_load(path.read_text())))
        except yaml.YAMLError:
            continue  # the cases of broken YAML: the YAML reader's tests
    return found


@pytest.mark.parametrize(
    ("name", "data"), _shipped(), ids=lambda item: item if isinstance(item, str) else ""
)
def test_the_shipped_and_test_packs_validate_as_before(name: str, data: Any) -> None:
    oracle, ours = (
        (PackModel, models.PackModel)
        if name.endswith("pack.yaml")
        else (ContractModel, models.ContractModel)
    )
    _same(oracle, ours, data)
