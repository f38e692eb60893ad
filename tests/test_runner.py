"""Running cases in forked processes: one that dies fails the run at once, output is kept.

Both ways a run forks are tried: contracts loaded and judged in shares, and (with a shard,
which needs every contract loaded first) cases judged in shares."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from packbuilder import CONTRACT, make_pack

CASES = 2400
# `run --jobs 2` where the worker that meets case c2000 is killed (as the OOM killer would).
KILL_ONE_WORKER = """
import os, signal, sys
from replaygate import cli, parallel
from replaygate.engine import runner
evaluate = runner._evaluate
def dying(item):
    if item.ctx.case.id == "c2000":
        os.kill(os.getpid(), signal.SIGKILL)
    return evaluate(item)
runner._evaluate = dying
parallel.MIN_BYTES = 1
sys.exit(cli.main(["run", "--jobs", "2", "--json", "results.json", *sys.argv[1:]]))
"""
# `run --jobs 2` where every worker prints, on stdout and on its file descriptors.
PRINTING_WORKERS = """
import os, sys
from replaygate import cli, parallel
from replaygate.engine import runner
evaluate = runner._evaluate
def printing(item):
    if item.ctx.case.id in ("c1", "c2399"):
        print(f"printed at {item.ctx.case.id}")
        os.write(2, f"written to fd 2 at {item.ctx.case.id}\\n".encode())
    return evaluate(item)
runner._evaluate = printing
parallel.MIN_BYTES = 1
sys.exit(cli.main(["run", "--jobs", "2", "--json", "results.json", *sys.argv[1:]]))
"""


def many_cases(root: Path) -> None:
    """Two contracts, the first of more bytes: the second is another process's share."""
    head = CONTRACT.split("golden_cases:")[0] + "golden_cases:\n"

    def contract(ids: range) -> str:
        return head + "".join(
            f"  - id: c{i}\n    input_ref: ok.json\n    expect_ok: true\n" for i in ids
        )

    half = CASES * 3 // 5
    make_pack(
        root, contracts={"a.yaml": contract(range(half)), "b.yaml": contract(range(half, CASES))}
    )


WAYS = pytest.mark.parametrize("way", [[], ["--shard", "1/1"]], ids=["loading", "shard"])


def without_root_line(stderr: str) -> str:
    """stderr less the `root: ...` line that `run` prints first."""
    return "".join(line for line in stderr.splitlines(True) if not line.startswith("root: "))


def run_script(script: str, cwd: Path, way: list[str]) -> subprocess.CompletedProcess[str]:
    # a fresh process: forking this one, which may run server threads, is not safe
    return subprocess.run(
        [sys.executable, "-c", script, *way],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard: the old pool waited forever for the dead worker
        check=False,
    )


@WAYS
def test_a_worker_that_dies_fails_the_run_at_once(tmp_path: Path, way: list[str]) -> None:
    many_cases(tmp_path)
    done = run_script(KILL_ONE_WORKER, tmp_path, way)
    assert done.returncode == 3, done.stderr
    assert without_root_line(done.stderr) == (
        "replaygate: a worker process stopped abruptly (killed, or out of memory): "
        "the run is incomplete and nothing was reported; run it again, or with --jobs 1\n"
    )
    assert not (tmp_path / "results.json").exists()


@WAYS
def test_what_workers_print_comes_out_of_the_parent_in_case_order(
    tmp_path: Path, way: list[str]
) -> None:
    many_cases(tmp_path)
    done = run_script(PRINTING_WORKERS, tmp_path, way)
    assert done.returncode == 0, done.stderr
    forked = "written to fd 2 at c1\nprinted at c2399\nwritten to fd 2 at c2399\n"
    if way:  # a shard: c1 is judged by the run's own process, which prints as a serial run
        assert done.stdout.startswith("printed at c1\n")
        assert without_root_line(done.stderr) == forked
    else:  # loading: every contract is another process's, whose output comes out in order
        assert "printed" not in done.stdout
        assert without_root_line(done.stderr) == "printed at c1\n" + forked
    assert len(json.loads((tmp_path / "results.json").read_text())["cases"]) == CASES
