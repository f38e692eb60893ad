"""What a command line names: a pack, a contract file, one case, the pack of .replayci.yml,
from any folder; and the repository root it resolves against, printed once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from packbuilder import CONTRACT, golden_case, make_pack
from replaygate import cli
from replaygate.loading.targets import split_target

TWO_CASES = CONTRACT + golden_case("second")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def cases_run(capsys: pytest.CaptureFixture[str], tmp_path: Path, *targets: str) -> list[str]:
    code, out, err = run(capsys, "--json", str(tmp_path / "r.json"), *targets)
    assert code == 0, out + err
    results = json.loads((tmp_path / "r.json").read_text())
    return [f"{case['contract']}::{case['case_id']}" for case in results["cases"]]


@pytest.mark.parametrize(
    ("text", "split"),
    [
        ("packs/p", ("packs/p", None)),
        ("packs/p/contracts/c.yaml::ok", ("packs/p/contracts/c.yaml", "ok")),
        ("packs/p::a::b", ("packs/p", "a::b")),
        ("packs/p::", ("packs/p", "")),
    ],
)
def test_split_target(text: str, split: tuple[str, str | None]) -> None:
    assert split_target(text) == split


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_pack(tmp_path, contracts={"c.yaml": TWO_CASES, "d.yaml": CONTRACT})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_contract_file_runs_that_contract_alone(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cases_run(capsys, repo, "packs/p/contracts/d.yaml") == ["contracts/d.yaml::ok"]


def test_path_colon_colon_case_id_runs_one_case(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cases_run(capsys, repo, "packs/p/contracts/c.yaml::second") == [
        "contracts/c.yaml::second"
    ]
    assert cases_run(capsys, repo, "packs/p::ok") == [
        "contracts/c.yaml::ok",
        "contracts/d.yaml::ok",
    ]


def test_an_unknown_case_id_is_a_problem_with_a_suggestion(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "packs/p/contracts/c.yaml::secnd")
    assert code == 2
    assert "packs/p/contracts/c.yaml: no golden case 'secnd' here (did you mean 'second'?)" in out


def test_pack_option_names_a_pack_like_a_path(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(cases_run(capsys, repo, "--pack", "packs/p")) == 3


def test_pack_yml_is_named_with_the_spelling_that_works(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "packs/p/pack.yaml").rename(repo / "packs/p/pack.yml")
    for target in ([], ["packs/p"], ["packs/p/pack.yml"]):
        code, out, _ = run(capsys, *target)
        assert code == 2
        assert "packs/p/pack.yml: the pack file is named pack.yaml, not pack.yml: rename it" in out


def test_run_from_a_subfolder_finds_the_repository_packs_and_prints_the_root_once(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "packs/p/contracts/deeper").mkdir()
    monkeypatch.chdir(repo / "packs/p/contracts/deeper")
    code, out, err = run(capsys)
    assert code == 0, out + err
    assert err == f"root: {repo.resolve()} (the nearest folder above the pack holding .git)\n"
    assert out.endswith("3 passed, 0 failed, 0 errors, 0 skipped in " + out.split(" in ")[-1])


def test_an_absolute_pack_path_from_outside_the_repository_runs(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = repo.parent / f"{repo.name}-elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, err = run(capsys, str(repo / "packs/p"))
    assert code == 0, out + err
    assert "leaves" not in out


def test_without_git_the_pack_parent_is_the_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = make_pack(tmp_path / "repo")
    (tmp_path / "repo/.git").rmdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    code, out, err = run(capsys, str(pack))
    assert code == 0, out + err
    assert err == (
        f"root: {(tmp_path / 'repo/packs').resolve()} (no .git above the pack: its parent folder)\n"
    )


def test_replayci_yml_pack_is_read_and_unknown_keys_are_warnings(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "packs/p").rename(repo / "packs/mine")
    (repo / "packs/other").mkdir()  # not a pack: running all of packs/ would find nothing here
    (repo / ".replayci.yml").write_text(
        'pack: "./packs/mine"\nprovider: openai\nmodel: gpt-4o-mini\nrepeat: 3\n'
    )
    monkeypatch.chdir(repo / "packs/other")
    code, out, err = run(capsys)
    assert code == 0, out + err
    assert out.splitlines()[0] == (
        ".replayci.yml:4: warning: unknown key 'repeat'; replaygate reads `pack`; "
        "`provider` and `model` are accepted and not used"
    )
    assert "3 passed, 0 failed, 0 errors, 0 skipped, 1 warning in" in out


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("~", "a key is read as null by YAML (`~` and `null` are null there); quote it"),
        ("null", "a key is read as null by YAML (`~` and `null` are null there); quote it"),
        ("1", "keys must be strings, got the number 1; quote it"),
        ("yes", "a key is read as true by YAML (yes/no/on/off are booleans there); quote it"),
        ("2024-01-01", "keys must be strings, got a date; quote it"),
    ],
)
def test_a_replayci_yml_key_that_is_not_a_string_is_named_on_its_line(
    repo: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    key: str,
    message: str,
) -> None:
    (repo / ".replayci.yml").write_text(f'pack: "./packs/p"\n{key}: 3\n')
    monkeypatch.chdir(repo)
    code, out, _ = run(capsys)
    assert code == 0, out
    assert out.splitlines()[0] == (
        f".replayci.yml:2: warning: {message}; replaygate reads `pack`; "
        "`provider` and `model` are accepted and not used"
    )


def test_a_path_written_from_the_repository_root_gets_the_spelling_that_works_here(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "docs").mkdir()
    monkeypatch.chdir(repo / "docs")
    code, out, _ = run(capsys, "packs/p")
    assert code == 2
    assert out.splitlines()[0] == (
        "packs/p: no such pack directory, pack.yaml or contract file here; "
        "it exists from the repository root: name ../packs/p"
    )


def test_a_pack_outside_the_given_root_is_still_run_from_its_own_root(
    repo: Path, capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    other = tmp_path_factory.mktemp("other")
    code, out, err = run(capsys, "--root", str(other), str(repo / "packs/p"))
    assert code == 0, out + err
    assert err == (
        f"root: {repo.resolve()} (the pack is outside --root {other.resolve()}; "
        "the nearest folder above the pack holding .git)\n"
    )


@pytest.mark.parametrize("into_git", [False, True])
def test_a_replayci_yml_symlinked_out_of_reach_is_not_read(
    repo: Path, capsys: pytest.CaptureFixture[str], into_git: bool
) -> None:
    target = repo / ".git" / "config" if into_git else repo.parent / "outside.yml"
    target.write_text("ghp_SECRET_in_a_key: 1\n")
    (repo / ".replayci.yml").symlink_to(target)
    code, out, err = run(capsys)
    assert code == 2
    where = (
        "points into a .git directory" if into_git else "leaves the repository through a symlink"
    )
    assert err.splitlines()[-1] == f"replaygate: .replayci.yml: config file '.replayci.yml' {where}"
    assert "SECRET" not in out + err


def test_a_case_named_after_a_folder_of_packs_needs_only_one_pack_to_have_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_pack(repo, "q")  # has only `ok`
    assert cases_run(capsys, repo, "packs::second") == ["contracts/c.yaml::second"]
    code, out, _ = run(capsys, "packs::secnd")
    assert code == 2
    found = [line for line in out.splitlines() if "no golden case" in line]
    assert found == ["packs: no golden case 'secnd' in any pack here (did you mean 'second'?)"]


def test_a_pack_named_with_the_case_must_have_it_even_when_its_folder_is_named_too(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_pack(repo, "q")
    code, out, _ = run(capsys, "packs::second", "packs/q::second")
    assert code == 2
    found = [line for line in out.splitlines() if "no golden case" in line]
    assert found == ["packs/q/pack.yaml: no golden case 'second' here"]


@pytest.mark.parametrize("how", ["path", "symlink"])
def test_a_replayci_yml_pack_outside_the_repository_is_refused(
    repo: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
    how: str,
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    make_pack(outside, contracts={"c.yaml": CONTRACT})
    pack = os.path.relpath(outside / "packs/p", repo)
    if how == "symlink":
        (repo / "linked").symlink_to(outside / "packs/p", target_is_directory=True)
        pack = "linked"
    (repo / ".replayci.yml").write_text(f"pack: {pack}\n")
    code, out, err = run(capsys)
    assert code == 2, out + err
    through = " through a symlink" if how == "symlink" else ""
    assert err.splitlines()[-1] == (
        f"replaygate: .replayci.yml:1: pack {pack!r} leaves the repository{through}"
    )
    assert "passed" not in out
