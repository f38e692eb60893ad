"""The keywords of each JSON Schema draft, and a tool schema's keys that are none of them: a
misspelt keyword (``requried``) is ignored by every validator, so the check it names never runs.

The table is the union of each draft's validation keywords and its metaschema's properties
(tests/test_fixture_keys.py holds it equal to jsonschema's own); it is written out here so
that reading a fixture never imports jsonschema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replaygate.assertions.values import suggestion
from replaygate.loading.files import excerpt

Loc = tuple[str | int, ...]

_DRAFT4 = frozenset(
    {
        "$ref", "$schema", "additionalItems", "additionalProperties", "allOf", "anyOf", "default",
        "definitions", "dependencies", "description", "enum", "exclusiveMaximum",
        "exclusiveMinimum", "format", "id", "items", "maxItems", "maxLength", "maxProperties",
        "maximum", "minItems", "minLength", "minProperties", "minimum", "multipleOf", "not",
        "oneOf", "pattern", "patternProperties", "properties", "required", "title", "type",
        "uniqueItems",
    }
)  # fmt: skip
_DRAFT6 = (_DRAFT4 - {"id"}) | {"$id", "const", "contains", "examples", "propertyNames"}
_DRAFT7 = _DRAFT6 | {
    "$comment", "contentEncoding", "contentMediaType", "else", "if", "readOnly", "then",
}  # fmt: skip
_DRAFT2019 = _DRAFT7 | {
    "$anchor", "$defs", "$recursiveAnchor", "$recursiveRef", "$vocabulary", "contentSchema",
    "dependentRequired", "dependentSchemas", "deprecated", "maxContains", "minContains",
    "unevaluatedItems", "unevaluatedProperties", "writeOnly",
}  # fmt: skip
_DRAFT2020 = (_DRAFT2019 - {"additionalItems"}) | {"$dynamicAnchor", "$dynamicRef", "prefixItems"}

# Each draft by the name a message gives it, and the `$schema` URIs that name it.
DRAFTS: dict[str, frozenset[str]] = {
    "draft-04": _DRAFT4,
    "draft-06": _DRAFT6,
    "draft-07": _DRAFT7,
    "draft 2019-09": _DRAFT2019,
    "draft 2020-12": _DRAFT2020,
}
_URIS = {
    "json-schema.org/draft-04/schema": "draft-04",
    "json-schema.org/draft-06/schema": "draft-06",
    "json-schema.org/draft-07/schema": "draft-07",
    "json-schema.org/draft/2019-09/schema": "draft 2019-09",
    "json-schema.org/draft/2020-12/schema": "draft 2020-12",
}
DEFAULT_DRAFT = "draft 2020-12"  # as the validators take a schema without `$schema`
# Annotations every draft lets a schema carry, whatever it lists.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment"})

# Where a keyword's value holds schemas: one, a list of them, or a mapping of names to them.
_ONE = frozenset({
    "additionalProperties", "additionalItems", "items", "contains", "not", "if", "then", "else",
    "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
})  # fmt: skip
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_MAP = frozenset({
    "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies",
})  # fmt: skip


_HOLDERS = _ONE | _LIST | _MAP
_KNOWN = {name: keywords | _ANNOTATIONS for name, keywords in DRAFTS.items()}


def draft_of(schema: Mapping[str, Any]) -> str:
    """The draft a schema's ``$schema`` names (the default without one, or an unknown one)."""
    uri = schema.get("$schema")
    if not isinstance(uri, str):
        return DEFAULT_DRAFT
    bare = uri.split("://", 1)[-1].rstrip("#")
    return _URIS.get(bare, DEFAULT_DRAFT)


def unknown_keywords(schema: Any) -> list[tuple[Loc, str]]:
    """Each key of the schema that is no keyword of its draft, where it is in the schema."""
    if type(schema) is not dict and not isinstance(schema, Mapping):  # JSON gives dicts
        return []
    draft = draft_of(schema)
    found: list[tuple[Loc, str]] = []
    _walk(schema, (), draft, _KNOWN[draft], found)
    return found


def _walk(
    node: Any, loc: Loc, draft: str, keywords: frozenset[str], found: list[tuple[Loc, str]]
) -> None:
    if not isinstance(node, Mapping):
        return  # true, false: schemas with no keys
    if not keywords.issuperset(node):  # nearly every schema: one C-level pass over its keys
        found += [
            ((*loc, key), _message(key, draft, keywords))
            for key in node
            if key not in keywords and not (isinstance(key, str) and key.startswith("x-"))
        ]
    if _HOLDERS.isdisjoint(node):  # a leaf: `{"type": "string"}`
        return
    for key, value in node.items():  # in the file's order: the problems' order is stable
        if key not in _HOLDERS:
            continue
        if key in _ONE:
            _walk(value, (*loc, key), draft, keywords, found)
        if key in _LIST and isinstance(value, list):
            for index, item in enumerate(value):
                _walk(item, (*loc, key, index), draft, keywords, found)
        if key in _MAP and isinstance(value, Mapping):
            for name, item in value.items():
                _walk(item, (*loc, key, name), draft, keywords, found)


def _message(key: Any, draft: str, keywords: frozenset[str]) -> str:
    hint = suggestion(key, sorted(keywords))
    return (
        f"'{excerpt(str(key))}' is not a keyword of JSON Schema {draft}, so it checks nothing"
        f"{hint}; an annotation of your own starts with x-"
    )
