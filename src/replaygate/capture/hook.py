"""The Python hook: an HTTP client for the SDKs whose transport records as `observe` does.

``http_client(pack=..., provider=...)`` returns a client of the library the installed SDK is
built on (httpx2 for openai 3.x and anthropic 2.x, httpx for older releases), with the
library's own transport inside: the request goes out as the app made it, the answer comes
back as it arrives (a stream chunk by chunk), and the exchange is recorded when the app has
read it whole. The library is imported here only, when a client is made.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

from replaygate.capture.core import Capture, Exchange, credentials, open_pack
from replaygate.capture.streams import ended
from replaygate.core.errors import ReplayGateError
from replaygate.providers.names import ProviderName

_SDK = {ProviderName.ANTHROPIC: "anthropic"}  # the others: openai


def library_for(provider: ProviderName) -> str:
    """httpx2 or httpx: what the provider's installed SDK takes as its http_client."""
    try:
        needs = importlib.metadata.requires(_SDK.get(provider, "openai")) or []
    except importlib.metadata.PackageNotFoundError:
        needs = []
    names = {need.split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip()
             for need in needs}  # fmt: skip
    if "httpx2" in names or ("httpx" not in names and importlib.util.find_spec("httpx2")):
        return "httpx2"
    return "httpx"


def _decoded(data: bytes, encoding: str) -> bytes:
    """The body as the app reads it: gzip and deflate undone (the libraries' defaults)."""
    kind = encoding.strip().lower()
    if kind in ("", "identity"):
        return data
    if kind in ("gzip", "x-gzip"):
        return zlib.decompress(data, zlib.MAX_WBITS | 32)
    if kind == "deflate":
        try:
            return zlib.decompress(data)
        except zlib.error:
            return zlib.decompress(data, -zlib.MAX_WBITS)
    raise ValueError(f"a body in {kind} encoding is not recorded")


class _Session:
    """One exchange on its way: the request, and what arrives of the answer."""

    def __init__(self, capture: Capture, request: Any) -> None:
        self.capture, self.path = capture, request.url.path
        self.body = request.read()
        self.secrets = credentials(request.headers.items())
        self.received = bytearray()
        self.closed = False

    def failed(self) -> None:
        self.capture.take(Exchange(self.path, self.body, 0, b""))

    def finished(self, response: Any, whole: bool) -> None:
        """The app has closed the answer: recorded when it has been read whole (a stream up
        to its last event), once."""
        if self.closed:
            return
        self.closed = True
        if not (whole or ended(self.capture.provider, bytes(self.received))):
            self.capture.passed(f"{self.path}: not recorded: the app stopped reading it")
            return
        try:
            body = _decoded(bytes(self.received), response.headers.get("content-encoding", ""))
        except (ValueError, zlib.error) as exc:
            self.capture.passed(f"{self.path}: not recorded: {exc}")
            return
        exchange = Exchange(self.path, self.body, response.status_code, body, self.secrets)
        self.capture.take(exchange)


def _types(library: Any) -> tuple[type, type, type, type]:
    """The transport and byte stream classes, sync and async, on ``library``'s bases.

    The async ones write their files on a worker thread (anyio's, which both libraries are
    built on, under asyncio or trio): the app's event loop goes on meanwhile. A cancelled
    task still waits for a write that has begun: no file is left half written.
    """
    import anyio.to_thread  # a dependency of httpx and httpx2 alike

    class Recorded(library.SyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any, done: Callable[[bool], None], session: _Session) -> None:
            self.inner, self.done, self.session, self.whole = inner, done, session, False

        def __iter__(self) -> Iterator[bytes]:
            for piece in self.inner:
                self.session.received += piece
                yield piece
            self.whole = True

        def close(self) -> None:
            self.inner.close()
            self.done(self.whole)

    class AsyncRecorded(library.AsyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any, done: Callable[[bool], None], session: _Session) -> None:
            self.inner, self.done, self.session, self.whole = inner, done, session, False

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for piece in self.inner:
                self.session.received += piece
                yield piece
            self.whole = True

        async def aclose(self) -> None:
            await self.inner.aclose()
            await anyio.to_thread.run_sync(self.done, self.whole)

    class Transport(library.BaseTransport):  # type: ignore[misc]
        def __init__(self, inner: Any, capture: Capture) -> None:
            self.inner, self.capture = inner, capture

        def handle_request(self, request: Any) -> Any:
            if request.method != "POST" or not self.capture.records(request.url.path):
                return self.inner.handle_request(request)
            session = _Session(self.capture, request)
            try:
                response = self.inner.handle_request(request)
            except library.TransportError:
                session.failed()
                raise
            return _wrapped(library, response, Recorded, session)

        def close(self) -> None:
            self.inner.close()

    class AsyncTransport(library.AsyncBaseTransport):  # type: ignore[misc]
        def __init__(self, inner: Any, capture: Capture) -> None:
            self.inner, self.capture = inner, capture

        async def handle_async_request(self, request: Any) -> Any:
            if request.method != "POST" or not self.capture.records(request.url.path):
                return await self.inner.handle_async_request(request)
            session = _Session(self.capture, request)
            try:
                response = await self.inner.handle_async_request(request)
            except library.TransportError:
                await anyio.to_thread.run_sync(session.failed)
                raise
            return _wrapped(library, response, AsyncRecorded, session)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return Transport, AsyncTransport, Recorded, AsyncRecorded


def _wrapped(library: Any, response: Any, stream: type, session: _Session) -> Any:
    """The same response, its body passing through a recording stream."""
    recorded: list[Any] = []
    wrapper = stream(response.stream, lambda whole: session.finished(recorded[0], whole), session)
    recorded.append(
        library.Response(
            response.status_code,
            headers=response.headers,
            stream=wrapper,
            extensions=response.extensions,
        )
    )
    return recorded[0]


def _capture(pack: str | os.PathLike[str], provider: str) -> Capture:
    try:
        name = ProviderName(provider)
    except ValueError:
        valid = ", ".join(str(name) for name in ProviderName)
        raise ReplayGateError(f"provider {provider!r}: must be one of {valid}") from None
    return Capture(open_pack(Path(pack), Path.cwd()), name, os.environ)


def http_client(*, pack: str | os.PathLike[str], provider: str, **options: Any) -> Any:
    """A ``Client`` (httpx2's or httpx's, as the installed SDK needs) that records every
    exchange with ``provider``'s API into ``pack``; ``options`` go to the Client."""
    capture = _capture(pack, provider)
    library = importlib.import_module(library_for(capture.provider))
    transport, _, _, _ = _types(library)
    return library.Client(transport=transport(library.HTTPTransport(), capture), **options)


def async_http_client(*, pack: str | os.PathLike[str], provider: str, **options: Any) -> Any:
    """The same as an ``AsyncClient``, for ``AsyncOpenAI`` and ``AsyncAnthropic``."""
    capture = _capture(pack, provider)
    library = importlib.import_module(library_for(capture.provider))
    _, transport, _, _ = _types(library)
    inner = library.AsyncHTTPTransport()
    return library.AsyncClient(transport=transport(inner, capture), **options)
