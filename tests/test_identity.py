"""Request identity: the recipe in docs/recordings.md, recomputed from the page itself."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from replaygate.loading.identity import (
    Part,
    canonical_json,
    describe_changes,
    normalized_request,
    request_identity,
    sha256_of,
)
from replaygate.loading.normalize import FixtureShapeError

DOC = Path(__file__).resolve().parents[1] / "docs" / "recordings.md"


def _block(name: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    found = re.search(rf"```\w+ {name}\n(.*?)```", text, re.S)
    assert found, f"docs/recordings.md has no block named {name}"
    return found.group(1)


def test_the_documented_example_is_what_the_code_computes() -> None:
    request = json.loads(_block("request"))
    canonical = _block("canonical").strip()
    identity = json.loads(_block("identity"))
    assert canonical_json(normalized_request(request, "gpt-4o-mini")) == canonical
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert identity["request_hash"] == f"sha256:{digest}"
    assert request_identity(request, "gpt-4o-mini").as_json() == identity


def test_canonical_json_sorts_keeps_non_ascii_and_writes_integral_floats_as_integers() -> None:
    value = {"b": 1.0, "a": [2.5, 0.0, True], "é": "Zürich"}
    assert canonical_json(value) == '{"a":[2.5,0,true],"b":1,"é":"Zürich"}'


def _request(**extra: Any) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "weather in Bern?"},
        ],
        "tools": [
            {"name": "b_tool", "parameters": {"type": "object"}},
            {"name": "a_tool", "parameters": {"type": "object"}},
        ],
        "temperature": 0,
        **extra,
    }


def test_tool_form_and_order_and_volatile_fields_do_not_change_the_identity() -> None:
    flat = _request()
    wrapped = _request(
        tools=[
            {"type": "function", "function": {"name": "a_tool", "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "b_tool", "parameters": {"type": "object"}}},
        ],
        user="someone",
        metadata={"run": 7},
        stream=False,
        temperature=0.0,
    )
    assert request_identity(flat, "m") == request_identity(wrapped, "m")


def test_system_prompt_as_a_field_or_a_message_is_the_same_prompt() -> None:
    as_message = _request()
    as_field = _request(
        system="be brief", messages=[{"role": "user", "content": "weather in Bern?"}]
    )
    assert request_identity(as_message, "m") == request_identity(as_field, "m")


@pytest.mark.parametrize(
    ("change", "model", "parts"),
    [
        (
            {"messages": [{"role": "user", "content": "weather in Bern?"}]},
            "m",
            [Part.SYSTEM_PROMPT],
        ),
        (
            {
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "weather in Basel?"},
                ]
            },
            "m",
            [Part.MESSAGES],
        ),
        ({"tools": [{"name": "a_tool", "parameters": {"type": "array"}}]}, "m", [Part.TOOLS]),
        ({}, "other-model", [Part.MODEL]),
        ({"temperature": 0.2}, "m", [Part.SETTINGS]),
        ({"max_tokens": 10, "tools": []}, "m2", [Part.TOOLS, Part.MODEL, Part.SETTINGS]),
    ],
)
def test_each_kind_of_change_is_named(
    change: dict[str, Any], model: str, parts: list[Part]
) -> None:
    stored = request_identity(_request(), "m")
    current = request_identity({**_request(), **change}, model)
    assert current.request_hash != stored.request_hash
    assert current.changed(stored.as_json()) == parts


def test_changes_read_as_a_phrase() -> None:
    assert describe_changes([Part.MESSAGES]) == "messages changed"
    assert describe_changes([Part.TOOLS, Part.MODEL, Part.SETTINGS]) == (
        "tools, model and settings changed"
    )


def test_no_system_prompt_has_no_hash() -> None:
    identity = request_identity({"messages": [{"role": "user", "content": "hi"}]}, "m")
    assert identity.parts["system_prompt_hash"] is None
    assert identity.parts["messages_hash"] == sha256_of([{"role": "user", "content": "hi"}])


def test_a_system_prompt_given_twice_is_an_error() -> None:
    with pytest.raises(FixtureShapeError, match="both in 'system' and as a system message"):
        request_identity(_request(system="again"), "m")
