"""Tool-call arguments against the request's JSON Schema parameters."""

from __future__ import annotations

import http.server
import json
import sys
import threading
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, assume
from hypothesis import strategies as st

from replaygate.assertions.values import EmbeddedJson
from replaygate.engine import schema_checkers, tool_schemas
from replaygate.engine.schema_checkers import InvalidToolSchema
from replaygate.engine.tool_schemas import violations
from replaygate.loading import json_reader
from sizes import sized

SCHEMA = {
    "type": "object",
    "required": ["city"],
    "additionalProperties": False,
    "properties": {
        "city": {"type": "string", "minLength": 2},
        "unit": {"enum": ["c", "f"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}


@pytest.mark.parametrize(
    ("arguments", "keyword", "path"),
    [
        ({}, "required", "$"),
        ({"city": 3}, "type", "$.city"),
        ({"city": "B"}, "minLength", "$.city"),
        ({"city": "Bern", "unit": "k"}, "enum", "$.unit"),
        ({"city": "Bern", "days": 30}, "maximum", "$.days"),
        ({"city": "Bern", "days": True}, "type", "$.days"),
        ({"city": "Bern", "tags": ["a", 1]}, "type", "$.tags[1]"),
        ({"city": "Bern", "extra": 1}, "additionalProperties", "$"),
    ],
)
def test_each_kind_of_violation(arguments: dict[str, object], keyword: str, path: str) -> None:
    (found,) = violations(SCHEMA, arguments)
    assert (found.keyword, found.path) == (keyword, path)


def test_valid_arguments_have_no_violation() -> None:
    assert list(violations(SCHEMA, {"city": "Bern", "unit": "c", "days": 3})) == []


def test_an_invalid_schema_is_reported() -> None:
    with pytest.raises(InvalidToolSchema, match="invalid JSON Schema"):
        list(violations({"type": "objekt"}, {}))


def test_a_catastrophic_pattern_is_bounded_in_time() -> None:
    schema = {"properties": {"s": {"type": "string", "pattern": "^(a|a)+$"}}}
    with pytest.raises(InvalidToolSchema, match="timed out"):
        list(violations(schema, {"s": "a" * 40 + "!"}))


def test_pattern_properties_use_the_bounded_search() -> None:
    schema = {"patternProperties": {"^x_": {"type": "integer"}}}
    (found,) = violations(schema, {"x_a": "no", "y": "fine"})
    assert found.keyword == "type" and found.path == "$.x_a"


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/definitions/nope"},
        {"$ref": "file:///etc/passwd"},
        {"properties": {"a": {"$dynamicRef": "#nope"}}},
    ],
)
def test_unresolvable_references_make_the_schema_invalid(schema: dict[str, object]) -> None:
    with pytest.raises(InvalidToolSchema, match="unresolvable reference"):
        list(violations(schema, {"a": 1}))


def test_a_remote_reference_is_never_fetched() -> None:
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"type": "string"}')

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/schema.json"
        with pytest.raises(InvalidToolSchema, match="unresolvable reference"):
            list(violations({"properties": {"a": {"$ref": url}}}, {"a": 1}))
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert hits == []


def _reference_verdict(schema: Any) -> str | None:
    """What jsonschema's own check_schema says of a schema: None when it is valid.

    Its "regex" format is our regex dialect's (the regex module, not ``re``). It sees the
    schema with sorted keys, as the cache does: which violation jsonschema reports first
    depends on key order.
    """
    from jsonschema import exceptions, validators

    schema = json.loads(json.dumps(schema, sort_keys=True))
    formats = schema_checkers._schema_formats()
    try:
        validators.validator_for(schema).check_schema(schema, format_checker=formats)
    except exceptions.SchemaError as exc:
        return f"invalid JSON Schema: {exc.message}"
    return None


def _our_verdict(schema: Any) -> str | None:
    schema_checkers._validators.cache_clear()
    try:
        schema_checkers._validators(json.dumps(schema, sort_keys=True))
    except InvalidToolSchema as exc:
        return str(exc)
    return None


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([1.5, -0.5, "", "string", "integer", "object", "array", "nope", "email"]),
    st.sampled_from(["^a+$", "[[x]", "\\p{L}+", "(?<n>x)", "a{2,1}", "(", "\\d", "^[^\\d]+$"]),
    st.lists(st.sampled_from(["a", "b", 1, None]), max_size=3),
)
_KEYWORDS = st.sampled_from(
    ["type", "minimum", "maximum", "pattern", "enum", "required", "minLength", "maxItems",
     "format", "const", "uniqueItems", "multipleOf", "additionalProperties", "$schema"]
)  # fmt: skip
_SCHEMAS = st.recursive(
    st.dictionaries(_KEYWORDS, _VALUES, max_size=4),
    lambda inner: st.one_of(
        st.fixed_dictionaries({"properties": st.dictionaries(st.sampled_from("abc"), inner)}),
        st.fixed_dictionaries({"items": inner}),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=2)}),
        st.fixed_dictionaries({"patternProperties": st.dictionaries(_VALUES.filter(
            lambda v: isinstance(v, str)), inner, max_size=2)}),
    ),
    max_leaves=6,
)  # fmt: skip


