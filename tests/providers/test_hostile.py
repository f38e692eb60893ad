"""A hostile or broken provider: a trickled body, a deep or huge answer, a signal mid-request,
an unreachable host. Slow and huge inputs are made on the fly, with tiny configured limits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fake_providers import KEY, FakeProvider, Reply, chat_body
from packbuilder import make_pack, request_only
from replaygate.providers.client import Answer, Provider
from replaygate.providers.names import ProviderName
from replaygate.providers.prompt import prompt_of
from replaygate.providers.redact import Redactor
from replaygate.providers.transport import Policy

Start = Callable[..., FakeProvider]
ROOT = Path(__file__).resolve().parents[2]
REQUEST = {"messages": [{"role": "user", "content": "weather?"}], "max_tokens": 16}
GUARD_S = 30  # a hang guard, not a speed figure


def policy(**changes: Any) -> Policy:
    values: dict[str, Any] = {
        "connect_s": 5.0,
        "read_s": 5.0,
        "retries": 0,
        "retry_on": frozenset(),
        "backoff_s": 0.0,
        "respect_retry_after": True,
        "max_sleep_s": 5.0,
    }
    return Policy(**{**values, **changes})


def call(server: FakeProvider, provider: Provider | None = None, **changes: Any) -> Answer:
    provider = provider or Provider(
        ProviderName(server.provider), server.base_url, KEY, Redactor.build({}, [KEY])
    )
    try:
        return provider.call(prompt_of(REQUEST, "model-x"), policy(**changes))
    finally:
        provider.close()


def test_a_trickled_body_times_out_at_the_total_deadline(providers: Start) -> None:
    server = providers("openai")
    # each byte comes well within the read timeout; the whole body would take 20 s
    server.script.append(Reply(200, chat_body([("f", {})]), trickle_s=0.02))
    answer = call(server, read_s=0.3)
    assert answer.error == "timeout"
    assert "0.3 s" in answer.response["error"]["message"]


CONTRACT = """\
tool: get_weather
timeouts: {total_ms: 100000}
expected_tool_calls:
  - name: get_weather
golden_cases:
  - id: ok
    input_ref: ok.json
    expect_ok: true
"""


@pytest.mark.parametrize("command", [["record"], ["run", "--json", "out.json"]])
def test_a_sigterm_ends_a_run_with_a_request_in_flight(
    tmp_path: Path, providers: Start, command: list[str]
) -> None:
    make_pack(tmp_path, contract=CONTRACT, fixtures={"ok.json": request_only(max_tokens=50)})
    server = providers("openai")
    server.script.append(Reply(200, chat_body([("get_weather", {})]), delay_s=120))
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(ROOT / "src")}
    env.pop("GITHUB_EVENT_NAME", None)
    argv = [*command, "--provider", "openai", "--base-url", server.base_url]
    proc = subprocess.Popen(
        [sys.executable, "-m", "replaygate.cli", *argv],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not server.seen:
            assert proc.poll() is None
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=GUARD_S)
    finally:
        proc.kill()
    assert proc.returncode == 143
    assert "stopped by SIGTERM" in err and "Traceback" not in err
    assert list(tmp_path.rglob("*.recording.json")) == []  # nothing half-answered is written
