"""write_atomic: a report is replaced whole, readable by others, or left as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from replaygate.errors import ReplayGateError
from replaygate.report.files import write_atomic


def test_writes_creating_folders_with_the_usual_permissions(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "junit.xml"
    old = os.umask(0o022)
    try:
        write_atomic(target, "<testsuites/>\n")
    finally:
        os.umask(old)
    assert target.read_text() == "<testsuites/>\n"
    assert target.stat().st_mode & 0o777 == 0o644, "later steps (another user) can read it"


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "results.json"
    target.write_text("old")

    def cancelled(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", cancelled)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_an_unwritable_target_is_one_error_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(ReplayGateError, match=r"cannot write .*taken: Is a directory"):
        write_atomic(tmp_path / "taken", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
