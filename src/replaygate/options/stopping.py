"""Ctrl-C and SIGTERM during `record` and live runs: no new request, the ones in flight cut
after a short grace, and the signal's own exit code."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from replaygate.core.errors import ReplayGateError, exit_on_signal
from replaygate.providers.client import Provider

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Time for the requests in flight to finish (their recordings are kept) before they are cut.
STOP_GRACE_S = 2.0


class Stopped(ReplayGateError):
    """A run a signal stopped: its exit code is the signal's (130, 143)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.exit_code = exit_on_signal(signum)


@contextmanager
def stop_on_signals(provider: Provider) -> Iterator[tuple[threading.Event, list[int]]]:
    """Ctrl-C and SIGTERM set ``stop`` (no new request starts) and cut the provider's
    requests in flight after STOP_GRACE_S; the signals caught are kept."""
    stop, caught = threading.Event(), []

    def handle(signum: int, frame: Any) -> None:
        caught.append(signum)
        stop.set()
        cut = threading.Timer(STOP_GRACE_S, provider.stop)
        cut.daemon = True
        cut.start()

    previous = {sig: signal.signal(sig, handle) for sig in STOP_SIGNALS}
    try:
        yield stop, caught
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
