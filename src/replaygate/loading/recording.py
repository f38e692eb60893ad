"""Sidecar recordings (docs/recordings.md): read one, and say whether it answers the request.

Two shapes exist. A recording written by `replaygate record` carries ``recording_version``
and the identity of the request it answered. An older, hand-made one (ReplayCI's) is a copy
of the fixture: when it holds the ``request`` it answered, its identity is computed from that;
when it holds none, it cannot be checked, and the run says so in a warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic_core import ValidationError

from replaygate.core.errors import PackError
from replaygate.loading.identity import describe_changes, request_identity
from replaygate.loading.model_errors import validation_errors
from replaygate.loading.records import Bounds, Check, Record, record

RECORDING_VERSION = 1
Hash = Annotated[str, Bounds(pattern=r"^sha256:[0-9a-f]{64}$")]


@record
class IdentityModel(Record):
    request_hash: Hash
    messages_hash: Hash
    tool_schema_hash: Hash
    system_prompt_hash: Hash | None
    model: str
    settings: dict[str, Any]


@record
class RawModel(Record):
    status: int
    body: Any


def _written_as_text(value: Any) -> Any:
    """As the schema says: a text (pydantic would read a number as a Unix time)."""
    if not isinstance(value, str):
        raise ValueError(f"expected a date and time such as 2026-11-26T09:00:00Z, got {value!r}")
    return value


@record
class RecordingModel(Record):
    recording_version: Literal[1]
    replaygate_version: str
    recorded_at: Annotated[datetime, Check(_written_as_text, before=True)]
    # the providers' names (providers/wire.py, a layer above: a test holds them equal)
    provider: Literal["openai", "openai-responses", "anthropic", "openai-compatible"]
    model: Annotated[str, Bounds(min_length=1)]
    identity: IdentityModel
    response: dict[str, Any]
    raw: RawModel
    model_override: bool = False
    base_url: Annotated[str, Bounds(min_length=1)] | None = None
    # the variable `record --api-key-env` named (its name, never its value)
    api_key_env: Annotated[str, Bounds(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] | None = None
    # the API version the request named (anthropic-version)
    api_version: Annotated[str, Bounds(min_length=1)] | None = None


@dataclass(frozen=True, slots=True)
class Recording:
    response: Any
    identity: Mapping[str, Any] | None  # None: an older recording (see older_request)
    recorded_at: datetime | None
    provider: str | None
    older_request: Any = None  # an older recording's copy of the request, when it has one
    older_model: str | None = None
    override: str | None = None  # the model `record --model` sent, which recorded mode checks
    base_url: str | None = None  # the --base-url it was recorded at, for the refresh command
    api_key_env: str | None = None  # the --api-key-env it was recorded with, likewise

    @property
    def checkable(self) -> bool:
        return self.identity is not None or self.older_request is not None


def parse_recording(data: Any, shown: str) -> Recording:
    """The recording in ``data`` (read from ``shown``); raises PackError when malformed."""
    if not isinstance(data, Mapping) or not isinstance(data.get("response"), Mapping):
        raise PackError(shown, None, "a recording must be an object with a 'response' object")
    if "recording_version" not in data:
        return _older(data)
    try:
        model = RecordingModel.model_validate(data)
    except ValidationError as exc:
        raise PackError(shown, None, validation_errors(exc, data)[0][1]) from None
    recorded_at = model.recorded_at
    if recorded_at.tzinfo is None:
        recorded_at = recorded_at.replace(tzinfo=UTC)
    override = model.model if model.model_override else None
    return Recording(
        data["response"],
        data["identity"],
        recorded_at,
        model.provider,
        override=override,
        base_url=model.base_url,
        api_key_env=model.api_key_env,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _older(data: Mapping[str, Any]) -> Recording:
    provider, model = _text(data.get("provider")), _text(data.get("model_id"))
    return Recording(data["response"], None, None, provider, data.get("request"), model)


def staleness(recording: Recording, request: Any, model: str) -> str | None:
    """What changed since the recording was made, or None when it answers this request.

    Raises FixtureShapeError when a request cannot be normalised.
    """
    current = request_identity(request, model)
    stored = recording.identity
    if stored is None:
        if recording.older_request is None:
            return None
        stored = request_identity(recording.older_request, recording.older_model or model).as_json()
    if stored.get("request_hash") == current.request_hash:
        return None
    parts = current.changed(stored)
    return describe_changes(parts) if parts else "the request changed"


def age_days(recording: Recording, now: datetime) -> int | None:
    if recording.recorded_at is None:
        return None
    return (now - recording.recorded_at).days
