"""The JSON results file: exact shape, schema, round trip and the loader's refusals."""

from __future__ import annotations

import dataclasses
import datetime
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from packbuilder import fixture, make_pack
from replaygate import __version__
from replaygate.cli import main
from replaygate.core.errors import PackError
from replaygate.core.model import CaseResult, Failure, Problem, RunResult, Status
from replaygate.report.json import json_chunks, load_results, render_json
from replaygate.report.results_format import schema

SCHEMA = schema()


def validate(text: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    return document


def test_document_has_the_brief_keys_in_order(mixed: RunResult) -> None:
    document = validate(render_json(mixed))
    assert list(document) == [
        "schema_version", "tool", "provider", "duration_s", "totals", "packs", "problems",
        "warnings", "cases", "shard",
    ]  # fmt: skip
    assert document["schema_version"] == "1.1"
    assert document["tool"] == {"name": "replaygate", "version": __version__}
    assert document["provider"] == "recorded"
    assert document["totals"] == {
        "total": 8, "passed": 2, "failed": 2, "errors": 1, "skipped": 3, "known": 1,
    }  # fmt: skip
    assert document["shard"] == {"index": 1, "count": 2}
    assert document["problems"] == [
        {"file": "packs/bad/pack.yaml", "line": 3,
         "message": "unknown key 'nmae' (did you mean 'name'?)"},
    ]  # fmt: skip


def test_case_and_failure_objects(mixed: RunResult) -> None:
    case = json.loads(render_json(mixed))["cases"][2]
    assert case == {
        "pack": "demo", "pack_dir": "packs/demo", "contract": "weather.yaml",
        "contract_file": "packs/demo/contracts/weather.yaml", "case_id": "rainy",
        "expect_ok": True, "expected_error": None, "observed_ok": False, "passed": False,
        "status": "failed", "classification": "wrong_tool", "fingerprint": "0123456789ab",
        "known": False, "reason": None, "file": "packs/demo/contracts/weather.yaml", "line": 40,
        "inputs": ["packs/demo/golden/wrong_tool.json"], "run_id": None,
        "order": 0, "duration_s": 0.001, "score": None,
        "failures": [{
            "classification": "wrong_tool",
            "message": "expected a call to 'get_weather', but the model called lookup",
            "locator": "expected_tool_calls[0]", "path": None,
            "operator": None, "expected": "get_weather", "actual": "lookup",
            "file": "packs/demo/contracts/weather.yaml", "line": 14,
        }],
        "assertions": [],
    }  # fmt: skip


def test_one_case_a_line_and_ascii_only(hostile: RunResult) -> None:
    text = render_json(hostile)
    assert text.isascii()
    lines = text.splitlines()
    assert sum(line.startswith('{"pack": ') for line in lines) == len(hostile.cases)
    assert "\\ud800" in text and "\\u0000" in text and "\\u001b" in text


def test_empty_run_is_valid(make_run: Callable[..., RunResult]) -> None:
    text = render_json(make_run(packs=()))
    document = validate(text)
    assert document["cases"] == [] and document["packs"] == [] and "shard" not in document
    # an empty list on its member's line, as json.dumps writes it
    assert '\n"packs": [],\n' in text and text.endswith('\n"cases": []\n}\n')


def test_the_document_is_written_in_pieces_of_one_line(mixed: RunResult) -> None:
    """A writer holds one piece at a time: no piece is the whole document or a whole list."""
    pieces = list(json_chunks(mixed))
    assert "".join(pieces) == render_json(mixed)
    assert len(pieces) >= 9 + len(mixed.cases)
    assert all(piece.count("\n") <= 3 for piece in pieces)


@pytest.mark.parametrize("fixture", ["mixed", "hostile"])
def test_round_trip_is_equal(fixture: str, request: pytest.FixtureRequest) -> None:
    result: RunResult = request.getfixturevalue(fixture)
    text = render_json(result)
    validate(text)
    loaded = load_results(text, shown="results.json")
    assert loaded == result
    assert render_json(loaded) == text


def test_round_trip_keeps_a_provider_other_than_recorded(
    make_run: Callable[..., RunResult],
) -> None:
    result = make_run(meta={"provider": "openai"})
    assert json.loads(render_json(result))["provider"] == "openai"
    assert load_results(render_json(result), shown="r.json") == result


@pytest.mark.parametrize(
    ("value", "rendered"),
    [(float("nan"), "nan"), (float("inf"), "inf"), ((1, 2), [1, 2]),
     ({1: "a", None: "b"}, {"1": "a", "null": "b"}),
     ({datetime.date(2024, 1, 2): "x"}, {"2024-01-02": "x"}), ({1, 2}, "{1, 2}"),
     (datetime.date(2024, 1, 2), "2024-01-02"), (b"raw", "b'raw'")],
)  # fmt: skip
def test_values_json_cannot_hold_are_made_plain(
    value: Any,
    rendered: Any,
    make_run: Callable[..., RunResult],
    make_case: Callable[..., CaseResult],
    make_failure: Callable[..., Failure],
) -> None:
    case = make_case(Status.FAILED, failures=(make_failure(actual=value),))
    text = render_json(make_run(case))
    assert json.loads(text)["cases"][0]["failures"][0]["actual"] == rendered
    validate(text)


def test_a_value_nested_too_deeply_is_cut(
    make_run: Callable[..., RunResult],
    make_case: Callable[..., CaseResult],
    make_failure: Callable[..., Failure],
) -> None:
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    case = make_case(Status.FAILED, failures=(make_failure(expected=deep),))
    text = render_json(make_run(case))
    assert "<nested too deeply>" in text
    validate(text)


def test_each_case_is_one_line(make_many: Callable[[int], RunResult]) -> None:
    text = render_json(make_many(2000))
    assert len(json.loads(text)["cases"]) == 2000
    assert text.count("\n") == 2000 + 14  # one line per case, plus the fixed lines


def load_error(text: str) -> str:
    with pytest.raises(PackError) as caught:
        load_results(text, shown="shard-1.json")
    assert caught.value.file == "shard-1.json"
    return str(caught.value)


def good(mixed: RunResult) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(render_json(mixed))
    return document


def test_load_refuses_invalid_json_with_its_line() -> None:
    assert (
        load_error('{\n  "a": ,\n}') == "shard-1.json:2: invalid JSON: Expecting value (column 8)"
    )


def test_load_refuses_nan_with_its_line() -> None:
    message = load_error('{"schema_version": "1.1",\n "duration_s": NaN}')
    assert message == ("shard-1.json:2: NaN is not valid JSON; write a number, a string or null")


def test_load_refuses_another_schema_version(mixed: RunResult) -> None:
    document = good(mixed) | {"schema_version": "2.0"}
    assert load_error(json.dumps(document)) == (
        "shard-1.json:1: not a replaygate results file: $.schema_version: expected '1.1', got '2.0'"
    )
    assert (
        load_error("[]")
        == "shard-1.json:1: not a replaygate results file: $: expected an object, got an array"
    )
    assert load_error("{}").endswith("results file: $: missing 'schema_version'")


def test_a_case_needs_its_assertions(mixed: RunResult) -> None:
    document = good(mixed)
    del document["cases"][0]["assertions"]
    assert load_error(json.dumps(document)).endswith("$.cases[0]: missing 'assertions'")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("cases"), "$: missing 'cases'"),
        (lambda d: d.update(extra=1), "$: unknown key 'extra'"),
        (lambda d: d.update(cases={}), "$.cases: expected an array, got an object"),
        (lambda d: d["cases"][3].update(status="bogus"),
         "$.cases[3].status: expected one of passed, failed, error, skipped, got 'bogus'"),
        (lambda d: d["cases"][3].update(status=["x"]),
         "$.cases[3].status: expected one of passed, failed, error, skipped, got an array"),
        (lambda d: d["cases"][0].update(line=True),
         "$.cases[0].line: expected an integer, got true"),
        (lambda d: d["cases"][0].update(line=0),
         "$.cases[0].line: expected 1 or more, got 0"),
        (lambda d: d["cases"][2].update(fingerprint="XYZ"),
         "$.cases[2].fingerprint: expected a string matching ^[0-9a-f]{12}$, got 'XYZ'"),
        (lambda d: d["cases"][2].update(fingerprint=12),
         "$.cases[2].fingerprint: expected a string or null, got 12"),
        (lambda d: d["cases"][0].update(score=1.5),
         "$.cases[0].score: expected 1 or less, got 1.5"),
        (lambda d: d.update(schema_version="1.1", tool={"name": "other", "version": "1"}),
         "$.tool.name: expected 'replaygate', got 'other'"),
        (lambda d: d["cases"][2]["failures"][0].pop("locator"),
         "$.cases[2].failures[0]: missing 'locator'"),
        (lambda d: d["cases"][2]["failures"].append(7),
         "$.cases[2].failures[1]: expected an object, got 7"),
        (lambda d: d["cases"][0].update(passed=False),
         "$.cases[0].passed: false contradicts the status"),
        (lambda d: d["cases"][0].update(known=True),
         "$.cases[0].known: only a failed case can be known"),
        (lambda d: d["totals"].update(passed=3), "$.totals: the totals do not match the cases"),
        (lambda d: d["tool"].pop("version"), "$.tool: missing 'version'"),
        (lambda d: d.update(shard={"index": 3, "count": 2}),
         "$.shard: index must be between 1 and count"),
        (lambda d: d["problems"][0].update(line="3"),
         "$.problems[0].line: expected an integer or null, got '3'"),
        (lambda d: d["packs"][0].update(contracts=-1),
         "$.packs[0].contracts: expected 0 or more, got -1"),
        (lambda d: d.update(duration_s="fast"),
         "$.duration_s: expected a number, got 'fast'"),
    ],
)  # fmt: skip
def test_load_names_the_first_wrong_field(
    change: Callable[[dict[str, Any]], Any], message: str, mixed: RunResult
) -> None:
    document = good(mixed)
    change(document)
    assert load_error(json.dumps(document)) == (
        f"shard-1.json:1: not a replaygate results file: {message}"
    )
    cross_field = ("totals do not match", "between 1 and count", "contradicts", "can be known")
    if not any(rule in message for rule in cross_field):
        with pytest.raises(jsonschema.ValidationError):  # the published schema refuses it too
            jsonschema.Draft202012Validator(SCHEMA).validate(document)


