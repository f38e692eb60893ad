"""The machinery of our files' models: plain classes whose instances pydantic-core builds
from a schema derived from their annotations by ``@record``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from types import UnionType
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Literal,
    Self,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
)

from pydantic_core import PydanticUndefined, SchemaValidator
from pydantic_core import core_schema as cs

if TYPE_CHECKING:
    from pydantic import BaseModel


# Each model is a plain class whose instances pydantic-core builds from a schema derived from
# its annotations (`record`): the schema pydantic itself would generate from them
# (tests/test_model_schemas.py builds pydantic's models from the same annotations and compares
# the two on generated documents). Deriving it takes about a millisecond at import; pydantic's
# Python layer cost about a quarter of the action's start-up (its import, schema generation,
# its plugin lookup through importlib.metadata).


@dataclass(frozen=True, slots=True)
class Key:
    """One key of a model: its value's schema, its default (when it may be left out), and
    the model it holds (for where an unknown key belongs: under `paths:`)."""

    schema: cs.CoreSchema
    inner: Model | None = None
    in_list: bool = False
    default: Any = PydanticUndefined
    factory: Callable[[], Any] | None = None

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


@dataclass(frozen=True, slots=True)
class Bounds:
    """A key's bounds, as ``Annotated`` metadata: ``Annotated[str, Bounds(min_length=1)]``."""

    min_length: int | None = None  # of a text or a list
    pattern: str | None = None
    gt: int | None = None
    ge: float | None = None
    le: float | None = None


@dataclass(frozen=True, slots=True)
class Check:
    """A check of a key's value, as ``Annotated`` metadata, run after the type's own (or,
    ``before``, ahead of it); it raises ValueError with the message."""

    check: Callable[[Any], Any]
    before: bool = False


class _Empty:
    def __repr__(self) -> str:
        return "EMPTY"


EMPTY: Any = _Empty()  # a list key's default: a new empty list each time


def record(cls: type[R]) -> type[R]:
    """Declare a model: its keys, their types, bounds, checks and defaults are its annotations
    and class attributes, from which pydantic-core's schema is derived as pydantic would."""
    keys: dict[str, Key] = {}
    # the class's own annotations, read in its module's names (they are text there)
    for name, annotation in inspect.get_annotations(cls, eval_str=True).items():
        schema, inner, in_list = _schema(annotation)
        default = cls.__dict__.get(name, PydanticUndefined)
        factory = list if default is EMPTY else None
        keys[name] = Key(schema, inner, in_list, PydanticUndefined if factory else default, factory)
    cls.__keys__ = keys
    fields = {name: key.field() for name, key in keys.items()}
    cls.__schema__ = cs.model_schema(
        cls, cs.model_fields_schema(fields, extra_behavior="forbid"), config=_CONFIG
    )
    return cls


Derived = tuple[cs.CoreSchema, type[Record] | None, bool]  # the schema, the model, in a list


def _schema(annotation: Any) -> Derived:
    """The schema of an annotation, the model it holds and whether that is in a list."""
    bounds = Bounds()
    checks: tuple[Check, ...] = ()
    if get_origin(annotation) is Annotated:
        annotation, *metadata = get_args(annotation)
        bounds = next((item for item in metadata if isinstance(item, Bounds)), bounds)
        checks = tuple(item for item in metadata if isinstance(item, Check))
    schema, inner, in_list = _plain(annotation, bounds)
    for each in checks:
        if each.before:
            schema = cs.no_info_before_validator_function(each.check, schema)
        else:
            schema = cs.no_info_after_validator_function(each.check, schema)
    return schema, inner, in_list


_SCALARS: dict[Any, Callable[[Bounds], cs.CoreSchema]] = {
    str: lambda b: cs.str_schema(min_length=b.min_length, pattern=b.pattern),
    int: lambda b: cs.int_schema(gt=b.gt, ge=None if b.ge is None else int(b.ge)),
    float: lambda b: cs.float_schema(ge=b.ge, le=b.le),
    bool: lambda b: cs.bool_schema(),
    Any: lambda b: cs.any_schema(),
    # any of the forms pydantic reads from text (ISO 8601, RFC 3339)
    datetime: lambda b: cs.datetime_schema(strict=False),
}


def _plain(annotation: Any, bounds: Bounds) -> Derived:
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation in _SCALARS:
        return _SCALARS[annotation](bounds), None, False
    if origin is list:
        item, inner, _ = _schema(args[0])
        return cs.list_schema(item, min_length=bounds.min_length), inner, inner is not None
    if origin is dict and args == (str, Any):
        return cs.dict_schema(cs.str_schema(), cs.any_schema()), None, False
    if origin is Literal:
        return cs.literal_schema(list(args)), None, False
    if origin in (Union, UnionType) and len(args) == 2 and args[1] is type(None):
        schema, inner, in_list = _schema(args[0])
        return cs.nullable_schema(schema), inner, in_list
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return annotation.__schema__, annotation, False
    raise TypeError(f"{annotation!r} is not a type a model's key can have")
