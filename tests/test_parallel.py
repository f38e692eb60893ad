"""replaygate/parallel.py: shares of work in forked processes, answered in order; a child's
death, error or output, and a cancellation, handled in one place."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cancelling import GUARD_S, wait_until_gone
from replaygate import parallel

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forking is POSIX")


@pytest.mark.parametrize(
    ("sizes", "weights", "expected"),
    [
        ([1, 1, 1, 1], [1, 1], [(0, 2), (2, 4)]),
        ([5, 1, 1, 1], [1, 1], [(0, 1), (1, 4)]),
        ([1, 1, 1, 1, 1], [0.4, 0.6], [(0, 2), (2, 5)]),
        ([], [1, 1], [(0, 0), (0, 0)]),
        ([3], [1, 1, 1], [(0, 1), (1, 1), (1, 1)]),
    ],
)
def test_split_cuts_the_bytes_by_weight(
    sizes: list[int], weights: list[float], expected: list[tuple[int, int]]
) -> None:
    assert parallel.split(sizes, weights) == expected


def test_shares_are_answered_in_order_the_first_here() -> None:
    here = os.getpid()
    answers = parallel.map_shares(lambda n: (n * n, os.getpid() == here), [1, 2, 3])
    assert answers == [(1, True), (4, False), (9, False)]


def test_a_large_answer_comes_back_whole() -> None:
    big = "x" * (8 << 20)
    assert parallel.map_shares(lambda n: big if n else "", [0, 1]) == ["", big]


def test_an_error_in_a_child_is_raised_here() -> None:
    def work(n: int) -> int:
        if n:
            raise ValueError(f"a bug met at {n}")
        return n

    with pytest.raises(ValueError, match="a bug met at 1"):
        parallel.map_shares(work, [0, 1])


def test_a_child_killed_is_a_worker_died() -> None:
    def work(n: int) -> int:
        if n:
            os.kill(os.getpid(), signal.SIGKILL)
        return n

    with pytest.raises(parallel.WorkerDied, match="stopped abruptly"):
        parallel.map_shares(work, [0, 1])


def test_what_a_child_prints_comes_out_here_after_its_share(
    capfd: pytest.CaptureFixture[str],
) -> None:
    def work(n: int) -> int:
        print(f"printed by {n}")
        os.write(2, f"written by {n}\n".encode())
        return n

    assert parallel.map_shares(work, [0, 1, 2]) == [0, 1, 2]
    out, err = capfd.readouterr()
    assert out == "printed by 0\n"  # this process's own share prints as a serial run does
    assert err == "written by 0\nprinted by 1\nwritten by 1\nprinted by 2\nwritten by 2\n"


def test_an_error_here_ends_the_children_at_work(tmp_path: Path) -> None:
    marker = tmp_path / "child"

    def work(n: int) -> None:
        if n:  # written whole, then renamed: the marker is never read half written
            (tmp_path / "child.tmp").write_text(str(os.getpid()))
            os.replace(tmp_path / "child.tmp", marker)
            signal.pause()
        while not marker.exists():
            pass
        raise KeyboardInterrupt  # as a Ctrl-C while the children work

    with pytest.raises(KeyboardInterrupt):
        parallel.map_shares(work, [0, 1])
    wait_until_gone(int(marker.read_text()), _deadline())


def test_without_a_process_to_be_had_the_shares_are_done_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    forks = iter([True])
    fork = os.fork

    def refused_after_one() -> int:
        if next(forks, False):
            return fork()
        raise BlockingIOError("Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused_after_one)
    here = os.getpid()
    answers = parallel.map_shares(lambda n: (n, os.getpid() == here), [0, 1, 2, 3])
    assert answers == [(0, True), (1, False), (2, True), (3, True)]


def test_a_process_that_ignores_sigchld_still_gets_its_answers() -> None:
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        assert parallel.map_shares(lambda n: n + 1, [0, 1]) == [1, 2]
    finally:
        signal.signal(signal.SIGCHLD, before)


def test_the_rule_forks_only_a_single_threaded_process_with_two_jobs_and_enough_bytes() -> None:
    enough = parallel.MIN_BYTES
    assert parallel.worth_forking(2, lambda: enough)
    assert not parallel.worth_forking(1, lambda: enough)
    assert not parallel.worth_forking(2, lambda: enough - 1)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not parallel.worth_forking(2, lambda: enough)
    finally:
        stop.set()
        thread.join()


def test_the_size_is_not_asked_for_when_one_job_is_allowed() -> None:
    def size() -> int:
        raise AssertionError("looked at every file for nothing")

    assert not parallel.worth_forking(1, size)


# A run whose parent is killed outright (no handler: SIGKILL) while its child works: the
# child must not outlive it.
ORPHANED = """
import os, sys, time
from replaygate import parallel
def work(n):
    if n:
        with open("child.tmp", "w") as handle:
            handle.write(str(os.getpid()))
        os.replace("child.tmp", "child")
        time.sleep(600)
    while not os.path.exists("child"):
        time.sleep(0.01)
    os.kill(os.getpid(), 9)
parallel.map_shares(work, [0, 1])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's parent-death signal")
def test_a_child_dies_with_its_parent_killed_outright(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", ORPHANED], cwd=tmp_path, timeout=GUARD_S, check=False
    )
    assert done.returncode == -signal.SIGKILL
    wait_until_gone(int((tmp_path / "child").read_text()), _deadline())


def _deadline() -> float:
    import time

    return time.monotonic() + GUARD_S
