"""@isdk fixtures: operators mapped onto ours, its two rule bugs not repeated, scoring, refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaygate.cli import main
from replaygate.report.json import load_results, render_json

TOOL_TRACE = [
    {"role": "user", "content": "Who is user 7?"},
    {"role": "assistant", "tools": [
        {"name": "search", "args": {"q": "user 7"}},
        {"name": "get_user", "args": {"id": 7, "endpoint": "/api/v1/users"}, "result": {"n": 1}},
    ]},
    {"role": "assistant", "content": "  User 7 is Ada.  "},
]  # fmt: skip


def run(tmp_path: Path, fixture: str, results: Any) -> tuple[int, dict[str, Any]]:
    isdk = tmp_path / "packs" / "agent" / "isdk"
    isdk.mkdir(parents=True, exist_ok=True)
    (isdk.parent / "pack.yaml").write_text('pack_id: "agent"\n', encoding="utf-8")
    (isdk / "t.fixture.yaml").write_text(fixture, encoding="utf-8")
    if results is not None:
        (isdk / "t.results.json").write_text(json.dumps(results), encoding="utf-8")
    out = tmp_path / "results.json"
    code = main(["run", "--root", str(tmp_path), "--json", str(out), str(tmp_path / "packs")])
    return code, json.loads(out.read_text(encoding="utf-8"))


def one_case(tmp_path: Path, expect: str, output: Any = "ok", trace: Any = None) -> dict[str, Any]:
    fixture = f"- title: t\n  expect:\n{expect}"
    _, results = run(tmp_path, fixture, [{"output": output, "messages": trace or TOOL_TRACE}])
    [case] = results["cases"]
    return dict(case)


def verdict(case: dict[str, Any]) -> tuple[str, list[tuple[int, str]]]:
    return case["status"], [(f["line"], f["message"]) for f in case["failures"]]


# --- the two @isdk rule bugs --------------------------------------------------------------


def test_a_path_shaped_string_is_text_not_a_regex(tmp_path: Path) -> None:
    """@isdk reads "/api/v1/users" as the regex /api/ with flags "v1/users" and errors."""
    expect = "    tools:\n      - args: {endpoint: /api/v1/users}\n"
    assert verdict(one_case(tmp_path, expect)) == ("passed", [])
    other = [{"role": "assistant", "tools": [{"name": "x", "args": {"endpoint": "/api/v2"}}]}]
    status, [(line, message)] = verdict(one_case(tmp_path, expect, trace=other))
    assert (status, line) == ("failed", 4)
    assert message.endswith("$.args.endpoint: '/api/v2' does not contain '/api/v1/users'")


def test_a_regex_literal_is_a_regex_with_its_flags(tmp_path: Path) -> None:
    expect = "    output: /^user 7 IS/i\n"
    assert verdict(one_case(tmp_path, expect, output="  User 7 is Ada")) == ("passed", [])
    _, [(_, message)] = verdict(one_case(tmp_path, expect, output="Ada is user 7"))
    assert message == "'Ada is user 7' does not match '(?i)^user 7 IS'"


def test_a_string_with_an_unescaped_slash_inside_is_text(tmp_path: Path) -> None:
    """@isdk reads "/usr/bin/" as the regex /usr\\/bin/, which "usr/bin" would pass."""
    expect = "    output: /usr/bin/\n"
    assert verdict(one_case(tmp_path, expect, output="run /usr/bin/env"))[0] == "passed"
    _, [(_, message)] = verdict(one_case(tmp_path, expect, output="usr/bin"))
    assert message == "'usr/bin' does not contain '/usr/bin/'"


def test_a_regex_literal_needs_a_string(tmp_path: Path) -> None:
    """@isdk tests JSON.stringify(42); replaygate does not (docs/isdk.md)."""
    _, [(_, message)] = verdict(one_case(tmp_path, "    output: /^4\\d$/\n", output=42))
    assert message == "42 is not a string"


def test_a_wrong_tool_with_matching_arguments_fails(tmp_path: Path) -> None:
    """@isdk's OR in $contains leaks into the object's keys: any matching key passed."""
    expect = "    tools:\n      - name: get_user\n        args: {id: 7}\n"
    trace = [{"role": "assistant", "tools": [{"name": "delete_user", "args": {"id": 7}}]}]
    status, [(line, message)] = verdict(one_case(tmp_path, expect, trace=trace))
    assert (status, line) == ("failed", 4)
    assert "closest is item 1 of 1: $.name: 'delete_user' does not contain 'get_user'" in message
    assert verdict(one_case(tmp_path, expect))[0] == "passed"


def test_contains_inside_or_keeps_objects_whole(tmp_path: Path) -> None:
    expect = (
        "    messages:\n      $or:\n"
        "        - $contains: {role: assistant, tools: {$contains: {name: delete_user}}}\n"
        "        - $contains: {role: system}\n"
    )
    assert verdict(one_case(tmp_path, expect))[0] == "failed"
    passing = expect.replace("delete_user", "get_user")
    assert verdict(one_case(tmp_path, passing))[0] == "passed"


# --- matching rules -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expect", "status"),
    [
        ("    output: ' Ada '\n", "passed"),  # trimmed substring
        ("    output: ada\n", "failed"),  # case-sensitive
        ("    output: {$eq: User 7 is Ada.}\n", "passed"),
        ("    output: {$ne: User 7 is Ada.}\n", "failed"),
        ("    output: {$not: /Bob/}\n", "passed"),
        ("    output: {$and: [User, Ada]}\n", "passed"),
        ("    output: {$and: [User, Bob]}\n", "failed"),
        ("    output: {$in: [a, User 7 is Ada.]}\n", "passed"),
        ("    output: {$nin: [a, User 7 is Ada.]}\n", "failed"),
        ("    messages: {$first: {role: user}}\n", "passed"),
        ("    messages: {$last: {role: user}}\n", "failed"),
        ("    messages: {$nth: {$index: 1, role: assistant}}\n", "passed"),
        ("    messages: {$each: {role: /^(user|assistant)$/}}\n", "passed"),
        ("    messages: {$each: {role: user}}\n", "failed"),
        ("    messages: {$all: [{role: user}, {content: Ada}]}\n", "passed"),
        ("    messages: [{role: user}, {role: assistant}]\n", "passed"),  # positional
        ("    messages: [{role: assistant}]\n", "failed"),
        ("    messages: {$contains: {tools: {$contains: {args.id: 7}}}}\n", "passed"),  # path keys
        ("    messages: {$contains: {content: {$exists: false}}}\n", "passed"),
        ("    messages: {$each: {content: {$exists: true}}}\n", "failed"),
        ("    tools: {$sequence: [{name: search}, {name: get_user}]}\n", "passed"),
        ("    tools: {$sequence: [{name: get_user}, {name: search}]}\n", "failed"),
        ("    tools: [{name: get_user, result: {n: 1}}]\n", "passed"),
    ],
)
def test_operators(tmp_path: Path, expect: str, status: str) -> None:
    case = one_case(tmp_path, expect, output="User 7 is Ada.")
    assert case["status"] == status, case["failures"]


@pytest.mark.parametrize(
    "expect",
    ["{a: {$ne: 1}}", "{a: {$nin: [1, 2]}}", "{a: {$not: {$exists: true}}}", "{a: {$not: 1}}"],
)
def test_negations_pass_on_an_absent_key(tmp_path: Path, expect: str) -> None:
    case = one_case(tmp_path, f"    output: {expect}\n", output={"b": 1})
    assert verdict(case) == ("passed", [])


@pytest.mark.parametrize(
    ("expect", "status"),
    [
        ("    output: {n: {$gt: 3}}\n", "passed"),
        ("    output: {n: {$gt: 4}}\n", "failed"),
        ("    output: {n: {$gte: 4}}\n", "passed"),
        ("    output: {n: {$lt: 4}}\n", "failed"),
        ("    output: {n: {$lte: 4}}\n", "passed"),
        ("    output: {n: 4}\n", "passed"),
        ("    output: {n: '4'}\n", "failed"),  # 4 is not "4"
        ("    output: {n: 4, extra: {$exists: false}}\n", "passed"),
    ],
)
def test_numbers_and_objects(tmp_path: Path, expect: str, status: str) -> None:
    assert one_case(tmp_path, expect, output={"n": 4, "m": [1]})["status"] == status


@pytest.mark.parametrize(
    ("strict", "output", "status"),
    [
        ("false", {"n": 4, "m": 1}, "passed"),
        ("object", {"n": 4, "m": 1}, "failed"),
        ("object", {"n": 4}, "passed"),
        ("[array]", {"n": 4, "m": 1}, "passed"),
        ("true", {"n": 4}, "passed"),
    ],
)
def test_strict(tmp_path: Path, strict: str, output: Any, status: str) -> None:
    fixture = f"- title: t\n  strict: {strict}\n  output: {{n: 4}}\n"
    _, results = run(tmp_path, fixture, [{"output": output}])
    assert results["cases"][0]["status"] == status


# --- scoring ------------------------------------------------------------------------------

SCORED = """\
---
scoring: true
maxScore: 10
passScore: 6
---
- title: scored
  output: User
  expect:
    messages:
      $contains: {role: assistant, content: Bob}
      $score: 3
    tools:
      $all: [{name: search}]
      $score: 7
