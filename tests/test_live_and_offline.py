"""Live runs judge fresh answers and write nothing; recorded runs open no connection at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fake_providers import KEY, FakeProvider, Reply, error_body
from packbuilder import fixture, make_pack, request_only
from replaygate.cli import main

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = """\
tool: get_weather
allowed_errors: [rate_limit]
expected_tool_calls:
  - name: get_weather
    argument_invariants:
      - path: $.city
        equals: Bern
golden_cases:
  - id: ok
    input_ref: ok.json
    expect_ok: true
  - id: offline_only
    input_ref: ok.json
    expect_ok: true
    provider_modes: ["recorded"]
  - id: live_only
    input_ref: ok.json
    expect_ok: true
    provider_modes: ["live"]
  - id: negative
    input_ref: negative/bad.json
    expect_ok: false
    expected_error: wrong_tool
"""


def _pack(tmp_path: Path) -> Path:
    bad = fixture([{"name": "get_time", "arguments": {}}])
    fixtures = {"ok.json": request_only(max_tokens=50), "negative/bad.json": bad}
    return make_pack(tmp_path, contract=CONTRACT, fixtures=fixtures)


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _live(
    tmp_path: Path, server: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, dict[str, Any]]:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("GITHUB_EVENT_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    out = tmp_path.parent / f"{tmp_path.name}-live.json"
    code = main(["run", "--provider", "openai", "--base-url", server.base_url, "--json", str(out)])
    cases = {case["case_id"]: case for case in json.loads(out.read_text())["cases"]}
    return code, {"cases": cases, "provider": json.loads(out.read_text())["provider"]}


def test_a_live_run_judges_fresh_answers_and_writes_nothing(
    tmp_path: Path, providers: Callable[..., FakeProvider], monkeypatch: pytest.MonkeyPatch
) -> None:
    _pack(tmp_path)
    before = _tree(tmp_path)
    server = providers("openai")
    code, result = _live(tmp_path, server, monkeypatch)
    cases = result["cases"]
    assert code == 0 and result["provider"] == "openai"
    assert (cases["ok"]["status"], cases["live_only"]["status"]) == ("passed", "passed")
    assert cases["offline_only"]["reason"] == "provider_modes excludes live calls"
    assert (
        cases["negative"]["reason"] == "negative case with a hand-written response (not sent live)"
    )
    assert len(server.seen) == 2
    assert _tree(tmp_path) == before


def test_a_live_answer_that_breaks_the_contract_fails(
    tmp_path: Path, providers: Callable[..., FakeProvider], monkeypatch: pytest.MonkeyPatch
) -> None:
    _pack(tmp_path)
    server = providers("openai")
    server.calls = [("get_weather", {"city": "Basel"})]
    code, result = _live(tmp_path, server, monkeypatch)
    assert code == 1
    assert result["cases"]["ok"]["classification"] == "schema_violation"


def test_live_errors_are_classified_and_allowed_errors_apply(
    tmp_path: Path,
    providers: Callable[..., FakeProvider],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _pack(tmp_path)
    server = providers("openai")
    server.script.extend(
        [
            Reply(429, error_body("openai", 429, "Rate limit reached for requests")),
            Reply(401, error_body("openai", 401, f"Incorrect API key provided: {KEY}.")),
        ]
    )
    code, result = _live(tmp_path, server, monkeypatch)
    statuses = {c["case_id"]: (c["status"], c["classification"]) for c in result["cases"].values()}
    assert sorted(v for k, v in statuses.items() if k in ("ok", "live_only")) == [
        ("failed", "auth_error"),
        ("skipped", "rate_limit"),
    ]
    assert code == 1
    written = (tmp_path.parent / f"{tmp_path.name}-live.json").read_text()
    assert "Incorrect API key provided: [redacted]." in written
    assert KEY not in written and KEY not in capsys.readouterr().out


def test_out_of_quota_is_not_a_rate_limit_a_contract_allows(
    tmp_path: Path, providers: Callable[..., FakeProvider], monkeypatch: pytest.MonkeyPatch
) -> None:
    _pack(tmp_path)  # its contract allows rate_limit
    server = providers("openai")
    quota = {"message": "You exceeded your current quota.", "type": "insufficient_quota"}
    server.script.extend([Reply(429, {"error": {**quota, "code": "insufficient_quota"}})] * 2)
    code, result = _live(tmp_path, server, monkeypatch)
    for case_id in ("ok", "live_only"):
        case = result["cases"][case_id]
        assert (case["status"], case["classification"]) == ("failed", "quota_exceeded")
    assert code == 1


# An audit hook that ends the process on any attempt to resolve a name or open a connection.
_NO_NETWORK = """
import os, sys
def hook(event, args):
    if event.startswith(("socket.connect", "socket.getaddrinfo", "socket.gethostbyname")):
        sys.stderr.write("NETWORK: " + event + "\\n"); sys.stderr.flush(); os._exit(99)
sys.addaudithook(hook)
from replaygate.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _guarded(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OPENAI_API_KEY": KEY}
    env.pop("GITHUB_EVENT_NAME", None)
    return subprocess.run(
        [sys.executable, "-c", _NO_NETWORK, *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_recorded_mode_opens_no_connection(
    tmp_path: Path, providers: Callable[..., FakeProvider], monkeypatch: pytest.MonkeyPatch
) -> None:
    _pack(tmp_path)
    server = providers("openai")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("GITHUB_EVENT_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["record", "--provider", "openai", "--base-url", server.base_url]) == 0
    replay = _guarded(["run", "--json", str(tmp_path / "r.json"), "packs"], tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert "NETWORK" not in replay.stderr
    shipped = _guarded(["run", str(ROOT / "packs")], ROOT)
    assert shipped.returncode == 0, shipped.stderr
    # the guard itself works: a live run through it is stopped at its first connection
    live = _guarded(
        ["run", "--provider", "openai", "--base-url", server.base_url, "packs"], tmp_path
    )
    assert live.returncode == 99 and "NETWORK: socket." in live.stderr


def test_the_action_only_ever_runs_in_recorded_mode() -> None:
    sys.path.insert(0, str(ROOT))
    from entrypoint import arguments

    from replaygate.cli import build_parser
    from replaygate.github.env import read_inputs

    inputs = read_inputs({"INPUT_PACKS": "packs --provider openai --base-url http://evil"})
    argv = arguments(inputs)
    parsed = build_parser().parse_args(argv)
    assert (parsed.provider, parsed.base_url) == ("recorded", None)
    assert parsed.paths == ["packs", "--provider", "openai", "--base-url", "http://evil"]


def test_a_live_case_without_a_model_is_not_sent(
    tmp_path: Path, providers: Callable[..., FakeProvider], monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = _pack(tmp_path)
    data = json.loads((pack / "golden" / "ok.json").read_text())
    del data["model_id"]
    (pack / "golden" / "ok.json").write_text(json.dumps(data))
    server = providers("openai")
    code, result = _live(tmp_path, server, monkeypatch)
    assert code == 1
    assert result["cases"]["ok"]["reason"] == (
        "packs/p/contracts/c.yaml: case 'ok': no model: set model_id, default_model or --model"
    )
    assert server.seen == []
