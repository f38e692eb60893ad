"""`replaygate observe`'s proxy: forwards each request to the upstream unchanged, passes the
answer back as it comes (an event stream chunk by chunk), and gives the exchange to the core.

One thread a connection (``ThreadingHTTPServer``), so a slow upstream holds up only its own
request. The upstream is asked for an uncompressed body (``Accept-Encoding: identity``), so
the proxy can read what it passes on; the app gets the same content either way.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from replaygate.capture.core import Capture, Exchange, credentials
from replaygate.report.escape import terminal_safe

# Hop-by-hop headers (RFC 9110 7.6.1) and the ones the proxy sets itself.
_NOT_FORWARDED = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
    }
)
_CHUNK = 65536
UPSTREAM_TIMEOUT = 600.0  # seconds without a byte from the upstream: a model may think long


@dataclass(frozen=True, slots=True)
class Upstream:
    scheme: str
    host: str
    port: int | None
    prefix: str  # the upstream URL's path, put before the app's request path

    @classmethod
    def parse(cls, url: str) -> Upstream:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--upstream {url!r} is not an http(s) URL")
        return cls(parts.scheme, parts.hostname, parts.port, parts.path.rstrip("/"))

    def connect(self) -> http.client.HTTPConnection:
        if self.scheme == "https":
            context = ssl.create_default_context()
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=UPSTREAM_TIMEOUT, context=context
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=UPSTREAM_TIMEOUT)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs expect
    server: ObserveServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the summary says what happened (and a request line could hold a secret)."""

    def _forward(self) -> None:
        self.server.busy(self.connection, True)
        try:
            self._exchange()
        finally:
            self.server.busy(self.connection, False)
            if self.server.stopping.is_set():
                self.close_connection = True  # no next request once stopped

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

    def _exchange(self) -> None:
        length = self.headers.get("Content-Length") or "0"
        if not (length.isascii() and length.isdigit()):
            self.send_error(400, "Content-Length is not a number")
            return
        body = self.rfile.read(int(length)) if int(length) else b""
        capture = self.server.capture
        recorded = self.command == "POST" and capture.records(self.path)
        connection = self.server.upstream.connect()
        try:
            try:
                answer = self._upstream(connection, body)
            except (OSError, http.client.HTTPException) as exc:
                self._unreachable(exc)
                if recorded:
                    capture.take(Exchange(self.path, body, 0, b""))
                return
            try:
                received = self._relay(answer)
            except OSError:  # the app or the upstream went away mid-answer: nothing whole
                self.close_connection = True
                if recorded:
                    capture.passed(f"{self.path}: not recorded: the answer was broken off")
                return
        finally:
            connection.close()
        if recorded:
            secrets = credentials(self.headers.items())
            capture.take(Exchange(self.path, body, answer.status, received, secrets))

    def _upstream(
        self, connection: http.client.HTTPConnection, body: bytes
    ) -> http.client.HTTPResponse:
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _NOT_FORWARDED}
        headers["Accept-Encoding"] = "identity"
        path = self.server.upstream.prefix + self.path
        connection.request(self.command, path, body=body, headers=headers)
        return connection.getresponse()

    def _relay(self, answer: http.client.HTTPResponse) -> bytes:
        """The upstream's answer passed on as it arrives, framed as the upstream framed it
        (its Content-Length, else chunks); returns its body."""
        self.send_response_only(answer.status, answer.reason)
        for name, value in answer.getheaders():
            if name.lower() not in _NOT_FORWARDED or name.lower() == "content-length":
                self.send_header(name, value)
        chunked = answer.getheader("Content-Length") is None and _has_body(self, answer)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        received = bytearray()
        for piece in _pieces(answer):
            received += piece
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            self.wfile.flush()
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        return bytes(received)

    def _unreachable(self, exc: BaseException) -> None:
        """The upstream gave no answer: a 502 the SDKs treat as they treat a network error."""
        message = f"replaygate observe: upstream unreachable: {type(exc).__name__}"
        data = json.dumps({"error": {"message": message, "type": "upstream_unreachable"}})
        self.send_response(502)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())


def _has_body(handler: BaseHTTPRequestHandler, answer: http.client.HTTPResponse) -> bool:
    return handler.command != "HEAD" and answer.status not in (204, 304) and answer.status >= 200


def _pieces(answer: http.client.HTTPResponse) -> Iterator[bytes]:
    """The body in the pieces the upstream sends (read1 returns what has arrived)."""
    while True:
        piece = answer.read1(_CHUNK)
        if not piece:
            return
        yield piece


class ObserveServer(ThreadingHTTPServer):
    daemon_threads = False  # server_close waits for the exchanges in flight: files complete
    block_on_close = True

    def __init__(self, address: tuple[str, int], capture: Capture, upstream: Upstream) -> None:
        super().__init__(address, _Handler)
        self.capture, self.upstream = capture, upstream
        self._idle: dict[socket.socket, bool] = {}
        self._lock = threading.Lock()
        self.stopping = threading.Event()

    def busy(self, connection: socket.socket, working: bool) -> None:
        with self._lock:
            self._idle[connection] = not working

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self._idle[request] = True
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._lock:
                self._idle.pop(request, None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line, never a traceback: a connection the app dropped is no news at all."""
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            return
        print(terminal_safe(f"replaygate: observe: {type(error).__name__}: {error}"),
              file=sys.stderr)  # fmt: skip

    def stop(self) -> None:
        """No new connection; connections waiting for their next request are closed, the
        exchanges in flight finish (server_close then waits for them)."""
        self.stopping.set()
        self.shutdown()
        with self._lock:
            idle = [sock for sock, waiting in self._idle.items() if waiting]
        for sock in idle:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RD)
        self.server_close()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else str(host)
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}"
