"""Tests for replaygate.loading.files: containment, safe reads and pack discovery."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from replaygate.core.errors import PackError
from replaygate.loading.files import (
    MAX_YAML_BYTES,
    find_repository_root,
    is_repository_root,
    iter_pack_files,
    read_text,
    resolve_inside,
)

WITHIN = "the golden directory packs/p/golden"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "packs" / "p" / "golden" / "negative").mkdir(parents=True)
    (root / "packs" / "p" / "golden" / "case.json").write_text("{}")
    return root


def resolve(repo: Path, relative: str, base: Path | None = None) -> Path:
    golden = base if base is not None else repo / "packs" / "p" / "golden"
    return resolve_inside(
        golden, relative, root=repo, what="input_ref", within=WITHIN, file="c.yaml", line=7
    )


def refusal(repo: Path, relative: str, base: Path | None = None) -> str:
    with pytest.raises(PackError) as caught:
        resolve(repo, relative, base)
    assert caught.value.file == "c.yaml"
    assert caught.value.line == 7
    return caught.value.message


def test_resolve_inside_returns_the_resolved_path(repo: Path) -> None:
    golden = repo / "packs" / "p" / "golden"
    assert resolve(repo, "case.json") == golden.resolve() / "case.json"
    assert resolve(repo, "negative/../case.json") == golden.resolve() / "case.json"
    assert resolve(repo, "missing/x.json") == golden.resolve() / "missing" / "x.json"


def test_resolve_inside_refuses_dot_dot(repo: Path) -> None:
    message = refusal(repo, "../../x.json")
    assert message == f"input_ref '../../x.json' leaves {WITHIN}"


def test_resolve_inside_names_the_base_by_default(repo: Path) -> None:
    golden = repo / "packs" / "p" / "golden"
    with pytest.raises(PackError) as caught:
        resolve_inside(golden, "../x.json", root=repo, what="input_ref", file="c.yaml", line=3)
    assert (
        str(caught.value) == "c.yaml:3: input_ref '../x.json' leaves the directory packs/p/golden"
    )
    with pytest.raises(PackError) as caught:
        resolve_inside(repo, "..", root=repo, what="paths.golden_dir", file="pack.yaml", line=None)
    assert str(caught.value) == "pack.yaml: paths.golden_dir '..' leaves the repository"


def test_resolve_inside_escapes_an_unprintable_base(repo: Path) -> None:
    odd = repo / "packs" / "a\nb"
    odd.mkdir()
    with pytest.raises(PackError) as caught:
        resolve_inside(odd, "../../..", root=repo, what="input_ref", file="c.yaml", line=1)
    assert caught.value.message == "input_ref '../../..' leaves the directory 'packs/a\\nb'"


def test_resolve_inside_refuses_absolute_paths(repo: Path) -> None:
    message = refusal(repo, "/etc/passwd")
    assert message == f"input_ref '/etc/passwd' is an absolute path; give it relative to {WITHIN}"


def test_resolve_inside_refuses_empty_and_nul(repo: Path) -> None:
    assert refusal(repo, "") == "input_ref '' is not a usable path"
    assert refusal(repo, "a\x00b") == "input_ref 'a\\x00b' is not a usable path"


@pytest.mark.posix
def test_resolve_inside_refuses_a_symlink_leaving_the_base(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    (repo / "packs" / "p" / "golden" / "link.json").symlink_to(outside)
    message = refusal(repo, "link.json")
    assert message == f"input_ref 'link.json' leaves {WITHIN} through a symlink"


@pytest.mark.posix
def test_resolve_inside_refuses_a_symlinked_folder_leaving_the_repository(
    repo: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.json").write_text("{}")
    (repo / "packs" / "q").symlink_to(elsewhere)
    message = refusal(repo, "x.json", base=repo / "packs" / "q")
    assert message == "input_ref 'x.json' leaves the repository"


@pytest.mark.linux
def test_resolve_inside_refuses_a_symlink_to_proc(repo: Path) -> None:
    (repo / "packs" / "p" / "golden" / "env.json").symlink_to("/proc/self/environ")
    assert refusal(repo, "env.json") == f"input_ref 'env.json' leaves {WITHIN} through a symlink"


@pytest.mark.parametrize("relative", [".git/config", "packs/../.git/config", ".GIT/config"])
def test_resolve_inside_refuses_git_from_the_root(repo: Path, relative: str) -> None:
    message = refusal(repo, relative, base=repo)
    assert message == f"input_ref {relative!r} points into a .git directory"


def test_resolve_inside_refuses_a_nested_git_directory(repo: Path) -> None:
    nested = repo / "packs" / "p" / "golden" / "sub" / ".git"
    nested.mkdir(parents=True)
    (nested / "config").write_text("x")
    message = refusal(repo, "sub/.git/config")
    assert message == "input_ref 'sub/.git/config' points into a .git directory"


@pytest.mark.posix
def test_resolve_inside_refuses_a_symlink_into_git(repo: Path) -> None:
    (repo / "config.json").symlink_to(repo / ".git" / "config")
    message = refusal(repo, "config.json", base=repo)
    assert message == "input_ref 'config.json' points into a .git directory"


def test_resolve_inside_escapes_the_reference_in_messages(repo: Path) -> None:
    message = refusal(repo, "../\n::error::x")
    assert "\n" not in message
    assert message.startswith("input_ref '../\\n::error::x' leaves")


def read(path: Path, max_bytes: int = MAX_YAML_BYTES) -> str:
    return read_text(path, shown="shown.yaml", max_bytes=max_bytes)


def read_refusal(path: Path, max_bytes: int = MAX_YAML_BYTES) -> PackError:
    with pytest.raises(PackError) as caught:
        read(path, max_bytes)
    assert caught.value.file == "shown.yaml"
    return caught.value


def test_read_text_reads_utf8(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes("tool: caf\u00e9\n".encode())
    assert read(path) == "tool: caf\u00e9\n"


def test_read_text_strips_a_bom(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"\xef\xbb\xbftool: x\n")
    assert read(path) == "tool: x\n"


def test_read_text_reports_the_line_and_column_of_bad_utf8(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"a: 1\n" * 6 + "\u00e9b".encode() + b"\xff: 2\n")
    error = read_refusal(path)
    assert str(error) == "shown.yaml:7: not valid UTF-8 (byte 0xff at column 3)"


def test_read_text_refuses_utf16(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes("a: 1\n".encode("utf-16"))
    assert str(read_refusal(path)) == "shown.yaml:1: not valid UTF-8 (byte 0xff at column 1)"


def test_read_text_refuses_a_file_over_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"x" * 101)
    expected = "file is too large (101 bytes; the limit is 100 bytes)"
    assert read_refusal(path, 100).message == expected
    assert read(path, 101) == "x" * 101


def _pretend_size(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """stat and fstat report ``size``: as if the file grew after its size was taken."""
    real_stat, real_fstat = os.stat, os.fstat

    def shrunk(status: os.stat_result) -> os.stat_result:
        fields = list(status)
        fields[6] = size  # st_size
        return os.stat_result(fields)

    monkeypatch.setattr(os, "stat", lambda *a, **k: shrunk(real_stat(*a, **k)))
    monkeypatch.setattr(os, "fstat", lambda fd: shrunk(real_fstat(fd)))


def test_read_text_reads_on_when_the_file_grew_within_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"x" * 50)
    _pretend_size(monkeypatch, 10)
    assert read(path, 100) == "x" * 50


def test_read_text_refuses_a_file_that_grew_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"x" * 150)
    _pretend_size(monkeypatch, 10)
    assert read_refusal(path, 100).message == "file is too large (the limit is 100 bytes)"


def test_read_text_refuses_a_file_over_the_yaml_limit(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"#" * (3 * 1024 * 1024))
    assert read_refusal(path).message == "file is too large (3.0 MiB; the limit is 2.0 MiB)"


@pytest.mark.posix
def test_read_text_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert read_refusal(fifo).message == "not a regular file (a FIFO)"


@pytest.mark.posix
def test_read_text_refuses_a_symlink_to_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link.json").symlink_to(tmp_path / "fifo")
    assert read_refusal(tmp_path / "link.json").message == "not a regular file (a FIFO)"


def test_read_text_refuses_a_socket(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        assert read_refusal(path).message == "not a regular file (a socket)"


def test_read_text_refuses_a_directory(tmp_path: Path) -> None:
    assert read_refusal(tmp_path).message == "not a regular file (a directory)"


@pytest.mark.linux
@pytest.mark.parametrize(
    ("target", "where"),
    [("/dev/null", "/dev"), ("/proc/self/environ", "/proc"), ("/sys/kernel", "/sys")],
)
def test_read_text_refuses_system_files_through_a_symlink(
    tmp_path: Path, target: str, where: str
) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert read_refusal(link).message == f"refusing to read a file under {where}"


@pytest.mark.linux
def test_read_text_refuses_proc_directly() -> None:
    error = read_refusal(Path("/proc/self/environ"))
    assert error.message == "refusing to read a file under /proc"


def test_read_text_reports_a_missing_file(tmp_path: Path) -> None:
    assert read_refusal(tmp_path / "nope.json").message == "file not found"


@pytest.mark.posix
def test_read_text_reports_a_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    message = read_refusal(tmp_path / "a").message
    assert message == "cannot read the file (Too many levels of symbolic links)"


def test_find_repository_root(tmp_path: Path) -> None:
    (tmp_path / "r" / ".git").mkdir(parents=True)
    (tmp_path / "r" / "a" / "b").mkdir(parents=True)
    assert is_repository_root(tmp_path / "r")
    assert not is_repository_root(tmp_path / "r" / "a")
    assert find_repository_root(tmp_path / "r" / "a" / "b") == (tmp_path / "r").resolve()
    assert find_repository_root(tmp_path / "r") == (tmp_path / "r").resolve()


def test_find_repository_root_accepts_a_git_file(tmp_path: Path) -> None:
    (tmp_path / "w" / "sub").mkdir(parents=True)
    (tmp_path / "w" / ".git").write_text("gitdir: /elsewhere\n")
    assert find_repository_root(tmp_path / "w" / "sub") == (tmp_path / "w").resolve()


def test_find_repository_root_none_outside_a_repository(tmp_path: Path) -> None:
    assert find_repository_root(tmp_path) is None


def make_pack(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pack.yaml").write_text("pack_id: x\n")


def test_iter_pack_files_is_sorted_and_stops_at_a_pack(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    for name in ("b/deep/er", "a", "a/inner", "c", "B"):
        make_pack(packs / name)
    found = [p.relative_to(packs).as_posix() for p in iter_pack_files(packs)]
    assert found == ["B/pack.yaml", "a/pack.yaml", "b/deep/er/pack.yaml", "c/pack.yaml"]


def test_iter_pack_files_on_a_pack_folder(tmp_path: Path) -> None:
    make_pack(tmp_path / "p")
    assert list(iter_pack_files(tmp_path / "p")) == [tmp_path / "p" / "pack.yaml"]


@pytest.mark.posix
def test_iter_pack_files_skips_git_and_symlinked_folders(tmp_path: Path) -> None:
    make_pack(tmp_path / "real")
    make_pack(tmp_path / ".git" / "hidden")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert list(iter_pack_files(tmp_path)) == [tmp_path / "real" / "pack.yaml"]


@pytest.mark.posix
def test_iter_pack_files_terminates_on_a_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "up").symlink_to(tmp_path / "a")
    (tmp_path / "a" / "self").symlink_to(".")
    make_pack(tmp_path / "a" / "b" / "p")
    assert list(iter_pack_files(tmp_path)) == [tmp_path / "a" / "b" / "p" / "pack.yaml"]


@pytest.mark.posix
def test_iter_pack_files_yields_a_marker_that_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "pack.yaml").symlink_to("/dev/null")
    assert list(iter_pack_files(tmp_path)) == [tmp_path / "p" / "pack.yaml"]


def test_iter_pack_files_custom_marker_and_missing_start(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "m.yml").write_text("")
    assert list(iter_pack_files(tmp_path, "m.yml")) == [tmp_path / "x" / "m.yml"]
    assert list(iter_pack_files(tmp_path / "missing")) == []