@sized(400, _SCHEMAS, suppress=[HealthCheck.too_slow])
def test_a_schema_gets_jsonschemas_verdict_and_message(schema: dict[str, Any]) -> None:
    """jsonschema-rs meta-validates first; the verdict is still jsonschema's, word for word."""
    assume(isinstance(schema.get("$schema", ""), str))  # jsonschema crashes: see the next test
    assert _our_verdict(schema) == _reference_verdict(schema)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "strnig"},
        {"minimum": "0"},
        {"pattern": "[[x"},
        {"pattern": "\\p{L}"},  # ECMA and our dialect take it, Python's re does not
        {"properties": {"a": {"pattern": "(?<n>x)"}}},
        {"patternProperties": {"(": {}}},
        {"required": "a"},
        {"$schema": "https://example.com/unknown", "type": "object"},
        {"type": "object", "properties": {"pattern": {"type": "string"}}},
    ],
)
def test_edge_schemas_get_jsonschemas_verdict(schema: dict[str, Any]) -> None:
    assert _our_verdict(schema) == _reference_verdict(schema)


@pytest.mark.parametrize("value", [1, [], {}, None])
def test_a_schema_uri_that_is_not_a_string_is_an_invalid_schema(value: object) -> None:
    with pytest.raises(InvalidToolSchema, match=r"\$schema must be a string"):
        list(violations({"$schema": value, "type": "object"}, {"a": 1}))


@pytest.mark.parametrize(
    "schema",
    [{"not": {"$ref": "#"}}, {"allOf": [{"not": {"$ref": "#"}}]}],
)
def test_a_schema_that_recurses_without_end_is_invalid(schema: dict[str, Any]) -> None:
    """However the recursion surfaces (Python's limit, or a panic in a Rust extension)."""
    with pytest.raises(InvalidToolSchema, match="recurse without end"):
        list(violations(schema, {"a": "x@y.z", "b": {}}))


def test_pattern_is_decided_and_explained_in_the_regex_operators_dialect() -> None:
    # \d is any Unicode digit in the regex module, only 0-9 in ECMA-262: "٣" is a digit here
    schema = {"properties": {"s": {"type": "string", "pattern": "^[^\\d]+$"}}}
    (found,) = violations(schema, {"s": "\u0663"})
    assert (found.keyword, found.path) == ("pattern", "$.s")
    assert list(violations(schema, {"s": "abc"})) == []


def test_pattern_takes_the_operators_extensions() -> None:
    schema = {"properties": {"s": {"pattern": "^[[:alpha:]]+$"}}}
    assert list(violations(schema, {"s": "abc"})) == []
    assert [v.keyword for v in violations(schema, {"s": "ab1"})] == ["pattern"]


def test_a_pattern_re_refuses_is_a_valid_schema_in_our_dialect() -> None:
    schema = {"properties": {"s": {"type": "string", "pattern": "^\\p{L}+$"}}}
    assert list(violations(schema, {"s": "\u00e9t\u00e9"})) == []
    assert [v.keyword for v in violations(schema, {"s": "x1"})] == ["pattern"]


def test_a_pattern_our_dialect_refuses_makes_the_schema_invalid() -> None:
    with pytest.raises(InvalidToolSchema, match="invalid JSON Schema"):
        list(violations({"properties": {"s": {"pattern": "x("}}}, {"s": "x"}))


def test_a_recursive_schema_of_a_tree_is_valid() -> None:
    tree = {"type": "object", "required": ["v"], "properties": {"kids": {"items": {"$ref": "#"}}}}
    assert list(violations(tree, {"v": 1, "kids": [{"v": 2, "kids": []}]})) == []
    (found,) = violations(tree, {"v": 1, "kids": [{"kids": []}]})
    assert (found.keyword, found.path) == ("required", "$.kids[0]")


def test_a_cycle_taken_for_one_value_is_an_error_not_a_crash() -> None:
    # a loop for some argument values only: the case of those values errors, the run goes on
    schema = {
        "if": {"required": ["loop"]},
        "then": {"$ref": "#"},
        "properties": {"v": {"type": "integer"}},
    }
    with pytest.raises(InvalidToolSchema, match="references recurse without end"):
        list(violations(schema, {"loop": 1, "v": "x"}))


