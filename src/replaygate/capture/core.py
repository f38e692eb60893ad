"""The recording core the proxy and the Python hook share: one exchange in, two files out.

An exchange (the app's request body, the upstream's status and body, whole or streamed)
becomes a golden fixture under ``golden/observed/`` and its recording under
``recordings/observed/``, both redacted and written atomically; the same request twice is
one fixture. Nothing here sends or changes what the app sends or receives.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from replaygate.capture.fixture_request import NotARequest, fixture_request, streamed
from replaygate.capture.streams import assembled
from replaygate.core.errors import ReplayGateError
from replaygate.loading import files
from replaygate.loading.fixtures import recording_path
from replaygate.loading.identity import Identity, request_identity
from replaygate.loading.normalize import FixtureShapeError
from replaygate.loading.pack import load_pack
from replaygate.loading.packs import Pack
from replaygate.loading.roots import root_for
from replaygate.loading.targets import PACK_FILE
from replaygate.providers.names import ProviderName
from replaygate.providers.redact import Redactor
from replaygate.providers.response import MalformedResponse, json_value
from replaygate.providers.store import recording_document, write_recording
from replaygate.providers.wire import WIRES
from replaygate.report.files import write_atomic

OBSERVED = "observed"  # the folder under golden/ and recordings/ that observe writes
_NAME = re.compile(r"[^A-Za-z0-9_-]+")
_HASH_LENGTH = 12
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key"})


class Outcome(StrEnum):
    CAPTURED = "captured"
    DEDUPLICATED = "deduplicated"  # the same request was captured before
    ERROR = "errors"  # the upstream answered an error or could not be reached: not recorded
    PASSED = "passed through"  # not a request to record (another path, a malformed body)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and its answer, as the app and the upstream sent them."""

    path: str  # the request's URL path
    request: bytes
    status: int  # 0: the upstream could not be reached
    response: bytes  # the whole body, or the event stream as it came
    secrets: Sequence[str] = ()  # the app's credentials (auth headers): redacted everywhere


@dataclass(slots=True)
class Tally:
    """What a capture session did, for its summary."""

    counts: Counter[Outcome] = field(default_factory=Counter)
    tools: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)


def credentials(headers: Iterable[tuple[str, str]]) -> list[str]:
    """The app's credentials in its request headers (a bearer token, an API key): redacted
    wherever they appear, never written."""
    found = []
    for name, value in headers:
        if name.lower() in _SECRET_HEADERS:
            found += [value, value.split(" ", 1)[-1]]
    return found


def open_pack(directory: Path, cwd: Path) -> Pack:
    """The pack observe writes into (its golden and recordings folders, its redact paths)."""
    pack_file = directory / PACK_FILE
    if not pack_file.is_file():
        raise ReplayGateError(f"{directory}: no {PACK_FILE}: observe writes into a pack")
    root = root_for(pack_file.absolute(), None, cwd)
    pack, problems, _ = load_pack(pack_file.absolute(), root, datetime.now(UTC))
    if pack is None:
        raise ReplayGateError(str(problems[-1]))
    return pack


