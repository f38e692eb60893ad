"""Recordings on disk: one shape (docs/recording.schema.json), redacted, written atomically.

``write_recording`` is the single point where a recording reaches the disk, and it redacts
the whole document there: nothing written can skip it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from replaygate import __version__
from replaygate.loading.identity import Identity
from replaygate.loading.recording import RECORDING_VERSION
from replaygate.providers.redact import Redactor
from replaygate.report.files import write_atomic


def recording_document(
    *,
    identity: Identity,
    provider: str,
    model: str,
    response: Mapping[str, Any],
    status: int,
    body: Any,
    now: datetime,
    model_override: bool = False,
    base_url: str | None = None,
    api_key_env: str | None = None,
    api_version: str | None = None,
) -> dict[str, Any]:
    """A recording, before redaction: the request's identity, the normalised response, the body.

    ``model_override``: ``model`` came from `record --model`; ``base_url`` and
    ``api_key_env``: the --base-url and --api-key-env that record it again; ``api_version``:
    the API version the request named (Anthropic's ``anthropic-version``)."""
    made_with = {"model_override": True} if model_override else {}
    document = {
        "recording_version": RECORDING_VERSION,
        "replaygate_version": __version__,
        "recorded_at": now.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "provider": provider,
        "model": model,
        "identity": identity.as_json(),
        "response": _plain(response),
        "raw": {"status": status, "body": body},
        **made_with,
    }
    if base_url is not None:
        document["base_url"] = base_url
    if api_key_env is not None:
        document["api_key_env"] = api_key_env
    if api_version is not None:
        document["api_version"] = api_version
    return document


def _plain(value: Any) -> Any:
    """JSON values only (parsed arguments are a dict subclass)."""
    return json.loads(json.dumps(value, ensure_ascii=False))


def write_recording(
    path: Path,
    document: Mapping[str, Any],
    redactor: Redactor,
    paths: Iterable[str] = (),
    stored: Any = None,
) -> bool:
    """Redact the whole document (secrets, and the strings ``paths`` name in the response),
    then write it whole or not at all. When ``stored`` (the recording as read before) gives
    the same answer, the file is left byte for byte and False returned."""
    scrub = redactor.with_paths(document.get("response"), paths)
    text = json.dumps(scrub.value(document), indent=2, ensure_ascii=False) + "\n"
    if stored is not None and _same_answer(stored, text):
        return False
    write_atomic(path, text)
    return True


# What changes from call to call for the same answer: when, by which replaygate, the raw
# body (its id, created), and the ids the provider gave the calls.
_CHURN = ("recorded_at", "replaygate_version", "raw")


def _same_answer(stored: Any, text: str) -> bool:
    """Whether a recording file's text answers as the stored one does: the same identity,
    provider, model and normalised response, tool-call ids aside."""
    return isinstance(stored, Mapping) and _settled(stored) == _settled(json.loads(text))


def _settled(document: Mapping[str, Any]) -> dict[str, Any]:
    settled = {key: value for key, value in document.items() if key not in _CHURN}
    response = settled.get("response")
    if isinstance(response, Mapping) and isinstance(response.get("tool_calls"), list):
        calls = response["tool_calls"]
        bare = [{**c, "id": None} if isinstance(c, Mapping) else c for c in calls]
        settled["response"] = {**response, "tool_calls": bare}
    return settled
