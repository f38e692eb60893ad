"""Forked processes in the action: what they print reaches the log guarded, through the run's
own process."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from action_harness import ENTRYPOINT, Action, write_pack
from runner_oracle import Runner

from cancelling import GUARD_S, cancel_when_marked, wait_until_gone

# The entrypoint with two jobs whatever the machine has, every contract loaded and judged
# by the forked process (the run's own gets an empty share).
FORKED_ENTRYPOINT = f"""
import runpy, sys
from replaygate import parallel
from replaygate.commands import run
from replaygate.engine import runner
run._default_jobs = lambda: 2
parallel.MIN_BYTES = 1
parallel.split = lambda sizes, weights: [(0, 0)] * (len(weights) - 1) + [(0, len(sizes))]
sys.argv = [{str(ENTRYPOINT)!r}]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
CASES = 2400


# The entrypoint, forked, where a library warns in a worker (as `re` once did for a tool
# schema's pattern "[[x]"): Python writes the warning to the worker's stderr. A worker that
# wrote to the log itself could open a guard that nothing closes.
WARNING_WORKER = FORKED_ENTRYPOINT.replace(
    "run._default_jobs",
    """import warnings
evaluate = runner._evaluate
def warning(item):
    if item.ctx.case.id in ("case_0007", "case_2222"):
        warnings.warn("Possible nested set at position 1", FutureWarning, stacklevel=1)
    return evaluate(item)
runner._evaluate = warning
run._default_jobs""",
)


def test_a_warning_printed_in_a_worker_cannot_switch_off_the_annotations(
    tmp_path: Path,
) -> None:
    action = Action(tmp_path)
    write_pack(action.workspace, ["Basel"] * CASES, ids=[f"case_{n:04}" for n in range(CASES)])
    process = action.start({}, python=("-c", WARNING_WORKER))
    log, _ = process.communicate(timeout=300)
    step = action.step("1", process.returncode, log)
    assert step.code == 1, log[-3000:]
    assert "FutureWarning: Possible nested set" in log  # shown, from a worker
    assert len(step.annotations("error")) == 10
    runner = Runner()
    runner.feed(log)
    assert runner.stop_token is None, "a stop-commands block is left open"
    assert step.outputs["failed"] == str(CASES)


# The entrypoint, forked, where the worker that meets case_0005 notes its pid and stalls.
STALLING_WORKER = FORKED_ENTRYPOINT.replace(
    "run._default_jobs",
    """import os, time
evaluate = runner._evaluate
def stalling(item):
    if item.ctx.case.id == "case_0005":
        open("stalled", "w").write(str(os.getpid()))
        time.sleep(600)
    return evaluate(item)
runner._evaluate = stalling
run._default_jobs""",
)


def test_a_cancelled_run_stops_its_workers(tmp_path: Path) -> None:
    action = Action(tmp_path)
    write_pack(action.workspace, ["Basel"] * CASES, ids=[f"case_{n:04}" for n in range(CASES)])
    process = action.start({}, python=("-c", STALLING_WORKER))
    marker = action.workspace / "stalled"
    deadline = time.monotonic() + GUARD_S
    log, _ = cancel_when_marked(process, marker, deadline)
    assert process.returncode == 128 + signal.SIGTERM, log[-2000:]
    wait_until_gone(int(marker.read_text()), deadline)


# The entrypoint, forked, where the worker that meets case_0005 is killed (as the OOM killer
# would): the run stops with exit 3, and the job's page must say why.
KILLED_WORKER = FORKED_ENTRYPOINT.replace(
    "run._default_jobs",
    """import os, signal
evaluate = runner._evaluate
def dying(item):
    if item.ctx.case.id == "case_0005":
        os.kill(os.getpid(), signal.SIGKILL)
    return evaluate(item)
runner._evaluate = dying
run._default_jobs""",
)


def test_a_killed_worker_is_an_error_annotation(tmp_path: Path) -> None:
    action = Action(tmp_path)
    write_pack(action.workspace, ["Basel"] * CASES, ids=[f"case_{n:04}" for n in range(CASES)])
    process = action.start({}, python=("-c", KILLED_WORKER))
    log, _ = process.communicate(timeout=300)
    step = action.step("1", process.returncode, log)
    assert step.code == 3, log[-3000:]
    assert [(c.name, c.properties, c.data) for c in step.commands] == [
        (
            "error",
            {"title": "replaygate"},
            "a worker process stopped abruptly (killed, or out of memory): the run is "
            "incomplete and nothing was reported; run it again, or with --jobs 1",
        )
    ]
    assert "Traceback" not in log
