"""Golden case inputs: the fixture a case names and its sidecar recording, normalised."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from replaygate.assertions.trace import Trace
from replaygate.errors import PackError
from replaygate.loading import files, json_reader, traces
from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.files import shown_path
from replaygate.loading.fixture_keys import key_problems
from replaygate.loading.golden import input_base
from replaygate.loading.models import FIXTURE_KEYS, RECORDING_KEYS, FixtureObject, format_loc
from replaygate.loading.normalize import (
    FixtureShapeError,
    ToolCall,
    normalize_request,
    normalize_response,
)
from replaygate.loading.pack import Pack

RECORDING_SUFFIX = ".recording.json"


@dataclass(frozen=True, slots=True)
class CaseInput:
    """A golden case's normalised request and response, as loaded from its files."""

    request: dict[str, Any]
    schemas: Mapping[str, Mapping[str, Any]]
    response: dict[str, Any] | None  # None: no recording and no embedded response
    calls: tuple[ToolCall, ...]
    looked_in: str  # where a recording was looked for, for recording_not_found
    trace: Trace | None = None  # when the response is a whole run
    recorded: Recorded | None = None  # the verdicts a peer tool wrote beside the trace


@dataclass(frozen=True, slots=True)
class Recorded:
    """What a peer tool (ai-tester) concluded about this run, to compare ours with."""

    tool: str
    passed: bool | None
    assertions: Mapping[str, bool]  # assertion id -> passed


def _fixture_path(pack: Pack, input_ref: str, file: str, line: int | None) -> Path:
    base, rest = input_base(input_ref, pack.golden_dir, pack.negative_dir)
    within = (
        "the negative golden directory" if base == pack.negative_dir else "the golden directory"
    )
    return files.resolve_inside(
        base,
        rest,
        root=pack.root,
        what="input_ref",
        within=f"{within} {shown_path(base, pack.root)}",
        file=file,
        line=line,
    )


def _recording(pack: Pack, input_ref: str) -> tuple[Path | None, str]:
    """The sidecar recording's path when one exists, and where it was looked for."""
    ref = input_ref.replace("\\", "/")
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


def _response(pack: Pack, input_ref: str, fixture: Mapping[str, Any]) -> tuple[Any, str]:
    path, shown = _recording(pack, input_ref)
    if path is None:
        return fixture.get("response"), shown
    recording = _read_checked(path, shown, RECORDING_KEYS)
    if not isinstance(recording, Mapping) or not isinstance(recording.get("response"), Mapping):
        raise PackError(shown, None, "a recording must be an object with a 'response' object")
    return recording["response"], shown


def _read_checked(path: Path, shown: str, keys: Mapping[FixtureObject, frozenset[str]]) -> Any:
    """A fixture or recording: JSON whose objects hold only the keys of the format."""
    text = files.read_text(path, shown=shown, max_bytes=files.MAX_JSON_BYTES)
    data = json_reader.parse_json(text, shown=shown)
    found = key_problems(data, keys) if isinstance(data, Mapping) else []
    if not found:
        return data
    errors = [
        PackError(shown, json_reader.line_of_key(text, loc), f"{format_loc(loc[:-1])}: {message}")
        if loc[:-1]
        else PackError(shown, json_reader.line_of_key(text, loc), message)
        for loc, message in found
    ]
    raise PackError(errors[0].file, errors[0].line, errors[0].message, also=tuple(errors[1:]))


def load_case_input(pack: Pack, contract: Contract, case: GoldenCase) -> CaseInput | str:
    """The case's normalised input, or a one-line reason it cannot be evaluated."""
    if contract.case_inputs is not None:  # read with the contract (an @isdk fixture)
        return cast("CaseInput | str", contract.case_inputs[case.id])
    return load_input(pack, case.input_ref, file=contract.file, line=case.line)


def load_input(pack: Pack, input_ref: str, *, file: str, line: int | None) -> CaseInput | str:
    """The normalised input of the fixture ``input_ref`` names (named at ``file:line``)."""
    try:
        path = _fixture_path(pack, input_ref, file, line)
        shown = shown_path(path, pack.root)
        fixture = _read_checked(path, shown, FIXTURE_KEYS)
        if not isinstance(fixture, Mapping):
            raise PackError(shown, 1, "a fixture must be a JSON object")
        response, looked_in = _response(pack, input_ref, fixture)
        request, schemas = normalize_request(fixture.get("request"))
        if response is None:
            return CaseInput(request, schemas, None, (), looked_in)
        trace = traces.read_trace(response) if traces.is_trace(response) else None
        if trace is not None:
            response = traces.legacy_response(response, trace)
        document, calls = normalize_response(response)
    except PackError as exc:
        # a problem located at the golden case itself is reported there already
        if (exc.file, exc.line) == (file, line):
            return exc.message
        return "; ".join(str(each) for each in exc.each())
    except FixtureShapeError as exc:
        return f"{shown}: {exc}"
    return CaseInput(request, schemas, document, calls, looked_in, trace)
