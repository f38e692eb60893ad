"""Our models validate exactly as pydantic models of the same annotations would.

loading/models.py and loading/recording.py declare each model once, as annotations; their
pydantic-core schemas are derived from them (loading/records.py), to spare the start-up
pydantic's Python layer costs. The oracle is pydantic's own reading of the same annotations
(``oracle_of``): on generated documents, both give the same values, or the same errors and
the same one-line messages.
"""

from __future__ import annotations

import copy
import functools
import inspect
import operator
import pickle
from dataclasses import asdict
from datetime import datetime
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
from hypothesis import HealthCheck
from hypothesis import strategies as st
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
)

from replaygate.loading import model_errors, models, recording, records
from replaygate.loading.model_errors import validation_errors
from replaygate.loading.records import EMPTY, Bounds, Check, Record
from sizes import sized


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _as_pydantic_reads_it(annotation: Any) -> Any:
    """One of our annotations in pydantic's words: Bounds as Field constraints, a Check as
    its validator, a datetime read from text in any form, a model as its oracle."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        base, *metadata = args
        said: list[Any] = []
        for item in metadata:
            if isinstance(item, Bounds):
                said.append(Field(**{k: v for k, v in asdict(item).items() if v is not None}))
            elif isinstance(item, Check):
                said.append((BeforeValidator if item.before else AfterValidator)(item.check))
        return Annotated[(_as_pydantic_reads_it(base), *said)]
    if annotation is datetime:
        return Annotated[datetime, Field(strict=False)]
    if origin is list:
        return list[_as_pydantic_reads_it(args[0])]  # type: ignore[misc]  # built at run time
    if origin in (Union, UnionType):
        return functools.reduce(operator.or_, map(_as_pydantic_reads_it, args))
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return oracle_of(annotation)
    return annotation


@functools.cache
def oracle_of(ours: type[Record]) -> type[BaseModel]:
    """The pydantic model of the same annotations and defaults: what pydantic would make of
    the model, which our schema must match."""
    fields: dict[str, Any] = {}
    for name, annotation in inspect.get_annotations(ours, eval_str=True).items():
        default = ours.__dict__.get(name, ...)
        fields[name] = (_as_pydantic_reads_it(annotation), [] if default is EMPTY else default)
    return create_model(ours.__name__, __base__=_Strict, **fields)


OURS = [
    models.PackPaths, models.RecordingsSettings, models.PackModel, models.ExpectedCallModel,
    models.AssertionsModel, models.GoldenCaseModel, models.TimeoutsModel, models.RetriesModel,
    models.On429Model, models.RateLimitsModel, models.ContractModel, models.AllowlistEntryModel,
    models.AllowlistModel, recording.IdentityModel, recording.RawModel, recording.RecordingModel,
]  # fmt: skip
PAIRS = [(oracle_of(ours), ours) for ours in OURS]
TOP = [
    (oracle, ours)
    for oracle, ours in PAIRS
    if ours
    in (models.PackModel, models.ContractModel, models.AllowlistModel, recording.RecordingModel)
]

# Values each key may get: right and wrong types, the bounds' edges, YAML's surprises.
SCALARS = st.sampled_from(
    [
        None, True, False, 0, 1, -1, 90, 0.0, 0.5, 1.0, 1.5, -0.1, float("inf"), float("nan"),
        "", "x", "any", "strict", "lenient", "v0.1", "v9", "1.0", "openai", "anthropic",
        "2026-11-26T09:00:00Z", "2026-11-26", "yesterday", "sha256:" + "a" * 64, "sha256:x",
        "1", 10**30,
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
    inner = model_errors._submodel(annotation)[0]
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
def test_each_model_has_its_annotations_as_keys_in_order(
    oracle: type[BaseModel], ours: type[Record]
) -> None:
    assert list(ours.__keys__) == list(ours.__annotations__) == list(oracle.model_fields)


@pytest.mark.parametrize(("oracle", "ours"), TOP, ids=lambda model: model.__name__)
@sized(400, data=st.data(), fast=25, suppress=[HealthCheck.too_slow])
def test_documents_validate_as_the_pydantic_models_did(
    oracle: type[BaseModel], ours: type[Record], data: st.DataObject
) -> None:
    _same(oracle, ours, data.draw(documents(oracle)))


@pytest.mark.parametrize(("oracle", "ours"), PAIRS, ids=lambda model: model.__name__)
@sized(100, data=st.data(), fast=25, suppress=[HealthCheck.too_slow])
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


def test_a_type_a_model_cannot_have_is_refused_when_it_is_declared() -> None:
    with pytest.raises(TypeError, match="is not a type a model's key can have"):

        @records.record
        class Wrong(Record):
            tags: set[str]


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
    ours = models.PackModel if name.endswith("pack.yaml") else models.ContractModel
    oracle = oracle_of(ours)
    _same(oracle, ours, data)
