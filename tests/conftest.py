"""Shared fixtures: the fake GitHub API server and a client wired to it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from fake_github import FakeGitHub
from fake_providers import FakeProvider
from replaygate.github.api import GitHubApi

_PLATFORM_MARKS = {"posix": sys.platform != "win32", "linux": sys.platform == "linux"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `posix` or `linux` (registered in pyproject.toml) skip where they cannot run."""
    for item in items:
        for mark, here in _PLATFORM_MARKS.items():
            if not here and item.get_closest_marker(mark):
                item.add_marker(pytest.mark.skip(reason=f"needs {mark}"))


@pytest.fixture
def github_servers() -> Iterator[Callable[..., FakeGitHub]]:
    """Start fake GitHub servers (keyword arguments of FakeGitHub); stopped after the test.

    The test fails if any server saw a request that breaks the REST API's contract;
    a test that provokes one on purpose asserts it and clears ``server.violations``.
    """
    servers: list[FakeGitHub] = []

    def start(**options: Any) -> FakeGitHub:
        servers.append(FakeGitHub(**options).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()
    violations = [violation for server in servers for violation in server.violations]
    assert not violations, f"requests that break the GitHub REST API contract: {violations}"


@pytest.fixture
def github_server(github_servers: Callable[..., FakeGitHub]) -> FakeGitHub:
    """One fake GitHub API: ``.url`` is GITHUB_API_URL, with ``.token`` and ``.repository``."""
    return github_servers()


@pytest.fixture
def github_sleeps() -> list[float]:
    """The waits the ``github_api`` client asked for, in order (nothing really sleeps)."""
    return []


@pytest.fixture
def github_api(github_server: FakeGitHub, github_sleeps: list[float]) -> Iterator[GitHubApi]:
    """A client of ``github_server``: no jitter, no write pacing, sleeps recorded."""
    with requests.Session() as session:
        yield GitHubApi(
            github_server.url,
            github_server.token,
            github_server.repository,
            session=session,
            sleep=github_sleeps.append,
            jitter=lambda delay: delay,
            write_interval=0,
        )


@pytest.fixture
def providers() -> Iterator[Callable[..., FakeProvider]]:
    """Start fake provider servers (FakeProvider(name)); stopped after the test, which fails
    if any request broke the provider's wire format."""
    started: list[FakeProvider] = []

    def start(name: str) -> FakeProvider:
        started.append(FakeProvider(name).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()
    assert [v for s in started for v in s.violations] == []