def test_load_error_names_the_line_of_the_wrong_value(mixed: RunResult) -> None:
    text = render_json(mixed)
    lines = text.splitlines()
    row = next(n for n, line in enumerate(lines, 1) if '"case_id": "broken"' in line)
    totals = next(n for n, line in enumerate(lines, 1) if line.startswith('"totals"'))
    assert (totals, row) == (6, 20)  # the writer's layout: one member, one case a line
    bad = text.replace('"case_id": "broken", ', '"case_id": "broken", "extra": 1, ')
    assert load_error(bad).startswith(f"shard-1.json:{row}: not a replaygate results file: ")
    summary = text.replace('"known": 1}', '"known": 0}', 1)
    assert load_error(summary) == (
        "shard-1.json:6: not a replaygate results file: $.totals: the totals do not match the cases"
    )


def test_load_error_is_one_line_even_for_a_hostile_key(mixed: RunResult) -> None:
    document = good(mixed)
    document["\n\x1b[31m\ud800"] = 1
    message = load_error(json.dumps(document))
    assert "\n" not in message and "\x1b" not in message
    message.encode("utf-8")


def test_load_refuses_deep_nesting() -> None:
    assert load_error("[" * 100_000 + "]" * 100_000) == (
        "shard-1.json:1: nesting is deeper than 64 levels"
    )


