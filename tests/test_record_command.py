"""`replaygate record` end to end against fake providers: modes, skips, secrets, signals."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fake_providers import BODIES, KEY, FakeProvider, Reply, error_body
from packbuilder import fixture, make_pack, request_only
from replaygate.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "recording.schema.json").read_text())
CANARY_ENV = {
    "CANARY_SERVICE_TOKEN": "canary-env-token-0451",
    "CANARY_DB_SECRET": "canary-db-secret-1138",
}
CANARIES = (KEY, *CANARY_ENV.values())
KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}

CONTRACT = """\
tool: get_weather
retries: {max_attempts: 2, retry_on: ["429", "5xx"], backoff_ms: 0}
rate_limits: {on_429: {max_sleep_seconds: 2}}
expected_tool_calls:
  - name: get_weather
    argument_invariants:
      - path: $.city
        equals: Bern
golden_cases:
  - id: ok
    input_ref: ok.json
    expect_ok: true
  - id: other
    input_ref: other.json
    expect_ok: true
  - id: offline_only
    input_ref: ok.json
    expect_ok: true
    provider_modes: ["recorded"]
  - id: negative
    input_ref: negative/bad.json
    expect_ok: false
    expected_error: wrong_tool
"""


def _request_only(content: str = "weather in Bern?") -> dict[str, Any]:
    return request_only(content, max_tokens=100)


def _pack(tmp_path: Path) -> Path:
    bad = fixture([{"name": "get_time", "arguments": {}}])
    return make_pack(
        tmp_path,
        contract=CONTRACT,
        fixtures={
            "ok.json": _request_only(),
            "other.json": _request_only("and Zurich?"),
            "negative/bad.json": bad,
        },
    )


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in CANARY_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("GITHUB_EVENT_NAME", raising=False)


def _record(tmp_path: Path, server: FakeProvider, *extra: str) -> int:
    os.chdir(tmp_path)
    return main(["record", "--provider", server.provider, "--base-url", server.base_url, *extra])


def _no_canary_anywhere(tmp_path: Path, printed: str) -> None:
    for path in tmp_path.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert not any(c in text for c in CANARIES), path
    assert not any(c in printed for c in CANARIES)


@pytest.mark.parametrize("name", ["openai", "openai-responses", "anthropic"])
def test_record_new_writes_valid_recordings_that_run_replays(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
    name: str,
) -> None:
    pack = _pack(tmp_path)
    server = providers(name)
    server.content = f"echo: {KEY} {CANARY_ENV['CANARY_DB_SECRET']}"  # a provider may echo secrets
    server.calls = [
        (
            "get_weather",
            {"city": "Bern", "token": "t-1", "note": CANARY_ENV["CANARY_SERVICE_TOKEN"]},
        )
    ]
    assert _record(tmp_path, server) == 0
    printed = capsys.readouterr()
    out = printed.out + printed.err
    assert "recorded packs/p/contracts/c.yaml::ok" in out
    assert (
        "skipped packs/p/contracts/c.yaml::offline_only: provider_modes excludes live calls" in out
    )
    assert (
        "skipped packs/p/contracts/c.yaml::negative: negative case with a hand-written response"
        in out
    )
    assert len(server.seen) == 2
    written = sorted(p.name for p in (pack / "recordings").iterdir())
    assert written == ["ok.recording.json", "other.recording.json"]
    for path in (pack / "recordings").iterdir():
        jsonschema.validate(json.loads(path.read_text()), SCHEMA)
    recording = json.loads((pack / "recordings" / "ok.recording.json").read_text())
    assert recording["response"]["content"] == "echo: [redacted] [redacted]"
    assert recording["response"]["tool_calls"][0]["arguments"]["token"] == "[redacted]"
    # the API version the request named (the anthropic SDK's, tests/providers/test_sdk_oracle.py)
    assert recording.get("api_version") == ("2026-10-21" if name == "anthropic" else None)
    assert main(["run", "packs"]) == 0  # recorded mode replays them
    after = capsys.readouterr()
    _no_canary_anywhere(tmp_path, out + after.out + after.err)


def test_record_new_leaves_fresh_recordings_and_refreshes_stale_ones(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
) -> None:
    pack = _pack(tmp_path)
    server = providers("openai")
    assert _record(tmp_path, server) == 0
    before = (pack / "recordings" / "other.recording.json").read_text()
    edited = _request_only("weather in Geneva?")
    (pack / "golden" / "ok.json").write_text(json.dumps(edited))
    capsys.readouterr()
    assert main(["run", "packs"]) == 1
    assert "answers an older request (messages changed)" in capsys.readouterr().out
    assert _record(tmp_path, server) == 0
    out = capsys.readouterr().out
    assert "stale refreshed packs/p/contracts/c.yaml::ok" in out
    assert "unchanged packs/p/contracts/c.yaml::other" in out
    assert (pack / "recordings" / "other.recording.json").read_text() == before
    assert len(server.seen) == 3
    assert main(["run", "packs"]) == 0


def test_refresh_records_every_selected_case(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _pack(tmp_path)
    server = providers("openai")
    assert _record(tmp_path, server) == 0
    assert _record(tmp_path, server, "--mode", "refresh") == 0
    assert len(server.seen) == 4
    capsys.readouterr()
    server.calls = [("get_weather", {"city": "Basel"})]  # another answer: written again
    assert _record(tmp_path, server, "--mode", "refresh", "packs/p/contracts/c.yaml::other") == 0
    assert len(server.seen) == 5
    out = capsys.readouterr().out
    assert "recorded             1" in out and "stale refreshed      0" in out


@pytest.mark.parametrize("name", ["openai", "openai-responses", "anthropic"])
def test_refreshing_the_same_answer_leaves_the_file_byte_for_byte(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
    name: str,
) -> None:
    pack = _pack(tmp_path)
    server = providers(name)
    one = "packs/p/contracts/c.yaml::ok"
    assert _record(tmp_path, server, one) == 0
    path = pack / "recordings" / "ok.recording.json"
    before = path.read_bytes()
    # the same answer with a fresh response id and call id
    body = BODIES[name]([("get_weather", {"city": "Bern"})])
    fresh = json.loads(
        json.dumps(body).replace('"call_0"', '"call_9"').replace("toolu_0", "toolu_9")
    )
    fresh["id"] = "fresh-id"
    server.script.append(Reply(200, fresh))
    capsys.readouterr()
    assert _record(tmp_path, server, "--mode", "refresh", one) == 0
    assert "unchanged            1" in capsys.readouterr().out
    assert path.read_bytes() == before
    server.calls = [("get_weather", {"city": "Basel"})]
    assert _record(tmp_path, server, "--mode", "refresh", one) == 0
    assert "recorded             1" in capsys.readouterr().out
    assert path.read_bytes() != before


def test_a_failed_call_writes_nothing_and_says_why(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
) -> None:
    pack = _pack(tmp_path)
    server = providers("openai")
    message = f"Incorrect API key provided: {KEY}."
    server.script.extend([Reply(401, error_body("openai", 401, message))] * 2)
    assert _record(tmp_path, server) == 1
    printed = capsys.readouterr()
    out = printed.out + printed.err
    assert (
        "failed packs/p/contracts/c.yaml::ok: auth_error: HTTP 401: "
        "Incorrect API key provided: [redacted]." in out
    )
    assert not (pack / "recordings").exists()
    _no_canary_anywhere(tmp_path, out)


def test_a_missing_key_stops_before_any_request(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _pack(tmp_path)
    server = providers("anthropic")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert _record(tmp_path, server) == 2
    assert capsys.readouterr().err == (
        "replaygate: ANTHROPIC_API_KEY is not set: the anthropic provider needs an API key\n"
    )
    assert server.seen == []


def test_a_compatible_server_takes_its_key_from_the_named_variable(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _pack(tmp_path)
    server = providers("openai-compatible")
    monkeypatch.setenv("LOCAL_LLM_KEY", KEY)
    assert _record(tmp_path, server, "--api-key-env", "LOCAL_LLM_KEY", "--model", "llama-3") == 0
    assert {seen.body["model"] for seen in server.seen} == {"llama-3"}


FORK_PR = {"head": {"repo": {"full_name": "fork/r"}}, "base": {"repo": {"full_name": "org/r"}}}


@pytest.mark.parametrize(
    ("event", "payload", "why"),
    [
        ("pull_request_target", {}, "pull_request_target"),
        (
            "pull_request",
            {
                "pull_request": {
                    "head": {"repo": {"full_name": "fork/r"}},
                    "base": {"repo": {"full_name": "org/r"}},
                }
            },
            "from a fork",
        ),
        # the events the cache already took for a fork's, and a comment on a pull request
        *(
            (name, {"pull_request": FORK_PR}, f"a {name} event for a pull request from a fork")
            for name in ("pull_request_review", "pull_request_review_comment")
        ),
        (
            "workflow_run",
            {
                "workflow_run": {
                    "head_repository": {"full_name": "fork/r"},
                    "repository": {"full_name": "org/r"},
                }
            },
            "a workflow_run event for a pull request from a fork",
        ),
        (
            "issue_comment",
            {"issue": {"number": 1, "pull_request": {"url": "x"}}},
            "an issue_comment event for a pull request from a fork",
        ),
    ],
)
def test_recording_refuses_untrusted_events(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    event: str,
    payload: dict[str, Any],
    why: str,
) -> None:
    _pack(tmp_path)
    server = providers("openai")
    (tmp_path / "event.json").write_text(json.dumps(payload))
    monkeypatch.setenv("GITHUB_EVENT_NAME", event)
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(tmp_path / "event.json"))
    assert _record(tmp_path, server) == 2
    err = capsys.readouterr().err
    assert why in err and err.count("\n") == 1
    assert server.seen == []


@pytest.mark.parametrize(
    ("written", "why"),
    [(None, "cannot be read: No such file or directory"), ("{not json", "is not JSON")],
)
def test_an_unreadable_event_file_says_so(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    written: str | None,
    why: str,
) -> None:
    _pack(tmp_path)
    server = providers("openai")
    if written is not None:
        (tmp_path / "event.json").write_text(written)
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(tmp_path / "event.json"))
    assert _record(tmp_path, server) == 2
    assert capsys.readouterr().err == (
        "replaygate: refusing to record on a pull_request event: its event file "
        f"(GITHUB_EVENT_PATH) {why}, so where its code comes from is unknown\n"
    )
    assert server.seen == []


def test_jobs_with_rate_limits_record_every_case(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
) -> None:
    fixtures = {f"c{i}.json": _request_only(f"weather {i}?") for i in range(8)}
    cases = "".join(
        f"  - id: c{i}\n    input_ref: c{i}.json\n    expect_ok: true\n" for i in range(8)
    )
    contract = CONTRACT.split("golden_cases:")[0] + "golden_cases:\n" + cases
    pack = make_pack(tmp_path, contract=contract, fixtures=fixtures)
    server = providers("anthropic")
    server.script.extend(
        [Reply(429, error_body("anthropic", 429, "slow down"), {"Retry-After": "1"})] * 3
    )
    assert _record(tmp_path, server, "--jobs", "4") == 0
    assert len(list((pack / "recordings").iterdir())) == 8
    assert len(server.seen) == 11


def test_a_retry_after_holds_back_every_job(
    tmp_path: Path, env: None, providers: Callable[..., FakeProvider]
) -> None:
    fixtures = {f"c{i}.json": _request_only(f"weather {i}?") for i in range(8)}
    cases = "".join(
        f"  - id: c{i}\n    input_ref: c{i}.json\n    expect_ok: true\n" for i in range(8)
    )
    contract = CONTRACT.split("golden_cases:")[0] + "golden_cases:\n" + cases
    pack = make_pack(tmp_path, contract=contract, fixtures=fixtures)
    server = providers("openai")
    server.delay_s = 0.4  # the other jobs are busy when the 429 goes out
    server.script.append(
        Reply(429, error_body("openai", 429, "Rate limit reached"), {"Retry-After": "2"})
    )
    assert _record(tmp_path, server, "--jobs", "3") == 0
    assert len(list((pack / "recordings").iterdir())) == 8
    told = next(at for at, status in server.answered if status == 429)
    # after the 429, nothing new starts until its Retry-After has passed, on any job
    assert [s.at - told for s in server.seen if 0.3 < s.at - told < 1.9] == []


def test_the_end_table_counts_tokens_per_model(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _pack(tmp_path)
    assert _record(tmp_path, providers("openai")) == 0
    out = capsys.readouterr().out
    assert "recorded             2" in out
    assert "skipped              2" in out
    assert "tokens gpt-4o-mini: 298 in, 120 out" in out


def test_sampling_settings_anthropic_no_longer_takes_are_left_out_and_said_once(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
) -> None:
    pack = _pack(tmp_path)
    for name in ("ok.json", "other.json"):
        data = json.loads((pack / "golden" / name).read_text())
        data["request"].update(temperature=0, top_p=0.5)
        (pack / "golden" / name).write_text(json.dumps(data))
    server = providers("anthropic")
    assert _record(tmp_path, server) == 0
    assert not any({"temperature", "top_p"} & set(seen.body) for seen in server.seen)
    out = capsys.readouterr().out
    assert out.count("not sent") == 1
    assert (
        "not sent, as the provider's API no longer takes them: "
        "temperature (2 cases), top_p (2 cases)" in out
    )
    assert _record(tmp_path, providers("openai"), "--mode", "refresh") == 0
    assert "not sent" not in capsys.readouterr().out


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_after_the_requests_in_flight(
    tmp_path: Path, providers: Callable[..., FakeProvider], sig: int, code: int
) -> None:
    pack = _pack(tmp_path)
    server = providers("openai")
    server.script.extend(
        [Reply(200, server._default({"tools": [{"name": "get_weather"}]}).body, delay_s=1.0)] * 2
    )
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(ROOT / "src")}
    env.pop("GITHUB_EVENT_NAME", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "replaygate.cli",
            "record",
            "--provider",
            "openai",
            "--base-url",
            server.base_url,
            "--jobs",
            "1",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    while not server.seen:
        assert proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code
    assert len(server.seen) == 1  # the request in flight finished; no new one started
    assert [p.name for p in (pack / "recordings").iterdir()] == ["ok.recording.json"]
    assert "not started" in out and f"stopped by {signal.Signals(sig).name}" in err
    assert "Traceback" not in err


def test_a_recording_made_with_model_passes_run_and_refreshes_as_it_was_made(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pack = _pack(tmp_path)
    server = providers("openai-compatible")
    monkeypatch.setenv("LOCAL_LLM_KEY", KEY)
    made_with = ("--model", "llama-3", "--api-key-env", "LOCAL_LLM_KEY")
    assert _record(tmp_path, server, *made_with) == 0
    capsys.readouterr()
    assert main(["run", "packs"]) == 0
    assert main(["run", "--model", "llama-3", "packs"]) == 0
    capsys.readouterr()
    assert main(["run", "--model", "llama-4", "packs"]) == 1
    assert "(model changed)" in capsys.readouterr().out
    fixture_file = pack / "golden" / "ok.json"
    fixture_file.write_text(json.dumps(_request_only("weather in Basel?")))
    assert main(["run", "packs::ok"]) == 1
    out = capsys.readouterr().out
    command = re.search(r"refresh it: (replaygate record .*?::ok) ", out)
    assert command is not None, out
    words = shlex.split(command.group(1))
    assert words[1:6] == [
        "record",
        "--provider",
        "openai-compatible",
        "--base-url",
        server.base_url,
    ]
    assert words[6:10] == ["--api-key-env", "LOCAL_LLM_KEY", "--model", "llama-3"]
    assert main(words[1:]) == 0  # the command as printed records it as it was made
    assert {seen.body["model"] for seen in server.seen} == {"llama-3"}
    capsys.readouterr()
    assert main(["run", "packs"]) == 0


def test_an_openai_recording_made_at_a_base_url_refreshes_there(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
) -> None:
    pack = _pack(tmp_path)
    server = providers("openai")
    assert _record(tmp_path, server) == 0
    recording = json.loads((pack / "recordings" / "ok.recording.json").read_text())
    assert recording["base_url"] == server.base_url
    (pack / "golden" / "ok.json").write_text(json.dumps(_request_only("weather in Basel?")))
    capsys.readouterr()
    assert main(["run", "packs::ok"]) == 1
    out = capsys.readouterr().out
    command = re.search(r"refresh it: (replaygate record .*?::ok) ", out)
    assert command is not None, out
    words = shlex.split(command.group(1))
    assert words[2:6] == ["--provider", "openai", "--base-url", server.base_url]
    seen = len(server.seen)
    assert main(words[1:]) == 0  # not the public API: the server it was recorded from
    assert len(server.seen) == seen + 1


def test_a_base_url_is_stored_without_credentials(
    tmp_path: Path, env: None, providers: Callable[..., FakeProvider]
) -> None:
    pack = _pack(tmp_path)
    server = providers("openai-compatible")
    base = server.base_url.replace("http://", "http://user:pw@")
    os.chdir(tmp_path)
    argv = ["record", "--provider", "openai-compatible", "--base-url", base, "--model", "m"]
    assert main([*argv, "--api-key-env", "OPENAI_API_KEY", "packs/p/contracts/c.yaml::ok"]) == 0
    recording = json.loads((pack / "recordings" / "ok.recording.json").read_text())
    assert recording["base_url"] == server.base_url
    # requests sends the URL's user:password as Basic auth, in place of the Bearer key
    assert server.violations == ["authorization header"]
    server.violations.clear()


def test_a_run_killed_at_any_moment_leaves_each_recording_old_or_new(
    tmp_path: Path, env: None, providers: Callable[..., FakeProvider]
) -> None:
    fixtures = {f"c{i}.json": _request_only(f"weather {i}?") for i in range(30)}
    cases = "".join(
        f"  - id: c{i}\n    input_ref: c{i}.json\n    expect_ok: true\n" for i in range(30)
    )
    contract = CONTRACT.split("golden_cases:")[0] + "golden_cases:\n" + cases
    pack = make_pack(tmp_path, contract=contract, fixtures=fixtures)
    server = providers("openai")
    assert _record(tmp_path, server) == 0
    old = {p.name: p.read_text() for p in (pack / "recordings").iterdir()}
    server.content, server.delay_s = "new answer", 0.02
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "replaygate.cli",
            "record",
            "--provider",
            "openai",
            "--base-url",
            server.base_url,
            "--mode",
            "refresh",
            "--jobs",
            "4",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while len(server.seen) < 45:  # killed in the middle of the refresh
        assert proc.poll() is None
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    recordings = {p.name: p.read_text() for p in (pack / "recordings").glob("*.recording.json")}
    assert sorted(recordings) == sorted(old)
    kinds = set()
    for name, text in recordings.items():
        jsonschema.validate(json.loads(text), SCHEMA)  # whole, never torn
        kinds.add("new" if '"new answer"' in text else "old" if text == old[name] else "?")
    assert "?" not in kinds and "old" in kinds  # (cases not yet sent keep theirs)


def test_a_fixture_with_a_misspelt_key_is_not_sent(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
) -> None:
    pack = _pack(tmp_path)
    data = _request_only()
    data["requst"] = data.pop("request")
    (pack / "golden" / "ok.json").write_text(json.dumps(data, indent=2))
    server = providers("openai")
    assert _record(tmp_path, server, "packs/p/contracts/c.yaml::ok") == 1
    out = capsys.readouterr().out
    assert "failed packs/p/contracts/c.yaml::ok: packs/p/golden/ok.json:" in out
    assert "requst" in out and server.seen == []


def test_a_fixture_saying_stream_false_is_recorded_and_stream_is_not_sent(
    tmp_path: Path, env: None, providers: Callable[..., FakeProvider]
) -> None:
    pack = _pack(tmp_path)
    data = _request_only()
    data["request"]["stream"] = False
    (pack / "golden" / "ok.json").write_text(json.dumps(data, indent=2))
    server = providers("openai")
    assert _record(tmp_path, server, "packs/p/contracts/c.yaml::ok") == 0
    assert "stream" not in server.seen[0].body
    assert main(["run", "packs/p/contracts/c.yaml::ok"]) == 0


def test_secrets_used_as_keys_are_redacted_and_the_object_stays_whole(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
) -> None:
    pack = _pack(tmp_path)
    server = providers("openai")
    arguments = {"city": "Bern", KEY: "a", CANARY_ENV["CANARY_DB_SECRET"]: "b"}
    server.calls = [("get_weather", arguments)]
    assert _record(tmp_path, server) == 0
    recording = json.loads((pack / "recordings" / "ok.recording.json").read_text())
    assert recording["response"]["tool_calls"][0]["arguments"] == {
        "city": "Bern",
        "[redacted]": "a",
        "[redacted] (2)": "b",
    }
    printed = capsys.readouterr()
    _no_canary_anywhere(tmp_path, printed.out + printed.err)


NON_ASCII_SECRET = "geheim-schlüssel-ümlaut-77"
LONG_SECRET = "canary-long-secret-" + "0123456789" * 4


@pytest.mark.parametrize(
    "body",
    [
        # the start of a secret at the 1,000-character cut of an error message
        {"detail": "x" * 948 + LONG_SECRET},
        # a non-ASCII secret, which an ASCII-only JSON dump would escape
        {"detail": f"no: {NON_ASCII_SECRET}", "hint": "grüße"},
    ],
    ids=["cut", "non-ascii"],
)
def test_an_error_body_without_a_message_leaks_no_part_of_a_secret(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    body: dict[str, Any],
) -> None:
    monkeypatch.setenv("CANARY_UMLAUT_TOKEN", NON_ASCII_SECRET)
    monkeypatch.setenv("CANARY_LONG_SECRET", LONG_SECRET)
    _pack(tmp_path)
    server = providers("openai")
    server.script.extend([Reply(400, body)] * 2)
    assert _record(tmp_path, server) == 1
    printed = capsys.readouterr()
    out = printed.out + printed.err
    assert "invalid_request: HTTP 400: " in out
    assert "\\u00" not in out  # the provider's words as it wrote them, redacted whole
    _no_canary_anywhere(tmp_path, out)
    for part in ("canary-long", "geheim-schl", json.dumps(NON_ASCII_SECRET)[1:12]):
        assert part not in out


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        (KEY + "\n", "has a space, newline or control character in it: remove it"),
        ("sk-price-5€-0123456789", "has characters an HTTP header cannot carry (outside Latin-1)"),
    ],
)
def test_a_key_no_header_can_carry_stops_before_any_request(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    key: str,
    problem: str,
) -> None:
    _pack(tmp_path)
    server = providers("openai")
    monkeypatch.setenv("OPENAI_API_KEY", key)
    assert _record(tmp_path, server) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"replaygate: OPENAI_API_KEY {problem}")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert server.seen == []


def test_a_write_that_fails_midway_leaves_the_old_recording_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from replaygate.core.errors import ReplayGateError
    from replaygate.providers.redact import Redactor
    from replaygate.providers.store import write_recording
    from replaygate.report import files

    path = tmp_path / "recordings" / "ok.recording.json"
    path.parent.mkdir()
    path.write_text('{"old": true}\n')

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full_disk)
    with pytest.raises(ReplayGateError, match="No space left on device"):
        write_recording(path, {"response": {"x": "y" * 100_000}}, Redactor.build({}))
    assert path.read_text() == '{"old": true}\n'
    assert [p.name for p in path.parent.iterdir()] == ["ok.recording.json"]


def test_a_packs_redact_paths_reach_the_recording_file(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
) -> None:
    pack = _pack(tmp_path)
    (pack / "pack.yaml").write_text("pack_id: p\nredact:\n  - $.tool_calls[*].arguments.email\n")
    server = providers("openai")
    server.calls = [("get_weather", {"city": "Bern", "email": "ada@example.org"})]
    assert _record(tmp_path, server, "packs/p/contracts/c.yaml::ok") == 0
    capsys.readouterr()
    text = (pack / "recordings" / "ok.recording.json").read_text()
    assert "ada@example.org" not in text
    recording = json.loads(text)
    assert recording["response"]["tool_calls"][0]["arguments"]["email"] == "[redacted]"
    assert "[redacted]" in json.dumps(recording["raw"]["body"])


def test_a_redact_path_at_a_number_is_a_warning(
    tmp_path: Path,
    env: None,
    providers: Callable[..., FakeProvider],
    capsys: pytest.CaptureFixture[str],
) -> None:
    pack = _pack(tmp_path)
    (pack / "pack.yaml").write_text("pack_id: p\nredact:\n  - $.tool_calls[*].arguments.pin\n")
    server = providers("openai")
    server.calls = [("get_weather", {"city": "Bern", "pin": 4711})]
    assert _record(tmp_path, server, "packs/p/contracts/c.yaml::ok") == 0
    warning = (
        "redact: $.tool_calls[*].arguments.pin points at a number, which is not text: "
        "written as it is"
    )
    out = capsys.readouterr().out
    assert f"recorded packs/p/contracts/c.yaml::ok: {warning}\n" in out
    assert f"  packs/p/contracts/c.yaml::ok: warning: {warning}\n" in out
