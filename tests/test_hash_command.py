"""`replaygate hash`: boundary fields written, placeholders kept, --check for pre-commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from packbuilder import fixture, make_pack
from replaygate.cli import main
from replaygate.loading.identity import request_identity

ROOT = Path(__file__).resolve().parents[1]


def _system_fixture() -> dict[str, object]:
    data = fixture()
    data["request"]["messages"].insert(0, {"role": "system", "content": "be brief"})  # type: ignore[index]
    return data


def test_hash_writes_the_fields_then_check_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = make_pack(tmp_path, fixtures={"ok.json": _system_fixture()})
    monkeypatch.chdir(tmp_path)
    assert main(["hash", "--check"]) == 1
    assert (
        "packs/p/golden/ok.json: messages_hash, tool_schema_hash, system_prompt_hash out of date"
        in (capsys.readouterr().out)
    )
    assert main(["hash"]) == 0
    written = json.loads((pack / "golden" / "ok.json").read_text())
    parts = request_identity(written["request"], "").parts
    for key in ("messages_hash", "tool_schema_hash", "system_prompt_hash"):
        assert written[key] == parts[key]
    assert list(written)[:5] == [
        "boundary_version",
        "provider",
        "model_id",
        "messages_hash",
        "tool_schema_hash",
    ]
    assert main(["hash", "--check"]) == 0


def test_a_changed_request_makes_check_fail_and_hash_update_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = make_pack(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["hash"]) == 0
    path = pack / "golden" / "ok.json"
    data = json.loads(path.read_text())
    before = data["messages_hash"]
    data["request"]["messages"][0]["content"] = "weather in Basel?"
    path.write_text(json.dumps(data))
    assert main(["hash", "--check"]) == 1
    assert json.loads(path.read_text())["messages_hash"] == before  # --check writes nothing
    assert main(["hash"]) == 0
    assert json.loads(path.read_text())["messages_hash"] != before


def test_placeholders_are_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = fixture()
    data.update(messages_hash="starter_msg_001", tool_schema_hash="starter_tool_001")
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    monkeypatch.chdir(tmp_path)
    assert main(["hash", "--check"]) == 0  # no system prompt, so nothing else is expected
    assert main(["hash"]) == 0
    written = json.loads((pack / "golden" / "ok.json").read_text())
    assert written["messages_hash"] == "starter_msg_001"
    assert "system_prompt_hash" not in written


def test_an_unreadable_fixture_is_a_located_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    make_pack(tmp_path, fixtures={"ok.json": '{\n  "request": [1,\n'})
    monkeypatch.chdir(tmp_path)
    assert main(["hash"]) == 2
    assert "packs/p/golden/ok.json:3: invalid JSON" in capsys.readouterr().err


def test_one_case_can_be_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_pack(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["hash", "--check", "packs/p/contracts/c.yaml::ok"]) == 1
    assert main(["hash", "--check", "packs/p::ok"]) == 1  # a pack directory
    assert main(["hash", "--check", "packs::ok"]) == 1  # a folder of packs
    assert main(["hash", "--check", "packs/p/contracts/c.yaml::nope"]) == 2


def test_pre_commit_hooks_run_hash_check_and_validate() -> None:
    hooks = {
        hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    }
    assert hooks["replaygate-hash"]["entry"] == "replaygate hash --check"
    assert hooks["replaygate-validate"]["entry"] == "replaygate validate"
    assert all(hook["pass_filenames"] is False for hook in hooks.values())


def test_a_fixture_without_a_request_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = fixture()
    del data["request"]
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    path = pack / "golden" / "ok.json"
    before = path.read_text()
    monkeypatch.chdir(tmp_path)
    assert main(["hash", "--check"]) == 0
    assert main(["hash"]) == 0
    assert path.read_text() == before
    assert capsys.readouterr().out.endswith("1 fixtures, all up to date\n")
