"""Golden case inputs: the fixture a case names and its sidecar recording, normalised."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from replaygate.assertions.trace import Trace
from replaygate.core.errors import PackError
from replaygate.core.model import Problem
from replaygate.core.places import where
from replaygate.loading import files, folders, json_reader, traces
from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.files import shown_path
from replaygate.loading.fixture_keys import KeyProblem, key_problems, top_level_extras
from replaygate.loading.golden import input_base, recording_name
from replaygate.loading.model_errors import format_loc
from replaygate.loading.models import (
    FIXTURE_KEYS,
    RECORDED_KEYS,
    RECORDING_KEYS,
    FixtureObject,
)
from replaygate.loading.normalize import (
    FixtureShapeError,
    ToolCall,
    normalize_request,
    normalize_response,
)
from replaygate.loading.packs import Pack
from replaygate.loading.recording import Recording, age_days, parse_recording, staleness
from replaygate.loading.targets import CASE_SEPARATOR


@dataclass(frozen=True, slots=True)
class CaseInput:
    """A golden case's normalised request and response, as loaded from its files."""

    request: dict[str, Any]
    schemas: Mapping[str, Mapping[str, Any]]
    response: dict[str, Any] | None  # None: no recording and no embedded response
    calls: tuple[ToolCall, ...]
    looked_in: str  # where a recording was looked for, for recording_not_found
    # the command that records (or refreshes) this case, where a recording or the lack of
    # one is to be worded: "" for a fixture's own response
    record_command: str = ""
    stale: str | None = None  # what changed since the recording was made
    notes: tuple[Problem, ...] = ()  # warnings: an old recording, one that cannot be checked
    skip: str | None = None  # why a live run leaves the case alone
    trace: Trace | None = None  # when the response is a whole run
    recorded: Recorded | None = None  # the verdicts a peer tool wrote beside the trace
    inputs: tuple[str, ...] = ()  # the files read, as shown (CaseResult.inputs)
    run_id: str | None = None  # a peer tool's id of the run judged


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


def fixture_path(pack: Pack, contract: Contract, case: GoldenCase) -> Path:
    """The fixture a golden case names. Raises PackError when it leaves its directory."""
    return _fixture_path(pack, case.input_ref, contract.file, case.line)


def recording_path(pack: Pack, input_ref: str) -> tuple[Path, str]:
    """Where the sidecar recording of a fixture lives (whether or not it exists), and how it
    is shown. Raises PackError when the path would leave the recordings directory."""
    name = recording_name(input_ref)
    shown = shown_path(os.path.join(pack.recordings_dir, name), pack.root)
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


def _recording(pack: Pack, input_ref: str) -> tuple[Path | None, str]:
    """The sidecar recording's path when one exists, and where it was looked for."""
    candidate = os.path.join(pack.recordings_dir, recording_name(input_ref))
    if not folders.lexists(candidate):
        return None, shown_path(candidate, pack.root)
    return recording_path(pack, input_ref)


def case_model(pack: Pack, fixture: Mapping[str, Any]) -> str:
    """The model a case's request goes to: the fixture's model_id, else the pack's default."""
    model = fixture.get("model_id")
    return model if isinstance(model, str) and model else pack.default_model or ""


def case_provider(pack: Pack, fixture: Mapping[str, Any]) -> str:
    provider = fixture.get("provider")
    return provider if isinstance(provider, str) and provider else pack.provider or "openai"


def record_command(
    contract_file: str,
    case_id: str,
    provider: str,
    *,
    refresh: bool,
    recording: Recording | None = None,
    model: str | None = None,
) -> str:
    """The exact command line that records one case, again as ``recording`` was made
    (its --base-url, --api-key-env and --model) when there is one; ``model``: `run --model`."""
    words = ["replaygate", "record", "--provider", provider]
    if recording is not None and recording.base_url:
        words += ["--base-url", recording.base_url]
    if recording is not None and recording.api_key_env:
        words += ["--api-key-env", recording.api_key_env]
    model = model or (recording.override if recording is not None else None)
    words += ["--model", model] if model else []
    words += ["--mode", "refresh"] if refresh else []
    return shlex.join([*words, f"{contract_file}{CASE_SEPARATOR}{case_id}"])


