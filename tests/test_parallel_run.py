"""A run shared out to forked processes (replaygate/parallel.py): contracts loaded and judged
in shares, or (with a shard) judged in shares; the serial run's results and output, whatever
the shares; a process's death or error stops the run."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cancelling import GUARD_S, cancel_when_marked, wait_until_gone
from packbuilder import CONTRACT, fixture, make_pack

CASES = Path(__file__).parent / "cases"
# `run --jobs N --root ROOT --json OUT [more]`, after PATCH, in a fresh process (forking
# the test runner, which may run server threads, is not safe). TOLD (a file) receives a
# character for each process forked: nothing when none was.
SCRIPT = """
import sys
from replaygate import cli, parallel
from replaygate.engine import runner
jobs, root, out, told = sys.argv[1:5]
parallel.MIN_BYTES = 1
fork = parallel._fork
def noted(work, share):
    with open(told, "a") as handle:
        handle.write("x")
    return fork(work, share)
parallel._fork = noted
PATCH
sys.exit(cli.main(["run", "--jobs", jobs, "--root", root, "--json", out, *sys.argv[5:]]))
"""
# All the work to the last share, another process: the run's own process does none of it.
ALL_TO_ONE = """
def _to_the_last(sizes, weights):
    return [(0, 0)] * (len(weights) - 1) + [(0, len(sizes))]
parallel.split = _to_the_last
"""


def run(root: Path, jobs: int, *more: str, patch: str = "", out: Path) -> dict[str, Any]:
    """The run's exit code, output and results (durations left out), and what forked; its
    files written to the folder ``out``."""
    out, told = out / f"{jobs}.json", out / f"{jobs}.forked"
    script = SCRIPT.replace("PATCH", patch)
    argv = [sys.executable, "-c", script, str(jobs), str(root), str(out), str(told), *more]
    # a time-out fails the test where a deadlock would hang the suite
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False, timeout=300)
    results = json.loads(out.read_text()) if out.exists() else None
    if results is not None:
        for case in results["cases"]:
            del case["duration_s"]
        del results["duration_s"]
    return {
        "code": done.returncode,
        "stdout": re.sub(r" in [0-9.]+s$", " in Xs", done.stdout, flags=re.MULTILINE),
        "stderr": done.stderr,
        "results": results,
        "forked": len(told.read_text()) if told.exists() else 0,
    }


def same_as_serial(
    root: Path, *more: str, patch: str = "", forks: bool = True, out: Path
) -> dict[str, Any]:
    serial = run(root, 1, *more, patch=patch, out=out)
    parallel = run(root, 2, *more, patch=patch, out=out)
    assert serial["forked"] == 0
    assert (parallel["forked"] > 0) == forks, parallel["stderr"]
    assert {**parallel, "forked": 0} == serial
    return parallel


@pytest.mark.posix
@pytest.mark.parametrize("shares", ["even", "all to one"])
@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_every_corpus_case_gets_the_serial_results(case: str, shares: str, tmp_path: Path) -> None:
    patch = ALL_TO_ONE if shares == "all to one" else ""
    forks = case != "isdk"  # its pack holds @isdk fixtures alone, read with the pack
    root = CASES / case
    same_as_serial(root, str(root / "packs"), patch=patch, forks=forks, out=tmp_path)


CONTRACTS = {
    "a.yaml": CONTRACT,
    "b.yaml": CONTRACT + "surprise: 1\n",  # refused at load: an unknown key
    "c.yaml": CONTRACT.replace("equals: Bern", 'regex: "("'),  # refused at compile
    "d.yaml": CONTRACT.replace("ok.json", "missing.json"),
    "e.yaml": CONTRACT.replace("equals: Bern", "equals: Paris"),
}


def mixed(root: Path) -> Path:
    """Two packs with contracts that load, fail to load, pass and fail; a third pack whose
    pack_id the first already uses."""
    many = "golden_cases:\n" + "".join(
        f"  - id: c{i}\n    input_ref: {'ok' if i % 4 else 'bad'}.json\n    expect_ok: true\n"
        for i in range(9)
    )
    contracts = {**CONTRACTS, "f.yaml": CONTRACT.split("golden_cases:")[0] + many}
    bad = fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    fixtures = {"ok.json": fixture(), "bad.json": bad}
    make_pack(root, "p", contracts=contracts, fixtures=fixtures)
    make_pack(root, "q", contracts=dict(reversed(contracts.items())), fixtures=fixtures)
    make_pack(root, "r", contracts=CONTRACTS, pack_yaml="pack_id: p\n")
    return root


# Contracts loaded two at a time before their cases are judged: batches end mid-pack.
SMALL_BATCHES = "runner.LOAD_BATCH = 2\n"


@pytest.mark.posix
@pytest.mark.parametrize("shares", ["even", "all to one", "small batches"])
@pytest.mark.parametrize("more", [(), ("--shard", "2/3"), ("packs/q/contracts/f.yaml::c3",)])
def test_problems_selection_and_shards_are_the_serial_ones(
    tmp_path: Path, more: tuple[str, ...], shares: str
) -> None:
    mixed(tmp_path)
    patch = {"even": "", "all to one": ALL_TO_ONE, "small batches": SMALL_BATCHES}[shares]
    parallel = same_as_serial(tmp_path, *more, patch=patch, out=tmp_path)
    if "::" in more[-1:][0] if more else False:
        assert parallel["code"] == 0  # c3 passes, and no other contract is loaded
        assert [case["case_id"] for case in parallel["results"]["cases"]] == ["c3"]
    else:
        assert parallel["code"] == 2
        assert "packs/p/contracts/b.yaml:" in parallel["stdout"]
        assert "packs/q/contracts/c.yaml:" in parallel["stdout"]
        assert "pack_id 'p' is already used by packs/p" in parallel["stdout"]


# What a process prints while it loads and while it judges (on stderr and its descriptor).
PRINTING = """
import os
parse, evaluate = runner.parse_contract, runner.evaluate_case
def parse_printing(path, pack):
    print(f"loading {pack.pack_id}/{path.name}", file=sys.stderr)
    return parse(path, pack)
