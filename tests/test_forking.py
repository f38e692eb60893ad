"""The forking helpers: byte shares, and the helper process a warm cached run forks."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from cancelling import GUARD_S, wait_until_gone
from replaygate.engine import forking

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forking is POSIX")


@pytest.mark.parametrize(
    ("sizes", "weights", "expected"),
    [
        ([10] * 10, [1, 1], [(0, 5), (5, 10)]),
        ([10] * 10, [0.4, 0.6], [(0, 4), (4, 10)]),
        ([90, 5, 5], [1, 1], [(0, 1), (1, 3)]),
        ([0, 0], [1, 1, 1], [(0, 2), (2, 2), (2, 2)]),
        ([], [1, 1], [(0, 0), (0, 0)]),
    ],
)
def test_shares_cut_the_bytes_by_weight(
    sizes: list[int], weights: list[float], expected: list[tuple[int, int]]
) -> None:
    assert forking.shares(sizes, weights) == expected


def test_a_helper_answers_with_what_it_computed() -> None:
    parent = os.getpid()
    value = [None, ("k" * 64, ["a" * 64] * 3), 7, os.getpid]  # the last is not sent
    started = forking.Helper(lambda: [*value[:3], value[3]()])
    answer = started.answer()
    assert answer[:3] == value[:3]
    assert answer[3] != parent  # computed in another process


def test_a_large_answer_is_read_whole() -> None:
    big = ["x" * 1000 for _ in range(5000)]  # 5 MB: many times a pipe's buffer
    assert forking.Helper(lambda: big).answer() == big


def test_a_helper_that_raises_answers_none_and_prints_nothing(
    capfd: pytest.CaptureFixture[str],
) -> None:
    def work() -> None:
        print("::error::from the helper")
        raise RuntimeError("boom")

    assert forking.Helper(work).answer() is None
    assert capfd.readouterr() == ("", "")


def test_a_helper_killed_answers_none(tmp_path: Path) -> None:
    marker = tmp_path / "pid"

    def work() -> None:
        marker.write_text(str(os.getpid()))
        time.sleep(GUARD_S)

    started = forking.Helper(work)
    deadline = time.monotonic() + GUARD_S
    while not (marker.exists() and marker.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(int(marker.read_text()), signal.SIGKILL)
    assert started.answer() is None


def test_a_helper_left_at_work_is_ended_with_its_block(tmp_path: Path) -> None:
    marker = tmp_path / "pid"

    def work() -> None:
        marker.write_text(str(os.getpid()))
        time.sleep(GUARD_S)

    with pytest.raises(KeyboardInterrupt), forking.Helper(work):
        deadline = time.monotonic() + GUARD_S
        while not (marker.exists() and marker.read_text()):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        raise KeyboardInterrupt
    wait_until_gone(int(marker.read_text()), time.monotonic() + GUARD_S)


def test_only_a_single_threaded_process_with_two_jobs_forks() -> None:
    import threading

    assert forking.can_fork(2) and not forking.can_fork(1)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not forking.can_fork(2)
    finally:
        stop.set()
        thread.join()
