"""A hostile or broken provider: a trickled body, a deep or huge answer, a signal mid-request,
an unreachable host. Slow and huge inputs are made on the fly, with tiny configured limits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fake_providers import KEY, FakeProvider, Reply, chat_body, policy
from packbuilder import make_pack, request_only
from replaygate.providers.client import Answer, Provider
from replaygate.providers.names import ProviderName
from replaygate.providers.prompt import prompt_of
from replaygate.providers.redact import Redactor

Start = Callable[..., FakeProvider]
ROOT = Path(__file__).resolve().parents[2]
REQUEST = {"messages": [{"role": "user", "content": "weather?"}], "max_tokens": 16}
GUARD_S = 30  # a hang guard, not a speed figure


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


DEEP = b"[" * 200_000 + b"]" * 200_000
ODD_BODIES: list[Any] = [
    DEEP,
    b'{"choices": [' * 100 + b"]}" * 100,
    b"\xff\xfe not text",
    [],
    "text",
    {"choices": "x", "output": "x", "content": "x"},
    {"choices": [1], "output": [None], "content": [None]},
    {"choices": [{"message": {"tool_calls": [{"function": "x"}]}}]},
    {"output": [{"type": "function_call", "name": 1}], "content": [{"type": "tool_use"}]},
    {"choices": [{"message": {"content": ["x"]}}], "usage": "x"},
    {"choices": [{"message": {}, "finish_reason": {}}], "content": [], "stop_reason": []},
]


@pytest.mark.parametrize("name", ["openai", "openai-responses", "anthropic"])
@pytest.mark.parametrize("body", ODD_BODIES, ids=range(len(ODD_BODIES)))
def test_a_deep_or_malformed_answer_fails_its_case_as_a_provider_error(
    providers: Start, name: str, body: Any
) -> None:
    server = providers(name)
    server.script.append(Reply(200, body))
    answer = call(server)
    assert answer.error in (None, "provider_error")
    if body is DEEP:
        assert answer.error == "provider_error"
        assert "nests deeper than 64" in answer.response["error"]["message"]


TWO_CASES = """\
tool: get_weather
expected_tool_calls:
  - name: get_weather
golden_cases:
  - id: deep
    input_ref: deep.json
    expect_ok: true
  - id: ok
    input_ref: ok.json
    expect_ok: true
"""


@pytest.mark.parametrize("command", [["record"], ["run", "--json", "out.json"]])
def test_a_deep_answer_fails_one_case_and_the_others_go_on(
    tmp_path: Path, providers: Start, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    from replaygate.cli import main

    fixtures = {"deep.json": request_only("deep?"), "ok.json": request_only("ok?")}
    make_pack(tmp_path, contract=TWO_CASES, fixtures=fixtures)
    server = providers("openai")
    server.script.append(Reply(200, DEEP))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("GITHUB_EVENT_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    argv = [*command, "--provider", "openai", "--base-url", server.base_url, "--jobs", "1"]
    assert main(argv) == 1
    if command[0] == "record":
        assert [p.name for p in tmp_path.rglob("*.recording.json")] == ["ok.recording.json"]
    else:
        cases = {c["case_id"]: c for c in json.loads((tmp_path / "out.json").read_text())["cases"]}
        assert (cases["deep"]["status"], cases["ok"]["status"]) == ("failed", "passed")
        assert "provider_error" in json.dumps(cases["deep"])


@pytest.mark.parametrize("length", [None, -1], ids=["declared", "streamed"])
def test_an_answer_past_the_size_cap_fails_naming_the_cap(
    providers: Start, length: int | None
) -> None:
    server = providers("openai")
    huge = chat_body([("f", {})], content="x" * 5000)
    server.script.append(Reply(200, huge, length=length))
    provider = Provider(ProviderName.OPENAI, server.base_url, KEY, Redactor.build({}, [KEY]))
    provider.answer_limit = 4096
    answer = call(server, provider)
    assert answer.error == "provider_error"
    assert "larger than the cap on an answer (4096 bytes)" in answer.response["error"]["message"]


def test_the_documented_cap_is_the_cap() -> None:
    from replaygate.providers.client import ANSWER_LIMIT

    assert ANSWER_LIMIT == 32 * 2**20
    assert "32 MiB" in (ROOT / "docs" / "recordings.md").read_text()


def test_encoded_secrets_echoed_by_a_provider_reach_no_recording(
    tmp_path: Path, providers: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64
    from urllib.parse import quote

    from replaygate.cli import main

    make_pack(tmp_path, contract=CONTRACT, fixtures={"ok.json": request_only(max_tokens=50)})
    secret = "canary-db-secret-1138/x"
    forms = [
        base64.b64encode(f"user:{KEY}".encode()).decode(),
        base64.urlsafe_b64encode(secret.encode()).decode(),
        KEY.upper(),
        quote(secret, safe=""),
        "".join(f"\\u{ord(c):04x}" for c in KEY),
    ]
    server = providers("openai")
    server.calls = [("get_weather", {"city": "Bern", "note": " ".join(forms)})]
    server.content = " ".join(forms)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("CANARY_DB_SECRET", secret)
    monkeypatch.delenv("GITHUB_EVENT_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["record", "--provider", "openai", "--base-url", server.base_url]) == 0
    (recording,) = tmp_path.rglob("*.recording.json")
    text = recording.read_text()
    assert "[redacted]" in text
    assert [form for form in forms if form in text or form.replace("\\", "\\\\") in text] == []


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_provider_is_named_with_the_reason() -> None:
    port = _free_port()  # nothing listens there any more
    provider = Provider(
        ProviderName.OPENAI, f"http://127.0.0.1:{port}/v1", KEY, Redactor.build({}, [])
    )
    answer = provider.call(prompt_of(REQUEST, "model-x"), policy())
    assert answer.response["error"]["message"] == (
        f"cannot reach the provider at 127.0.0.1:{port}: connection refused"
    )


def test_a_tls_failure_is_named(providers: Start) -> None:
    server = providers("openai")  # plain HTTP: a TLS handshake with it fails
    base = server.base_url.replace("http://", "https://")
    provider = Provider(ProviderName.OPENAI, base, KEY, Redactor.build({}, []))
    message = provider.call(prompt_of(REQUEST, "model-x"), policy()).response["error"]["message"]
    port = base.split(":")[2].split("/")[0]
    assert message.startswith(f"cannot reach the provider at 127.0.0.1:{port}: TLS failed")


def test_a_name_that_does_not_resolve_is_named() -> None:
    import socket

    import requests
    from urllib3.exceptions import MaxRetryError, NameResolutionError

    from replaygate.providers.errors import unreachable

    cause = NameResolutionError("api.example.invalid", None, socket.gaierror(-2, "not known"))  # type: ignore[arg-type]
    exc = requests.ConnectionError(MaxRetryError(None, "/v1", cause))  # type: ignore[arg-type]
    assert unreachable(exc, "https://api.example.invalid/v1") == (
        "cannot reach the provider at api.example.invalid:443: the name api.example.invalid "
        "does not resolve"
    )


def test_a_timeout_names_the_host(providers: Start) -> None:
    server = providers("openai")
    server.script.append(Reply(200, chat_body([("f", {})]), delay_s=2))
    message = call(server, read_s=0.2).response["error"]["message"]
    assert message.startswith("no whole answer from 127.0.0.1:")
