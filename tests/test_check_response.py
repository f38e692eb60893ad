"""replaygate.check.check_response: a provider response judged in the app against a contract."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anthropic.types
import openai.types.chat
import openai.types.responses
import pytest

from fake_providers import anthropic_body, chat_body, responses_body
from packbuilder import make_pack
from replaygate.check import check_response
from replaygate.core.errors import ReplayGateError

CONTRACT = """\
tool: get_weather
expected_tool_calls:
  - name: get_weather
    argument_invariants:
      - path: $.city
        one_of: [Bern, Basel]
assertions:
  output_invariants:
    - path: $.finish_reason
      equals: tool_calls
golden_cases:
  - id: ok
    input_ref: ok.json
    expect_ok: true
"""
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]


BERN = [("get_weather", {"city": "Bern"})]


def _openai(kind: type, body: dict[str, Any]) -> Any:
    """The SDK's object, built from a body as the SDK builds it (leniently)."""
    return openai._models.construct_type(value=body, type_=kind)


def _complete(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses body with the members the SDK's type requires."""
    usage = {
        **body["usage"],
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    return {**body, "tool_choice": "auto", "tools": [], "usage": usage}


def _anthropic(body: dict[str, Any]) -> Any:
    return anthropic._models.construct_type(value=body, type_=anthropic.types.Message)


@pytest.fixture
def contract(tmp_path: Path) -> Path:
    pack = make_pack(tmp_path, contract=CONTRACT, fixtures={})
    return pack / "contracts" / "c.yaml"


@pytest.mark.parametrize(
    "response",
    [
        chat_body([("get_weather", {"city": "Bern"})]),
        responses_body([("get_weather", {"city": "Basel"})]),
        anthropic_body([("get_weather", {"city": "Bern"})]),
        _openai(openai.types.chat.ChatCompletion, chat_body(BERN)),
        _openai(openai.types.responses.Response, _complete(responses_body(BERN))),
        _anthropic(anthropic_body(BERN)),
        {
            "success": True,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bern"}}],
            "finish_reason": "tool_calls",
        },
    ],
    ids=["chat", "responses", "messages", "chat-sdk", "responses-sdk", "messages-sdk", "flat"],
)
def test_a_response_that_keeps_the_contract_is_ok(contract: Path, response: object) -> None:
    result = check_response(response, contract)
    assert result.ok, result.failures
    assert result.failures == ()


def test_a_failure_says_what_where_and_its_classification(contract: Path) -> None:
    response = _anthropic(anthropic_body([("get_weather", {"city": "Paris"})]))
    result = check_response(response, contract)
    assert not result.ok
    [failure] = result.failures
    assert failure.classification == "schema_violation"
    assert (failure.file, failure.line) == ("packs/p/contracts/c.yaml", 6)  # the one_of line
    assert failure.message == "'Paris' is not one of ['Bern', 'Basel']"


def test_text_instead_of_a_call_is_tool_not_invoked(contract: Path) -> None:
    result = check_response(chat_body([], content="It is sunny."), contract)
    assert not result.ok
    assert result.failures[0].classification == "tool_not_invoked"


def test_the_request_gives_the_tool_schemas(contract: Path) -> None:
    response = chat_body([("get_weather", {"city": "Bern", "days": "three"})])
    assert check_response(response, contract).ok  # without the schema: nothing to check
    request = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "?"}],
        "tools": TOOLS,
    }
    result = check_response(response, contract, request=request)
    assert not result.ok
    assert [f.classification for f in result.failures] == ["schema_violation"]


def test_a_changed_contract_is_read_again(contract: Path) -> None:
    response = chat_body([("get_weather", {"city": "Chur"})])
    assert not check_response(response, contract).ok
    contract.write_text(CONTRACT.replace("[Bern, Basel]", "[Bern, Basel, Chur]"))
    stat = contract.stat()
    os.utime(contract, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert check_response(response, contract).ok


def test_nothing_is_written(contract: Path, tmp_path: Path) -> None:
    before = sorted(tmp_path.rglob("*"))
    check_response(chat_body([("get_weather", {"city": "Bern"})]), contract)
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ({"id": "x"}, "response: not a Chat Completions, Responses or Messages response"),
        ({"choices": []}, "response: 'choices' is empty"),
        ([1, 2], "response: expected an object, got list"),
    ],
)
def test_a_response_it_cannot_read_is_one_line(
    contract: Path, response: object, message: str
) -> None:
    with pytest.raises(ReplayGateError) as raised:
        check_response(response, contract)
    assert str(raised.value) == message


def test_a_broken_contract_names_its_line(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, contract="tool: [1\n", fixtures={})
    with pytest.raises(ReplayGateError, match=r"packs/p/contracts/c.yaml:\d+"):
        check_response(chat_body([]), pack / "contracts" / "c.yaml")


def test_a_missing_contract_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ReplayGateError) as raised:
        check_response(chat_body([]), tmp_path / "nothing.yaml")
    assert str(raised.value).endswith(
        "nothing.yaml: cannot read the contract: No such file or directory"
    )


def test_it_is_the_package_s_own_and_imported_only_when_asked_for() -> None:
    import subprocess
    import sys

    script = (
        "import sys, replaygate\n"
        "assert 'replaygate.check' not in sys.modules\n"
        "from replaygate.check import check_response\n"
        "assert replaygate.check_response is check_response\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
