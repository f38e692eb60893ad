"""Fixtures and recordings get strict keys: a misspelt key errors the case, located, with a
suggestion, instead of silently skipping the check it names."""

from __future__ import annotations

import copy
import difflib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from packbuilder import fixture, make_pack
from replaygate.core.model import CaseResult, Status
from replaygate.engine.runner import run_packs
from replaygate.loading import fixture_keys, json_reader
from replaygate.loading.fixture_keys import key_problems
from replaygate.loading.model_errors import unknown_key, version_problem
from replaygate.loading.models import (
    FIXTURE_KEYS,
    FIXTURE_PLACES,
    BoundaryVersion,
    FixtureObject,
)
from replaygate.loading.pack import load_packs
from sizes import sized
from test_pack_loading import NOW

WRAPPED_TOOL = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object"}, "strict": True},
}


def case_for(tmp_path: Path, data: dict[str, Any], recording: Any = None) -> CaseResult:
    pack = make_pack(tmp_path, fixtures={"ok.json": json.dumps(data, indent=2)})
    if recording is not None:
        (pack / "recordings").mkdir()
        (pack / "recordings/ok.recording.json").write_text(json.dumps(recording, indent=2))
    loaded = load_packs(["packs"], cwd=tmp_path, root=None, now=NOW)
    assert loaded.problems == ()
    (case,) = run_packs(loaded, {}).cases
    return case


def with_change(path: tuple[str | int, ...], old: str, new: str) -> dict[str, Any]:
    data: dict[str, Any] = fixture()
    data["request"]["tools"].append(copy.deepcopy(WRAPPED_TOOL))
    data["response"]["error"] = None
    node: Any = data
    for part in path:
        node = node[part]
    node[new] = node.pop(old)
    return data


@pytest.mark.parametrize(
    ("path", "old", "new", "reason"),
    [
        ((), "request", "requst", ":17: unknown key 'requst' (did you mean 'request'?)"),
        (
            ("request", "tools", 0),
            "parameters",
            "paramters",
            ":15: request.tools[0]: unknown key 'paramters' (did you mean 'parameters'?)",
        ),
        (
            ("request", "tools", 1, "function"),
            "parameters",
            "paramters",
            ":32: request.tools[1].function: unknown key 'paramters' (did you mean 'parameters'?)",
        ),
        (
            ("response",),
            "tool_calls",
            "tool_cals",
            ":42: response: unknown key 'tool_cals' (did you mean 'tool_calls'?)",
        ),
        (
            ("response", "tool_calls", 0),
            "arguments",
            "argumnts",
            ":44: response.tool_calls[0]: unknown key 'argumnts' (did you mean 'arguments'?)",
        ),
    ],
)
def test_a_misspelt_fixture_key_errors_the_case_with_its_line_and_suggestion(
    tmp_path: Path, path: tuple[str | int, ...], old: str, new: str, reason: str
) -> None:
    case = case_for(tmp_path, with_change(path, old, new))
    assert case.status is Status.ERROR
    assert case.reason == f"packs/p/golden/ok.json{reason}"


def test_a_key_of_another_object_says_where_it_belongs() -> None:
    data = fixture()
    data["tools"] = data["request"].pop("tools")
    data["request"]["model"] = "gpt-4o"
    data["model"] = data.pop("model_id")
    data["response"]["error"] = {"cod": "x", "message": "m", "type": "t"}
    assert [message for _, message in key_problems(data)] == [
        "`tools` belongs under `request:`, not here",
        "unknown key 'model' (did you mean 'model_id'?)",
        "`model` belongs at the top level, as `model_id`, not here",
        "unknown key 'cod' (did you mean 'code'?)",
    ]


def test_a_wrapped_tool_or_call_says_which_keys_belong_under_function() -> None:
    data = fixture()
    data["request"]["tools"].append({**copy.deepcopy(WRAPPED_TOOL), "parameters": {}})
    (call,) = data["response"]["tool_calls"]
    data["response"]["tool_calls"] = [
        {"type": "function", "function": call, "argumnts": "{}", "id": "call_1"}
    ]
    assert key_problems(data) == [
        (("request", "tools", 1, "parameters"), "`parameters` belongs under `function:`, not here"),
        (
            ("response", "tool_calls", 0, "argumnts"),
            "unknown key 'argumnts' (did you mean 'arguments'?)",
        ),
    ]


