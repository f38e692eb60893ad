"""`replaygate merge` and `replaygate baseline`: shard results combined, baselines written."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from packbuilder import contract, fixture, golden_case, make_pack
from replaygate.cli import main
from replaygate.core.errors import PackError, ReplayGateError
from replaygate.core.model import Problem, RunResult, Status
from replaygate.report.json import load_results, render_json
from replaygate.results.merge import merge_results
from sample_results import case, failed, result


def shard(run: RunResult, index: int, count: int) -> RunResult:
    return dataclasses.replace(run, meta={"shard": {"index": index, "count": count}})


def test_shards_merge_back_into_the_order_of_the_run() -> None:
    one = shard(result(failed("b", line=30, order=2), case("z", order=0)), 1, 2)
    problems = (Problem("p.yaml", 1, "bad"),)
    two = shard(result(case("c", order=1), problems=problems), 2, 2)
    merged = merge_results([("two.json", two), ("one.json", one)])
    assert [c.case_id for c in merged.cases] == ["z", "c", "b"]  # not alphabetical
    assert merged.totals.total == 3 and merged.totals.failed == 1
    assert merged.problems == (Problem("p.yaml", 1, "bad"),)
    assert merged.duration_s == 1.0 and "shard" not in merged.meta
    assert len(merged.packs) == 1


def test_identical_cases_in_two_files_count_once() -> None:
    a = result(failed("x"), case("y", duration_s=0.1))
    b = result(case("y", duration_s=0.7), problems=())
    merged = merge_results([("a.json", a), ("b.json", b)])
    assert [(c.case_id, c.duration_s) for c in merged.cases] == [("x", 0.001), ("y", 0.1)]


def test_overlapping_shards_that_disagree_are_refused() -> None:
    a, b = result(case("x")), result(failed("x"))
    with pytest.raises(PackError) as caught:
        merge_results([("a.json", a), ("b.json", b)])
    assert str(caught.value) == (
        "b.json: case 'x' of demo/contracts/triage.yaml is also in a.json with another outcome"
    )


@pytest.mark.parametrize(
    ("shards", "message"),
    [
        (
            [(1, 3), (3, 3)],
            "shard 2/3 is not in the merge: no results file of it "
            "(the files given hold shards 1, 3 of 3)",
        ),
        ([(1, 2), (2, 3)], "two.json: a shard of 3, the others of 2"),
        ([(1, 2), None], "two.json: not a shard's results, while the other files are"),
        # no set of 10**12 indexes is built to find the one missing
        ([(1, 10**12), (2, 10**12)], "shard 3/1000000000000 is not in the merge: no results"),
        ([(1, 2), (1, 2)], "two.json: shard 1/2 again, as in one.json"),
    ],
)
def test_an_incomplete_set_of_shards_is_refused(
    shards: list[tuple[int, int] | None], message: str
) -> None:
    runs = [shard(result(), *s) if s else result() for s in shards]
    with pytest.raises(ReplayGateError) as caught:
        merge_results(list(zip(["one.json", "two.json"], runs, strict=True)))
    assert str(caught.value).startswith(message)


def write(path: Path, run: RunResult) -> str:
    path.write_text(render_json(run))
    return str(path)


def test_merge_command_writes_reports_and_exits_by_the_merged_result(tmp_path: Path) -> None:
    one = write(tmp_path / "1.json", shard(result(failed("b"), case("a")), 1, 2))
    two = write(tmp_path / "2.json", shard(result(case("c")), 2, 2))
    out = tmp_path / "merged.json"
    code = main(["merge", one, two, "--json", str(out), "--junit", str(tmp_path / "j.xml")])
    assert code == 1
    merged = load_results(out.read_text(), shown="merged.json")
    assert merged.totals.total == 3 and merged.totals.failed == 1
    assert (tmp_path / "j.xml").read_text().startswith("<?xml")


def test_merge_command_reports_an_unreadable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["merge", str(tmp_path / "absent.json")]) == 2
    assert "absent.json: file not found" in capsys.readouterr().err


def test_baseline_command_accepts_the_failures_and_run_then_passes(tmp_path: Path) -> None:
    run = result(failed("b"), case("e", Status.ERROR, reason="broken"), case("a"))
    results = write(tmp_path / "results.json", run)
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", results, "-o", str(baseline)]) == 0
    document = json.loads(baseline.read_text())
    assert [e["case_id"] for e in document["fingerprints"]] == ["b"]
    out = tmp_path / "merged.json"
    assert main(["merge", results, "--baseline", str(baseline), "--json", str(out)]) == 1  # error
    merged = load_results(out.read_text(), shown="merged.json")
    assert [c.known for c in merged.cases] == [True, False, False]  # the run's order


def test_baseline_command_prints_when_no_output_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write(tmp_path / "results.json", result(case("a")))
    assert main(["baseline", results]) == 0
    assert json.loads(capsys.readouterr().out) == {"version": 1, "fingerprints": []}


def test_merge_annotates_from_the_root_of_a_checkout_in_a_subfolder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "r.json").write_text(render_json(result(failed("bad", line=14))))
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_EVENT_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    assert main(["merge", "r.json", "--root", "repo", "--github", "--fail-on", "never"]) == 0
    log = capsys.readouterr().out
    assert "file=repo/packs/demo/contracts/triage.yaml,line=14" in log


def test_shards_warnings_are_merged_once_each() -> None:
    old = Problem("packs/p/golden/old.json", None, "no golden case names this fixture")
    expired = Problem("packs/p/nr-allowlist.json", 8, "entry 0 expired")
    one = dataclasses.replace(shard(result(case("a")), 1, 2), warnings=(old,))
    two = dataclasses.replace(shard(result(case("b")), 2, 2), warnings=(old, expired))
    assert merge_results([("1.json", one), ("2.json", two)]).warnings == (old, expired)


def test_merge_refuses_a_device_as_results_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "shard.json"
    link.symlink_to("/dev/zero")
    assert main(["merge", str(link)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"replaygate: {link}: ") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["shard"].update(index=1.0), "$.shard.index: "),
        (lambda d: d["cases"][0].update(line=5.0), "$.cases[0].line: "),
        (lambda d: d["cases"][0].update(fingerprint=d["cases"][0]["fingerprint"] + "\n"),
         "$.cases[0].fingerprint: must be 12 lowercase hex digits"),
    ],
)  # fmt: skip
def test_a_results_file_with_a_float_count_or_a_newline_in_a_fingerprint_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, message: str
) -> None:
    document = json.loads(render_json(shard(result(failed("x")), 1, 1)))
    edit(document)
    path = tmp_path / "one.json"
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    assert main(["merge", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err


def _contract(cases: list[tuple[str, str]]) -> str:
    return contract(*(golden_case(case_id, ref) for case_id, ref in cases))


def _without_timings(text: str) -> str:
    text = re.sub(r'"duration_s": [0-9.e-]+', '"duration_s": 0', text)
    text = re.sub(r'time="[0-9.]+"', 'time=""', text)
    return re.sub(r" in [0-9.]+s", " in 0s", text)


def test_merged_shards_report_byte_for_byte_like_one_run(tmp_path: Path) -> None:
    bad = fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    golden = {"ok.json": fixture(), "bad.json": bad}
    cases = [(f"c{n}", "bad.json" if n % 3 == 0 else "ok.json") for n in range(7)]
    contracts = {"z.yaml": _contract(cases), "a.yaml": _contract(cases[:4])}
    listed = "contracts:\n  - z.yaml\n  - a.yaml\n"  # pack.yaml order, not alphabetical
    make_pack(
        tmp_path, "zeta", contracts=contracts, fixtures=golden, pack_yaml="pack_id: zeta\n" + listed
    )
    make_pack(tmp_path, "alpha", contracts={"m.yaml": _contract(cases[:3])}, fixtures=golden)
    packs = ["packs/zeta", "packs/alpha"]
    reports = {"--json": "json", "--junit": "xml", "--summary": "md"}

    def run(*args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "replaygate.cli", *args],
            cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stdout + done.stderr  # a shard may pass

    run("run", *packs, *(f for option, ext in reports.items() for f in (option, f"one.{ext}")))
    for k in (1, 2, 3):
        run("run", *packs, "--shard", f"{k}/3", "--json", f"shard-{k}.json")
    shards = [f"shard-{k}.json" for k in (1, 2, 3)]
    run("merge", *shards, *(f for option, ext in reports.items() for f in (option, f"all.{ext}")))
    for ext in reports.values():
        one, merged = ((tmp_path / f"{name}.{ext}").read_text() for name in ("one", "all"))
        assert _without_timings(merged) == _without_timings(one), ext
    order = [c["case_id"] for c in json.loads((tmp_path / "all.json").read_text())["cases"]]
    assert order[:7] == [case_id for case_id, _ in cases]  # zeta/z.yaml first


@pytest.mark.parametrize("spelling", ["1.json", "link.json"])
def test_one_results_file_given_twice_is_refused_naming_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    spelling: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "1.json", shard(result(case("a")), 1, 1))
    (tmp_path / "link.json").symlink_to("1.json")
    assert main(["merge", "1.json", spelling]) == 2
    also = "" if spelling == "1.json" else " (also as 1.json)"
    assert capsys.readouterr().err == (
        f"replaygate: {spelling}: given twice{also}: each results file is merged once\n"
    )