"""


def test_score_splits_max_score_over_blocks_and_weights(tmp_path: Path) -> None:
    _, results = run(tmp_path, SCORED, [{"output": "User 7", "messages": TOOL_TRACE}])
    [case] = results["cases"]
    # output block 1/2; expect block 1/2 split 3:7, messages failed -> 0.5 + 0.5 * 0.7
    assert (case["status"], case["score"]) == ("passed", 0.85)
    assert [f["locator"] for f in case["failures"]] == ["expect.messages:any_of"]


def test_below_pass_score_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, results = run(tmp_path, SCORED, [{"output": "Nobody", "messages": TOOL_TRACE}])
    assert (results["cases"][0]["status"], results["cases"][0]["score"]) == ("failed", 0.35)
    assert "(case scored, score 0.35)" in capsys.readouterr().out
    summary = tmp_path / "summary.md"
    main(["run", "--root", str(tmp_path), "--summary", str(summary), str(tmp_path / "packs")])
    assert "| ` scored (score 0.35) ` |" in summary.read_text(encoding="utf-8")


def test_a_critical_failure_fails_whatever_the_score(tmp_path: Path) -> None:
    fixture = SCORED.replace("$score: 3", "$meta: {score: 3, critical: true}")
    _, results = run(tmp_path, fixture, [{"output": "User 7", "messages": TOOL_TRACE}])
    assert (results["cases"][0]["status"], results["cases"][0]["score"]) == ("failed", 0.85)


def test_without_scoring_any_failure_fails_and_the_score_is_reported(tmp_path: Path) -> None:
    fixture = SCORED.replace("scoring: true", "scoring: false")
    _, results = run(tmp_path, fixture, [{"output": "User 7", "messages": TOOL_TRACE}])
    assert (results["cases"][0]["status"], results["cases"][0]["score"]) == ("failed", 0.85)


@pytest.mark.parametrize(
    ("output", "status", "score"),
    [
        ({"a": 1, "b": 2, "c": 0, "d": 4}, "passed", 0.75),  # three keys of four
        ({"a": 1, "b": 0, "c": 0, "d": 0}, "failed", 0.25),
        ("abcd", "failed", 0.0),  # not an object: nothing of it holds
    ],
)
def test_an_object_scores_its_keys_in_equal_shares(
    tmp_path: Path, output: Any, status: str, score: float
) -> None:
    fixture = "- scoring: true\n  passScore: 50\n  output: {a: 1, b: 2, c: 3, d: 4}\n"
    _, results = run(tmp_path, fixture, [{"output": output}])
    assert (results["cases"][0]["status"], results["cases"][0]["score"]) == (status, score)


def test_the_score_survives_the_json_round_trip(tmp_path: Path) -> None:
    run(tmp_path, SCORED, [{"output": "User 7", "messages": TOOL_TRACE}])
    text = (tmp_path / "results.json").read_text(encoding="utf-8")
    loaded = load_results(text, shown="r.json")
    assert loaded.cases[0].score == 0.85
    assert render_json(loaded) == text


# --- cases as golden cases ----------------------------------------------------------------


def test_each_case_has_its_line_fingerprint_and_stable_id(tmp_path: Path) -> None:
    fixture = (
        "- title: a\n  output: x\n- output: y\n- title: a\n  output: z\n- output: w\n  skip: true\n"
    )
    code, results = run(tmp_path, fixture, [{"output": "x"}, {"output": "n"}, {"output": "z"}])
    cases = [
        (c["case_id"], c["status"], c["line"], bool(c["fingerprint"])) for c in results["cases"]
    ]
    assert cases == [
        ("a", "passed", 1, False),
        ("case 2", "failed", 3, True),
        ("a #2", "passed", 4, False),
        ("case 4", "skipped", 6, False),
    ]
    assert code == 1
    assert results["cases"][1]["file"] == "packs/agent/isdk/t.fixture.yaml"
    assert results["packs"][0]["contracts"] == 1


def test_only_skips_the_other_cases(tmp_path: Path) -> None:
    fixture = "- output: x\n- output: y\n  only: true\n"
    _, results = run(tmp_path, fixture, [{"output": "x"}, {"output": "y"}])
    assert [(c["status"], c["reason"]) for c in results["cases"]] == [
        ("skipped", "another case has only: true"),
        ("passed", None),
    ]


def test_not_inverts_the_case(tmp_path: Path) -> None:
    fixture = "- title: n\n  not: true\n  output: error\n"
    _, passed = run(tmp_path, fixture, [{"output": "fine"}])
    assert passed["cases"][0]["status"] == "passed"
    _, failed = run(tmp_path, fixture, [{"output": "an error"}])
    assert (failed["cases"][0]["status"], failed["cases"][0]["classification"]) == (
        "failed",
        "unexpected_pass",
    )


def test_missing_results_are_recording_not_found(tmp_path: Path) -> None:
    _, results = run(tmp_path, "- output: x\n", None)
    assert results["cases"][0]["classification"] == "recording_not_found"
    assert results["cases"][0]["score"] == 0.0


def test_a_negated_case_without_a_result_fails(tmp_path: Path) -> None:
    _, results = run(tmp_path, "- not: true\n  output: x\n", [None])
    [case] = results["cases"]
    assert (case["status"], case["classification"]) == ("failed", "recording_not_found")
    assert case["reason"] == "nothing to judge: a case expecting a failure needs its recording"


# --- refusals: one line, the file and the line --------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "results", "problem"),
    [
        ("- output: '{{name}}'\n", [], "t.fixture.yaml:1: templates ({{...}}) are not supported"),
        ("- output: {$sort: {}}\n", [], "t.fixture.yaml:1: @isdk operator $sort is not supported"),
        ("- output: {$eq: 1, a: 2}\n", [], ":1: an object mixes @isdk operators with fields"),
        ("- output:\n    type: object\n", [], ":2: an object with a JSON type in 'type' is a JSON"),
        ("- output: {/a/: 1}\n", [], ":1: regex keys (/a/) are not supported"),
        ("- title: x\n", [], ":1: case 'x' has nothing to check: no output or expect"),
        ("- expect: {diff: 1}\n", [], ":1: expect.diff is not supported"),
        ("- expect:\n    tools:\n", [], ":2: expect.tools takes a list, $all or $sequence"),
        ("- expect: {tools: go}\n", [], ":1: expect.tools takes a list, $all or $sequence"),
        ("- expect: {tools: 3}\n", [], ":1: expect.tools takes a list, $all or $sequence"),
        ("- output: x\n  expcet: {tools: []}\n", [], ":2: unknown key 'expcet' (did you mean 'ex"),
        ("---\nscorng: true\n---\n- output: x\n", [], ":2: unknown key 'scorng' (did you mean"),
        ("- output: x\n  unassignedWeight: 0.5\n", [], ":2: unassignedWeight is not supported"),
        ("- expect: {tools: true}\n", [], ":1: expect.tools takes a list, $all or $sequence"),
        ("- output: x\n  outputSchema: {}\n", [], ":2: outputSchema (JSON Schema"),
        ("---\noperators: [a.js]\n---\n- output: x\n", [], ":2: custom operators are not"),
        ("- output: x\n  strict: diff\n", [], ":2: strict must be true, false"),
        ("- output: x\n  maxScore: 0\n", [], ":2: maxScore must be a number above 0"),
        ("- output: x\n  maxScore: .inf\n", [], ":2: maxScore must be a number above 0"),
        ("- output: x\n  maxScore: .nan\n", [], ":2: maxScore must be a number above 0"),
        ("- output: x\n  passScore: 101\n", [], ":2: passScore (101) is above maxScore (100)"),
        ("- output: {$expect: x, $score: .nan}\n", [], ":1: $score must be a number, 0 or"),
        ("- output: {$gt: x}\n", [], ":1: $gt takes a number"),
        ("- output: !re /x/\n", [], ":1: YAML tag '!re' is not supported"),
        ("---\n- a\n---\n- output: x\n", [], "t.fixture.yaml:2: the front matter must be a map"),
        ("- output: x\n", {"a": 1}, "t.results.json: the results must be a JSON array"),
        ("- output: x\n", [{}, {}], "t.results.json: 2 results for 1 cases"),
    ],
)
def test_what_replaygate_cannot_honour_is_a_problem(
    tmp_path: Path, fixture: str, results: Any, problem: str
) -> None:
    code, document = run(tmp_path, fixture, results)
    lines = [f"{p['file']}:{p['line']}: {p['message']}" if p["line"] else
             f"{p['file']}: {p['message']}" for p in document["problems"]]  # fmt: skip
    assert code == 2
    assert len(lines) == 1 and problem in lines[0], lines


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"messages": "hi"}, "messages must be a list of objects"),
        ({"output": "x", "error": "timeout"}, "unknown key 'error' (an executor result holds"),
        ("x", "an executor result must be an object with output and messages"),
    ],
)
def test_a_bad_result_entry_errors_its_case_only(tmp_path: Path, entry: Any, reason: str) -> None:
    _, results = run(tmp_path, "- output: x\n- output: y\n", [entry, {"output": "y"}])
    assert [c["status"] for c in results["cases"]] == ["error", "passed"]
    assert results["cases"][0]["reason"].startswith(
        f"packs/agent/isdk/t.results.json (entry 1): {reason}"
    )


def test_validate_counts_a_fixture_file_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(tmp_path, "- output: x\n- output: y\n", [{"output": "x"}, {"output": "y"}])
    capsys.readouterr()
    assert main(["validate", "--root", str(tmp_path), str(tmp_path / "packs")]) == 0
    assert capsys.readouterr().out == "1 pack, 1 contract, 2 cases, 0 problems\n"


def test_one_case_of_a_fixture_file_runs_alone(tmp_path: Path) -> None:
    run(tmp_path, "- title: a\n  output: x\n- title: b\n  output: y\n", [{"output": "x"}, {}])
    target = f"{tmp_path}/packs/agent/isdk/t.fixture.yaml::a"
    out = tmp_path / "one.json"
    assert main(["run", "--root", str(tmp_path), "--json", str(out), target]) == 0
    cases = json.loads(out.read_text(encoding="utf-8"))["cases"]
    assert [(c["case_id"], c["status"]) for c in cases] == [("a", "passed")]


@pytest.mark.parametrize("which", ["t.fixture.yaml", "t.results.json"])
def test_a_file_symlinked_out_of_the_isdk_folder_is_not_read(tmp_path: Path, which: str) -> None:
    run(tmp_path, "expect:\n  output: ok\n", [{"output": "ok"}])
    isdk = tmp_path / "packs" / "agent" / "isdk"
    secret = tmp_path.parent / f"{tmp_path.name}-secret"
    secret.write_text('{"ghp_SECRET": 1}\nghp_SECRET: [', encoding="utf-8")
    (isdk / which).unlink()
    (isdk / which).symlink_to(secret)
    code, results = run_again(tmp_path)
    assert code == 2
    assert [p["message"] for p in results["problems"]] == [
        f"@isdk file '{which}' leaves the directory packs/agent/isdk through a symlink"
    ]
    assert "SECRET" not in json.dumps(results)


def run_again(tmp_path: Path) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "results.json"
    code = main(["run", "--root", str(tmp_path), "--json", str(out), str(tmp_path / "packs")])
    return code, json.loads(out.read_text(encoding="utf-8"))


def test_each_case_names_the_fixture_and_the_results_it_judged(tmp_path: Path) -> None:
    fixture = "- title: a\n  output: ok\n- title: b\n  output: ok\n"
    _, results = run(tmp_path, fixture, [{"output": "ok"}])
    judged = [(case["case_id"], case["inputs"], case["run_id"]) for case in results["cases"]]
    assert judged == [
        ("a", ["packs/agent/isdk/t.fixture.yaml", "packs/agent/isdk/t.results.json"], None),
        ("b", ["packs/agent/isdk/t.fixture.yaml"], None),  # no result for it: nothing else read
    ]


def _loose(tmp_path: Path) -> Path:
    """A folder of @isdk fixtures and their results, with no pack.yaml anywhere."""
    (tmp_path / ".git").mkdir()
    folder = tmp_path / "evals"
    folder.mkdir()
    for name, output in (("a", "ok"), ("b", "no")):
        (folder / f"{name}.fixture.yaml").write_text(
            "- title: t\n  expect:\n    output: ok\n", encoding="utf-8"
        )
        (folder / f"{name}.results.json").write_text(
            json.dumps([{"output": output, "messages": TOOL_TRACE}]), encoding="utf-8"
        )
    return folder


@pytest.mark.parametrize(
    ("target", "statuses"), [("evals/a.fixture.yaml", ["passed"]), ("evals", ["passed", "failed"])]
)
def test_isdk_fixtures_run_without_a_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, statuses: list[str]
) -> None:
    _loose(tmp_path)
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--json", "r.json", target])
    results = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert results["problems"] == []
    assert [case["status"] for case in results["cases"]] == statuses
    assert code == (0 if statuses == ["passed"] else 1)
    assert results["cases"][0]["file"] == "evals/a.fixture.yaml"


NESTED_CRITICAL = """\
---
scoring: true
passScore: 50
---
- title: nested
  output:
    name: Ada
    id: {$eq: 8, CRITICAL}
    role: admin
