"""A run's directories opened and listed once (loading/folders.py, files.read_in): every
fixture reads as it does through the full path check, and every refusal is still made."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from packbuilder import fixture, make_pack
from replaygate import cli
from replaygate.core.errors import PackError
from replaygate.loading import files, folders
from replaygate.loading.fixtures import CaseInput, load_input
from replaygate.loading.pack import load_packs
from replaygate.loading.packs import Pack
from test_pack_loading import NOW

pytestmark = pytest.mark.posix


def load_pack(root: Path) -> Pack:
    loaded = load_packs(["packs"], cwd=root, root=None, now=NOW)
    (pack,) = loaded.packs
    return pack


def read(pack: Pack, ref: str) -> CaseInput | str:
    return load_input(pack, ref, file="packs/p/contracts/c.yaml", line=7, case_id="ok")


@pytest.fixture
def pack(tmp_path: Path) -> Pack:
    root = tmp_path / "repo"
    good = json.dumps(fixture())
    fixtures = {"ok.json": good, "negative/neg.json": good, "sub/deep.json": good}
    make_pack(root, fixtures={**fixtures, "list.json": "[]", "bad.json": "{"})
    golden = root / "packs/p/golden"
    (golden / "inner.json").symlink_to(golden / "ok.json")
    (tmp_path / "outside.json").write_text(good)
    (golden / "out.json").symlink_to(tmp_path / "outside.json")
    (golden / "dangling.json").symlink_to(golden / "nowhere.json")
    (golden / "git.json").symlink_to(root / ".git" / "config")
    (root / ".git" / "x.json").write_text(good)
    (golden / "dir.json").mkdir()
    os.mkfifo(golden / "fifo.json")
    (golden / "latin1.json").write_bytes(b'{"a": "\xe9"}')
    return load_pack(root)


REFS = [
    "ok.json",
    "negative/neg.json",
    "sub/deep.json",
    "inner.json",
    "out.json",
    "dangling.json",
    "git.json",
    "../../../.git/x.json",
    ".GIT",
    ".git",
    "../p/golden/ok.json",
    "./ok.json",
    "sub/../ok.json",
    "missing.json",
    "dir.json",
    "fifo.json",
    "latin1.json",
    "list.json",
    "bad.json",
    "",
    ".",
    "..",
    "/etc/passwd",
    "ok.json\x00",
    "negative\\neg.json",
]


@pytest.mark.parametrize("ref", REFS)
def test_a_fixture_reads_the_same_through_the_run_s_folders(pack: Pack, ref: str) -> None:
    outside = read(pack, ref)
    with folders.reading():
        assert read(pack, ref) == outside
        assert read(pack, ref) == outside  # the folder opened, then reused


def test_the_refusals_are_still_made(pack: Pack) -> None:
    with folders.reading():
        found = {ref: read(pack, ref) for ref in REFS}
    assert isinstance(found["ok.json"], CaseInput)
    through = "leaves the golden directory packs/p/golden through a symlink"
    assert found["out.json"] == f"input_ref 'out.json' {through}"
    assert found[".GIT"] == "input_ref '.GIT' points into a .git directory"
    assert found["git.json"] == f"input_ref 'git.json' {through}"
    assert found["../../../.git/x.json"] == (
        "input_ref '../../../.git/x.json' leaves the golden directory packs/p/golden"
    )
    assert found["fifo.json"] == "packs/p/golden/fifo.json: not a regular file (a FIFO)"


def test_a_fixture_replaced_by_a_symlink_after_its_folder_opened_is_refused(
    pack: Pack, tmp_path: Path
) -> None:
    with folders.reading():
        assert isinstance(read(pack, "ok.json"), CaseInput)
        (pack.golden_dir / "ok.json").unlink()
        (pack.golden_dir / "ok.json").symlink_to(tmp_path / "outside.json")
        refused = read(pack, "ok.json")
    assert (
        refused
        == "input_ref 'ok.json' leaves the golden directory packs/p/golden through a symlink"
    )


@pytest.mark.parametrize("command", ["run", "validate"])
def test_run_and_validate_read_through_their_folders_and_refuse_a_fixture_that_leaves(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    root = tmp_path / "repo"
    make_pack(root)
    (tmp_path / "outside.json").write_text(json.dumps(fixture()))
    (root / "packs/p/golden/ok.json").unlink()
    (root / "packs/p/golden/ok.json").symlink_to(tmp_path / "outside.json")
    entered = []
    reading = folders.reading
    monkeypatch.setattr(folders, "reading", lambda: entered.append(command) or reading())
    monkeypatch.chdir(root)
    assert cli.main([command]) != 0
    assert entered == [command]  # the path under test is the one meant
    leaves = "input_ref 'ok.json' leaves the golden directory packs/p/golden through a symlink"
    assert leaves in capsys.readouterr().out


def test_a_golden_directory_leaving_the_repository_is_never_opened(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_pack(root)
    golden = root / "packs/p/golden"
    golden.rename(tmp_path / "elsewhere")
    golden.symlink_to(tmp_path / "elsewhere")
    pack = load_pack(root)
    assert files.open_folder(golden, root) is None
    with folders.reading():
        refused = read(pack, "ok.json")
    assert refused == "input_ref 'ok.json' leaves the repository"


def test_a_folder_inside_git_is_never_opened(tmp_path: Path) -> None:
    (tmp_path / ".Git" / "golden").mkdir(parents=True)
    assert files.open_folder(tmp_path / ".Git" / "golden", tmp_path) is None
    opened = files.open_folder(tmp_path, tmp_path)
    assert opened is not None
    os.close(opened.fd)


def test_a_run_keeps_few_folders_open_however_many_packs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A descriptor a folder holds is one a fixture read cannot have: the oldest is closed."""
    monkeypatch.setattr(folders, "MAX_OPEN", 2)
    make_pack(tmp_path, fixtures={"ok.json": json.dumps(fixture())})
    bases = [tmp_path / f"f{i}" for i in range(5)]
    before = len(os.listdir("/dev/fd"))
    with folders.reading():
        for base in bases:
            base.mkdir()
            assert folders.folder(base, tmp_path) is not None
        assert len(os.listdir("/dev/fd")) == before + 2
        kept = [opened.fd for opened in folders._RUNS[-1].folders.values() if opened]
        assert len(kept) == 2
        assert folders.folder(bases[0], tmp_path) is not None  # opened again when needed
    for fd in kept:
        with pytest.raises(OSError):
            os.fstat(fd)  # closed with the run


