"""Forked worker processes: started quiet, their output brought back, their death a failure."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, TypeVar

from replaygate.errors import EXIT_BUG, ReplayGateError

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

Task = TypeVar("Task")
Part = TypeVar("Part")
# In a worker: the file its stdout and stderr (the descriptors too) are written to.
_OUTPUT: list[IO[bytes]] = []


class WorkerDied(ReplayGateError):
    """A worker process was killed: its cases have no result, so the run has none."""

    exit_code = EXIT_BUG


def start_worker() -> None:
    """Leave cancellation to the parent, and keep the job log to the parent alone.

    The parent terminates workers (SIGTERM) in silence. What a worker prints (a library's
    warning, even from C) goes to a file of its own and back to the parent with the
    results: a worker writing to the log itself could open a ``stop-commands`` block
    that nothing closes, and every later annotation would be ignored.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    import tempfile

    # Both files stay open for the worker's lifetime: no context manager fits.
    output = tempfile.TemporaryFile()  # noqa: SIM115
    for fd in (1, 2):
        os.dup2(output.fileno(), fd)
    # line-buffered: Python's lines and the descriptors' writes keep their order
    sys.stdout = sys.stderr = open(  # noqa: SIM115
        1, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False
    )
    _OUTPUT[:] = [output]


def printed() -> str:
    """What this worker printed since the last call."""
    sys.stdout.flush()
    (output,) = _OUTPUT
    output.seek(0)
    text = output.read().decode("utf-8", "backslashreplace")
    output.seek(0)
    output.truncate()
    return text


def new_pool(jobs: int) -> ProcessPoolExecutor:
    """``jobs`` workers, forked from this process when first given work."""
    import multiprocessing  # only a large run needs these: about 10 ms of every start otherwise
    from concurrent.futures import ProcessPoolExecutor

    sys.stdout.flush()  # a worker must not inherit, and print again, what is buffered here
    sys.stderr.flush()
    context = multiprocessing.get_context("fork")
    return ProcessPoolExecutor(jobs, mp_context=context, initializer=start_worker)


def mapped(
    pool: ProcessPoolExecutor,
    work: Callable[[Task], tuple[Part, str]],
    tasks: Sequence[Task],
) -> list[Part]:
    """``work`` done on each task by the pool's workers, in order; what each printed is
    re-printed here, in the same order."""
    from concurrent.futures.process import BrokenProcessPool

    parts: list[Part] = []
    try:
        for part, text in pool.map(work, tasks):
            parts.append(part)
            sys.stderr.write(text)
    except BrokenProcessPool:
        raise WorkerDied(
            "a worker process stopped abruptly (killed, or out of memory): the run is "
            "incomplete and nothing was reported; run it again, or with --jobs 1"
        ) from None
    except BaseException:  # cancelled: the workers' tasks are of no use now
        for process in list(pool._processes.values()):  # no public way before Python 3.14
            process.terminate()
        raise
    return parts
