"""Tool-call arguments against the request's JSON Schema parameters."""

from __future__ import annotations

import http.server
import threading
import time

import pytest

from replaygate.engine.tool_schemas import InvalidToolSchema, violations

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
    started = time.monotonic()
    with pytest.raises(InvalidToolSchema, match="timed out"):
        list(violations(schema, {"s": "a" * 40 + "!"}))
    assert time.monotonic() - started < 5


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
