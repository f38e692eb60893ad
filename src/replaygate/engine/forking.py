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
from collections.abc import Callable, Iterator, Sequence
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


def flush_output() -> None:
    """Python's stdout and stderr flushed before a fork: a child must not inherit, and print
    again, what is buffered. Either is None when its descriptor was closed at start."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()


_CANCEL = {signal.SIGINT, signal.SIGTERM}  # the signals that cancel a run
_PARENT: list[int] = []  # in a helper: the pid of the process it answers
# In a parent: the read ends of its helpers' pipes, closed in each later helper, so that a
# helper's answer meets a closed pipe once its parent is gone, whatever other helpers run.
_READ_ENDS: set[int] = set()


class Helper:
    """A forked process computing ``work()``; ``answer()`` is its value, or None when it did
    not give one (it raised, or was killed): the parent then does that work itself, and
    meets any error of it there, with its traceback.

    The value travels by marshal: strings, numbers, None, lists and tuples of them. The
    helper prints nothing: its output goes nowhere, so it cannot write to the job log.
    Leaving a ``with`` block of it ends it, however the block is left. Long work checks
    ``orphaned()`` now and then: a parent killed outright reads no answer.
    """

    def __init__(self, work: Callable[[], Any], undo: Callable[[], None] | None = None) -> None:
        """``undo`` (in the helper) takes back what ``work`` left when its answer cannot be
        given: its parent is gone, or it was told to stop by a signal of its own."""
        flush_output()
        readable, writable = os.pipe()
        parent = os.getpid()
        with held():
            try:
                pid = os.fork()
            except OSError:  # no process to be had
                os.close(readable)
                os.close(writable)
                raise
            if pid == 0:  # the helper
                try:
                    for fd in (readable, *_READ_ENDS):
                        os.close(fd)
                    _PARENT[:] = [parent]
                    _serve(work, undo, writable)
                finally:
                    os._exit(1)
        os.close(writable)
        _READ_ENDS.add(readable)
        self._pid: int | None = pid
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
        _READ_ENDS.discard(self._readable)
        os.close(self._readable)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        # ChildProcessError: started with SIGCHLD ignored, the system reaped it already
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def orphaned() -> bool:
    """In a helper: whether the process it answers is gone (killed outright, with no time to
    stop it): long work stops early then, as nothing will read its answer."""
    return os.getppid() != _PARENT[0]


@contextlib.contextmanager
def held() -> Iterator[None]:
    """SIGINT and SIGTERM held while the block runs, and taken at its end: around a fork,
    and until the parent has registered the helper for clean-up, so that a cancellation
    (sent to the whole process group) never runs the parent's code in the child, nor
    leaves a helper nobody stops."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _CANCEL)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _serve(work: Callable[[], Any], undo: Callable[[], None] | None, writable: int) -> None:
    """The helper's life: ``work()`` written whole to ``writable``, then exit without any
    of the parent's clean-up (its buffers, its atexit handlers are not the helper's)."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
        signal.signal(signal.SIGTERM, _stopped)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _CANCEL)
        nowhere = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nowhere, 1)
        os.dup2(nowhere, 2)
        # Python's streams too: they may write to a descriptor of their own (a test's capture)
        sys.stdout = sys.stderr = open(nowhere, "w", closefd=False)  # noqa: SIM115
        data = memoryview(marshal.dumps(work()))
        # answering: a signal from now on must not undo what the parent is told is done
        signal.pthread_sigmask(signal.SIG_BLOCK, _CANCEL)
        while data:  # a parent gone: BrokenPipeError
            data = data[os.write(writable, data) :]
        code = 0
    finally:
        if code and undo is not None:
            with contextlib.suppress(BaseException):
                undo()
        os._exit(code)


def _stopped(signum: int, frame: object) -> None:
    """A helper's SIGTERM (not its parent's doing: the parent kills): stop where it is."""
    raise SystemExit(1)
