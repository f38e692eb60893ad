"""Models of every pack file: pydantic models of pack.yaml, contracts and the NR allowlist, and
the keys of the fixture and recording format. Shape and types, nothing else.

Extra keys are refused and types are strict (YAML's ``yes`` is not a string,
``"true"`` is not a boolean). Loading turns validation errors into one-line
problems located by line; compiling into evaluable contracts lives in contract.py.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self, TypeVar, cast, get_args

from pydantic_core import PydanticUndefined, SchemaValidator, ValidationError
from pydantic_core import core_schema as cs

from replaygate.assertions.values import suggestion, yaml_reading
from replaygate.loading import choices
from replaygate.loading.files import excerpt

if TYPE_CHECKING:
    from pydantic import BaseModel


class PackSchemaVersion(StrEnum):
    V0_1 = "v0.1"


class BoundaryVersion(StrEnum):
    V1_0 = "1.0"


class AllowlistVersion(StrEnum):
    V1_0 = "1.0"


def version_problem(value: object, known: type[StrEnum]) -> str | None:
    """Why ``value`` is not a version of ``known``, or None when it is one."""
    # a list or an object is no version, and cannot be looked up in a set
    if isinstance(value, str) and value in set(known):
        return None
    return f"{_shown(value)} is not a version this replaygate knows (known: {', '.join(known)})"


# Each model is a plain class whose instances pydantic-core builds from a schema declared
# beside it (`record`), the schema pydantic itself would generate from such a model
# (tests/test_model_schemas.py compares the two on generated documents). Declaring the
# schema ourselves skips pydantic's Python layer: building these models with it cost about
# a quarter of the action's start-up (pydantic's import, schema generation, its plugin
# lookup through importlib.metadata).


@dataclass(frozen=True, slots=True)
class Key:
    """One key of a model: its value's schema, its default (when it may be left out), and
    the model it holds (for where an unknown key belongs: under `paths:`)."""

    schema: cs.CoreSchema
    inner: Model | None = None
    in_list: bool = False
    default: Any = PydanticUndefined
    factory: Callable[[], Any] | None = None

    def or_default(self, default: Any = None) -> Key:
        return dataclasses.replace(self, default=default)

    def or_empty(self) -> Key:
        return dataclasses.replace(self, factory=list)

    @property
    def required(self) -> bool:
        return self.default is PydanticUndefined and self.factory is None

    def field(self) -> cs.ModelField:
        schema = self.schema
        if self.factory is not None:
            schema = cs.with_default_schema(schema, default_factory=self.factory)
        elif not self.required:
            schema = cs.with_default_schema(schema, default=self.default)
        return cs.model_field(schema)


class Record:
    """A validated mapping of one of our files, read by attribute, immutable."""

    # where pydantic-core puts what it knows of an instance besides its fields
    __slots__ = (
        "__dict__", "__pydantic_extra__", "__pydantic_fields_set__", "__pydantic_private__",
    )  # fmt: skip
    __keys__: ClassVar[dict[str, Key]] = {}
    __schema__: ClassVar[cs.CoreSchema]
    __validator__: ClassVar[SchemaValidator | None] = None

    def __init__(self) -> None:  # pydantic-core builds instances without calling it
        raise TypeError(f"{type(self).__name__} is built by model_validate() or defaults()")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    __hash__ = None  # type: ignore[assignment]  # equal by value, and its lists cannot hash

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in vars(self).items())
        return f"{type(self).__name__}({fields})"

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle and copy: set the fields back as pydantic-core does, past __setattr__
        return _restored, (type(self), dict(vars(self)))

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """``data`` as this model; raises ValidationError (as a pydantic model's does)."""
        if cls.__validator__ is None:  # built on first use: most runs read few of the models
            cls.__validator__ = SchemaValidator(cls.__schema__)
        return cast(Self, cls.__validator__.validate_python(data))

    @classmethod
    def defaults(cls) -> Self:
        """The model of a mapping that leaves every key out (each has a default)."""
        return cls.model_validate({})


R = TypeVar("R", bound=Record)
# what the error wording reads the keys of: ours, or a peer format's pydantic model
Model = type[Record] | type["BaseModel"]


def _restored(cls: type[R], fields: dict[str, Any]) -> R:
    record = object.__new__(cls)
    object.__setattr__(record, "__dict__", fields)
    return record


_CONFIG = cs.CoreConfig(extra_fields_behavior="forbid", strict=True)


def record(**keys: Key) -> Callable[[type[R]], type[R]]:
    """Declare a model's keys, in the order of its annotations (which say their types)."""

    def declare(cls: type[R]) -> type[R]:
        if list(keys) != list(cls.__annotations__):
            raise TypeError(f"{cls.__name__}: the keys declared differ from the annotations")
        cls.__keys__ = keys
        fields = cs.model_fields_schema(
            {name: key.field() for name, key in keys.items()}, extra_behavior="forbid"
        )
        cls.__schema__ = cs.model_schema(cls, fields, config=_CONFIG)
        return cls

    return declare


def text(*, min_length: int | None = None, pattern: str | None = None) -> Key:
    return Key(cs.str_schema(min_length=min_length, pattern=pattern))


def whole(*, gt: int | None = None, ge: int | None = None) -> Key:
    return Key(cs.int_schema(gt=gt, ge=ge))


def number(*, ge: float | None = None, le: float | None = None) -> Key:
    return Key(cs.float_schema(ge=ge, le=le))


def boolean() -> Key:
    return Key(cs.bool_schema())


def anything() -> Key:
    return Key(cs.any_schema())


def one_of(*values: Any) -> Key:
    return Key(cs.literal_schema(list(values)))


def mapping() -> Key:
    """A mapping with string keys and any values."""
    return Key(cs.dict_schema(cs.str_schema(), cs.any_schema()))


def list_of(item: Key, *, min_length: int | None = None) -> Key:
    schema = cs.list_schema(item.schema, min_length=min_length)
    return Key(schema, item.inner, in_list=item.inner is not None)


def nullable(key: Key) -> Key:
    """``key``'s value or null."""
    return Key(cs.nullable_schema(key.schema), key.inner, key.in_list)


def optional(key: Key) -> Key:
    """``key``'s value or null, null when left out."""
    return nullable(key).or_default(None)


def nested(model: type[Record]) -> Key:
    return Key(model.__schema__, model)


def checked(key: Key, check: Callable[[Any], Any]) -> Key:
    """``key``'s value, then ``check`` (which raises ValueError with the message)."""
    return dataclasses.replace(key, schema=cs.no_info_after_validator_function(check, key.schema))


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
    expected_error=optional(checked(text(), choices.error_code)),
    provider_modes=optional(
        list_of(checked(text(), choices.member(choices.PROVIDER_MODES, "a provider mode")))
    ),
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
    retry_on=list_of(
        checked(text(), choices.member(choices.RETRY_ON, "a retry condition"))
    ).or_empty(),
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
    allowed_errors=list_of(checked(text(), choices.error_code)).or_empty(),
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


def _keys_of(model: Model) -> dict[str, tuple[Model | None, bool]]:
    """Each key of ``model`` with the model it holds, and whether in a list. The peer tools'
    formats (loading/formats/) are pydantic models: their aliases need pydantic's layer."""
    if issubclass(model, Record):
        return {name: (key.inner, key.in_list) for name, key in model.__keys__.items()}
    return {name: _submodel(field.annotation) for name, field in model.model_fields.items()}


def _submodel(annotation: Any) -> tuple[Model | None, bool]:
    """The pydantic model inside a field's annotation, and whether it is the item of a list."""
    from pydantic import BaseModel  # loaded already: the model is one of its

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin = getattr(annotation, "__origin__", None)
    for arg in get_args(annotation):
        model, in_list = _submodel(arg)
        if model is not None:
            return model, in_list or origin is list
    return None, False


def _places(root: Model) -> list[tuple[Model, str]]:
    """Each model of a document with where its keys go: "under `paths:`"."""
    found = [(root, "at the top level")]
    pending: list[tuple[Model, str]] = [(root, "")]
    while pending:
        model, prefix = pending.pop()
        for name, (inner, in_list) in _keys_of(model).items():
            if inner is not None:
                where = f"{prefix}{name}"
                place = f"in each item of `{where}:`" if in_list else f"under `{where}:`"
                found.append((inner, place))
                pending.append((inner, f"{where}."))
    return found


def _model_at(root: Model, loc: tuple[str | int, ...]) -> Model:
    model = root
    for part in loc:
        inner = _keys_of(model).get(part, (None, False))[0] if isinstance(part, str) else None
        if inner is not None:
            model = inner
    return model


def _unknown_model_key(root: Model | None, loc: tuple[str | int, ...]) -> str:
    key = str(loc[-1])
    if root is None:
        return unknown_key(key, (), {})
    here = _model_at(root, loc[:-1])
    here_keys = _keys_of(here)
    places = {
        name: place
        for model, place in reversed(_places(root))
        if model is not here
        for name in _keys_of(model)
        if name not in here_keys
    }
    return unknown_key(key, here_keys, places)


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
        hint = suggestion(value, allowed) if isinstance(value, str) else ""
        return f"must be one of {', '.join(allowed)}, got {_shown(value)}{hint}"
    if kind in _BOUNDS:
        key, phrase = _BOUNDS[kind]
        return f"must be {phrase} {ctx.get(key)}, got {_shown(value)}"
    if kind == "value_error":
        return str(ctx.get("error", f"{_shown(value)} is not accepted here"))
    return f"{_shown(value)} is not accepted here"


def describe_error(error: Any, root: Model | None = None) -> str:
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
    root: Model | None = None,
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


def _misspelling(root: Model | None, loc: Loc) -> str | None:
    """The key of this mapping that the unknown key at ``loc`` is closest to."""
    return _closest(str(loc[-1]), _keys_of(_model_at(root, loc[:-1]))) if root else None


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
