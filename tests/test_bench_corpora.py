"""The benchmark corpora are honest: every generated case gets the outcome it declares."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import bench_agentevals  # noqa: E402  (bench/ is not a package)
import bench_compare  # noqa: E402
import bench_load  # noqa: E402
import bench_percase  # noqa: E402
import bench_run  # noqa: E402
import bench_traces  # noqa: E402
import corpus_large  # noqa: E402
import corpus_realistic  # noqa: E402

SRC = BENCH.parent / "src"


@pytest.mark.parametrize(
    "generate", [bench_run.generate, corpus_realistic.generate, corpus_large.generate]
)
def test_every_generated_case_passes(tmp_path: Path, generate: object) -> None:
    generate(tmp_path, 40)  # type: ignore[operator]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "replaygate.cli", "run", "packs", "--json", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    cases = json.loads(out.read_text(encoding="utf-8"))["cases"]
    assert len(cases) == 40
    assert {case["status"] for case in cases} == {"passed"}


def test_the_realistic_corpus_has_a_schema_per_contract_and_every_negative_kind(
    tmp_path: Path,
) -> None:
    corpus_realistic.generate(tmp_path, 100)
    golden = tmp_path / "packs" / "p0000" / "golden"
    schemas = set()
    for fixture in golden.rglob("*.json"):
        tools = json.loads(fixture.read_text(encoding="utf-8"))["request"]["tools"]
        schemas.add(json.dumps(tools[0]["function"]["parameters"], sort_keys=True))
    contracts = list((tmp_path / "packs" / "p0000" / "contracts").glob("*.yaml"))
    assert len(schemas) == len(contracts) == 10
    kinds = {
        line.split(":", 1)[1].strip()
        for c in contracts
        for line in c.read_text(encoding="utf-8").splitlines()
        if "expected_error:" in line
    }
    assert kinds == set(corpus_realistic.NEGATIVES)


def test_the_large_corpus_has_fixtures_of_4_to_5_kb_and_ten_cases_a_contract(
    tmp_path: Path,
) -> None:
    corpus_large.generate(tmp_path, 100)
    sizes = [p.stat().st_size for p in (tmp_path / "packs").rglob("*.json")]
    assert len(sizes) == 100 and all(4000 <= size <= 5000 for size in sizes), sizes
    assert len(list((tmp_path / "packs").rglob("*.yaml"))) == 1 + 10  # pack.yaml, contracts


def test_the_compare_script_times_two_trees_side_by_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--src", str(SRC), "--src", str(SRC), "--corpus", "large", "--cases", "20"]
    assert bench_compare.main([*argv, "--rounds", "1", "--keep", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    figures = {line.split()[0]: line.split()[1:] for line in lines[4:-1]}
    assert set(figures) == {
        *(f"{mode}_{unit}" for mode in ("run", "j1", "warm") for unit in ("s", "cpu", "MB")),
        *(f"{mode}/floor" for mode in ("run", "j1", "warm")),
    }
    assert all(
        len(cells) == 5 and float(cells[4]) > 0 for name, cells in figures.items() if "_" in name
    )
    assert lines[-1].startswith("floor_s: median ")
    assert json.loads((tmp_path / "results-1.json").read_text())["totals"]["passed"] == 20


def test_the_compare_script_stops_at_a_tree_that_does_not_pass_every_case(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus_realistic.generate(corpus, 20)
    tree = bench_compare.Tree(SRC, tmp_path, 0)
    with pytest.raises(SystemExit, match="did not pass every case"):
        tree.fill_cache(corpus, 30)  # 20 passed of the 30 asked for
    (corpus / "packs" / "p0000" / "contracts" / "lookup_1.yaml").write_text("tool: [\n")
    with pytest.raises(SystemExit, match="exited 2"):
        tree.fill_cache(corpus, 20)


def test_every_generated_trace_passes_every_assertion(tmp_path: Path) -> None:
    from replaygate.cli import main

    bench_traces.generate(tmp_path, 40, 20)
    out = tmp_path / "results.json"
    code = main(["run", "--root", str(tmp_path), "--json", str(out), str(tmp_path / "runs")])
    cases = json.loads(out.read_text(encoding="utf-8"))["cases"]
    assert code == 0 and len(cases) == 40
    assert {case["score"] for case in cases} == {1.0}
    assert {len(case["assertions"]) for case in cases} == {9}  # six written, three implicit


def test_agentevals_gets_every_fixture_with_the_calls_of_a_correct_answer(tmp_path: Path) -> None:
    corpus_realistic.generate(tmp_path, 100)
    references = bench_agentevals.write_references(tmp_path, 100).read_text(encoding="utf-8")
    lines = [json.loads(line) for line in references.splitlines()]
    fixtures = {str(p.relative_to(tmp_path).as_posix()) for p in tmp_path.rglob("c*.json")}
    assert len(lines) == 100 and {line["fixture"] for line in lines} == fixtures
    for line in lines:
        recorded = json.loads((tmp_path / line["fixture"]).read_text(encoding="utf-8"))
        same = recorded["response"]["tool_calls"] == line["reference"][0]["tool_calls"]
        assert line["passes"] is same is ("/negative/" not in line["fixture"]), line["fixture"]


def test_the_load_bench_times_a_corpus_only_when_every_contract_loads(tmp_path: Path) -> None:
    corpus_realistic.generate(tmp_path, 40)
    figures = bench_load.measure(sys.executable, tmp_path)
    assert set(figures) == {"load_packs", "yaml_reader", "csafeloader"}
    (tmp_path / "packs" / "p0000" / "contracts" / "lookup_1.yaml").write_text("tool: [\n")
    with pytest.raises(SystemExit, match="1 problems, 3 of 4 contracts loaded"):
        bench_load.measure(sys.executable, tmp_path)


def test_the_percase_bench_times_runs_that_pass_and_stops_at_one_that_fails(
    tmp_path: Path,
) -> None:
    corpus_realistic.generate(tmp_path, 40)
    (spent,) = bench_percase.measure([bench_percase.HERE], tmp_path, 2).values()
    assert len(spent) == 2 and all(seconds > 0 for seconds in spent)
    (tmp_path / "packs" / "p0000" / "contracts" / "lookup_1.yaml").write_text("tool: [\n")
    with pytest.raises(SystemExit, match="exited 2"):
        bench_percase.measure([bench_percase.HERE], tmp_path, 1)
