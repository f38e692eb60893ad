"""`replaygate observe`: a recording proxy between a running app and its provider."""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from replaygate.core.errors import ReplayGateError, exit_on_signal
from replaygate.options.inputs import refuse_untrusted_event

if TYPE_CHECKING:
    from replaygate.capture.core import Tally

STOPPING = (signal.SIGINT, signal.SIGTERM)  # each ends it cleanly, with its own exit code
DEFAULT_LISTEN = "127.0.0.1:8787"


def add_parser(sub: Any) -> None:
    from replaygate.providers.names import ProviderName

    parser = sub.add_parser(
        "observe",
        help="a recording proxy: point the app at it, every answer becomes a fixture and "
        "its recording",
    )
    parser.add_argument("pack", metavar="PACK", help="the pack to write into (its pack.yaml)")
    parser.add_argument(
        "--provider",
        required=True,
        choices=[str(name) for name in ProviderName],
        metavar="NAME",
        help=", ".join(str(name) for name in ProviderName),
    )
    parser.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help=f"where the proxy listens (default {DEFAULT_LISTEN}; port 0 picks a free one)",
    )
    parser.add_argument(
        "--upstream",
        metavar="URL",
        help="where requests go on (default: the provider's public API; required for "
        "openai-compatible); the app's request path is appended to it",
    )


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isascii() or not port.isdigit() or int(port) > 65535:
        raise ReplayGateError(f"--listen {text!r}: expected HOST:PORT, like {DEFAULT_LISTEN}")
    return host, int(port)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _upstream_url(provider: str, given: str | None) -> str:
    from replaygate.providers.names import ProviderName
    from replaygate.providers.wire import WIRES

    if given:
        return given
    base = WIRES[ProviderName(provider)].base_url
    if base is None:
        raise ReplayGateError(f"--upstream is needed for {provider}: it has no public API")
    parts = urlsplit(base)
    return f"{parts.scheme}://{parts.netloc}"  # the app's path (/v1/...) is appended to it


def summary(tally: Tally) -> str:
    """The end table: each outcome's count, then the captures per tool and the notes."""
    from replaygate.capture.core import Outcome
    from replaygate.report.escape import terminal_safe

    lines = [f"{kind!s:<16}{tally.counts[kind]:>6}" for kind in Outcome]
    lines += [terminal_safe(f"  {tool:<14}{count:>6}") for tool, count in tally.tools.items()]
    lines += [terminal_safe(f"note: {note}") for note in tally.notes]
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace) -> int:
    from replaygate.capture.core import Capture, open_pack
    from replaygate.capture.proxy import ObserveServer, Upstream
    from replaygate.providers.names import ProviderName

    refuse_untrusted_event(os.environ)
    pack = open_pack(Path(args.pack), Path.cwd())
    try:
        upstream = Upstream.parse(_upstream_url(args.provider, args.upstream))
    except ValueError as exc:
        raise ReplayGateError(str(exc)) from None
    host, port = _address(args.listen)
    if not _loopback(host):
        print(f"replaygate: warning: listening on {host}, not loopback: anyone who can reach "
              "it can send requests through it", file=sys.stderr)  # fmt: skip
    capture = Capture(pack, ProviderName(args.provider), os.environ)
    try:
        server = ObserveServer((host, port), capture, upstream)
    except OSError as exc:
        raise ReplayGateError(f"--listen {args.listen}: {exc.strerror or exc}") from None
    return _serve(server)


def _serve(server: Any) -> int:
    """Serve until Ctrl-C or SIGTERM; then finish the exchanges in flight and print the table."""
    caught: list[int] = []
    stop = threading.Event()

    def handle(signum: int, frame: Any) -> None:
        caught.append(signum)
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in STOPPING}
    worker = threading.Thread(target=server.serve_forever, name="observe", daemon=True)
    try:
        worker.start()
        print(f"listening on {server.url}", flush=True)
        while not stop.wait(0.5):  # a timeout: the signal handler runs between waits
            pass
        server.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    sys.stdout.write(summary(server.capture.tally))
    sys.stdout.flush()
    print(f"replaygate: stopped by {signal.Signals(caught[0]).name}", file=sys.stderr)
    return exit_on_signal(caught[0])