def test_additional_properties_sees_pattern_properties_in_our_dialect() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^[[:alpha:]]+_note$": {"type": "string"}, "^\\p{Lu}$": {}},
        "additionalProperties": False,
    }
    assert list(violations(schema, {"\u00e9t\u00e9_note": "x", "\u00c9": 1})) == []
    (found,) = violations(schema, {"zz1": 2})
    assert found.keyword == "additionalProperties"
    assert found.message == (
        "'zz1' does not match any of the regexes: '^[[:alpha:]]+_note$', '^\\\\p{Lu}$'"
    )


def test_additional_properties_keeps_jsonschemas_words() -> None:
    schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    (found,) = violations(schema, {"a": 1, "c": 2, "b": 3})
    assert found.message == "Additional properties are not allowed ('b', 'c' were unexpected)"


def test_a_keyword_that_runs_re_on_our_dialect_errors_the_case() -> None:
    schema = {"patternProperties": {"^\\p{L}+$": {}}, "unevaluatedProperties": False}
    with pytest.raises(InvalidToolSchema, match="unevaluatedProperties is checked with"):
        list(violations(schema, {"abc": 1}))


def _explained(schema: Any, arguments: Any) -> list[tool_schemas.SchemaViolation] | str:
    try:
        return list(violations(schema, arguments))
    except InvalidToolSchema as exc:
        return f"error: {exc}"


def _explained_by_jsonschema(schema: Any, arguments: Any) -> list[Any] | str:
    with mock.patch.object(tool_schemas, "_worded", return_value=None):
        return _explained(schema, arguments)


_SCALARS = st.sampled_from(["a", "b", "abc", "", 0, 1, 1.0, 2, 2.5, 5, -3, True, False, None])
_ARGUMENTS = st.dictionaries(
    st.sampled_from("abcd"),
    st.recursive(
        _SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abcd"), inner, max_size=3)
        ),
        max_leaves=6,
    ),
    max_size=4,
)
# Schemas made of the keywords said without jsonschema, and a few others beside them.
_LEAVES = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["string", "integer", "number", "boolean", "null", "array",
                                 "object", ["string", "null"], ["integer", "boolean"]]),
        # objects too: their keys in an order the schema's canonical copy does not keep
        "enum": st.lists(
            _SCALARS | st.dictionaries(st.sampled_from("ba"), _SCALARS), min_size=1, max_size=3
        ),
        "minimum": st.sampled_from([0, 1, 2.5, -2]),
        "maximum": st.sampled_from([0, 3, 2.5]),
        "minLength": st.just(2),
        "const": _SCALARS,
    },
)  # fmt: skip
_OBJECT_SCHEMAS = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.fixed_dictionaries(
            {"properties": st.dictionaries(st.sampled_from("abcd"), inner, max_size=3)},
            optional={
                "type": st.just("object"),
                "required": st.lists(st.sampled_from("abcd"), unique=True, max_size=3),
                "additionalProperties": st.booleans(),
            },
        ),
        st.fixed_dictionaries({"items": inner}),
        st.fixed_dictionaries({"prefixItems": st.lists(inner, min_size=1, max_size=2)}),
        st.fixed_dictionaries({"contains": inner}),
        st.fixed_dictionaries({"allOf": st.lists(inner, min_size=1, max_size=2)}),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=2)}),
        st.fixed_dictionaries({"not": inner}),
        st.fixed_dictionaries({"if": inner, "then": inner}),
        st.fixed_dictionaries({"additionalProperties": inner, "propertyNames": inner}),
        st.fixed_dictionaries({"dependentSchemas": st.dictionaries(st.sampled_from("ab"), inner)}),
    ),
    max_leaves=8,
)


@sized(1500, _OBJECT_SCHEMAS, _ARGUMENTS, suppress=[HealthCheck.too_slow])
def test_a_violation_is_explained_in_jsonschemas_words(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    """Explained without jsonschema where that can be done, and then word for word the same."""
    assert _explained(schema, arguments) == _explained_by_jsonschema(schema, arguments)
    embedded = EmbeddedJson(arguments)  # arguments parsed from a JSON string
    assert _explained(schema, embedded) == _explained_by_jsonschema(schema, embedded)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "'city' is a required property"),
        ({"city": 3}, "3 is not of type 'string'"),
        ({"city": "Bern", "unit": "k"}, "'k' is not one of ['c', 'f']"),
        ({"city": "Bern", "days": 0}, "0 is less than the minimum of 1"),
        ({"city": "Bern", "days": 30}, "30 is greater than the maximum of 14"),
        ({"city": "Bern", "tags": ["a", None]}, "None is not of type 'string'"),
    ],
)
def test_one_violation_of_a_common_keyword_needs_no_jsonschema(
    arguments: dict[str, object], message: str
) -> None:
    """jsonschema's import costs more than a small pack's run: these are said without it."""
    with mock.patch.object(schema_checkers.Validators, "full", side_effect=AssertionError):
        (found,) = violations(SCHEMA, arguments)
    assert found.message == message
    assert [found] == _explained_by_jsonschema(SCHEMA, arguments)