def evaluate_printing(ctx, given):
    os.write(2, f"judging {ctx.pack_id}/{ctx.contract.path}::{ctx.case.id}\\n".encode())
    return evaluate(ctx, given)
runner.parse_contract, runner.evaluate_case = parse_printing, evaluate_printing
"""


@pytest.mark.posix
@pytest.mark.parametrize("patch", ["", ALL_TO_ONE], ids=["even", "all to one"])
def test_what_workers_print_comes_out_whole_and_in_order(tmp_path: Path, patch: str) -> None:
    """Forked, a contract's cases are judged as it loads, so loading and judging lines
    interleave; every line of the serial run still comes out, each contract's in the serial
    order, and the results are the serial ones. (Pack r's cases are judged too, before its
    pack_id is found to be taken: their results are dropped, as the serial run's never are.)"""
    mixed(tmp_path)
    serial = run(tmp_path, 1, patch=PRINTING, out=tmp_path)
    parallel = run(tmp_path, 2, patch=PRINTING + patch, out=tmp_path)
    assert parallel["forked"] > 0
    assert {**parallel, "stderr": "", "forked": 0} == {**serial, "stderr": ""}
    lines = parallel["stderr"].splitlines()
    extra = Counter(lines) - Counter(serial["stderr"].splitlines())
    assert not Counter(serial["stderr"].splitlines()) - Counter(lines)
    assert {line.split("::")[0] for line in extra.elements()} == {
        f"judging p/contracts/{name}" for name in ("a.yaml", "d.yaml", "e.yaml")
    }
    judged = [line for line in lines if line.startswith("judging q/contracts/f.yaml::")]
    assert judged == [f"judging q/contracts/f.yaml::c{i}" for i in range(9)]
    assert lines.index("loading q/f.yaml") < lines.index(judged[0])


def killed(when: str) -> str:
    """A patch that kills the worker (as the OOM killer would) at ``when``."""
    return f"""
import os, signal
parse, evaluate = runner.parse_contract, runner.evaluate_case
def parse_dying(path, pack):
    if {when == "load"} and path.name == "e.yaml" and pack.pack_id == "q":
        os.kill(os.getpid(), signal.SIGKILL)
    return parse(path, pack)
def evaluate_dying(ctx, given):
    if {when == "judge"} and ctx.case.id == "c5":
        os.kill(os.getpid(), signal.SIGKILL)
    return evaluate(ctx, given)
runner.parse_contract, runner.evaluate_case = parse_dying, evaluate_dying
"""


@pytest.mark.posix
@pytest.mark.parametrize("when", ["load", "judge"])
def test_a_worker_that_dies_fails_the_run(tmp_path: Path, when: str) -> None:
    mixed(tmp_path)
    done = run(tmp_path, 2, patch=killed(when) + ALL_TO_ONE, out=tmp_path)
    assert done["code"] == 3, done["stderr"]
    assert [line for line in done["stderr"].splitlines() if not line.startswith("root: ")] == [
        "replaygate: a worker process stopped abruptly (killed, or out of memory): "
        "the run is incomplete and nothing was reported; run it again, or with --jobs 1"
    ]
    assert done["results"] is None


@pytest.mark.posix
def test_an_error_in_a_worker_is_raised_in_the_parent(tmp_path: Path) -> None:
    mixed(tmp_path)
    patch = """
def failing(ctx, given):
    raise ValueError(f"a bug met at {ctx.case.id}")
runner.evaluate_case = failing
"""
    done = run(tmp_path, 2, patch=patch + ALL_TO_ONE, out=tmp_path)
    assert done["code"] == 3
    assert "ValueError: a bug met at " in done["stderr"]
    assert done["results"] is None


@pytest.mark.posix
@pytest.mark.parametrize(
    "patch",
    [
        "import os; del os.fork",  # as on Windows
        "import threading; threading.Thread(target=threading.Event().wait, daemon=True).start()",
    ],
    ids=["fork unavailable", "threads running"],
)
def test_without_a_safe_fork_the_contracts_load_here(tmp_path: Path, patch: str) -> None:
    mixed(tmp_path)
    serial, parallel = run(tmp_path, 1, out=tmp_path), run(tmp_path, 2, patch=patch, out=tmp_path)
    assert parallel["forked"] == 0
    assert {**parallel, "forked": 0} == serial


# The worker that meets case c5 notes its pid and stalls; the parent exits on SIGTERM as the
# entrypoint does (an exception raised by its handler).
STALLING = """
import os, signal, time
signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
evaluate = runner.evaluate_case
def stalling(ctx, given):
    if ctx.case.id == "c5":  # written whole or not at all: a reader never sees it empty
        with open(f"stalled.{os.getpid()}", "w") as handle:
            handle.write(str(os.getpid()))
        os.replace(f"stalled.{os.getpid()}", "stalled")
        time.sleep(600)
    return evaluate(ctx, given)
runner.evaluate_case = stalling
"""


@pytest.mark.posix
def test_a_cancelled_run_stops_its_workers(tmp_path: Path) -> None:
    mixed(tmp_path)
    script = SCRIPT.replace("PATCH", STALLING + ALL_TO_ONE)
    argv = [sys.executable, "-c", script, "2", str(tmp_path), "out.json", "told"]
    process = subprocess.Popen(argv, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    marker = tmp_path / "stalled"
    deadline = time.monotonic() + GUARD_S
    _, stderr = cancel_when_marked(process, marker, deadline)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    wait_until_gone(int(marker.read_text()), deadline)


@pytest.mark.posix
def test_a_plain_run_terminated_exits_143_its_workers_gone_no_report(tmp_path: Path) -> None:
    """The CLI with no handler of the test's: SIGTERM kills and reaps the workers before the
    run exits (not left to the kernel and init), and no report is written."""
    mixed(tmp_path)
    plain = STALLING.replace(
        "signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))\n", ""
    )
    script = SCRIPT.replace("PATCH", plain + ALL_TO_ONE)
    argv = [sys.executable, "-c", script, "2", str(tmp_path), "out.json", "told"]
    process = subprocess.Popen(argv, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    marker = tmp_path / "stalled"
    _, stderr = cancel_when_marked(process, marker, time.monotonic() + GUARD_S)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert not Path(f"/proc/{marker.read_text()}").exists(), "the worker outlived the run"
    assert not (tmp_path / "out.json").exists()


def long_ids(root: Path, contracts: int = 3, cases: int = 260) -> Path:
    """Failing cases with ids of 1,500 characters: answers far larger than a socket buffer."""
    body = CONTRACT.split("golden_cases:")[0] + "golden_cases:\n"
    many = body + "".join(
        f"  - id: c{i}_{'x' * 1500}\n    input_ref: bad.json\n    expect_ok: true\n"
        for i in range(cases)
    )
    bad = fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    named = {f"l{n}.yaml": many for n in range(contracts)}
    make_pack(root, "p", contracts=named, fixtures={"bad.json": bad})
    return root


@pytest.mark.posix
@pytest.mark.parametrize("patch", ["", ALL_TO_ONE], ids=["even", "all to one"])
def test_large_answers_come_back_whole(tmp_path: Path, patch: str) -> None:
    """Answers far larger than a pipe's buffer: a process never waits for the run's own to
    read (answers go to files)."""
    long_ids(tmp_path)
    parallel = same_as_serial(tmp_path, patch=patch, out=tmp_path)
    assert parallel["code"] == 1 and parallel["results"]["totals"]["failed"] == 780


# After it loaded its share (all of them: see ALL_TO_ONE), the process rewrites every
# contract file: the run must judge the versions it loaded, as a serial run reads each file
# once. The run's own process, given none, rewrites nothing (it would race the loading).
REWRITTEN = """
from pathlib import Path
load = runner.JudgingLoader._load
def load_then_rewrite(self, items, elsewhere):
    sent = load(self, items, elsewhere)
    for path in Path(root).glob("packs/*/contracts/*.yaml") if items else ():
        path.write_text("golden_cases: [")
    return sent
runner.JudgingLoader._load = load_then_rewrite
"""


@pytest.mark.posix
def test_a_contract_changed_after_its_load_is_judged_as_loaded(tmp_path: Path) -> None:
    mixed(tmp_path)
    same_as_serial(tmp_path, patch=ALL_TO_ONE + REWRITTEN, out=tmp_path)