def test_provider_extras_of_recorded_responses_are_allowed_where_they_belong() -> None:
    data = fixture(
        [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "B"}}],
        id="msg_1",
        model="claude",
        role="assistant",
        usage={"input_tokens": 1},
        stop_reason="tool_use",
        stop_sequence=None,
        system_fingerprint="fp_1",
        finish_reason="tool_calls",
    )
    data["request"].update(top_p=1, seed=7, system="You help.", stop_sequences=[])
    data["request"]["tools"].append({"name": "x", "input_schema": {}, "cache_control": {}})
    data.update(tool_schema_hash="h", system_prompt_hash=None, messages_hash="m")
    data["tool_choice_mode"] = "auto"
    assert key_problems(data) == []


def test_an_unknown_boundary_version_is_refused_naming_the_known_one(tmp_path: Path) -> None:
    data = fixture()
    data["boundary_version"] = "2.0"
    case = case_for(tmp_path, data)
    assert case.status is Status.ERROR
    assert case.reason == (
        "packs/p/golden/ok.json:2: boundary_version: '2.0' is not a version this replaygate "
        "knows (known: 1.0)"
    )


@pytest.mark.parametrize(("version", "shown"), [([1], "[1]"), ({"v": 1}, "{'v': 1}"), (1.0, "1.0")])
def test_a_boundary_version_that_is_not_a_string_is_refused_not_a_crash(
    tmp_path: Path, version: Any, shown: str
) -> None:
    data = fixture()
    data["boundary_version"] = version
    case = case_for(tmp_path, data)
    assert case.status is Status.ERROR
    assert case.reason == (
        f"packs/p/golden/ok.json:2: boundary_version: {shown} is not a version this replaygate "
        "knows (known: 1.0)"
    )


def test_a_recording_gets_the_same_key_checks(tmp_path: Path) -> None:
    recording = fixture()
    recording["response"]["sucess"] = True
    case = case_for(tmp_path, fixture(), recording)
    assert case.status is Status.ERROR
    assert case.reason == (
        "packs/p/recordings/ok.recording.json:39: response: unknown key 'sucess' "
        "(did you mean 'success'?)"
    )


def test_tool_parameters_that_are_not_a_schema_error_the_case(tmp_path: Path) -> None:
    data = fixture()
    data["request"]["tools"][0]["parameters"] = "object"
    case = case_for(tmp_path, data)
    assert case.status is Status.ERROR
    assert case.reason == (
        "packs/p/golden/ok.json: request.tools[0].parameters: expected an object "
        "(a JSON Schema), got str"
    )


# --- the walk agrees with the plain one it replaced: every object, every key, in order ------


def _misspelt(key: str, data: Mapping[str, Any]) -> bool:
    """A top-level key close to one of the format's that the data lacks: refused, while
    other unknown top-level keys are another recorder's metadata (a warning)."""
    lacking = [name for name in FIXTURE_KEYS[FixtureObject.FIXTURE] if name not in data]
    return any(difflib.SequenceMatcher(None, key, name).ratio() >= 0.85 for name in lacking)