def _notes(pack: Pack, recording: Recording, shown: str, command: str) -> tuple[Problem, ...]:
    """Warnings about a recording that is judged all the same."""
    if not recording.checkable:
        message = f"holds no request, so a changed request cannot be noticed; record it: {command}"
        return (Problem(shown, None, message),)
    age = age_days(recording, datetime.now(UTC))
    if age is not None and age > pack.max_age_days:
        message = (
            f"recorded {age} days ago, more than recordings.max_age_days "
            f"({pack.max_age_days}); refresh it: {command}"
        )
        return (Problem(shown, None, message),)
    return ()


def _read_recording(
    pack: Pack, input_ref: str, notes: list[Problem] | None = None
) -> tuple[Recording | None, str]:
    path, shown = _recording(pack, input_ref)
    if path is None:
        return None, shown
    return parse_recording(_read_checked(path, shown, _recording_keys, notes), shown), shown


def _recording_keys(data: Any) -> Mapping[FixtureObject, frozenset[str]]:
    """A recording `replaygate record` wrote has its own top level; an older one is a fixture's."""
    written = isinstance(data, Mapping) and "recording_version" in data
    return RECORDED_KEYS if written else RECORDING_KEYS


Keys = Mapping[FixtureObject, frozenset[str]]


def _read_checked(
    path: Path, shown: str, keys: Keys | Callable[[Any], Keys], notes: list[Problem] | None = None
) -> Any:
    """A fixture or recording: JSON whose objects hold only the keys of the format
    (``keys``, or what ``keys`` picks for the data read)."""
    text = files.read_text(path, shown=shown, max_bytes=files.MAX_JSON_BYTES)
    return _checked(text, shown, keys, notes)


def _checked(
    text: str, shown: str, keys: Keys | Callable[[Any], Keys], notes: list[Problem] | None = None
) -> Any:
    """The JSON ``text``, its keys checked; the top-level keys the format does not know
    (other recorders' metadata) added to ``notes``, one warning for the file."""
    data = json_reader.parse_json(text, shown=shown)
    if callable(keys):
        keys = keys(data)
    found = key_problems(data, keys) if isinstance(data, Mapping) else []
    extras = top_level_extras(data, keys) if isinstance(data, Mapping) else []
    if extras and notes is not None:
        notes.append(_extras_note(text, shown, extras))
    if not found:
        return data
    errors = [
        PackError(shown, json_reader.line_of_key(text, loc), f"{format_loc(loc[:-1])}: {message}")
        if loc[:-1]
        else PackError(shown, json_reader.line_of_key(text, loc), message)
        for loc, message in found
    ]
    raise PackError(errors[0].file, errors[0].line, errors[0].message, also=tuple(errors[1:]))


def _extras_note(text: str, shown: str, extras: list[KeyProblem]) -> Problem:
    named = ", ".join(message.removeprefix("unknown key ") for _, message in extras)
    key, verb = ("keys", "are") if len(extras) > 1 else ("key", "is")
    message = (
        f"top-level {key} {named} {verb} not part of the format and {verb} ignored "
        "(another recorder's metadata is welcome there)"
    )
    return Problem(shown, json_reader.line_of_key(text, extras[0][0]), message)


def _read_fixture(path: Path, shown: str, notes: list[Problem] | None = None) -> dict[str, Any]:
    return _fixture_object(_read_checked(path, shown, FIXTURE_KEYS, notes), shown)


def _fixture_object(fixture: Any, shown: str) -> dict[str, Any]:
    if not isinstance(fixture, dict):
        raise PackError(shown, 1, "a fixture must be a JSON object")
    return fixture


