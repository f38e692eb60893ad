"""Benchmark `replaygate.check.check_response`: the time of one in-app check, per call.

Usage: python bench/bench_check_response.py [--calls N] [--repeat N]

A contract of two expected calls with six invariants (the shape `infer` writes) is written to
a temporary pack; each provider's response body (Chat Completions, Responses, Messages) and an
SDK object are checked N times. The first call reads and compiles the contract and is shown
apart; the others reuse it. Best of --repeat; figures in microseconds a call.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replaygate.check import check_response

CONTRACT = """\
tool: multi_tool_call
tool_order: strict
expected_tool_calls:
  - name: search
    argument_invariants:
      - path: $.q
        exists: true
        type: string
        length_gte: 3
      - path: $.limit
        type: integer
        gte: 1
        lte: 50
  - name: book
    argument_invariants:
      - path: $.flight
        regex: "^[A-Z]{2}[0-9]{3,4}$"
      - path: $.seats
        one_of: [1, 2, 3, 4]
assertions:
  output_invariants:
    - path: $.tool_calls
      length_gte: 2
golden_cases:
  - id: ok
    input_ref: ok.json
    expect_ok: true
"""
CALLS = [
    ("search", {"q": "flights to Bern", "limit": 10}),
    ("book", {"flight": "LX1234", "seats": 2}),
]


def bodies() -> dict[str, Any]:
    """One response per wire format, each making the two calls."""
    chat = {
        "id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": n, "arguments": json.dumps(a)}}
                for i, (n, a) in enumerate(CALLS)]}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }  # fmt: skip
    responses = {
        "id": "r", "object": "response", "status": "completed", "model": "gpt-4o-mini",
        "output": [{"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": n,
                    "arguments": json.dumps(a)} for i, (n, a) in enumerate(CALLS)],
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }  # fmt: skip
    messages = {
        "id": "m", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": a}
                    for i, (n, a) in enumerate(CALLS)],
        "stop_reason": "tool_use", "usage": {"input_tokens": 100, "output_tokens": 20},
    }  # fmt: skip
    return {"chat": chat, "responses": responses, "messages": messages}


def _sdk_object(body: dict[str, Any]) -> Any:
    """The openai SDK's ChatCompletion, when the SDK is installed (the test extra has it)."""
    try:
        from openai.types.chat import ChatCompletion
    except ImportError:
        return None
    return ChatCompletion.model_validate(body)


def best_of(repeat: int, calls: int, check: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            check()
        best = min(best, time.perf_counter() - start)
    return best * 1e6 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        contract = Path(folder) / "contracts" / "trip.yaml"
        contract.parent.mkdir()
        contract.write_text(CONTRACT, encoding="utf-8")
        (Path(folder) / "pack.yaml").write_text("pack_id: bench\n", encoding="utf-8")
        responses = bodies()
        sdk = _sdk_object(responses["chat"])
        if sdk is not None:
            responses["chat (SDK object)"] = sdk
        start = time.perf_counter()
        assert check_response(responses["chat"], contract).ok
        first = (time.perf_counter() - start) * 1e3
        print(f"first call (reads and compiles the contract): {first:.1f} ms")
        for name, response in responses.items():
            assert check_response(response, contract).ok, name
            per_call = best_of(
                args.repeat, args.calls, lambda r=response: check_response(r, contract)
            )
            print(f"{name:<20} {per_call:8.1f} us/call")


if __name__ == "__main__":
    main()
