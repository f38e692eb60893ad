"""Each request's total deadline, and the run's stop: the request's socket is cut when
either comes, whatever phase it is in (connecting, waiting, a body trickled byte by byte).

A read timeout alone restarts at every byte, and a blocked read cannot be interrupted from
another thread; shutting the socket down can. The sockets are found through the connection
classes of the Session's pools (``watched_session``), the request's ``Cut`` through the
thread that sends it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

TIMED_OUT = "timeout"
STOPPED = "stopped"

_CURRENT = threading.local()  # the Cut of the request this thread is sending


class Cut:
    """One request's sockets, shut down at most once: at its deadline or when stopped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.why: str | None = None  # TIMED_OUT or STOPPED once fired
        self._done = False  # the request is over: its sockets may serve another one

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.why is not None:
                _shut(sock)

    def fire(self, why: str) -> None:
        with self._lock:
            if self._done or self.why is not None:
                return
            self.why = why
            for sock in self._sockets:
                _shut(sock)

    def finish(self) -> None:
        with self._lock:
            self._done = True
            self._sockets.clear()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: nothing to cut
        sock.shutdown(socket.SHUT_RDWR)


class Cuts:
    """The requests in flight of one provider; ``stop`` cuts them all and every later one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[Cut] = set()
        self.stopped = threading.Event()

    @contextlib.contextmanager
    def request(self, seconds: float) -> Iterator[Cut]:
        """A Cut for the request sent in this block, fired after ``seconds``."""
        cut = Cut()
        with self._lock:
            self._open.add(cut)
        if self.stopped.is_set():
            cut.fire(STOPPED)
        timer = threading.Timer(seconds, cut.fire, (TIMED_OUT,))
        timer.daemon = True
        timer.start()
        _CURRENT.cut = cut
        try:
            yield cut
        finally:
            _CURRENT.cut = None
            timer.cancel()
            cut.finish()
            with self._lock:
                self._open.discard(cut)

    def stop(self) -> None:
        """Cut every request in flight; any later one is cut as it starts."""
        self.stopped.set()
        with self._lock:
            cuts = list(self._open)
        for cut in cuts:
            cut.fire(STOPPED)


def _watch(sock: Any) -> None:
    cut = getattr(_CURRENT, "cut", None)
    if cut is not None and isinstance(sock, socket.socket):
        cut.add(sock)


class _WatchedHTTP(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        _watch(sock)
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        _watch(self.sock)  # a kept-alive connection: connected by an earlier request
        super().request(*args, **kwargs)


class _WatchedHTTPS(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        _watch(sock)
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        _watch(self.sock)
        super().request(*args, **kwargs)


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTP


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPS


class _Adapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}


def watched_session(base_url: str) -> requests.Session:
    """A Session that reads nothing from the environment, retries nothing itself (the client
    retries, by the contract's policy, with the reply in hand), and whose sockets a Cut can
    reach."""
    session = requests.Session()
    session.trust_env = False  # no proxies, .netrc credentials or CA overrides from env
    session.mount(base_url, _Adapter(max_retries=0))
    return session