def _reference(data: Mapping[str, Any]) -> list[Any]:
    """Each object of the format checked in turn, as before the walk skipped known objects."""
    keys, found = FIXTURE_KEYS, []

    def check(obj: Any, loc: tuple[Any, ...], kind: FixtureObject, places: Any = None) -> None:
        here = keys[kind]
        for key in obj:
            if key not in here:
                known = places or FIXTURE_PLACES
                elsewhere = {name: place for name, place in known.items() if name not in here}
                found.append(((*loc, key), unknown_key(str(key), here, elsewhere)))

    def calls(items: Any, loc: tuple[Any, ...], flat: Any, wrapper: Any, function: Any) -> None:
        for index, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, Mapping):
                continue
            if not isinstance(item.get("function"), Mapping):
                check(item, (*loc, index), flat)
                continue
            inside = dict.fromkeys(keys[function], "under `function:`")
            check(item, (*loc, index), wrapper, {**FIXTURE_PLACES, **inside})
            check(item["function"], (*loc, index, "function"), function)

    top = {k: v for k, v in data.items() if k in FIXTURE_PLACES or _misspelt(k, data)}
    check(top, (), FixtureObject.FIXTURE, {k: v for k, v in FIXTURE_PLACES.items() if k != "model"})
    if "boundary_version" in data:
        problem = version_problem(data["boundary_version"], BoundaryVersion)
        found += [(("boundary_version",), f"boundary_version: {problem}")] if problem else []
    request, response = data.get("request"), data.get("response")
    if isinstance(request, Mapping):
        check(request, ("request",), FixtureObject.REQUEST)
        calls(request.get("tools"), ("request", "tools"), *_TOOL_KINDS)
    if isinstance(response, Mapping):
        check(response, ("response",), FixtureObject.RESPONSE)
        calls(response.get("tool_calls"), ("response", "tool_calls"), *_CALL_KINDS)
        if isinstance(response.get("error"), Mapping):
            check(response["error"], ("response", "error"), FixtureObject.ERROR)
    return found


_TOOL_KINDS = (FixtureObject.TOOL, FixtureObject.TOOL_WRAPPER, FixtureObject.TOOL_FUNCTION)
_CALL_KINDS = (
    FixtureObject.TOOL_CALL, FixtureObject.TOOL_CALL_WRAPPER, FixtureObject.TOOL_CALL_FUNCTION
)  # fmt: skip
_NAMES = [*sorted({key for keys in FIXTURE_KEYS.values() for key in keys}), "typo", "modle"]
_leaf = st.none() | st.sampled_from(["1.0", "x", 1])


def _objects(inner: Any = _leaf) -> Any:
    return st.dictionaries(st.sampled_from(_NAMES), inner, max_size=4)


_function = _objects() | _leaf
_items = st.lists(
    _objects() | st.builds(lambda o, f: {**o, "function": f}, _objects(), _function) | _leaf,
    max_size=3,
)


@sized(
    500,
    top=_objects(),
    request=_objects() | _leaf,
    response=_objects() | _leaf,
    tools=_items | _leaf,
    calls=_items | _leaf,
    error=_objects() | _leaf,
)
def test_key_problems_are_the_plain_walks(
    top: dict[str, Any], request: Any, response: Any, tools: Any, calls: Any, error: Any
) -> None:
    if isinstance(request, dict):
        request["tools"] = tools
    if isinstance(response, dict):
        response.update(tool_calls=calls, error=error)
    data = {**top, "request": request, "response": response}
    assert key_problems(data) == _reference(data)


