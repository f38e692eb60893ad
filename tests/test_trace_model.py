"""Recorded traces in every shape normalise to one trace model; old contracts still see calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from packbuilder import make_pack
from replaygate.cli import main
from replaygate.loading.normalize import FixtureShapeError, normalize_response
from replaygate.loading.traces import is_trace, read_trace, single_turn

REFERENCE = Path(__file__).parent / "data" / "traces"

OPENAI = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "deploy"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "check", "arguments": "{}"}},
            {"id": "c2", "type": "function",
             "function": {"name": "deploy", "arguments": '{"env": "prod"}'}},
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    },
    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    {"role": "tool", "tool_call_id": "c2", "content": "deployed"},
    {"role": "assistant", "content": "Deployed to prod.",
     "usage": {"prompt_tokens": 5, "completion_tokens": 3}},
]  # fmt: skip

ANTHROPIC = [
    {"role": "user", "content": "weather in Paris?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
             "input": {"city": "Paris"}},
        ],
        "usage": {"input_tokens": 40, "output_tokens": 9, "cache_read_input_tokens": 7},
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
             "content": [{"type": "text", "text": "service down"}]},
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "The service is down."}]},
]  # fmt: skip


def test_openai_messages_become_turns_with_results_and_usage() -> None:
    trace = read_trace(OPENAI)
    assert [turn.role for turn in trace.turns] == [
        "system", "user", "assistant", "tool", "tool", "assistant",
    ]  # fmt: skip
    calls = trace.calls
    assert [(c.name, dict(c.arguments or {}), c.id, c.result) for c in calls] == [
        ("check", {}, "c1", "ok"),
        ("deploy", {"env": "prod"}, "c2", "deployed"),
    ]
    assert trace.final_output == "Deployed to prod."
    assert trace.turn_count == 2 and trace.total_tokens == 128


def test_anthropic_blocks_become_turns_with_error_results() -> None:
    trace = read_trace({"messages": ANTHROPIC})
    (call,) = trace.calls
    assert (call.name, dict(call.arguments or {}), call.id) == (
        "get_weather",
        {"city": "Paris"},
        "toolu_1",
    )
    assert call.result == "service down" and call.is_error is True
    assert trace.turns[1].text == "Let me look."
    assert trace.final_output == "The service is down."
    assert trace.total_tokens == 56


def test_flat_turns_with_sandbox_and_final_output() -> None:
    trace = read_trace(
        {
            "turns": [
                {"role": "assistant", "text": "reading",
                 "tool_calls": [{"id": "1", "name": "Read", "arguments": {"file_path": "a"},
                                 "result": "text", "is_error": False}],
                 "usage": {"input_tokens": 3, "output_tokens": 4}},
                {"text": "done"},
            ],
            "final_output": "All done",
            "sandbox": "/tmp/sb",
        }
    )  # fmt: skip
    assert trace.final_output == "All done" and trace.sandbox == "/tmp/sb"
    assert trace.turns[1].role == "assistant" and trace.turn_count == 2
    assert trace.calls[0].result == "text" and trace.total_tokens == 7


def test_wrapped_messages_may_record_a_sandbox_and_a_final_output() -> None:
    trace = read_trace({"messages": OPENAI, "sandbox": "/srv", "final_output": "Done."})
    assert (trace.sandbox, trace.final_output, len(trace.calls)) == ("/srv", "Done.", 2)


def test_malformed_arguments_in_a_trace_are_none_not_an_empty_object() -> None:
    messages = [
        {
            "role": "assistant",
            "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": "{oops"}}],
        }
    ]
    assert read_trace(messages).calls[0].arguments is None


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ([1], "response[0]: expected a message object with a 'role'"),
        ({"turns": [{"txt": "x"}]}, "response.turns[0]: unknown key 'txt'"),
        ({"turns": "x"}, "response.turns: expected a list"),
        ({"messages": {}}, "response.messages: expected a list"),
        ([{"role": "assistant", "content": 3}], "response[0].content: expected a string or a list"),
        (
            [{"role": "assistant", "content": [{"text": "x"}]}],
            "response[0].content[0]: expected a block",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"function": {}}]}],
            "tool_calls[0]: missing tool name",
        ),
        (
            [{"role": "assistant", "usage": {"input_tokens": -1}}],
            "usage.input_tokens: expected a token count",
        ),
        ({"turns": [], "final_output": 1}, "response.final_output: expected a string"),
        (
            [{"role": "assistant", "usage": {"tokens": 5}}],
            "response[0].usage: no token count we know in tokens (use input_tokens,",
        ),
        ({"messages": [], "usage": {"total_tokens": -3}}, "response.usage.total_tokens"),
        (
            {"turns": [{"role": "asistant"}]},
            "response.turns[0].role: unknown role 'asistant' (did you mean 'assistant'?)",
        ),
        (
            {"turns": [{"role": "model"}]},
            "response.turns[0].role: unknown role 'model' (use assistant, system, tool, user)",
        ),
        (
            [{"role": "agent"}],
            "response[0].role: unknown role 'agent' (use assistant, system, tool,",
        ),
        ([{"role": "Assistant"}], "response[0].role: unknown role 'Assistant' (did you mean"),
        (
            {"turns": [], "tool_calls": []},
            "response: turns and tool_calls cannot be combined (a trace holds its calls",
        ),
        ({"messages": [], "content": "x"}, "response: messages and content cannot be combined"),
        (
            {"turns": [{"tool_calls": [{"name": "f", "is_error": "no"}]}]},
            "response.turns[0].tool_calls[0].is_error: expected true or false",
        ),
    ],
)
def test_bad_trace_shapes_are_located(response: Any, message: str) -> None:
    with pytest.raises(FixtureShapeError) as caught:
        read_trace(response)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("usage", "total"),
    [
        ({"total_tokens": 42}, 42),
        ({"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 12}, 12),  # reasoning
        ({"totalTokens": 9}, 9),
        ({"promptTokenCount": 3, "candidatesTokenCount": 4}, 7),
        ({"inputTokens": 3, "outputTokens": 4, "cacheWriteInputTokens": 2}, 9),
    ],
)
def test_every_spelling_of_a_token_count_is_counted(usage: dict[str, int], total: int) -> None:
    trace = read_trace([{"role": "assistant", "content": "x", "usage": usage}])
    assert trace.total_tokens == total


def test_a_top_level_usage_counts_without_double_counting() -> None:
    turn = {"role": "assistant", "content": "x", "usage": {"input_tokens": 10}}
    assert read_trace({"messages": [turn], "usage": {"total_tokens": 30}}).total_tokens == 30
    assert read_trace({"messages": [turn], "usage": {"total_tokens": 10}}).total_tokens == 10
    assert read_trace({"turns": [], "usage": {"input_tokens": 4}}).total_tokens == 4


def test_a_single_response_is_a_single_turn_and_not_a_trace() -> None:
    response = {"content": "hi", "tool_calls": [{"id": "a", "name": "f", "arguments": '{"x": 1}'}]}
    assert not is_trace(response)
    document, calls = normalize_response(response)
    trace = single_turn(document, calls)
    assert len(trace.turns) == 1 and trace.final_output == "hi"
    assert trace.calls[0].id == "a" and dict(trace.calls[0].arguments or {}) == {"x": 1}


OLD_CONTRACT = """\
tool: multi_tool_call
expected_tool_calls:
  - name: deploy
    argument_invariants:
      - path: $.env
        equals: prod
