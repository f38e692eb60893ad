"""The machinery of our files' models: plain classes whose instances pydantic-core builds
from a schema declared beside them with ``record(...)`` and the key helpers below."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar, cast

from pydantic_core import PydanticUndefined, SchemaValidator
from pydantic_core import core_schema as cs

if TYPE_CHECKING:
    from pydantic import BaseModel


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
