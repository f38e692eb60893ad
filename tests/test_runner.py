"""Running cases in forked workers: a worker that dies fails the run at once, output is kept."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from packbuilder import CONTRACT, fixture, make_pack

CASES = 2400
# `run --jobs 2` where the worker that meets case c1234 is killed (as the OOM killer would).
KILL_ONE_WORKER = """
import os, signal, sys
from replaygate import cli
from replaygate.engine import runner
evaluate = runner._evaluate
def dying(item):
    if item.ctx.case.id == "c1234":
        os.kill(os.getpid(), signal.SIGKILL)
    return evaluate(item)
runner._evaluate = dying
assert runner._can_fork(2, runner.PARALLEL_MIN_CASES)
sys.exit(cli.main(["run", "--jobs", "2", "--json", "results.json"]))
"""
# `run --jobs 2` where every worker prints, on stdout and on its file descriptors.
PRINTING_WORKERS = """
import os, sys
from replaygate import cli
from replaygate.engine import runner
evaluate = runner._evaluate
def printing(item):
    if item.ctx.case.id in ("c1", "c2399"):
        print(f"printed at {item.ctx.case.id}")
        os.write(2, f"written to fd 2 at {item.ctx.case.id}\\n".encode())
    return evaluate(item)
runner._evaluate = printing
assert runner._can_fork(2, runner.PARALLEL_MIN_CASES)
sys.exit(cli.main(["run", "--jobs", "2", "--json", "results.json"]))
"""


def many_cases(root: Path) -> None:
    cases = "".join(
        f"  - id: c{i}\n    input_ref: ok.json\n    expect_ok: true\n" for i in range(CASES)
    )
    make_pack(root, contract=CONTRACT.split("golden_cases:")[0] + "golden_cases:\n" + cases)


def without_root_line(stderr: str) -> str:
    """stderr less the `root: ...` line that `run` prints first."""
    return "".join(line for line in stderr.splitlines(True) if not line.startswith("root: "))


def run_script(script: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # a fresh process: forking this one, which may run server threads, is not safe
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard: the old pool waited forever for the dead worker
        check=False,
    )


def test_a_worker_that_dies_fails_the_run_at_once(tmp_path: Path) -> None:
    many_cases(tmp_path)
    done = run_script(KILL_ONE_WORKER, tmp_path)
    assert done.returncode == 3, done.stderr
    assert without_root_line(done.stderr) == (
        "replaygate: a worker process stopped abruptly (killed, or out of memory): "
        "the run is incomplete and nothing was reported; run it again, or with --jobs 1\n"
    )
    assert not (tmp_path / "results.json").exists()


def test_what_workers_print_comes_out_of_the_parent_in_case_order(tmp_path: Path) -> None:
    many_cases(tmp_path)
    done = run_script(PRINTING_WORKERS, tmp_path)
    assert done.returncode == 0, done.stderr
    assert without_root_line(done.stderr) == (
        "printed at c1\nwritten to fd 2 at c1\nprinted at c2399\nwritten to fd 2 at c2399\n"
    )
    assert len(json.loads((tmp_path / "results.json").read_text())["cases"]) == CASES


# `run --jobs N` with contracts loaded by forked workers from 3 contracts on, and cases
# evaluated by them from 1 case on; the contract c7.yaml prints a warning as it loads.
# Checks that the parent forked for both when N > 1 (and never with --jobs 1).
FORKED_LOADING = """
import sys
from replaygate import cli
from replaygate.engine import runner
from replaygate.loading import pack
runner.PARALLEL_MIN_CONTRACTS, runner.PARALLEL_MIN_CASES, runner.CHUNK_CASES = 3, 1, 3
load_contract, new_pool, pools = pack.load_contract, runner.new_pool, []
def warning(path, *args):
    if path.name == "c7.yaml":
        print("warned while loading c7", file=sys.stderr)
    return load_contract(path, *args)
def counted(jobs):
    pools.append(jobs)
    return new_pool(jobs)
pack.load_contract, runner.new_pool = warning, counted
jobs = sys.argv[1]
code = cli.main(["run", "--jobs", jobs, "--json", f"{jobs}.json", "--junit", f"{jobs}.xml"])
assert pools == ([] if jobs == "1" else [2, 2]), pools
sys.exit(code)
"""


def many_contracts(root: Path) -> None:
    """Twelve contracts in file order, two of which do not load; forty cases."""
    head = CONTRACT.split("golden_cases:")[0] + "golden_cases:\n"
    contracts = {
        f"c{n}.yaml": head
        + "".join(
            f"  - id: c{n}_{i}\n    input_ref: {'bad' if i % 3 else 'ok'}.json\n"
            "    expect_ok: true\n"
            for i in range(4)
        )
        for n in range(10)
    }
    contracts["broken.yaml"] = "tool: [unclosed\n"
    contracts["wrong.yaml"] = head.replace("equals: Bern", "regex: '('") + "  - id: w\n"
    bad = fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    make_pack(root, contracts=contracts, fixtures={"ok.json": fixture(), "bad.json": bad})


def test_contracts_loaded_by_workers_give_the_serial_results(tmp_path: Path) -> None:
    many_contracts(tmp_path)
    runs = [run_script(FORKED_LOADING, tmp_path, jobs) for jobs in ("1", "2")]
    for done in runs:
        assert done.returncode == 2, done.stderr
    assert runs[0].stderr == runs[1].stderr
    shown = [re.sub(r"in [0-9.]+s", "in Xs", done.stdout) for done in runs]
    assert shown[0] == shown[1]
    assert "warned while loading c7" in runs[1].stderr
    serial, forked = (json.loads((tmp_path / f"{jobs}.json").read_text()) for jobs in "12")
    for results in (serial, forked):
        for case in results["cases"]:
            del case["duration_s"]
        del results["duration_s"]
    assert serial == forked
    assert len(serial["cases"]) == 40 and len(serial["problems"]) == 3
    assert serial["problems"][0]["file"] == "packs/p/contracts/broken.yaml"


# `run --jobs 2` where the worker that loads c7.yaml is killed (as the OOM killer would).
KILLED_WHILE_LOADING = """
import os, signal, sys
from replaygate import cli
from replaygate.engine import runner
from replaygate.loading import pack
runner.PARALLEL_MIN_CONTRACTS = 3
load_contract, parent = pack.load_contract, os.getpid()
def dying(path, *args):
    if path.name == "c7.yaml" and os.getpid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
    return load_contract(path, *args)
pack.load_contract = dying
sys.exit(cli.main(["run", "--jobs", "2", "--json", "results.json"]))
"""


def test_a_worker_that_dies_while_loading_fails_the_run_at_once(tmp_path: Path) -> None:
    many_contracts(tmp_path)
    done = run_script(KILLED_WHILE_LOADING, tmp_path)
    assert done.returncode == 3, done.stderr
    assert without_root_line(done.stderr) == (
        "replaygate: a worker process stopped abruptly (killed, or out of memory): "
        "the run is incomplete and nothing was reported; run it again, or with --jobs 1\n"
    )
    assert not (tmp_path / "results.json").exists()