def _schema(data: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = data["request"]["tools"][0]["parameters"]
    return schema


def test_a_misspelt_json_schema_keyword_errors_the_case_with_its_line_and_suggestion(
    tmp_path: Path,
) -> None:
    data = fixture()
    _schema(data)["requried"] = _schema(data).pop("required")
    case = case_for(tmp_path, data)
    assert case.status is Status.ERROR
    assert case.reason == (
        "packs/p/golden/ok.json:22: request.tools[0].parameters: 'requried' is not a keyword "
        "of JSON Schema draft 2020-12, so it checks nothing (did you mean 'required'?); an "
        "annotation of your own starts with x-"
    )


@pytest.mark.parametrize("past_the_start", [False, True], ids=["strict-only start", "keyed"])
def test_schema_keywords_are_checked_where_schemas_nest_and_by_the_schemas_draft(
    monkeypatch: pytest.MonkeyPatch, past_the_start: bool
) -> None:
    # past the JSON reader's strict-only start each distinct schema is walked once, known by
    # its key: asked twice, the answer is the same, and a schema one keyword away is not it
    strict_only = json_reader.STRICT_ONLY_CHARS if past_the_start else 0
    monkeypatch.setitem(json_reader._DECODED, "strict_only", strict_only)
    monkeypatch.setattr(fixture_keys, "_TOOLS_WALKED", {})
    clean = fixture()
    assert key_problems(clean) == []
    data = fixture()
    schema = _schema(data)
    schema["properties"]["city"]["maxLenght"] = 3
    schema["properties"]["days"] = {"type": "array", "items": {"minimun": 1}}
    schema["x-internal"] = True
    schema["description"] = "a"
    schema["examples"] = [{"city": "Bern"}]
    wrapped = copy.deepcopy(WRAPPED_TOOL)
    wrapped["function"]["parameters"] = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "$defs": {},
        "definitions": {"a": {"typ": "string"}},
    }
    data["request"]["tools"].append(wrapped)
    assert (
        key_problems(data)
        == key_problems(copy.deepcopy(data))
        == [
            (
                ("request", "tools", 0, "parameters", "properties", "city", "maxLenght"),
                "'maxLenght' is not a keyword of JSON Schema draft 2020-12, so it checks nothing "
                "(did you mean 'maxLength'?); an annotation of your own starts with x-",
            ),
            (
                ("request", "tools", 0, "parameters", "properties", "days", "items", "minimun"),
                "'minimun' is not a keyword of JSON Schema draft 2020-12, so it checks nothing "
                "(did you mean 'minimum'?); an annotation of your own starts with x-",
            ),
            (
                ("request", "tools", 1, "function", "parameters", "$defs"),
                "'$defs' is not a keyword of JSON Schema draft-07, so it checks nothing "
                "(did you mean '$ref'?); an annotation of your own starts with x-",
            ),
            (
                ("request", "tools", 1, "function", "parameters", "definitions", "a", "typ"),
                "'typ' is not a keyword of JSON Schema draft-07, so it checks nothing "
                "(did you mean 'type'?); an annotation of your own starts with x-",
            ),
        ]
    )


def test_the_keyword_table_is_jsonschemas_own() -> None:
    from jsonschema import validators
    from jsonschema_specifications import REGISTRY

    from replaygate.loading.schema_keywords import DRAFTS

    classes = [
        validators.Draft4Validator, validators.Draft6Validator, validators.Draft7Validator,
        validators.Draft201909Validator, validators.Draft202012Validator,
    ]  # fmt: skip
    for name, cls in zip(DRAFTS, classes, strict=True):
        meta = cls.META_SCHEMA
        keys = set(meta.get("properties", {})) | set(cls.VALIDATORS)
        for part in meta.get("allOf", []):  # 2019-09 on: one metaschema per vocabulary
            vocabulary = REGISTRY.contents(meta["$id"].rsplit("/", 1)[0] + "/" + part["$ref"])
            keys |= set(vocabulary.get("properties", {}))
        assert DRAFTS[name] == keys, name


def test_other_recorders_top_level_metadata_is_one_warning_per_file_not_an_error(
    tmp_path: Path,
) -> None:
    data = {**fixture(), "recorded_at": "2026-01-01", "latency_ms": 812}
    recording = {"response": fixture()["response"], "request_id": "req_1"}
    case = case_for(tmp_path, data, recording)
    assert case.status is Status.PASSED
    assert [str(note) for note in case.notes][:2] == [
        "packs/p/golden/ok.json:40: top-level keys 'recorded_at', 'latency_ms' are not part of "
        "the format and are ignored (another recorder's metadata is welcome there)",
        "packs/p/recordings/ok.recording.json:13: top-level key 'request_id' (did you mean "
        "'request'?) is not part of the format and is ignored (another recorder's metadata is "
        "welcome there)",
    ]


def test_inside_the_request_or_a_tool_call_an_unknown_key_stays_an_error(tmp_path: Path) -> None:
    data = fixture()
    data["request"]["recorded_at"] = "2026-01-01"
    case = case_for(tmp_path, data)
    assert case.status is Status.ERROR
    assert case.reason is not None and "request: unknown key 'recorded_at'" in case.reason
