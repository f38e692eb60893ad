"""bench/bench_reports.py: the result it renders has the shares of failures it says."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from replaygate.report.json import load_results, render_json

ROOT = Path(__file__).resolve().parent.parent


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_reports", ROOT / "bench/bench_reports.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_result_has_the_failures_asked_for_and_reads_back() -> None:
    result = load_bench().run_result(2000, 5.0)
    totals = result.totals
    assert (totals.total, totals.failed, totals.errors, totals.skipped) == (2000, 100, 100, 100)
    assert totals.known == 50
    assert len(result.packs) == 2
    assert load_results(render_json(result), shown="r.json") == result  # a valid results file


def test_it_prints_every_report_against_the_floor(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["bench_reports.py", "--cases", "300", "--repeat", "1"])
    load_bench().main()
    printed = capsys.readouterr().out
    for name in ("json", "junit xunit2", "junit xunit1", "terminal", "markdown"):
        assert f"  {name} " in printed
    assert printed.count("x the floor") == 5
