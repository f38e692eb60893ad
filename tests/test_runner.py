"""Running cases in forked workers: a worker that dies fails the run at once, output is kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from packbuilder import CONTRACT, make_pack

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


def run_script(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # a fresh process: forking this one, which may run server threads, is not safe
    return subprocess.run(
        [sys.executable, "-c", script],
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
