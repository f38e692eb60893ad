"""From a running app to a contract: observe, infer on the observed folder, an offline run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sdk_calls import ASK, anthropic_client, messages

TOWNS = ["Bern", "Basel", "Chur", "Sion", "Zug", "Thun"]


def _replaygate(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run(
        [sys.executable, "-m", "replaygate.cli", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _observe_app(observe: Callable[..., Any], tmp_path: Path) -> Any:
    """An app that asks about the weather in six towns, twice with the same question, and
    once streamed; and once something that calls another tool."""
    observed = observe("anthropic")
    client = anthropic_client(observed.url)
    for town in [*TOWNS, "Bern"]:
        observed.upstream.calls = [("get_weather", {"city": town, "days": len(town)})]
        messages(client, question=f"Weather in {town}?")
    observed.upstream.calls = [("get_weather", {"city": "Aarau", "days": 5})]
    messages(client, question="Weather in Aarau?", stream=True)
    observed.upstream.calls = [("get_time", {"zone": "Europe/Zurich"})]
    messages(client, question="What time is it?")
    observed.settle()
    return observed


def test_observed_traffic_becomes_a_contract_that_passes_offline(
    observe: Callable[..., Any], tmp_path: Path
) -> None:
    observed = _observe_app(observe, tmp_path)
    assert len(observed.fixtures()) == 8  # seven towns and the time; Bern once
    done = _replaygate(tmp_path, "infer", "packs/p/recordings/observed", "-o", "packs/p/contracts/")
    assert done.returncode == 0, done.stderr
    weather = (observed.pack / "contracts" / "get_weather.yaml").read_text()
    assert "from 7 recordings: confidence medium" in weather
    assert weather.count("input_ref: observed/get_weather-") == 7
    assert "gte: 3\n        lte: 5" in weather  # days: the range of what was seen
    assert (observed.pack / "contracts" / "get_time.yaml").is_file()
    run = _replaygate(tmp_path, "run", "packs/p")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "8 passed" in run.stdout


def test_a_fixture_edited_by_hand_is_stale(observe: Callable[..., Any], tmp_path: Path) -> None:
    observed = _observe_app(observe, tmp_path)
    _replaygate(tmp_path, "infer", "packs/p/recordings/observed", "-o", "packs/p/contracts/")
    fixture = observed.fixtures()[0]
    data = json.loads(fixture.read_text())
    data["request"]["messages"][0]["content"] = "Weather in Paris?"
    fixture.write_text(json.dumps(data))
    run = _replaygate(tmp_path, "run", "packs/p")
    assert run.returncode == 1
    assert "[recording_stale]" in run.stdout
    assert "messages changed" in run.stdout


def test_one_contract_file_for_several_tools_is_refused(
    observe: Callable[..., Any], tmp_path: Path
) -> None:
    _observe_app(observe, tmp_path)
    output = "packs/p/contracts/all.yaml"
    done = _replaygate(tmp_path, "infer", "packs/p/recordings/observed", "-o", output)
    assert done.returncode == 2
    assert done.stderr == (
        "replaygate: the recordings call different tools first (get_time, get_weather): give "
        "-o the contracts folder to write a contract per tool\n"
    )


def test_a_golden_folder_works_too(observe: Callable[..., Any], tmp_path: Path) -> None:
    observed = observe("openai")
    ASK["openai"](observed.url)
    observed.settle()
    done = _replaygate(
        tmp_path, "infer", "packs/p/golden/observed", "-o", "packs/p/contracts/weather.yaml"
    )
    assert done.returncode == 0, done.stderr
    assert _replaygate(tmp_path, "run", "packs/p").returncode == 0
