"""The one way replaygate uses more than one process: shares of work mapped over forked
children, the first share done by this process meanwhile.

A child inherits everything by the fork (the work's function and its data are never
pickled); only its answer travels back, pickled into a file of its own, so no child ever
waits on this process to read. What a child prints goes to a file too, and is printed here
after its share, in share order: a child writing to the job log itself could open a
``stop-commands`` block that nothing closes. A cancellation (SIGINT, SIGTERM) or an error
here kills every child before it goes on; a child that dies is a WorkerDied.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Generic, TypeVar

from replaygate.core.errors import EXIT_BUG, ReplayGateError

# Work of fewer bytes of contract files than this (some 170 contracts of ten cases each) is
# done in one process: a fork and its answer cost more than a second core saves on it.
MIN_BYTES = 250_000
_CANCEL = {signal.SIGINT, signal.SIGTERM}

S = TypeVar("S")
R = TypeVar("R")


class WorkerDied(ReplayGateError):
    """A child process was killed: its share has no answer, so the run has none."""

    exit_code = EXIT_BUG


def worth_forking(jobs: int, size: Callable[[], int]) -> bool:
    """The one rule: fork when two jobs or more are allowed, this process may fork (no other
    thread runs: a child of a threaded process can deadlock), and the work is ``size()``
    bytes of MIN_BYTES or more (asked last: it may have to look at every file)."""
    may = jobs >= 2 and hasattr(os, "fork") and threading.active_count() == 1
    return may and size() >= MIN_BYTES


def split(sizes: Sequence[int], weights: Sequence[float]) -> list[tuple[int, int]]:
    """Runs of the items in order, one per weight, each holding about its weight's part of
    ``sum(sizes)`` (bytes, which stand for work)."""
    total, whole = sum(sizes) or 1, sum(weights)
    cuts = list(itertools.accumulate(weights))[:-1]
    bounds, running = [0], 0
    for index, size in enumerate(sizes):
        running += size
        while len(bounds) <= len(cuts) and running * whole >= total * cuts[len(bounds) - 1]:
            bounds.append(index + 1)
    bounds += [len(sizes)] * (len(weights) + 1 - len(bounds))
    return list(itertools.pairwise(bounds))


def file_size(path: str | os.PathLike[str]) -> int:
    """A file's bytes, which stand for the work of reading it; 0 for one that cannot be
    looked at (its reader says why)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


@dataclass(slots=True)
class _Child(Generic[R]):
    pid: int | None
    answer: IO[bytes]  # its pickled (printed text, value or exception)


def map_shares(work: Callable[[S], R], shares: Sequence[S]) -> list[R]:
    """``work`` of each share, in order: the first here, the others in forked children
    meanwhile. An exception raised by ``work`` in a child is raised here. Where no process
    is to be had (a full process table), the shares left are done here: it costs only time."""
    children: list[_Child[R]] = []
    try:
        with contextlib.suppress(OSError):
            for share in shares[1:]:
                children.append(_fork(work, share))
        here = [shares[0], *shares[1 + len(children) :]] if shares else []
        ours = [work(share) for share in here]
        return [*ours[:1], *(_answer(child) for child in children), *ours[1:]]
    finally:
        for child in children:
            _end(child)


def _fork(work: Callable[[S], R], share: S) -> _Child[R]:
    for stream in (sys.stdout, sys.stderr):  # a child must not print again what is buffered
        if stream is not None:
            stream.flush()
    answer = tempfile.TemporaryFile()  # noqa: SIM115 (closed by _end)
    parent = os.getpid()
    with _held():  # a cancellation never runs this process's handlers in the child
        try:
            pid = os.fork()
        except OSError:
            answer.close()
            raise
        if pid == 0:
            _serve(work, share, answer, parent)
    return _Child(pid, answer)


def _serve(work: Callable[[S], R], share: S, answer: IO[bytes], parent: int) -> None:
    """The child's life: ``work(share)`` and what it printed pickled into ``answer``, then
    exit without this process's clean-up (its buffers and atexit handlers are not ours)."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _die_with_parent(parent)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _CANCEL)
        printed = _capture_output()
        try:
            outcome: tuple[bool, object] = (True, work(share))
        except BaseException as exc:  # raised again in the parent
            outcome = (False, _portable(exc))
        sys.stdout.flush()
        printed.seek(0)
        text = printed.read().decode("utf-8", "backslashreplace")
        pickle.dump((text, *outcome), answer, protocol=pickle.HIGHEST_PROTOCOL)
        answer.flush()
        code = 0
    finally:
        os._exit(code)


def _die_with_parent(parent: int) -> None:
    """A child ends with this process, even when it is killed outright (SIGKILL, or a
    SIGTERM with no handler): on Linux the kernel sends it SIGKILL then."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # gone already, before the request took effect
        os._exit(1)


def _capture_output() -> IO[bytes]:
    """This child's stdout and stderr (the descriptors too, for C code) into a file."""
    printed = tempfile.TemporaryFile()  # noqa: SIM115 (the child's life is its scope)
    for fd in (1, 2):
        os.dup2(printed.fileno(), fd)
    # line-buffered: Python's lines and the descriptors' writes keep their order
    sys.stdout = sys.stderr = open(  # noqa: SIM115
        1, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False
    )
    return printed


def _answer(child: _Child[R]) -> R:
    """The child's value, once it has ended; what it printed, printed here."""
    assert child.pid is not None
    _, status = _wait(child.pid)
    child.pid = None
    child.answer.seek(0)
    try:
        text, ok, value = pickle.load(child.answer)
    except (EOFError, pickle.UnpicklingError):
        text, ok, value = "", False, None
    sys.stderr.write(text)
    if ok and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return value  # type: ignore[no-any-return]
    if isinstance(value, BaseException):
        raise value
    raise WorkerDied(
        "a worker process stopped abruptly (killed, or out of memory): the run is "
        "incomplete and nothing was reported; run it again, or with --jobs 1"
    )


def _end(child: _Child[R]) -> None:
    """The child gone (killed if it is still at work) and its file closed."""
    if child.pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signal.SIGKILL)
        _wait(child.pid)
        child.pid = None
    child.answer.close()


def _wait(pid: int) -> tuple[int, int]:
    try:
        return os.waitpid(pid, 0)
    except ChildProcessError:  # SIGCHLD ignored by whoever started us: reaped already
        return pid, 0


@contextlib.contextmanager
def _held() -> Iterator[None]:
    """SIGINT and SIGTERM held around a fork, and taken when it is done: the child never
    runs this process's handlers, and this process registers the child before a
    cancellation can end it."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _CANCEL)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` itself when it survives pickling, else a RuntimeError that names it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # any failure to travel is replaced the same way
        return RuntimeError(f"in a worker: {exc!r}")
    return exc
