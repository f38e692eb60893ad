"""The capture tests' fixtures: a pack, a streaming fake upstream and the proxy between them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from capture_pack import empty_pack
from sdk_calls import ENV_SECRET
from streaming_upstream import StreamingUpstream

from fake_providers import KEY
from replaygate.capture.core import Capture, open_pack
from replaygate.capture.proxy import ObserveServer, Upstream
from replaygate.providers.names import ProviderName


@dataclass
class Observed:
    pack: Path
    upstream: StreamingUpstream
    server: ObserveServer
    capture: Capture

    @property
    def url(self) -> str:
        return self.server.url

    def settle(self) -> None:
        """Stop the proxy: it answers the app before it writes, and stopping waits for that."""
        self.server.stop()

    def files(self) -> list[Path]:
        """Every file observe wrote."""
        found = [*self.pack.glob("golden/**/*"), *self.pack.glob("recordings/**/*")]
        return sorted(path for path in found if path.is_file())

    def fixtures(self) -> list[Path]:
        return sorted((self.pack / "golden" / "observed").glob("*.json"))


@pytest.fixture
def observe(tmp_path: Path) -> Iterator[Callable[..., Observed]]:
    """Start a fake upstream for a provider and the proxy in front of it (in this process)."""
    started: list[Observed] = []

    def start(provider: str, key: str = KEY) -> Observed:
        pack = empty_pack(tmp_path)
        upstream = StreamingUpstream(provider, key).start()
        capture = Capture(
            open_pack(pack, tmp_path), ProviderName(provider), {"APP_TOKEN": ENV_SECRET}
        )
        server = ObserveServer(("127.0.0.1", 0), capture, Upstream.parse(upstream.origin))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append(Observed(pack, upstream, server, capture))
        return started[-1]

    yield start
    for each in started:
        each.server.stop()
        each.upstream.stop()
    assert [v for each in started for v in each.upstream.violations] == []
