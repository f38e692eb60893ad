"""write_atomic: a report is replaced whole, readable by others, or left as it was; report_path:
a report goes where its path says, never out of the working directory through a symlink."""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from replaygate.core.errors import ReplayGateError
from replaygate.report.files import report_path, write_atomic


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


def test_a_report_in_pieces_is_written_whole(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    write_atomic(target, iter(["{\n", '"a": 1', "\n}\n"]))
    assert target.read_text() == '{\n"a": 1\n}\n'


def test_a_piece_that_fails_to_render_leaves_the_old_file_and_no_temporary(
    tmp_path: Path,
) -> None:
    """Pieces are written as they are made: a renderer that breaks halfway (a bug, a
    cancellation) must not leave half a report, nor the temporary file."""
    target = tmp_path / "junit.xml"
    target.write_text("old")

    def pieces() -> Iterator[str]:
        yield "<testsuites>"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, pieces())
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit.xml"]


def test_an_unwritable_target_is_one_error_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(ReplayGateError, match=r"cannot write .*taken: Is a directory"):
        write_atomic(tmp_path / "taken", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "workspace" / ".git").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return tmp_path / "workspace"


@pytest.mark.parametrize("path", ["results.json", "reports/deep/results.json", "./r.json"])
def test_a_report_path_inside_the_working_directory_is_kept(workspace: Path, path: str) -> None:
    assert report_path(path, workspace) == Path(path)


def test_an_absolute_report_path_outside_is_the_callers_choice(workspace: Path) -> None:
    target = workspace.parent / "outside" / "results.json"
    assert report_path(str(target), workspace) == target


@pytest.mark.parametrize(
    ("link", "path", "problem"),
    [
        ("reports", "reports/results.json", "leaves the working directory through a symlink"),
        ("reports", "reports/new/results.json", "leaves the working directory through a symlink"),
        # ".." is applied after the link is followed: reports/.. is outside's parent
        ("deep", "deep/../results.json", "leaves the working directory through a symlink"),
        ("gone", "gone/results.json", "leaves the working directory through a symlink"),
        ("hooks", "hooks/results.json", "points into a .git directory"),
        (None, "../results.json", "leaves the working directory"),
        (None, ".git/results.json", "points into a .git directory"),
    ],
)
def test_a_report_path_out_of_the_working_directory_is_refused(
    workspace: Path, link: str | None, path: str, problem: str
) -> None:
    targets = {
        "reports": workspace.parent / "outside",
        "gone": workspace.parent / "missing",
        "deep": workspace.parent / "outside" / "sub",
        "hooks": workspace / ".git",
    }
    if link is not None:
        targets[link].mkdir(exist_ok=True) if link == "deep" else None
        (workspace / link).symlink_to(targets[link])
    with pytest.raises(ReplayGateError, match=re.escape(f"report {path!r} {problem}")):
        report_path(path, workspace)
    if not path.startswith(".."):  # absolute, ../ is outside: the caller's choice
        with pytest.raises(ReplayGateError, match=r"^report '/"):
            report_path(str(workspace / path), workspace)  # the same, written absolute
    assert [p for p in (workspace.parent / "outside").rglob("*") if not p.is_dir()] == []


@pytest.mark.posix
@pytest.mark.parametrize("pieces", [False, True], ids=["whole", "in pieces"])
def test_a_fifo_is_written_to_not_replaced(tmp_path: Path, pieces: bool) -> None:
    """A device or pipe (/dev/stdout, /dev/null) stays what it is: as root, a rename would
    replace even /dev/null with a regular file. The JSON and JUnit reports come in pieces:
    a pipe is written them all, in order, as a file is."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(
        target=lambda: received.append(fifo.read_text(encoding="utf-8")), daemon=True
    )
    reader.start()
    write_atomic(fifo, iter(["<report>", "</report>\n"]) if pieces else "<report></report>\n")
    reader.join(timeout=10)
    assert received == ["<report></report>\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_report_under_a_file_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(ReplayGateError, match=r"^cannot write .*taken.r\.json: [^\n]+$"):
        write_atomic(tmp_path / "taken" / "r.json", "{}")


CASES = Path(__file__).parent / "cases"


@pytest.mark.parametrize(
    ("target", "why"),
    [
        (".", "names a folder; give a file name"),
        ("/", "names a folder; give a file name"),
        ("out/..", "names a folder; give a file name"),
        ("..", "leaves the working directory"),
    ],
)
def test_a_report_path_that_names_a_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    target: str, why: str,
) -> None:  # fmt: skip
    """The other reports are still written."""
    from replaygate import cli

    monkeypatch.chdir(tmp_path)
    argv = ["run", str(CASES / "classifications" / "packs"), "-q"]
    argv += ["--json", "r.json", "--junit", target, "--summary", "s.md"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert f"replaygate: JUnit report not written: report {target!r} {why}\n" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "s.md"]


def test_a_long_report_name_gets_a_temporary_name_that_fits(tmp_path: Path) -> None:
    target = tmp_path / ("r" * 250 + ".json")
    write_atomic(target, "{}")
    assert target.read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a read-only mount (root)")
def test_a_read_only_folder_is_one_line(tmp_path: Path) -> None:
    """A temporary file that cannot be made cannot be removed either: the write's error is
    the one said, not a traceback from cleaning up."""
    import subprocess

    folder = tmp_path / "ro"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro", "tmpfs", str(folder)])
    if mounted.returncode != 0:
        pytest.skip("no mount here")
    try:
        with pytest.raises(ReplayGateError, match="Read-only file system"):
            write_atomic(folder / "r.json", "{}")
    finally:
        subprocess.run(["umount", str(folder)], check=True)