def _load_fixture(
    pack: Pack, input_ref: str, file: str, line: int | None, notes: list[Problem]
) -> tuple[Path | str, str, dict[str, Any]]:
    """The fixture ``input_ref`` names, where it is and how it is shown. Inside ``reading()``
    a plain name is read through its directory's descriptor, checked once for the run;
    anything else (a path, a symlink, a problem to word) takes the full check."""
    base, rest = input_base(input_ref, pack.golden_dir, pack.negative_dir)
    opened = folders.folder(base, pack.root) if files.plain_name(rest) else None
    if opened is not None:
        path = os.path.join(opened.real, rest)
        shown = shown_path(path, pack.root)
        text = files.read_in(opened, rest, shown=shown, max_bytes=files.MAX_JSON_BYTES)
        if text is not None:
            return path, shown, _fixture_object(_checked(text, shown, FIXTURE_KEYS, notes), shown)
    found = _fixture_path(pack, input_ref, file, line)
    shown = shown_path(found, pack.root)
    return found, shown, _read_fixture(found, shown, notes)


def read_fixture(pack: Pack, contract: Contract, case: GoldenCase) -> dict[str, Any]:
    """The case's fixture, its keys checked. Raises PackError."""
    path = fixture_path(pack, contract, case)
    return _read_fixture(path, shown_path(path, pack.root))


def load_case_input(
    pack: Pack, contract: Contract, case: GoldenCase, model: str | None = None
) -> CaseInput | str:
    """The case's normalised input, or a one-line reason it cannot be evaluated.

    ``model`` (``--model``) replaces the fixture's model in the recording's identity check.
    """
    if contract.case_inputs is not None:  # read with the contract (an @isdk fixture)
        return cast("CaseInput | str", contract.case_inputs[case.id])
    return load_input(
        pack, case.input_ref, file=contract.file, line=case.line, case_id=case.id, model=model
    )


def load_input(
    pack: Pack,
    input_ref: str,
    *,
    file: str,
    line: int | None,
    case_id: str | None = None,
    model: str | None = None,
) -> CaseInput | str:
    """The normalised input of the fixture ``input_ref`` names (named at ``file:line``, by the
    golden case ``case_id`` when there is one: its record command is given)."""
    from_fixture = False  # whether a trace's shape problem can be looked up in the fixture
    try:
        extras: list[Problem] = []  # other recorders' top-level metadata: warnings
        path, shown, fixture = _load_fixture(pack, input_ref, file, line, extras)
        recording, looked_in = _read_recording(pack, input_ref, extras)
        request, schemas = normalize_request(fixture.get("request"))
        provider = recording.provider if recording and recording.provider else None
        provider = provider or case_provider(pack, fixture)
        refresh = recording is not None
        # only a recording (its notes, its staleness) or a missing response is worded with it
        wanted = refresh or fixture.get("response") is None
        command = (
            record_command(
                file, case_id, provider, refresh=refresh, recording=recording, model=model
            )
            if case_id and wanted
            else ""
        )
        stale: str | None = None
        notes: tuple[Problem, ...] = tuple(extras)
        if recording is None:
            response = fixture.get("response")
        else:
            # a recording made with `record --model` is checked against the model it sent
            checked = model or recording.override or case_model(pack, fixture)
            stale = staleness(recording, fixture.get("request"), checked)
            notes += _notes(pack, recording, looked_in, command)
            response = recording.response
        read = (shown,) if recording is None else (shown, looked_in)
        if response is None:
            return CaseInput(
                request, schemas, None, (), looked_in, command, stale, notes, inputs=read
            )
        from_fixture = recording is None and bool(fixture.get("response"))
        if recording is not None:  # a malformed response is the recording's problem
            shown = looked_in
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
        line = shape_line(path, shown, ("response", *exc.loc)) if from_fixture and exc.loc else None
        return f"{where(shown, line)}: {exc}"
    return CaseInput(
        request,
        schemas,
        document,
        calls,
        looked_in,
        command,
        stale,
        notes,
        trace=trace,
        inputs=read,
    )


def shape_line(path: Path | str, shown: str, loc: tuple[str | int, ...]) -> int | None:
    """The line of ``loc`` (keys and indexes) in the JSON file."""
    text = files.read_text(Path(path), shown=shown, max_bytes=files.MAX_JSON_BYTES)
    return json_reader.line_of_key(text, loc)
