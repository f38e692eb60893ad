"""The forking helpers: byte shares, and the helper process a warm cached run forks."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

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
        os.write(1, b"::error::to its descriptor\n")  # as a library's C code would
        os.write(2, b"::error::to its errors\n")
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


def test_a_helper_in_a_process_that_ignores_sigchld_still_answers() -> None:
    """Started with SIGCHLD ignored (inherited from a CI agent), a child is reaped by the
    system: waiting for it finds none, which is no error."""
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        assert forking.Helper(lambda: [1, 2]).answer() == [1, 2]
        with forking.Helper(lambda: time.sleep(GUARD_S)):
            pass  # stopped at once
    finally:
        signal.signal(signal.SIGCHLD, before)


def test_a_helper_starts_with_stdout_and_stderr_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdout", None)
    monkeypatch.setattr("sys.stderr", None)
    assert forking.Helper(lambda: "fine").answer() == "fine"


def test_a_fork_that_fails_leaves_no_descriptor_open(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused() -> int:
        raise BlockingIOError("Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    for _ in range(3):
        with pytest.raises(BlockingIOError):
            forking.Helper(lambda: None)
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before
    assert not signal.pthread_sigmask(signal.SIG_BLOCK, set())  # nothing left blocked


def test_the_parent_takes_cancellation_again_once_the_helper_is_forked() -> None:
    with forking.Helper(lambda: None) as started:
        assert not signal.pthread_sigmask(signal.SIG_BLOCK, set())
        assert started.answer() is None


ORPHAN = """
import os, sys, time
from pathlib import Path
from replaygate.engine import forking

def work():
    Path(sys.argv[1]).write_text(str(os.getpid()))
    while not forking.orphaned():
        time.sleep(0.01)
    Path(sys.argv[2]).write_text("stopped")

forking.Helper(work).answer()
"""


def test_a_helper_whose_parent_is_killed_outright_sees_it(tmp_path: Path) -> None:
    import subprocess
    import sys

    marker, stopped = tmp_path / "pid", tmp_path / "stopped"
    parent = subprocess.Popen([sys.executable, "-c", ORPHAN, str(marker), str(stopped)])
    deadline = time.monotonic() + GUARD_S
    try:
        while not (marker.exists() and marker.read_text()):
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.01)
        parent.kill()
        parent.wait()
        wait_until_gone(int(marker.read_text()), deadline)
    finally:
        parent.kill()
        if marker.exists() and marker.read_text():  # a helper that did not see it: gone too
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(marker.read_text()), signal.SIGKILL)
    assert stopped.read_text() == "stopped"


def test_a_helper_signalled_after_it_answered_undoes_nothing(tmp_path: Path) -> None:
    """Once its answer is on its way, the parent acts on it (renames the file): a SIGTERM of
    the helper's own must not take it back."""
    undone = tmp_path / "undone"

    def work() -> str:
        write = os.write

        def write_then_signalled(fd: int, data: Any) -> int:
            written = write(fd, data)
            os.kill(os.getpid(), signal.SIGTERM)  # as if sent to the helper alone, now
            return written

        os.write = write_then_signalled  # in the helper only: it is a forked process
        return "done"

    answer = forking.Helper(work, undo=lambda: undone.write_text("undone")).answer()
    assert answer == "done"
    assert not undone.exists()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="lists descriptors in /proc")
def test_a_helper_holds_no_other_helpers_pipe(tmp_path: Path) -> None:
    """Else a helper's answer would meet an open pipe after its parent is gone (a later
    helper holding it), and never learn that nobody will read it."""
    with forking.Helper(lambda: time.sleep(GUARD_S)) as first:
        theirs = os.fstat(first._readable)

        def open_pipes() -> list[tuple[int, int]]:
            found = []
            for name in os.listdir("/proc/self/fd"):
                with contextlib.suppress(OSError):
                    info = os.fstat(int(name))
                    found.append((info.st_dev, info.st_ino))
            return found

        seen = forking.Helper(open_pipes).answer()
    assert seen and (theirs.st_dev, theirs.st_ino) not in [tuple(pair) for pair in seen]