@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        (SCHEMA, {"city": 3, "unit": "k"}),  # two violations: jsonschema's order
        (SCHEMA, {"city": "B"}),  # minLength: not one of ours
        ({**SCHEMA, "$schema": "http://json-schema.org/draft-04/schema#"}, {}),
        ({"$defs": {"u": {"enum": [1]}}, "properties": {"a": {"$ref": "#/$defs/u"}}}, {"a": 2}),
        ({"dependentRequired": {"required": ["b"]}}, {"required": 1}),
    ],
)
def test_anything_else_is_explained_by_jsonschema(schema: Any, arguments: Any) -> None:
    schema_checkers._validators.cache_clear()
    asked = mock.patch.object(schema_checkers.Validators, "full", side_effect=RuntimeError("asked"))
    with asked, pytest.raises(RuntimeError, match="asked"):
        list(violations(schema, arguments))


def test_an_enum_of_objects_is_shown_as_jsonschema_sees_it() -> None:
    """jsonschema reads the schema's canonical copy, keys sorted: so does the message."""
    schema = {"properties": {"a": {"enum": [{"b": 1, "a": 2}]}}}
    (found,) = violations(schema, EmbeddedJson({"a": 3}))
    assert found.message == "3 is not one of [{'a': 2, 'b': 1}]"
    assert [found] == _explained_by_jsonschema(schema, {"a": 3})


# Schemas a faster cache key could confuse: types, float bits, key order, huge integers.
LOOKALIKES: list[dict[Any, Any]] = [
    {"type": "integer", "maximum": 1},
    {"maximum": 1.0, "type": "integer"},
    {"type": "integer", "maximum": True},
    {"maximum": None},
    {"maximum": float("nan")},
    {"maximum": -0.0},
    {"maximum": 0.0},
    {"maximum": 2**70},
    {"enum": [1, "1"]},
    {"enum": ["1", 1]},
    {1: "x"},
]


def _found(schema: Any) -> Any:
    """What _checkers answers: the validators, or the schema's refusal."""
    try:
        return schema_checkers.checkers(schema)
    except InvalidToolSchema as exc:
        return str(exc)


@pytest.fixture(params=["strict only", "past the strict-only start"])
def codecs_phase(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Before and after the JSON reader's strict-only start, which decides the cache key."""
    past = request.param != "strict only"
    strict_only = json_reader.STRICT_ONLY_CHARS if past else 0
    monkeypatch.setitem(json_reader._DECODED, "strict_only", strict_only)
    return past


def test_a_schema_is_looked_up_by_its_canonical_text_whatever_came_before(
    monkeypatch: pytest.MonkeyPatch, codecs_phase: bool
) -> None:
    monkeypatch.setattr(schema_checkers, "_CHECKERS", {})
    texts = [schema_checkers._CANONICAL.encode(schema) for schema in LOOKALIKES]
    expected: list[Any] = []
    for text in texts:
        try:
            expected.append(schema_checkers._validators(text))
        except InvalidToolSchema as exc:
            expected.append(str(exc))
    for _ in range(2):  # the second time, from what the first one stored
        assert [_found(schema) for schema in LOOKALIKES] == expected
    assert bool(schema_checkers._CHECKERS) == codecs_phase


@pytest.mark.parametrize("msgspec_imported", [True, False])
def test_the_cache_key_does_not_depend_on_what_was_imported(
    monkeypatch: pytest.MonkeyPatch, msgspec_imported: bool
) -> None:
    import msgspec

    if not msgspec_imported:
        monkeypatch.delitem(sys.modules, msgspec.__name__)
    monkeypatch.setattr(schema_checkers, "_CHECKERS", {})
    monkeypatch.setitem(json_reader._DECODED, "strict_only", 0)
    schema_checkers.checkers({"type": "object"})
    assert schema_checkers._CHECKERS == {}
    monkeypatch.setitem(json_reader._DECODED, "strict_only", json_reader.STRICT_ONLY_CHARS)
    schema_checkers.checkers({"type": "object"})
    assert len(schema_checkers._CHECKERS) == 1


@pytest.mark.usefixtures("codecs_phase")
def test_a_lone_surrogate_in_a_schema_is_judged_not_a_crash() -> None:
    """UTF-8 (msgpack's strings) cannot carry one; the canonical text can."""
    schema = {"type": "object", "properties": {"city": {"type": "string", "description": "\ud800"}}}
    assert list(violations(schema, {"city": "Bern"})) == []
    (found,) = violations(schema, {"city": 3})
    assert found.path == "$.city"