assertions:
  output_invariants:
    - path: $.content
      regex: Deployed
golden_cases:
  - id: trace
    input_ref: trace.json
    expect_ok: true
"""


def _run(root: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = root / "r.json"
    code = main(["run", "--root", str(root), "--json", str(out), str(root / "packs"), *extra])
    return code, json.loads(out.read_text())


def test_a_single_response_contract_sees_every_call_of_a_trace(tmp_path: Path) -> None:
    make_pack(tmp_path, contract=OLD_CONTRACT, fixtures={"trace.json": {"response": OPENAI}})
    code, results = _run(tmp_path)
    assert code == 0, results["cases"][0]["failures"]
    assert results["cases"][0]["status"] == "passed" and results["cases"][0]["assertions"] == []


def test_malformed_arguments_in_a_trace_classify_the_case(tmp_path: Path) -> None:
    bad = [
        {
            "role": "assistant",
            "tool_calls": [{"id": "x", "function": {"name": "deploy", "arguments": "{oops"}}],
        }
    ]
    make_pack(tmp_path, contract=OLD_CONTRACT, fixtures={"trace.json": {"response": bad}})
    code, results = _run(tmp_path)
    assert code == 1 and results["cases"][0]["classification"] == "malformed_arguments"


def test_a_bad_trace_errors_the_case_naming_the_fixture(tmp_path: Path) -> None:
    make_pack(
        tmp_path, contract=OLD_CONTRACT, fixtures={"trace.json": {"response": {"turns": [3]}}}
    )
    code, results = _run(tmp_path)
    assert code == 1 and results["cases"][0]["status"] == "error"
    assert results["cases"][0]["reason"] == (
        "packs/p/golden/trace.json: response.turns[0]: expected a turn object"
    )


def test_an_unknown_role_is_located_at_its_line(tmp_path: Path) -> None:
    fixture = {"response": {"turns": [{"role": "assistant"}, {"role": "asistant"}]}}
    make_pack(
        tmp_path, contract=OLD_CONTRACT, fixtures={"trace.json": json.dumps(fixture, indent=2)}
    )
    _, results = _run(tmp_path)
    assert results["cases"][0]["reason"] == (
        "packs/p/golden/trace.json:8: response.turns[1].role: unknown role 'asistant'"
        " (did you mean 'assistant'?)"
    )


@pytest.mark.parametrize("name", sorted(p.name for p in REFERENCE.glob("*.json")))
def test_recorded_provider_exchanges_read_as_traces(name: str) -> None:
    data = json.loads((REFERENCE / name).read_text())
    trace = read_trace(data["messages"])
    assert [call.name for call in trace.calls] == data["expect"]["calls"]
    assert trace.final_output == data["expect"]["final_output"]