DOCS = Path(__file__).parents[2] / "docs" / "results.md"


EXAMPLE_CONTRACT = """\
tool: get_weather
expected_tool_calls:
  - name: get_weather
    argument_invariants:
      - path: $.city
        equals: Bern
golden_cases:
  - id: sunny
    input_ref: sunny.json
    expect_ok: true
  - id: rainy
    input_ref: rainy.json
    expect_ok: true
  - id: live-only
    input_ref: sunny.json
    expect_ok: true
    provider_modes: [live]
"""


def _timeless(document: Any) -> Any:
    if isinstance(document, dict):
        return {k: _timeless(v) for k, v in document.items() if k not in ("duration_s", "tool")}
    return [_timeless(item) for item in document] if isinstance(document, list) else document


def test_the_documented_example_is_what_a_run_writes(tmp_path: Path) -> None:
    example = DOCS.read_text(encoding="utf-8").split("```json\n", 1)[1].split("```", 1)[0]
    validate(example)
    assert load_results(example, shown="docs/results.md").totals.total == 3
    rainy = fixture([{"name": "lookup", "arguments": {"city": "Bern"}}])
    make_pack(
        tmp_path,
        "weather",
        contracts={"weather.yaml": EXAMPLE_CONTRACT},
        pack_yaml="pack_id: weather\nname: Weather agent\n",
        fixtures={"sunny.json": fixture(), "rainy.json": rainy},
    )
    out = tmp_path / "results.json"
    main(["run", "--root", str(tmp_path), str(tmp_path / "packs"), "--json", str(out)])
    assert _timeless(json.loads(out.read_text())) == _timeless(json.loads(example))


