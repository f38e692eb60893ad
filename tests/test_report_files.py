"""write_atomic: a report is replaced whole, readable by others, or left as it was; report_path:
a report goes where its path says, never out of the working directory through a symlink."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cancelling import GUARD_S, wait_until_gone
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


# Report files rendered and written by forked helpers (a large run): the same files as one
# process writes, the same problems, and nothing left behind however it ends.
CASES = Path(__file__).parent / "cases"
fork_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="forking is POSIX")


def reports_of(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str, *extra: str
) -> tuple[int, str, dict[str, bytes]]:
    """A run of the corpus's failing cases writing JSON, JUnit and a summary into a folder of
    its own: exit code, stderr, and each file (times blanked)."""
    from replaygate import cli

    out = tmp_path / f"jobs{jobs}"
    out.mkdir(exist_ok=True)
    argv = ["run", str(CASES / "classifications" / "packs"), "--jobs", jobs, "-q"]
    argv += ["--json", str(out / "r.json"), "--junit", str(out / "j.xml")]
    argv += ["--summary", str(out / "s.md"), *extra]
    code = cli.main(argv)
    err = capsys.readouterr().err
    found = {}
    for path in sorted(out.iterdir()):
        text = re.sub(rb'(time|duration_s)(="|": )[0-9.e-]+', rb"\1\2T", path.read_bytes())
        text = re.sub(rb" in [0-9.]+s\b", b" in Ts", text)  # the summary's heading
        found[path.name] = text
    return code, err, found


@pytest.fixture
def elsewhere(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every run large enough for report helpers; the helpers' answers as they come."""
    from replaygate.commands import options
    from replaygate.report import files

    monkeypatch.setattr(options, "REPORTS_ELSEWHERE_CASES", 1)
    answers: list[Any] = []
    answer = files.Helper.answer

    def spied(self: Any) -> Any:
        answers.append(answer(self))
        return answers[-1]

    monkeypatch.setattr(files.Helper, "answer", spied)
    return answers


@fork_only
def test_report_files_written_side_by_side_are_those_one_process_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], elsewhere: list[Any]
) -> None:
    one = reports_of(tmp_path, capsys, "1")
    assert elsewhere == []
    two = reports_of(tmp_path, capsys, "2")
    assert elsewhere == [True, True]  # JUnit and the summary
    assert one == two and one[0] == 1
    assert sorted(one[2]) == ["j.xml", "r.json", "s.md"]


@fork_only
@pytest.mark.parametrize(
    ("target", "answer", "reason"),
    [  # the helper fails to write its file; the helper writes it, the rename fails
        ("file/j.xml", False, "Not a directory|File exists"),
        ("folder", True, "Is a directory"),
    ],
)
def test_a_report_a_helper_cannot_write_is_the_same_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], elsewhere: list[Any],
    target: str, answer: bool, reason: str,
) -> None:  # fmt: skip
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("")
    blocked = ("--junit", str(tmp_path / target))  # the last --junit wins
    one = reports_of(tmp_path, capsys, "1", *blocked)
    two = reports_of(tmp_path, capsys, "2", *blocked)
    assert elsewhere[0] is answer
    assert one == two and one[0] == 2
    assert re.search(rf"JUnit report not written: cannot write .*{target}: ({reason})", two[1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder", "jobs1", "jobs2"]


@fork_only
@pytest.mark.parametrize("how", ["no answer", "no process"])
def test_a_helper_that_ends_without_an_answer_costs_only_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    elsewhere: list[Any], how: str,
) -> None:  # fmt: skip
    from replaygate.report import files

    one = reports_of(tmp_path, capsys, "1")
    called: list[str] = []
    if how == "no answer":

        def silent(self: Any) -> None:
            called.append(how)
            self.stop()

        monkeypatch.setattr(files.Helper, "answer", silent)
    else:

        def refused(self: Any, work: Any, undo: Any = None) -> None:
            called.append(how)
            raise OSError("Resource temporarily unavailable")

        monkeypatch.setattr(files.Helper, "__init__", refused)
    assert reports_of(tmp_path, capsys, "2") == one
    assert called == [how, how]  # JUnit's helper and the summary's
    assert all(not p.name.startswith(".") for p in (tmp_path / "jobs2").iterdir())


@fork_only
def test_a_run_cancelled_while_a_helper_writes_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    elsewhere: list[Any],
) -> None:  # fmt: skip
    """The parent is cancelled while writing the first report; the helper, told to stop
    wherever it is, leaves nothing: its temporary file is removed by the parent."""
    from replaygate import cli
    from replaygate.commands import options
    from replaygate.report import files

    out = tmp_path / "out"
    json_report = options._json

    def cancelled(result: Any) -> Iterator[str]:
        yield from json_report(result)
        # the helper is at work: wait until it has begun its file, then cancel
        deadline = time.monotonic() + GUARD_S
        while not any(p.name.startswith(".s.md.") for p in out.iterdir()):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        raise KeyboardInterrupt

    monkeypatch.setattr(options, "_json", cancelled)
    slow = options._markdown

    def stalled(result: Any) -> Iterator[str]:
        yield "partial"
        time.sleep(GUARD_S)  # killed long before
        yield from slow(result)

    monkeypatch.setattr(options, "_markdown", stalled)
    out.mkdir()
    argv = ["run", str(CASES / "classifications" / "packs"), "--jobs", "2", "-q"]
    argv += ["--json", str(out / "r.json"), "--summary", str(out / "s.md")]
    helpers: list[int] = []
    start = files.Helper.__init__

    def started(self: Any, work: Any, undo: Any = None) -> None:
        start(self, work, undo)
        helpers.append(self._pid)

    monkeypatch.setattr(files.Helper, "__init__", started)
    assert cli.main(argv) == 130
    assert "replaygate: cancelled" in capsys.readouterr().err
    assert list(out.iterdir()) == []
    assert len(helpers) == 1
    wait_until_gone(helpers[0], time.monotonic() + GUARD_S)


