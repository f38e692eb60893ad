"""bench/bench_startup.py, and what it counts held at zero: a small run's unneeded imports."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_startup", ROOT / "bench/bench_startup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_run_of_the_shipped_packs_imports_only_what_it_uses() -> None:
    """Start-up is most of a small run: jsonschema explains only what jsonschema-rs cannot word,
    jsonpath-ng parses only paths the walker cannot read, the HTTP stack and the report
    writers load for the options that ask for them (bench/README.md)."""
    bench = load_bench()
    loaded = bench.modules(sys.executable)
    assert "replaygate.engine.runner" in loaded  # it did run
    assert bench.unneeded(loaded) == []


def test_unneeded_names_packages_and_their_modules_only() -> None:
    bench = load_bench()
    assert bench.unneeded(["xml.etree.ElementTree", "jsonschema_rs", "yaml"]) == ["xml.etree"]


@pytest.mark.posix  # os.wait4 reads the child's CPU time
def test_it_prints_each_command_and_the_module_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_bench().main(["--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "python -c pass: wall median" in out
    assert "unneeded: []" in out
