"""Flat, OpenAI-wrapped and Anthropic shapes normalise to one form."""

from __future__ import annotations

import pytest

from replaygate.loading.normalize import (
    EmbeddedJson,
    FixtureShapeError,
    normalize_request,
    normalize_response,
)


def test_flat_and_wrapped_calls_normalise_alike() -> None:
    flat = {"tool_calls": [{"name": "f", "arguments": {"a": 1}}]}
    wrapped = {
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
        ]
    }
    (doc1, calls1), (doc2, calls2) = normalize_response(flat), normalize_response(wrapped)
    assert calls1[0].name == calls2[0].name == "f"
    assert dict(calls1[0].arguments) == dict(calls2[0].arguments) == {"a": 1}
    assert isinstance(doc2["tool_calls"][0]["arguments"], EmbeddedJson)
    assert doc2["tool_calls"][0]["arguments"].raw == '{"a": 1}'
    assert doc2["tool_calls"][0]["id"] == "c1"
    assert doc1["success"] is True


def test_anthropic_tool_use_block() -> None:
    _, calls = normalize_response(
        {"tool_calls": [{"type": "tool_use", "id": "t", "name": "g", "input": {"q": "x"}}]}
    )
    assert calls[0].name == "g" and dict(calls[0].arguments) == {"q": "x"}


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ('{"a": ', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        (42, "got int"),
        ('{"a": NaN}', "not valid JSON"),
    ],
)
def test_malformed_arguments_are_kept_with_the_reason(raw: object, why: str) -> None:
    _, calls = normalize_response({"tool_calls": [{"name": "f", "arguments": raw}]})
    assert calls[0].malformed is not None and why in calls[0].malformed
    assert calls[0].arguments == raw


def test_error_response_is_not_success() -> None:
    doc, _ = normalize_response({"error": {"code": "rate_limit"}})
    assert doc["success"] is False


@pytest.mark.parametrize(
    "response",
    [[], {"tool_calls": {}}, {"tool_calls": [{"arguments": {}}]}, {"success": "yes"}],
)
def test_bad_shapes_are_refused(response: object) -> None:
    with pytest.raises(FixtureShapeError):
        normalize_response(response)


def test_request_tools_flat_and_schemas() -> None:
    request = {
        "messages": [],
        "tools": [
            {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}},
            {"name": "b", "input_schema": {"type": "object", "required": ["x"]}},
            {"name": "c"},
        ],
    }
    doc, schemas = normalize_request(request)
    assert [t["name"] for t in doc["tools"]] == ["a", "b", "c"]
    assert set(schemas) == {"a", "b"}
    assert schemas["b"]["required"] == ["x"]


def test_content_and_error_stay_absent_when_not_recorded() -> None:
    doc, _ = normalize_response({"tool_calls": []})
    assert set(doc) == {"success", "tool_calls"}
    doc, _ = normalize_response({"content": None, "tool_calls": []})
    assert doc["content"] is None
