"""The golden directories: a fixture's path as the run and the unused-fixture check name it."""

from __future__ import annotations

import os

import pytest

from replaygate.loading.golden import joined


@pytest.mark.posix  # POSIX paths
@pytest.mark.parametrize("folder", ["/r/p/golden", "/r/p/golden/negative", "/", "//r/p"])
@pytest.mark.parametrize(
    "name",
    ["c.json", ".git", "..", ".", "", ".hidden.json", "a/../b.json", "a\\b.json", "C:b.json",
     "../golden/c.json", "x//c.json", "/etc/passwd", "c.json/", "a b.json"],
)  # fmt: skip
def test_a_name_is_joined_as_normalising_would_join_it(folder: str, name: str) -> None:
    assert joined(folder, name) == os.path.normpath(os.path.join(folder, name))
