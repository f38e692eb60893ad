"""Benchmark `replaygate record`: our own CPU time per recorded case against a local server.

Usage: python bench/bench_record.py [--cases 500] [--repeat 3]

A minimal Chat Completions server runs in a separate process on 127.0.0.1, so its work is not
counted. The recording runs in this process with `--mode refresh --jobs 1`; "own time" is this
process's CPU time (user + system, `time.process_time`) per case: building the request, HTTP
through requests and urllib3, parsing and normalising the answer, identity, redaction and the
atomic write. Start-up and pack loading are measured apart, by a run over zero cases' worth of
requests (`--mode record-new` once everything is recorded: it loads and checks, sends nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import multiprocessing
import os
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ANSWER = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1727346166,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "tool_calls": [
                        {
                            "id": f"call_{i}",
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args)},
                        }
                        for i, (name, args) in enumerate(
                            [
                                (
                                    "lookup_customer",
                                    {"customer_id": "cus_1", "include_history": True},
                                ),
                                ("fetch_orders", {"customer_id": "cus_1", "limit": 10}),
                            ]
                        )
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 400, "completion_tokens": 60, "total_tokens": 460},
    }
).encode()

CONTRACT_HEAD = (
    "tool: multi_tool_call\nexpect_tools: [lookup_customer, fetch_orders]\ngolden_cases:\n"
)


class _Handler(BaseHTTPRequestHandler):
    answers = itertools.count(60)
    protocol_version = "HTTP/1.1"  # keep-alive, as the real APIs
    disable_nagle_algorithm = True  # headers and body in two writes must not wait for an ACK

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        # a new token count each time: a refresh of the same answer writes nothing, and this
        # measures the write too
        answer = ANSWER.replace(
            b'"completion_tokens": 60', b'"completion_tokens": %d' % next(self.answers)
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def _serve(port: Any) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    port.value = server.server_address[1]
    server.serve_forever()


def _fixture(i: int) -> dict[str, Any]:
    tools = [
        {
            "name": "lookup_customer",
            "description": "Find a customer",
            "parameters": {
                "type": "object",
                "properties": {
                    "customer_id": {"type": "string"},
                    "include_history": {"type": "boolean"},
                },
            },
        },
        {
            "name": "fetch_orders",
            "description": "List orders",
            "parameters": {
                "type": "object",
                "properties": {"customer_id": {"type": "string"}, "limit": {"type": "integer"}},
            },
        },
    ]
    return {
        "boundary_version": "1.0",
        "provider": "openai",
        "model_id": "gpt-4o-mini",
        "request": {
            "messages": [
                {"role": "system", "content": "You handle refunds. " * 20},
                {"role": "user", "content": f"Refund order {i} for customer cus_1."},
            ],
            "tools": tools,
            "tool_choice": "required",
            "temperature": 0,
            "max_tokens": 512,
        },
    }


def _pack(root: Path, cases: int) -> None:
    (root / ".git").mkdir(parents=True)
    pack = root / "packs" / "bench"
    (pack / "contracts").mkdir(parents=True)
    (pack / "golden").mkdir()
    (pack / "pack.yaml").write_text("pack_id: bench\n")
    lines = [CONTRACT_HEAD]
    for i in range(cases):
        (pack / "golden" / f"c{i}.json").write_text(json.dumps(_fixture(i), indent=2))
        lines.append(f"  - id: c{i}\n    input_ref: c{i}.json\n    expect_ok: true\n")
    (pack / "contracts" / "c.yaml").write_text("".join(lines))


def _measure(args: list[str]) -> tuple[float, float, float]:
    """User CPU, system CPU and wall seconds of one in-process run."""
    from replaygate.cli import main

    before, wall = os.times(), time.perf_counter()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        code = main(args)
    assert code == 0, code
    after = os.times()
    return after.user - before.user, after.system - before.system, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    port = multiprocessing.Value("i", 0)
    server = multiprocessing.Process(target=_serve, args=(port,), daemon=True)
    server.start()
    while not port.value:
        time.sleep(0.01)
    base = f"http://127.0.0.1:{port.value}/v1"
    os.environ["OPENAI_API_KEY"] = "sk-bench-0000000000000000"
    os.environ.pop("GITHUB_EVENT_NAME", None)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _pack(root, options.cases)
        os.chdir(root)
        common = ["record", "--provider", "openai", "--base-url", base, "--jobs", "1"]
        _measure([*common, "--mode", "refresh"])  # warm: imports, first connection
        runs = [_measure([*common, "--mode", "refresh"]) for _ in range(options.repeat)]
        floors = [_measure(common) for _ in range(options.repeat)]  # loads, sends nothing
    server.terminate()
    best = min(runs, key=lambda run: run[0] + run[1])
    floor = min(floors, key=lambda run: run[0] + run[1])
    n = options.cases
    per = [(best[i] - floor[i]) / n * 1000 for i in range(3)]
    print(f"cases {n}, best of {options.repeat}, --jobs 1, server in another process")
    print(
        f"record --mode refresh: user {best[0]:.2f} s, system {best[1]:.2f} s, wall {best[2]:.2f} s"
    )
    print(f"record-new, all unchanged (load and check only): user {floor[0]:.2f} s")
    print(
        f"per recorded request: user {per[0]:.2f} ms + system {per[1]:.2f} ms "
        f"= own CPU {per[0] + per[1]:.2f} ms (target < 2 ms); wall {per[2]:.2f} ms"
    )


if __name__ == "__main__":
    main()
