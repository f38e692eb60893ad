"""Fake provider servers, stopped after each test; their protocol violations fail the test."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from fake_providers import FakeProvider


@pytest.fixture
def providers() -> Iterator[Callable[..., FakeProvider]]:
    started: list[FakeProvider] = []

    def start(name: str, **options: object) -> FakeProvider:
        started.append(FakeProvider(name, **options).start())  # type: ignore[arg-type]
        return started[-1]

    yield start
    for server in started:
        server.stop()
    assert [v for s in started for v in s.violations] == []
