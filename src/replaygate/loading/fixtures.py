"""Golden case inputs: the fixture a case names and its sidecar recording, normalised."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaygate.errors import PackError
from replaygate.loading import files, json_reader
from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.normalize import (
    FixtureShapeError,
    ToolCall,
    normalize_request,
    normalize_response,
)
from replaygate.loading.pack import Pack, shown_path

NEGATIVE_PREFIX = "negative/"
RECORDING_SUFFIX = ".recording.json"


@dataclass(frozen=True, slots=True)
class CaseInput:
    """A golden case's normalised request and response, as loaded from its files."""

    request: dict[str, Any]
    schemas: Mapping[str, Mapping[str, Any]]
    response: dict[str, Any] | None  # None: no recording and no embedded response
    calls: tuple[ToolCall, ...]
    looked_in: str  # where a recording was looked for, for recording_not_found


def _fixture_path(pack: Pack, contract: Contract, case: GoldenCase) -> Path:
    ref = case.input_ref.replace("\\", "/")
    base, rest = pack.golden_dir, ref
    if ref.startswith(NEGATIVE_PREFIX):
        base, rest = pack.negative_dir, ref[len(NEGATIVE_PREFIX) :]
    within = (
        "the negative golden directory" if base == pack.negative_dir else "the golden directory"
    )
    return files.resolve_inside(
        base,
        rest,
        root=pack.root,
        what="input_ref",
        within=f"{within} {shown_path(base, pack.root)}",
        file=contract.file,
        line=case.line,
    )


def _recording(pack: Pack, case: GoldenCase) -> tuple[Path | None, str]:
    """The sidecar recording's path when one exists, and where it was looked for."""
    ref = case.input_ref.replace("\\", "/")
    name = (ref[: -len(".json")] if ref.endswith(".json") else ref) + RECORDING_SUFFIX
    candidate = os.path.join(pack.recordings_dir, name)
    shown = shown_path(candidate, pack.root)
    if not os.path.lexists(candidate):
        return None, shown
    path = files.resolve_inside(
        pack.recordings_dir,
        name,
        root=pack.root,
        what="recording",
        within="the recordings directory",
        file=shown,
        line=None,
    )
    return path, shown


def _response(pack: Pack, case: GoldenCase, fixture: Mapping[str, Any]) -> tuple[Any, str]:
    path, shown = _recording(pack, case)
    if path is None:
        return fixture.get("response"), shown
    recording = json_reader.load_json(path, shown=shown)
    if not isinstance(recording, Mapping) or not isinstance(recording.get("response"), Mapping):
        raise PackError(shown, None, "a recording must be an object with a 'response' object")
    return recording["response"], shown


def load_case_input(pack: Pack, contract: Contract, case: GoldenCase) -> CaseInput | str:
    """The case's normalised input, or a one-line reason it cannot be evaluated."""
    try:
        path = _fixture_path(pack, contract, case)
        shown = shown_path(path, pack.root)
        fixture = json_reader.load_json(path, shown=shown)
        if not isinstance(fixture, Mapping):
            raise PackError(shown, 1, "a fixture must be a JSON object")
        response, looked_in = _response(pack, case, fixture)
        request, schemas = normalize_request(fixture.get("request"))
        if response is None:
            return CaseInput(request, schemas, None, (), looked_in)
        document, calls = normalize_response(response)
    except PackError as exc:
        # a problem located at the golden case itself is reported there already
        return exc.message if (exc.file, exc.line) == (contract.file, case.line) else str(exc)
    except FixtureShapeError as exc:
        return f"{shown}: {exc}"
    return CaseInput(request, schemas, document, calls, looked_in)
