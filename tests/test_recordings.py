"""Recordings in recorded mode: identity checked, stale ones named, old ones warned about."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from packbuilder import CONTRACT, make_pack, request_only
from replaygate.cli import main
from replaygate.loading.identity import request_identity
from replaygate.providers.redact import Redactor
from replaygate.providers.store import recording_document, write_recording

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "recording.schema.json").read_text())
NOW = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
RESPONSE = {
    "success": True,
    "content": None,
    "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Bern"}}],
    "finish_reason": "tool_calls",
    "usage": {"input_tokens": 12, "output_tokens": 5},
    "model": "gpt-4o-mini-2024-07-18",
}


def _record(pack: Path, request: Any, *, model: str = "gpt-4o-mini", when: datetime = NOW) -> Path:
    document = recording_document(
        identity=request_identity(request, model),
        provider="openai",
        model=model,
        response=RESPONSE,
        status=200,
        body={"id": "chatcmpl-1", "object": "chat.completion"},
        now=when,
    )
    path = pack / "recordings" / "ok.recording.json"
    write_recording(path, document, Redactor.build({}))
    jsonschema.validate(json.loads(path.read_text()), SCHEMA)
    return path


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "r.json"
    code = main(["run", "--root", str(tmp_path), "--json", str(out), str(tmp_path / "packs")])
    return code, json.loads(out.read_text())["cases"][0], capsys.readouterr().out


def test_a_recording_of_the_current_request_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = request_only()
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    _record(pack, data["request"])
    code, case, out = _run(tmp_path, capsys)
    assert (code, case["status"]) == (0, "passed")
    assert "warning" not in out
    # the case names both files it judged: the fixture, and the recording it read
    assert (case["inputs"], case["run_id"]) == (
        ["packs/p/golden/ok.json", "packs/p/recordings/ok.recording.json"],
        None,
    )


def test_a_case_judged_on_its_fixture_names_the_fixture_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_pack(tmp_path)
    _, case, _ = _run(tmp_path, capsys)
    assert case["inputs"] == ["packs/p/golden/ok.json"]


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (
            lambda f: f["request"]["messages"].append({"role": "user", "content": "and Basel?"}),
            "messages changed",
        ),
        (
            lambda f: f["request"]["tools"][0]["parameters"]["properties"].update(
                unit={"type": "string"}
            ),
            "tools changed",
        ),
        (
            lambda f: f["request"]["messages"].insert(0, {"role": "system", "content": "be brief"}),
            "system prompt changed",
        ),
        (lambda f: f.update(model_id="gpt-4.1"), "model changed"),
        (lambda f: f["request"].update(temperature=0.7), "settings changed"),
    ],
    ids=["messages", "tools", "system", "model", "settings"],
)
def test_a_recording_of_an_older_request_is_stale_and_not_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, named: str
) -> None:
    data = request_only()
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    _record(pack, json.loads(json.dumps(data["request"])))
    edit(data)
    (pack / "golden" / "ok.json").write_text(json.dumps(data))
    code, case, _ = _run(tmp_path, capsys)
    assert (code, case["status"], case["classification"]) == (1, "failed", "recording_stale")
    assert [f["classification"] for f in case["failures"]] == ["recording_stale"]
    message = case["failures"][0]["message"]
    assert f"({named})" in message
    assert message.endswith(
        "refresh it: replaygate record --provider openai --mode refresh "
        "packs/p/contracts/c.yaml::ok"
    )


def test_a_missing_recording_names_the_command_that_records_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_pack(tmp_path, fixtures={"ok.json": request_only()})
    case = _run(tmp_path, capsys)[1]
    assert case["classification"] == "recording_not_found"
    assert case["failures"][0]["message"].endswith(
        "record it: replaygate record --provider openai packs/p/contracts/c.yaml::ok"
    )


@pytest.mark.parametrize("expected_error", [None, "recording_not_found", "tool_not_invoked"])
def test_a_negative_case_without_a_recording_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], expected_error: str | None
) -> None:
    contract = CONTRACT.replace("expect_ok: true", "expect_ok: false")
    if expected_error:
        contract += f"    expected_error: {expected_error}\n"
    make_pack(tmp_path, contract=contract, fixtures={"ok.json": request_only()})
    code, case, _ = _run(tmp_path, capsys)
    assert (code, case["status"], case["classification"]) == (1, "failed", "recording_not_found")


def test_an_old_recording_is_a_warning_not_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = request_only()
    pack = make_pack(
        tmp_path,
        fixtures={"ok.json": data},
        pack_yaml="pack_id: p\nrecordings: {max_age_days: 30}\n",
    )
    _record(pack, data["request"], when=datetime.now(UTC) - timedelta(days=45))
    code, case, out = _run(tmp_path, capsys)
    assert (code, case["status"]) == (0, "passed")
    assert (
        "packs/p/recordings/ok.recording.json: warning: recorded 45 days ago, more than "
        "recordings.max_age_days (30); refresh it: replaygate record --provider openai "
        "--mode refresh packs/p/contracts/c.yaml::ok"
    ) in out
    assert "1 warning" in out


def test_the_default_age_limit_is_90_days(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = request_only()
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    _record(pack, data["request"], when=datetime.now(UTC) - timedelta(days=89))
    assert "warning" not in _run(tmp_path, capsys)[2]
    _record(pack, data["request"], when=datetime.now(UTC) - timedelta(days=91))
    assert (
        "recorded 91 days ago, more than recordings.max_age_days (90)" in _run(tmp_path, capsys)[2]
    )


def _older_recording(request: Any | None) -> dict[str, Any]:
    older: dict[str, Any] = {
        "boundary_version": "1.0",
        "provider": "openai",
        "model_id": "gpt-4o-mini",
    }
    if request is not None:
        older["request"] = request
    older["response"] = RESPONSE
    return older


def test_an_older_recording_with_its_request_is_checked_like_a_new_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = request_only()
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    (pack / "recordings").mkdir()
    path = pack / "recordings" / "ok.recording.json"
    path.write_text(json.dumps(_older_recording(data["request"])))
    assert _run(tmp_path, capsys)[1]["status"] == "passed"
    data["request"]["messages"][0]["content"] = "weather in Basel?"
    (pack / "golden" / "ok.json").write_text(json.dumps(data))
    case = _run(tmp_path, capsys)[1]
    assert case["classification"] == "recording_stale"
    assert "(messages changed)" in case["failures"][0]["message"]


def test_an_older_recording_without_a_request_passes_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = request_only()
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    (pack / "recordings").mkdir()
    (pack / "recordings" / "ok.recording.json").write_text(json.dumps(_older_recording(None)))
    _, case, out = _run(tmp_path, capsys)
    assert case["status"] == "passed"
    assert "ok.recording.json: warning: holds no request, so a changed request cannot" in out


def test_a_malformed_recording_is_a_located_case_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = request_only()
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    path = _record(pack, data["request"])
    broken = json.loads(path.read_text())
    broken["identity"]["request_hash"] = "md5:abc"
    path.write_text(json.dumps(broken))
    code, case, _ = _run(tmp_path, capsys)
    assert (code, case["status"]) == (1, "error")
    assert case["reason"].startswith("packs/p/recordings/ok.recording.json: identity.request_hash")


def test_placeholder_boundary_fields_do_not_make_a_recording_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = request_only()
    data.update(messages_hash="hand_written_001", tool_schema_hash="hand_written_002")
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    _record(pack, data["request"])
    assert _run(tmp_path, capsys)[1]["status"] == "passed"


def test_the_shipped_recording_has_no_identity_but_carries_its_request() -> None:
    shipped = json.loads(
        (ROOT / "packs/recordings/recordings/search_docs.rerecorded.recording.json").read_text()
    )
    assert "recording_version" not in shipped and "request" in shipped


def test_every_field_of_the_schema_is_documented() -> None:
    doc = (ROOT / "docs" / "recordings.md").read_text()
    for key in SCHEMA["properties"]:
        assert f"`{key}`" in doc, key
    for key in SCHEMA["properties"]["response"]["properties"]:
        assert f"`{key}`" in doc, key


def test_a_malformed_recorded_response_names_the_recording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = request_only()
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    path = _record(pack, data["request"])
    broken = json.loads(path.read_text())
    broken["response"]["tool_calls"] = "not a list"
    path.write_text(json.dumps(broken))
    code, case, _ = _run(tmp_path, capsys)
    assert (code, case["status"]) == (1, "error")
    assert case["reason"].startswith("packs/p/recordings/ok.recording.json: "), case["reason"]


def test_an_unknown_recording_version_lists_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = request_only()
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    path = _record(pack, data["request"])
    broken = json.loads(path.read_text())
    broken["recording_version"] = 2
    path.write_text(json.dumps(broken))
    _, case, _ = _run(tmp_path, capsys)
    assert case["reason"] == (
        "packs/p/recordings/ok.recording.json: recording_version: must be one of 1, got 2"
    )


@pytest.mark.parametrize(
    ("member", "value", "message"),
    [
        (
            "recorded_at",
            1764147600,
            "recorded_at: expected a date and time such as 2026-11-26T09:00:00Z, got 1764147600",
        ),
        (
            "provider",
            "gemini",
            "provider: must be one of openai, openai-responses, anthropic, openai-compatible, "
            "got 'gemini'",
        ),
    ],
)
def test_the_recording_reader_is_as_strict_as_the_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], member: str, value: Any, message: str
) -> None:
    data = request_only()
    pack = make_pack(tmp_path, fixtures={"ok.json": data})
    path = _record(pack, data["request"])
    broken = json.loads(path.read_text())
    broken[member] = value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)
    path.write_text(json.dumps(broken))
    _, case, _ = _run(tmp_path, capsys)
    assert case["reason"] == f"packs/p/recordings/ok.recording.json: {message}"


def test_the_recording_reader_knows_every_provider() -> None:
    from replaygate.loading.recording import RecordingModel
    from replaygate.providers.names import ProviderName

    known = set(RecordingModel.__keys__["provider"].schema["expected"])
    assert known == {str(name) for name in ProviderName}
    assert set(SCHEMA["properties"]["provider"]["enum"]) == known
