"""Forking without the engine: whether this process may fork, how work is shared out by
bytes, and a helper process that computes part of a run's work while the parent does the
rest. Light on purpose: a warm cached run forks a helper and never imports the engine."""

from __future__ import annotations

import contextlib
import itertools
import marshal
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def can_fork(jobs: int) -> bool:
    """Whether ``jobs`` workers may be forked from this process."""
    # Forking a process that runs threads can deadlock the child: only a plain CLI run forks.
    # (multiprocessing offers its "fork" start method exactly where os.fork exists.)
    return jobs >= 2 and threading.active_count() == 1 and hasattr(os, "fork")


def shares(sizes: Sequence[int], weights: Sequence[float]) -> list[tuple[int, int]]:
    """Runs of the items in order, one per weight, each holding about its weight's part of
    the total of ``sizes`` (bytes, which stand for cases)."""
    total, whole = sum(sizes) or 1, sum(weights)
    cuts = list(itertools.accumulate(weights))[:-1]
    bounds, running = [0], 0
    for index, size in enumerate(sizes):
        running += size
        while len(bounds) <= len(cuts) and running * whole >= total * cuts[len(bounds) - 1]:
            bounds.append(index + 1)
    bounds += [len(sizes)] * (len(weights) + 1 - len(bounds))
    return list(itertools.pairwise(bounds))


def file_size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:  # its loader says why
        return 0


class Helper:
    """A forked process computing ``work()``; ``answer()`` is its value, or None when it did
    not give one (it raised, or was killed): the parent then does that work itself, and
    meets any error of it there, with its traceback.

    The value travels by marshal: strings, numbers, None, lists and tuples of them. The
    helper prints nothing: its output goes nowhere, so it cannot write to the job log.
    Leaving a ``with`` block of it ends it, however the block is left.
    """

    def __init__(self, work: Callable[[], Any]) -> None:
        sys.stdout.flush()  # buffered text must not be inherited, and printed twice
        sys.stderr.flush()
        readable, writable = os.pipe()
        self._pid: int | None = os.fork()
        if self._pid == 0:  # the helper
            os.close(readable)
            _serve(work, writable)
        os.close(writable)
        self._readable = readable

    def __enter__(self) -> Helper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self) -> Any:
        """The helper's value, or None; the helper gone either way."""
        chunks = []
        try:
            while chunk := os.read(self._readable, 1 << 20):
                chunks.append(chunk)
        finally:
            self.stop()
        try:
            return marshal.loads(b"".join(chunks))
        except (EOFError, ValueError, TypeError):  # it ended before it wrote all of it
            return None

    def stop(self) -> None:
        """The helper ended (killed if it is still at work) and its pipe closed."""
        if self._pid is None:
            return
        pid, self._pid = self._pid, None
        os.close(self._readable)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def _serve(work: Callable[[], Any], writable: int) -> None:
    """The helper's life: ``work()`` written whole to ``writable``, then exit without any
    of the parent's clean-up (its buffers, its atexit handlers are not the helper's)."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        nowhere = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nowhere, 1)
        os.dup2(nowhere, 2)
        # Python's streams too: they may write to a descriptor of their own (a test's capture)
        sys.stdout = sys.stderr = open(nowhere, "w", closefd=False)  # noqa: SIM115
        data = memoryview(marshal.dumps(work()))
        while data:
            data = data[os.write(writable, data) :]
        code = 0
    finally:
        os._exit(code)