def test_outside_a_run_nothing_is_opened(pack: Pack) -> None:
    assert folders.folder(pack.golden_dir, pack.root) is None


@pytest.mark.parametrize(
    ("name", "plain"),
    [
        *[("a.json", True), ("a b.json", True), ("", False), (".", False), ("..", False)],
        *[(".git", False), (".gIT", False), ("a/b", False), ("a\x00", False)],
    ],
)
def test_plain_name(name: str, plain: bool) -> None:
    assert files.plain_name(name) is plain


def test_read_in_refuses_a_file_swapped_for_another_after_its_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "b.json").write_text("[]")
    opened = files.open_folder(tmp_path, tmp_path)
    assert opened is not None
    real_open = os.open

    def swap_then_open(path: str, flags: int, mode: int = 0o777, **kw: int | None) -> int:
        os.replace(tmp_path / "b.json", tmp_path / "a.json")
        return real_open(path, flags, mode, **kw)

    monkeypatch.setattr(os, "open", swap_then_open)
    with pytest.raises(PackError) as refused:
        files.read_in(opened, "a.json", shown="a.json", max_bytes=100)
    assert refused.value.message == "file changed while it was being read"
    monkeypatch.undo()
    os.close(opened.fd)


def test_read_in_leaves_a_symlink_swapped_in_after_its_check_to_the_full_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.json").write_text("{}")
    opened = files.open_folder(tmp_path, tmp_path)
    assert opened is not None
    real_open = os.open

    def swap_then_open(path: str, flags: int, mode: int = 0o777, **kw: int | None) -> int:
        (tmp_path / "a.json").unlink()
        (tmp_path / "a.json").symlink_to("/etc/hostname")
        return real_open(path, flags, mode, **kw)

    monkeypatch.setattr(os, "open", swap_then_open)
    assert files.read_in(opened, "a.json", shown="a.json", max_bytes=100) is None
    monkeypatch.undo()
    os.close(opened.fd)


def test_read_in_checks_size_and_encoding(tmp_path: Path) -> None:
    (tmp_path / "big.json").write_bytes(b"x" * 101)
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf{}")
    opened = files.open_folder(tmp_path, tmp_path)
    assert opened is not None
    with pytest.raises(PackError) as refused:
        files.read_in(opened, "big.json", shown="big.json", max_bytes=100)
    assert refused.value.message == "file is too large (101 bytes; the limit is 100 bytes)"
    assert files.read_in(opened, "bom.json", shown="bom.json", max_bytes=100) == "{}"
    os.close(opened.fd)


class TestLexists:
    @pytest.fixture
    def asked(self, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        """The paths os.path.lexists was asked about: the listing could not answer those."""
        calls: list[str] = []
        real = os.path.lexists

        def recorded(path: str) -> bool:
            calls.append(os.path.basename(path))
            return real(path)

        monkeypatch.setattr(os.path, "lexists", recorded)
        return calls

    def test_a_missing_directory_or_name_is_answered_by_one_listing(
        self, tmp_path: Path, asked: list[str]
    ) -> None:
        (tmp_path / "a.recording.json").write_text("{}")
        with folders.reading():
            assert not folders.lexists(str(tmp_path / "b.recording.json"))
            assert not folders.lexists(str(tmp_path / "none" / "c.recording.json"))
            assert folders.lexists(str(tmp_path / "a.recording.json"))
        assert asked == ["a.recording.json"]

    def test_a_recording_made_during_the_run_is_not_seen(self, tmp_path: Path) -> None:
        with folders.reading():
            assert not folders.lexists(str(tmp_path / "a.recording.json"))
            (tmp_path / "a.recording.json").write_text("{}")
            assert not folders.lexists(str(tmp_path / "a.recording.json"))
        with folders.reading():
            assert folders.lexists(str(tmp_path / "a.recording.json"))

    @pytest.mark.parametrize(
        ("entry", "name"),
        [
            ("A.Recording.json", "a.recording.json"),  # the same name on a folding file system
            ("\u212a.recording.json", "k.recording.json"),  # KELVIN SIGN: K there
            ("x.json", "caf\u00e9.recording.json"),  # a name that is not ASCII
            ("x.json", "a~1.json"),  # a short name (vfat)
            ("x.json", "x.json."),  # vfat drops a trailing dot
            ("x.json", ".."),
        ],
    )
    def test_a_name_the_listing_cannot_rule_out_asks_the_file_system(
        self, tmp_path: Path, asked: list[str], entry: str, name: str
    ) -> None:
        (tmp_path / entry).write_text("{}")
        path = os.path.join(tmp_path, name)
        expected = os.path.lexists(path)
        asked.clear()
        with folders.reading():
            assert folders.lexists(path) is expected
        assert asked == [os.path.basename(path)]

    def test_outside_a_run_the_file_system_is_asked(self, tmp_path: Path, asked: list[str]) -> None:
        assert not folders.lexists(str(tmp_path / "b.recording.json"))
        assert asked == ["b.recording.json"]