"""


@pytest.mark.parametrize(
    ("mark", "status"),
    [("$critical: true", "failed"), ("$meta: {critical: true}", "failed"),
     ("$score: {critical: true}", "failed"), ("$critical: false", "passed")],
)  # fmt: skip
def test_a_nested_critical_expectation_fails_the_case_whatever_the_score(
    tmp_path: Path, mark: str, status: str
) -> None:
    fixture = NESTED_CRITICAL.replace("CRITICAL", mark)
    output = {"name": "Ada", "id": 7, "role": "admin"}
    _, results = run(tmp_path, fixture, [{"output": output, "messages": TOOL_TRACE}])
    [case] = results["cases"]
    assert results["problems"] == []
    # the output block alone earns two keys of three
    assert (case["status"], case["score"]) == (status, 0.666667)


@pytest.mark.parametrize(
    ("tools", "status"),
    [("[{name: search}, {name: book, $critical: true}]", "failed"),
     ("[{name: search}, {name: book}]", "passed"),
     ("{$sequence: [{name: book, $critical: true}, {name: search}]}", "failed")],
)  # fmt: skip
def test_a_critical_tool_of_expect_tools_fails_the_case_when_missing(
    tmp_path: Path, tools: str, status: str
) -> None:
    fixture = (
        f"---\nscoring: true\npassScore: 10\n---\n- output: User\n  expect:\n    tools: {tools}\n"
    )
    _, results = run(tmp_path, fixture, [{"output": "User 7", "messages": TOOL_TRACE}])
    assert results["problems"] == []
    assert results["cases"][0]["status"] == status


def test_a_fixture_inside_a_pack_named_directly_stays_the_packs(tmp_path: Path) -> None:
    run(tmp_path, "- title: a\n  output: x\n", [{"output": "x"}])
    out = tmp_path / "one.json"
    target = str(tmp_path / "packs/agent/isdk/t.fixture.yaml")
    assert main(["run", "--root", str(tmp_path), "--json", str(out), target]) == 0
    [case] = json.loads(out.read_text(encoding="utf-8"))["cases"]
    assert (case["pack"], case["contract"]) == ("agent", "isdk/t.fixture.yaml")