class Capture:
    """Records exchanges into a pack; safe to call from many threads at once."""

    def __init__(self, pack: Pack, provider: ProviderName, environ: Mapping[str, str]) -> None:
        self.pack, self.provider = pack, provider
        self._environ = dict(environ)
        self._lock = threading.Lock()
        self._taken: set[str] = set()  # request hashes captured (or being captured)
        self.tally = Tally()

    def records(self, path: str) -> bool:
        """Whether a request to ``path`` is one this capture records (a POST is assumed)."""
        return path.split("?", 1)[0].rstrip("/").endswith(WIRES[self.provider].path)

    def wants_stream(self, body: bytes) -> bool:
        try:
            return streamed(json_value(body))
        except ValueError:
            return False

    def take(self, exchange: Exchange) -> Outcome:
        """Record one exchange (or count why not); never raises for what the app sent."""
        try:
            outcome, tool = self._take(exchange)
        except (
            NotARequest,
            FixtureShapeError,
            MalformedResponse,
            ValueError,
            ReplayGateError,
        ) as exc:
            self.passed(f"{exchange.path}: not recorded: {exc}")
            return Outcome.PASSED
        with self._lock:
            self.tally.counts[outcome] += 1
            if outcome is Outcome.CAPTURED:
                self.tally.tools[tool] += 1
        return outcome

    def passed(self, text: str) -> None:
        """An exchange not recorded, and why (for the summary)."""
        with self._lock:
            self.tally.counts[Outcome.PASSED] += 1
            self.tally.notes.append(text)

    def _take(self, exchange: Exchange) -> tuple[Outcome, str]:
        if not 200 <= exchange.status < 300:
            return Outcome.ERROR, ""
        sent = json_value(exchange.request)
        model, request = fixture_request(self.provider, sent)
        body = (
            assembled(self.provider, exchange.response)
            if streamed(sent)
            else json_value(exchange.response)
        )
        response = WIRES[self.provider].parse(body)
        redactor = Redactor.build(self._environ, exchange.secrets)
        scrub = redactor.with_paths(response, self.pack.redact)
        request = scrub.value(request)  # before hashing: the fixture's identity is what is kept
        identity = request_identity(request, model)
        digest = identity.request_hash.removeprefix("sha256:")[:_HASH_LENGTH]
        if not self._claim(digest):
            return Outcome.DEDUPLICATED, ""
        tool = _tool_of(response)
        name = f"{_NAME.sub('_', tool)[:60]}-{digest}"
        self._write_fixture(name, model, request, identity, scrub)
        document = recording_document(
            identity=identity,
            provider=str(self.provider),
            model=model,
            response=response,
            status=exchange.status,
            body=body,
            now=datetime.now(UTC),
        )
        recording, _ = recording_path(self.pack, f"{OBSERVED}/{name}.json")
        write_recording(recording, document, redactor, self.pack.redact)
        return Outcome.CAPTURED, tool

    def _claim(self, digest: str) -> bool:
        """True for the first capture of a request: in this session or in the folder."""
        with self._lock:
            if digest in self._taken:
                return False
            self._taken.add(digest)
        folder = self.pack.golden_dir / OBSERVED
        return not (folder.is_dir() and any(folder.glob(f"*-{digest}.json")))

    def _write_fixture(
        self, name: str, model: str, request: Any, identity: Identity, scrub: Redactor
    ) -> None:
        shown = files.shown_path(self.pack.golden_dir, self.pack.root)
        path = files.resolve_inside(
            self.pack.golden_dir,
            f"{OBSERVED}/{name}.json",
            root=self.pack.root,
            what="fixture",
            within=f"the golden directory {shown}",
            file=shown,
            line=None,
        )
        fixture = scrub.value(_fixture(self.provider, model, request, identity))
        write_atomic(path, json.dumps(fixture, indent=2, ensure_ascii=False) + "\n")


def _tool_of(response: Mapping[str, Any]) -> str:
    calls = response.get("tool_calls") or []
    return str(calls[0]["name"]) if calls else "text"


def _fixture(
    provider: ProviderName, model: str, request: Mapping[str, Any], identity: Identity
) -> dict[str, Any]:
    """A golden fixture in ReplayCI's format: boundary fields, then the request."""
    fixture: dict[str, Any] = {"boundary_version": "1.0", "provider": str(provider)}
    fixture["model_id"] = model
    for key in ("tool_schema_hash", "messages_hash", "system_prompt_hash"):
        if identity.parts[key] is not None:
            fixture[key] = identity.parts[key]
    choice = request.get("tool_choice")
    if isinstance(choice, str):
        fixture["tool_choice_mode"] = choice
    fixture["request"] = dict(request)
    return fixture