ORPHANED = """
import os, sys, time
from replaygate import cli
from replaygate.commands import options
options.REPORTS_ELSEWHERE_CASES = 1
markdown = options._markdown
def slow(result):
    yield "partial"
    time.sleep(1)  # the parent is killed meanwhile
    yield from markdown(result)
options._markdown = slow
json_report = options._json
def stalled(result):
    yield from json_report(result)
    time.sleep(120)  # killed long before
options._json = stalled
cli.main(sys.argv[1:])
"""


@fork_only
@pytest.mark.parametrize("how", ["parent killed", "group terminated"])
def test_a_helper_left_without_its_parent_removes_its_file(tmp_path: Path, how: str) -> None:
    """A plain CLI killed outright (no handler of its own) cannot stop its helper: the
    helper removes its own temporary file when nobody takes its answer, or on SIGTERM."""
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()
    argv = [sys.executable, "-c", ORPHANED, "run", str(CASES / "classifications" / "packs")]
    argv += ["--jobs", "2", "-q", "--json", str(out / "r.json"), "--summary", str(out / "s.md")]
    run = subprocess.Popen(argv, stdout=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + GUARD_S
    try:
        while not any(p.name.startswith(".s.md.") for p in out.iterdir()):
            assert time.monotonic() < deadline and run.poll() is None
            time.sleep(0.01)
        if how == "parent killed":
            run.kill()
        else:
            os.killpg(run.pid, signal.SIGTERM)
        run.wait()
        while any(p.name.startswith(".s.md.") for p in out.iterdir()):
            assert time.monotonic() < deadline, "the helper left its file"
            time.sleep(0.01)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
    assert not (out / "s.md").exists()


@pytest.mark.parametrize(
    ("target", "why"),
    [
        (".", "names a folder; give a file name"),
        ("/", "names a folder; give a file name"),
        ("out/..", "names a folder; give a file name"),
        ("..", "leaves the working directory"),
    ],
)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_report_path_that_names_a_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    elsewhere: list[Any], target: str, why: str, jobs: str,
) -> None:  # fmt: skip
    """The other reports are still written, with a helper or without."""
    from replaygate import cli

    monkeypatch.chdir(tmp_path)
    argv = ["run", str(CASES / "classifications" / "packs"), "-q", "--jobs", jobs]
    argv += ["--json", "r.json", "--junit", target, "--summary", "s.md"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert f"replaygate: JUnit report not written: report {target!r} {why}\n" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "s.md"]


@pytest.mark.parametrize(
    ("second", "apart"),
    [
        ("b.xml", True),
        ("./a.json", False),  # the same file, spelt two ways
        ("a.json/b.xml", False),  # a folder on the way to the other
        ("fifo", False),
        ("/dev/null", False),  # a device: written through, in turn
    ],
)
def test_report_files_are_written_apart_only_when_each_is_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second: str, apart: bool
) -> None:
    from replaygate.report.files import can_write_elsewhere

    monkeypatch.chdir(tmp_path)
    if hasattr(os, "mkfifo"):
        os.mkfifo("fifo")
    assert can_write_elsewhere([Path("a.json"), Path(second)]) is apart
    assert can_write_elsewhere([Path(second), Path("a.json")]) is apart


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
