"""`replaygate record`'s work: each selected case's request sent, its recording written.

Cases run on ``jobs`` threads; ``stop`` (set on Ctrl-C or SIGTERM) lets the requests in
flight finish and starts no new one. Every outcome is reported through ``progress``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from replaygate.core.errors import PackError
from replaygate.engine.judge import excluded_by_modes
from replaygate.loading import json_reader
from replaygate.loading.files import shown_path
from replaygate.loading.fixtures import case_model, fixture_path, read_fixture, recording_path
from replaygate.loading.identity import request_identity
from replaygate.loading.normalize import FixtureShapeError
from replaygate.loading.recording import parse_recording, staleness
from replaygate.loading.selection import Selected
from replaygate.loading.targets import CASE_SEPARATOR
from replaygate.providers.client import Provider
from replaygate.providers.prompt import UnsupportedRequest, prompt_of
from replaygate.providers.redact import not_text
from replaygate.providers.store import recording_document, write_recording
from replaygate.providers.transport import BadPolicy, policy_of
from replaygate.providers.wire import WIRES

NO_MODEL = "no model: set model_id, default_model or --model"


class RecordMode(StrEnum):
    RECORD_NEW = "record-new"  # only cases without a recording, or with a stale one
    REFRESH = "refresh"  # every selected case


class Outcome(StrEnum):
    RECORDED = "recorded"
    REFRESHED = "stale refreshed"
    UNCHANGED = "unchanged"
    SKIPPED = "skipped"
    FAILED = "failed"
    NOT_STARTED = "not started"  # stopped by Ctrl-C or SIGTERM before its turn


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    target: str  # contract file::case id
    outcome: Outcome
    reason: str = ""
    model: str = ""
    usage: Mapping[str, Any] | None = None
    not_sent: tuple[str, ...] = ()  # the fixture's settings this provider no longer takes


@dataclass(frozen=True, slots=True)
class RecordOptions:
    mode: RecordMode
    model: str | None  # --model
    jobs: int


def hand_written(item: Selected, fixture: Mapping[str, Any]) -> bool:
    """A negative case whose fixture embeds its response: made by hand, never recorded."""
    return not item.case.expect_ok and "response" in fixture


class _Skip(Exception):
    def __init__(self, outcome: Outcome, reason: str = "", model: str = "") -> None:
        super().__init__(reason)
        self.outcome, self.reason, self.model = outcome, reason, model


def fixture_of(item: Selected) -> tuple[dict[str, Any], str]:
    """The case's fixture (keys checked, as `run` reads it) and its shown path."""
    shown = shown_path(fixture_path(item.pack, item.contract, item.case), item.pack.root)
    return read_fixture(item.pack, item.contract, item.case), shown


def _existing(item: Selected, fixture: Mapping[str, Any], model: str) -> tuple[Outcome, Any]:
    """RECORDED when there is no recording, REFRESHED when it is stale or unreadable, else
    UNCHANGED with the recording as read."""
    path, shown = recording_path(item.pack, item.case.input_ref)
    if not path.exists():
        return Outcome.RECORDED, None
    try:
        data = json_reader.load_json(path, shown=shown)
        stale = staleness(parse_recording(data, shown), fixture.get("request"), model)
    except (PackError, FixtureShapeError):
        return Outcome.REFRESHED, None
    return (Outcome.REFRESHED, None) if stale is not None else (Outcome.UNCHANGED, data)


def record_case(item: Selected, provider: Provider, options: RecordOptions) -> CaseOutcome:
    target = f"{item.contract.file}{CASE_SEPARATOR}{item.case.id}"
    try:
        return CaseOutcome(target, *_record(item, provider, options))
    except _Skip as skip:
        return CaseOutcome(target, skip.outcome, skip.reason, skip.model)
    except (PackError, FixtureShapeError, UnsupportedRequest, BadPolicy) as exc:
        return CaseOutcome(target, Outcome.FAILED, str(exc))


def _record(
    item: Selected, provider: Provider, options: RecordOptions
) -> tuple[Outcome, str, str, Mapping[str, Any] | None, tuple[str, ...]]:
    excluded = excluded_by_modes(item.case.provider_modes, provider.name)
    if excluded:
        raise _Skip(Outcome.SKIPPED, excluded)
    fixture, _ = fixture_of(item)
    if hand_written(item, fixture):
        raise _Skip(Outcome.SKIPPED, "negative case with a hand-written response")
    model = options.model or case_model(item.pack, fixture)
    if not model:
        raise _Skip(Outcome.FAILED, NO_MODEL)
    request = fixture.get("request")
    outcome, stored = _existing(item, fixture, model)
    if outcome is Outcome.UNCHANGED:
        if options.mode is RecordMode.RECORD_NEW:
            raise _Skip(Outcome.UNCHANGED, model=model)
        outcome = Outcome.RECORDED  # refresh: recorded again, unless the answer is the same
    prompt = prompt_of(request, model)
    answer = provider.call(prompt, policy_of(item.contract))
    if answer.error is not None:
        message = answer.response["error"]["message"]
        raise _Skip(Outcome.FAILED, f"{answer.error}: {message}", model)
    document = recording_document(
        identity=request_identity(request, model),
        provider=str(provider.name),
        model=model,
        response=answer.response,
        status=answer.status or 200,
        body=answer.body,
        now=datetime.now(UTC),
        model_override=options.model is not None,
        base_url=_base_url(provider),
        api_key_env=provider.key_env,
        api_version=WIRES[provider.name].api_version,
    )
    path, _ = recording_path(item.pack, item.case.input_ref)
    if not write_recording(path, document, provider.redactor, item.pack.redact, stored):
        outcome = Outcome.UNCHANGED  # the file stays byte for byte: no churn in the diff
    warnings = not_text(document["response"], item.pack.redact)
    not_sent = tuple(WIRES[provider.name].not_sent(prompt))
    return outcome, "; ".join(warnings), model, answer.response.get("usage"), not_sent


def _base_url(provider: Provider) -> str | None:
    """The base URL when it is not the provider's default (openai-compatible has none): the
    refresh command needs it, or a copied command would call the public API. Without any
    user:password or query, which are no business of a file in the repository."""
    default = WIRES[provider.name].base_url
    if default is not None and provider.base_url.rstrip("/") == default.rstrip("/"):
        return None
    parts = urlsplit(provider.base_url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    netloc += f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def record_all(
    selected: Sequence[Selected],
    provider: Provider,
    options: RecordOptions,
    stop: threading.Event,
    progress: Callable[[CaseOutcome], None],
) -> list[CaseOutcome]:
    """Every selected case's outcome. Cases that share a fixture share a recording, so they
    are recorded one after the other (the first records, the next find it unchanged)."""

    def one(item: Selected) -> CaseOutcome:
        if stop.is_set():
            target = f"{item.contract.file}{CASE_SEPARATOR}{item.case.id}"
            return CaseOutcome(target, Outcome.NOT_STARTED)
        outcome = record_case(item, provider, options)
        progress(outcome)
        return outcome

    groups: dict[tuple[str, str], list[Selected]] = {}
    for item in selected:
        groups.setdefault((str(item.pack.directory), item.case.input_ref), []).append(item)
    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        done = pool.map(lambda group: [one(item) for item in group], groups.values())
        return [outcome for group in done for outcome in group]
