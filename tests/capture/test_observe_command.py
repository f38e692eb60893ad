"""`replaygate observe` as a command: its first line, its stop on a signal, its refusals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from capture_pack import empty_pack
from sdk_calls import ASK
from streaming_upstream import StreamingUpstream

from fake_providers import KEY, Reply

pytestmark = pytest.mark.posix  # signals


def _environ(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return base | extra


def _start(cwd: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "replaygate.cli", "observe", *args]
    return subprocess.Popen(
        command, cwd=cwd, env=_environ(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


@pytest.fixture
def upstream() -> Iterator[StreamingUpstream]:
    server = StreamingUpstream("openai", KEY).start()
    yield server
    server.stop()
    assert server.violations == []


def _proxy(tmp_path: Path, upstream: StreamingUpstream) -> tuple[subprocess.Popen[str], str]:
    empty_pack(tmp_path)
    process = _start(
        tmp_path, "packs/p", "--provider", "openai", "--listen", "127.0.0.1:0",
        "--upstream", upstream.origin,
    )  # fmt: skip
    assert process.stdout is not None
    first = process.stdout.readline().strip()
    assert first.startswith("listening on http://127.0.0.1:"), first
    return process, first.removeprefix("listening on ")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_it_says_where_it_listens_and_stops_with_a_summary(
    tmp_path: Path, upstream: StreamingUpstream, sig: signal.Signals, code: int
) -> None:
    process, url = _proxy(tmp_path, upstream)
    assert ASK["openai"](url) == [("get_weather", {"city": "Bern"})]
    upstream.script.append(Reply(429, {"error": {"message": "later", "type": "requests"}}))
    with pytest.raises(Exception, match="later"):
        ASK["openai"](url)
    process.send_signal(sig)
    out, err = process.communicate(timeout=30)
    assert process.returncode == code
    assert err == f"replaygate: stopped by {sig.name}\n"
    lines = out.splitlines()
    assert lines[0] == "captured             1"
    assert "deduplicated         0" in lines
    assert "errors               1" in lines
    assert "  get_weather        1" in lines
    assert len(list((tmp_path / "packs/p/golden/observed").glob("*.json"))) == 1


def test_a_stop_lets_the_exchange_in_flight_finish(
    tmp_path: Path, upstream: StreamingUpstream
) -> None:
    """SIGTERM while the upstream is still thinking: the app gets its answer, the files are
    written, then the process ends."""
    process, url = _proxy(tmp_path, upstream)
    upstream.delay_s = 1.0
    answers: list[object] = []
    app = threading.Thread(target=lambda: answers.append(ASK["openai"](url)))
    app.start()
    while not upstream.seen:  # the request has reached the upstream
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)
    app.join(timeout=30)
    out, _ = process.communicate(timeout=30)
    assert answers == [[("get_weather", {"city": "Bern"})]]
    assert process.returncode == 143
    assert out.splitlines()[0] == "captured             1"
    [fixture] = (tmp_path / "packs/p/golden/observed").glob("*.json")
    assert json.loads(fixture.read_text())["model_id"] == "gpt-4o-mini"


def test_it_refuses_a_pull_request_target_event(tmp_path: Path) -> None:
    empty_pack(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "replaygate.cli", "observe", "packs/p", "--provider", "openai"],
        cwd=tmp_path, env=_environ(GITHUB_EVENT_NAME="pull_request_target"),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("replaygate: refusing to record on a pull_request_target")
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["packs/nothing"], "replaygate: packs/nothing: no pack.yaml: observe writes into a pack"),
        (["packs/p", "--listen", "8787"],
         "replaygate: --listen '8787': expected HOST:PORT, like 127.0.0.1:8787"),
        (["packs/p", "--upstream", "ftp://x"],
         "replaygate: --upstream 'ftp://x' is not an http(s) URL"),
    ],
)  # fmt: skip
def test_bad_options_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    empty_pack(tmp_path)
    command = [sys.executable, "-m", "replaygate.cli", "observe", "--provider", "openai", *args]
    done = subprocess.run(
        command, cwd=tmp_path, env=_environ(), capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (2, message + "\n")


def test_openai_compatible_needs_an_upstream(tmp_path: Path) -> None:
    empty_pack(tmp_path)
    command = ["observe", "packs/p", "--provider", "openai-compatible"]
    done = subprocess.run(
        [sys.executable, "-m", "replaygate.cli", *command],
        cwd=tmp_path, env=_environ(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        "replaygate: --upstream is needed for openai-compatible: it has no public API\n"
    )


def test_an_address_that_is_not_loopback_gets_a_warning(
    tmp_path: Path, upstream: StreamingUpstream
) -> None:
    empty_pack(tmp_path)
    process = _start(
        tmp_path, "packs/p", "--provider", "openai", "--listen", "0.0.0.0:0",
        "--upstream", upstream.origin,
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stdout.readline().startswith("listening on http://0.0.0.0:")
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert err.splitlines()[0] == (
        "replaygate: warning: listening on 0.0.0.0, not loopback: anyone who can reach it "
        "can send requests through it"
    )
    assert process.returncode == 130
