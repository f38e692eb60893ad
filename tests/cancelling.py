"""A run cancelled as a runner cancels a job: SIGTERM once a worker is under way, then every
worker gone. Timings here are hang guards, not speed figures."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

GUARD_S = 120


def cancel_when_marked(
    process: subprocess.Popen[str], marker: Path, deadline: float
) -> tuple[str, str]:
    """Once a worker has written its pid to ``marker``, SIGTERM the run; its (stdout,
    stderr), each empty where it was not piped."""
    try:
        while not (marker.exists() and marker.read_text()):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()  # a no-op once it has exited
    return out or "", err or ""


def wait_until_gone(pid: int, deadline: float) -> None:
    while not _gone(pid):
        assert time.monotonic() < deadline, "the stalled worker is still running"
        time.sleep(0.01)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False
