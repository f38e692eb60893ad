"""Validation errors of our files' models (and peer formats' pydantic models) in our words:
one line each, unknown keys with where they belong or the nearest key."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Collection, Mapping
from enum import StrEnum
from typing import Any, get_args

from pydantic_core import ValidationError

from replaygate.assertions.values import suggestion, yaml_reading
from replaygate.loading.files import excerpt
from replaygate.loading.records import Model, Record


def version_problem(value: object, known: type[StrEnum]) -> str | None:
    """Why ``value`` is not a version of ``known``, or None when it is one."""
    # a list or an object is no version, and cannot be looked up in a set
    if isinstance(value, str) and value in _versions(known):
        return None
    return f"{_shown(value)} is not a version this replaygate knows (known: {', '.join(known)})"


@functools.cache  # every fixture asks: listing an enum's members costs more than the check
def _versions(known: type[StrEnum]) -> frozenset[str]:
    return frozenset(known)


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