def test_every_schema_key_is_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    definitions = [SCHEMA, SCHEMA["properties"]["totals"], *SCHEMA["$defs"].values()]
    keys = {key for definition in definitions for key in definition.get("properties", {})}
    assert keys and all(f"`{key}`" in text for key in keys)


def test_warnings_round_trip_and_old_files_without_them_still_load(mixed: RunResult) -> None:
    warning = Problem("packs/p/golden/old.json", None, "no golden case names this fixture")
    text = render_json(dataclasses.replace(mixed, warnings=(warning,)))
    assert validate(text)["warnings"] == [
        {"file": "packs/p/golden/old.json", "line": None,
         "message": "no golden case names this fixture"},
    ]  # fmt: skip
    assert load_results(text, shown="r.json").warnings == (warning,)
    old = json.loads(text)
    del old["warnings"]
    assert load_results(json.dumps(old), shown="r.json").warnings == ()


def _keywords(node: Any) -> set[str]:
    """Every keyword the schema uses; the names under properties and $defs are not keywords."""
    if not isinstance(node, dict):
        return set()
    found = set(node)
    for key, value in node.items():
        children = value.values() if key in ("properties", "$defs") else [value]
        for child in children:
            found |= _keywords(child)
    return found


def test_every_keyword_of_the_schema_has_a_message_in_our_words() -> None:
    from replaygate.report.results_format import _EXPLAIN

    used = _keywords(SCHEMA)
    assert {"type", "required", "additionalProperties", "minimum", "pattern"} <= used
    annotations = {"$schema", "$id", "$ref", "$defs", "title", "description", "properties", "items"}
    assert used - annotations <= set(_EXPLAIN)


def test_rendering_results_does_not_import_jsonschema() -> None:
    code = "import sys, replaygate.report.json; print('jsonschema' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"


def test_order_round_trips_and_old_files_without_it_read_as_order_0(mixed: RunResult) -> None:
    ordered = dataclasses.replace(mixed, cases=tuple(
        dataclasses.replace(case, order=10 + n) for n, case in enumerate(mixed.cases)
    ))  # fmt: skip
    text = render_json(ordered)
    assert [case["order"] for case in validate(text)["cases"]][:2] == [10, 11]
    assert load_results(text, shown="r.json") == ordered
    old = json.loads(text)
    for case in old["cases"]:
        del case["order"]
    validate(json.dumps(old))
    assert {case.order for case in load_results(json.dumps(old), shown="r.json").cases} == {0}


def test_inputs_round_trip_and_old_files_without_them_read_as_none(mixed: RunResult) -> None:
    traced = dataclasses.replace(
        mixed,
        cases=(
            dataclasses.replace(mixed.cases[0], inputs=("runs/a.json",), run_id="r-1"),
            *mixed.cases[1:],
        ),
    )
    text = render_json(traced)
    first = validate(text)["cases"][0]
    assert (first["inputs"], first["run_id"]) == (["runs/a.json"], "r-1")
    assert load_results(text, shown="r.json") == traced
    old = json.loads(text)
    for case in old["cases"]:
        del case["inputs"], case["run_id"]
    validate(json.dumps(old))
    cases = load_results(json.dumps(old), shown="r.json").cases
    assert {(case.inputs, case.run_id) for case in cases} == {((), None)}
