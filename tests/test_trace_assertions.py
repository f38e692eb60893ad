"""Every trace assertion type passing and failing, every load problem, every stricter rule."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from replaygate.assertions.trace import Trace, TraceCall, Turn, Usage
from replaygate.assertions.trace_assertions import KEYWORDS, Verdict
from replaygate.assertions.trace_compile import TraceAssertion, compile_trace_assertions
from replaygate.assertions.trace_match import Rule
from replaygate.core.errors import PackError
from replaygate.loading.yaml_reader import parse_yaml


def compile_one(text: str) -> TraceAssertion:
    (assertion,) = compile_trace_assertions(parse_yaml(text, shown="c.yaml"), "t", "c.yaml", 1)
    return assertion


def check(text: str, trace: Trace) -> Verdict:
    return compile_one(text).evaluate(trace)


def call(name: str, **arguments: Any) -> TraceCall:
    return TraceCall(name, arguments)


def trace(*calls: TraceCall, output: str = "", **extra: Any) -> Trace:
    return Trace(tuple(Turn("assistant", "", (c,)) for c in calls), output, **extra)


GIT = trace(
    call("Bash", command="git status"),
    call("Read", file_path="src/a.py"),
    call("Bash", command="git diff --cached"),
    call("AskUserQuestion", questions=[{"question": "commit?"}]),
    call("Bash", command="git commit -m feat"),
    output="Commit created: feat(auth)",
)


# --- each type, passing and failing ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- {id: a, type: tool_called, tool: Bash}", None),
        ("- {id: a, type: tool_called, tool: Write}", "'Write' was never called"),
        ("- {id: a, type: tool_called, tool: Bash, args_match: {command: '^git commit'}}", None),
        (
            "- {id: a, type: tool_called, tool: Bash, args_match: {command: '^git push'}}",
            "no 'Bash' with command=^git push (3 calls of it, 0 matching)",
        ),
        (
            "- id: a\n  type: tool_call_sequence\n  sequence:\n"
            "    - {tool: Bash, args_match: {command: '^git diff'}}\n"
            "    - {tool: AskUserQuestion}\n"
            "    - {tool: Bash, args_match: {command: '^git commit'}}\n",
            None,
        ),
        (
            "- id: a\n  type: tool_call_sequence\n  sequence:\n"
            "    - {tool: Bash, args_match: {command: '^git commit'}}\n"
            "    - {tool: AskUserQuestion}\n",
            "step 2 of 2, 'AskUserQuestion', not found after 1 matched step(s)",
        ),
        ("- {id: a, type: no_tool_called, tool: Write}", None),
        (
            "- {id: a, type: no_tool_called, tool: Bash, args_match: {command: commit}}",
            "'Bash' with command=commit was called (1 time(s)), first with "
            "{'command': 'git commit -m feat'}",
        ),
        ("- {id: a, type: output_contains, pattern: '\\bfeat\\b'}", None),
        (
            "- {id: a, type: output_contains, pattern: fix}",
            "the final output 'Commit created: feat(auth)' does not match 'fix'",
        ),
        ("- {id: a, type: no_output_contains, pattern: error}", None),
        (
            "- {id: a, type: no_output_contains, pattern: feat}",
            "the final output 'Commit created: feat(auth)' matches 'feat'",
        ),
        ("- {id: a, type: turn_count_at_most, max: 5}", None),
        ("- {id: a, type: turn_count_at_most, max: 4}", "5 turns, more than 4"),
        (
            "- {id: a, type: no_unanswered_questions}",
            None,
        ),
    ],
)
def test_types_on_a_git_trace(text: str, message: str | None) -> None:
    assert check(text, GIT).message == message


def test_every_keyword_is_exercised_here() -> None:
    exercised = {
        "tool_called", "tool_call_sequence", "no_tool_called", "output_contains",
        "no_output_contains", "turn_count_at_most", "token_budget", "no_path_escape",
        "no_unanswered_questions", "max_turns",
    }  # fmt: skip
    assert set(KEYWORDS) == exercised


def test_token_budget_counts_every_kind_of_token() -> None:
    turn = Turn("assistant", usage=Usage(input=10, output=5, cache_creation=3, cache_read=2))
    used = Trace((turn,), "")
    assert check("- {id: b, type: token_budget, max: 20}", used).message is None
    verdict = check("- {id: b, type: token_budget, max: 19}", used)
    assert verdict.message == "20 tokens, more than the budget of 19"
    assert verdict.classification == "budget_exceeded"


def test_token_budget_takes_the_larger_of_recorded_and_counted() -> None:
    counted = (Turn("assistant", usage=Usage(input=60)),)
    verdict = check("- {id: b, type: token_budget, max: 50}", Trace(counted, "", tokens=10))
    assert verdict.message == "60 tokens, more than the budget of 50"
    assert Rule.TOKEN_COUNT in verdict.rules


def test_unanswered_question_fails() -> None:
    asked = Trace(
        (Turn("assistant", calls=(TraceCall("AskUserQuestion", {}, answered=False),)),), ""
    )
    verdict = check("- {id: q, type: no_unanswered_questions}", asked)
    assert verdict.message == "1 question(s) to the user had no matching scripted answer"
    assert verdict.classification == "unanswered_question"


def test_unanswered_questions_are_counted_per_question() -> None:
    batch = {"questions": [{"question": "commit?"}, {"question": "push?"}]}
    asked = trace(TraceCall("AskUserQuestion", batch, answered=False))
    verdict = check("- {id: q, type: no_unanswered_questions}", asked)
    assert verdict.message == "2 question(s) to the user had no matching scripted answer"


def test_the_recorded_unanswered_count_is_a_floor() -> None:
    # one question of an answered batch went unanswered: only the recorder's count shows it
    batch = {"questions": [{"question": "commit?"}, {"question": "push?"}]}
    answered = trace(TraceCall("AskUserQuestion", batch, answered=True), unanswered=1)
    verdict = check("- {id: q, type: no_unanswered_questions}", answered)
    assert verdict.message == (
        "1 question(s) to the user had no matching scripted answer"
        " (the trace records 1; its calls show 0)"
    )
    assert Rule.UNANSWERED_COUNT in verdict.rules
    none = trace(TraceCall("AskUserQuestion", batch, answered=True), unanswered=0)
    assert check("- {id: q, type: no_unanswered_questions}", none).message is None


def test_turn_count_is_the_larger_of_recorded_and_counted() -> None:
    two = trace(call("Bash"), call("Read"))  # two assistant turns
    recorded_more = check("- {id: t, type: turn_count_at_most, max: 3}", replace(two, turns_used=5))
    assert recorded_more.message == "5 turns, more than 3"
    assert recorded_more.rules == frozenset()  # ai-tester reads the recorded count too
    counted_more = check("- {id: t, type: turn_count_at_most, max: 1}", replace(two, turns_used=1))
    assert counted_more.message == "2 turns, more than 1"
    assert Rule.TURN_COUNT in counted_more.rules
    agreed = check("- {id: t, type: turn_count_at_most, max: 2}", replace(two, turns_used=2))
    assert agreed.message is None and agreed.rules == frozenset()


def test_max_turns_fails_a_run_stopped_at_the_cap() -> None:
    assert check("- {id: m, type: max_turns, max: 5}", GIT).message is None
    stopped = trace(call("Bash"), stopped_at_cap=True)
    verdict = check("- {id: m, type: max_turns, max: 5}", stopped)
    assert (
        verdict.message == "the run hit max_turns 5 (1 turns)" and Rule.MAX_TURNS in verdict.rules
    )


def test_classifications_of_tool_failures() -> None:
    assert check("- {id: a, type: tool_called, tool: X}", GIT).classification == "tool_not_invoked"
    wrong_args = "- {id: a, type: tool_called, tool: Bash, args_match: {command: x}}"
    assert check(wrong_args, GIT).classification == "schema_violation"
    assert check("- {id: a, type: no_tool_called, tool: Read}", GIT).classification == "wrong_tool"


def test_capture_echoes_the_matched_call_cut_to_capture_max_chars() -> None:
    verdict = check(
        "- {id: c, type: tool_called, tool: Bash, args_match: {command: diff},"
        " capture: [command, missing], capture_max_chars: 8}",
        GIT,
    )
    assert [(c.field, c.value, c.truncated) for c in verdict.captures] == [
        ("command", "git diff", True)
    ]


def test_sequence_captures_per_step() -> None:
    verdict = check(
        "- id: s\n  type: tool_call_sequence\n  sequence:\n"
        "    - {tool: Read, capture: [file_path]}\n    - {tool: Bash, capture: [command]}\n",
        GIT,
    )
    assert [c.value for c in verdict.captures] == ["src/a.py", "git diff --cached"]


def test_one_call_never_satisfies_two_sequence_steps() -> None:
    once = trace(call("Bash", command="git status"))
    text = "- id: s\n  type: tool_call_sequence\n  sequence: [{tool: Bash}, {tool: Bash}]\n"
    assert check(text, once).message == "step 2 of 2, 'Bash', not found after 1 matched step(s)"
    assert check(text, trace(call("Bash"), call("Bash"))).message is None


# --- call_index: one meaning, the other explicit ------------------------------------------


def test_call_index_is_the_nth_call_of_the_tool_counting_all_its_calls() -> None:
    text = "- {id: a, type: tool_called, tool: Bash, call_index: 1, args_match: {command: commit}}"
    # the second Bash call is `git diff`, so the commit (third) does not count
    assert (
        check(text, GIT).message
        == "no call 1 of 'Bash' with command=commit (3 calls of it, 0 matching)"
    )
    assert check(text.replace("call_index: 1", "call_index: 2"), GIT).message is None


def test_match_index_is_the_nth_of_the_matching_calls() -> None:
    text = "- {id: a, type: tool_called, tool: Bash, match_index: 1, args_match: {command: '^git'}}"
    verdict = check(text + "\n", GIT)
    assert verdict.message is None
    assert check(text.replace("match_index: 1", "match_index: 3"), GIT).message is not None


# --- stricter than ai-tester, each against the lenient reading ---------------------------


def test_a_missing_argument_is_absent_not_the_empty_string() -> None:
    no_command = trace(call("Bash", description="no command"))
    verdict = check(
        "- {id: a, type: no_tool_called, tool: Bash, args_match: {command: '^(?!git )'}}",
        no_command,
    )
    # ai-tester tests '' against the pattern, which matches, so it fails this assertion
    assert verdict.message is None and Rule.ABSENT_ARGUMENT in verdict.rules
    called = check(
        "- {id: a, type: tool_called, tool: Bash, args_match: {command: '^$'}}", no_command
    )
    assert called.message is not None and Rule.ABSENT_ARGUMENT in called.rules


def test_inline_flags_mean_what_they_say() -> None:
    verdict = check("- {id: o, type: output_contains, pattern: '(?-i)COMMIT'}", GIT)
    # ai-tester lifts (?-i) into the `i` flag, which makes this match
    assert verdict.message is not None and Rule.INLINE_FLAGS in verdict.rules
    assert check("- {id: o, type: output_contains, pattern: '(?i)COMMIT'}", GIT).message is None
    spaced = check("- {id: o, type: output_contains, pattern: '(?x) feat \\( auth'}", GIT)
    assert spaced.message is None and Rule.INLINE_FLAGS in spaced.rules


def test_args_match_keys_may_be_jsonpath_into_nested_arguments() -> None:
    nested = trace(call("deploy", options={"force": True, "regions": ["eu", "us"]}))
    text = (
        "- {id: a, type: tool_called, tool: deploy, args_match: {'$.options.regions[*]': '^us$'}}"
    )
    verdict = check(text, nested)
    assert verdict.message is None and Rule.JSONPATH_KEYS in verdict.rules
    assert check(text.replace("^us$", "^asia$"), nested).message is not None


@pytest.mark.parametrize("key", ["/opts/force", "opts.force"])
def test_args_match_keys_may_be_json_pointers_or_dot_paths(key: str) -> None:
    # the Rust ai-tester's key forms; read as plain names they would never match
    text = f"- {{id: a, type: no_tool_called, tool: deploy, args_match: {{'{key}': '^true$'}}}}"
    verdict = check(text, trace(call("deploy", opts={"force": True})))
    assert verdict.message is not None and Rule.POINTER_KEYS in verdict.rules
    assert check(text, trace(call("deploy", opts={"force": False}))).message is None


@pytest.mark.parametrize(
    ("key", "holds"),
    [("/regions/1", True), ("regions.1", True), ("/regions/01", False), ("/regions/2", False),
     ("/a~1b", True), ("/t~0x", True), ("regions", False)],
)  # fmt: skip
def test_pointer_steps_index_arrays_and_unescape(key: str, holds: bool) -> None:
    deploy = trace(call("deploy", regions=["eu", "us"], **{"a/b": "us", "t~x": "us"}))
    text = f"- {{id: a, type: tool_called, tool: deploy, args_match: {{'{key}': '^us$'}}}}"
    assert (check(text, deploy).message is None) is holds


def test_non_string_values_are_compared_as_json() -> None:
    nested = trace(call("edit", line=5, flag=True, where={"b": 2}, ratio=1.0))
    ok = [
        "{where: '\"b\":2'}",  # ai-tester sees '[object Object]'
        "{flag: '^true$'}",
        "{ratio: '^1.0$'}",  # ai-tester sees '1'
        "{line: 5}",  # a YAML number is JSON, compared for equality
        "{where: {b: 2}}",
    ]
    for args in ok:
        verdict = check(f"- {{id: a, type: tool_called, tool: edit, args_match: {args}}}", nested)
        assert verdict.message is None, args
    object_text = "- {id: a, type: tool_called, tool: edit, args_match: {where: object}}"
    assert check(object_text, nested).message is not None
    assert Rule.JSON_VALUES in check(object_text, nested).rules
    string_five = "- {id: a, type: tool_called, tool: edit, args_match: {line: 6}}"
    assert check(string_five, nested).message is not None
    assert check("- {id: a, type: tool_called, tool: edit, args_match: {flag: 1}}", nested).message


# --- no_path_escape -------------------------------------------------------------------------


def escape_check(*calls: TraceCall, extra: str = "", sandbox: str | None = "/tmp/sb") -> Verdict:
    return check(f"- {{id: p, type: no_path_escape{extra}}}", trace(*calls, sandbox=sandbox))


def test_paths_inside_the_sandbox_pass() -> None:
    inside = [call("Read", file_path="src/a.py"), call("Write", file_path="/tmp/sb/b"),
              call("Glob", path="."), call("Edit", file_path="/private/tmp/sb/c")]  # fmt: skip
    assert escape_check(*inside).message is None


def test_every_tool_with_a_path_field_is_checked() -> None:
    for bad in (
        call("NotebookEdit", notebook_path="/etc/x.ipynb"),
        call("LS", path="/etc"),
        call("mcp__fs__read", path="/etc/passwd"),
        call("terminal/create", cwd="/"),
    ):
        verdict = escape_check(bad)
        # ai-tester checks only Read, Write, Edit, Glob and Grep
        assert verdict.message is not None and Rule.PATH_FIELDS in verdict.rules, bad


def test_tilde_in_a_tool_input_is_the_home_directory() -> None:
    verdict = escape_check(call("Read", file_path="~/.ssh/id_rsa"))
    # ai-tester resolves it to <sandbox>/~/.ssh/id_rsa, inside
    assert verdict.message == (
        "1 path(s) leave the sandbox /tmp/sb: Read file_path '~/.ssh/id_rsa' -> ~/.ssh/id_rsa"
    )
    assert Rule.TILDE in verdict.rules
    allowed = escape_check(
        call("Read", file_path="~/.config/x"), extra=", allow_outside: ['~/.config/']"
    )
    assert allowed.message is None


def test_dotdot_is_folded_before_the_check() -> None:
    assert escape_check(call("Read", file_path="src/../../etc/passwd")).message is not None
    assert escape_check(call("Read", file_path="/tmp/sb/../sb/a")).message is None
    assert escape_check(call("Read", file_path="/tmp/sbx/a")).message is not None


def test_tilde_is_expanded_before_dotdot_is_folded() -> None:
    climbing = call("Read", file_path="~/../../etc/shadow")
    verdict = escape_check(climbing, extra=", allow_outside: ['~']")
    assert verdict.message == (
        "1 path(s) leave the sandbox /tmp/sb: Read file_path '~/../../etc/shadow' -> /etc/shadow"
    )


def test_windows_paths_are_absolute_and_split_on_backslashes() -> None:
    for bad in ("C:\\Windows\\win.ini", "..\\..\\etc\\passwd", "d:/x"):
        verdict = escape_check(call("Read", file_path=bad))
        assert verdict.message is not None and Rule.WINDOWS_PATHS in verdict.rules, bad
    windows = "C:\\Users\\me\\sb"
    for good in ("src\\a.py", "c:\\users\\ME\\sb\\a.py", "C:/Users/me/sb/a"):
        assert escape_check(call("Read", file_path=good), sandbox=windows).message is None, good
    out = escape_check(call("Read", file_path="..\\..\\x"), sandbox=windows)
    assert out.message is not None and out.message.endswith("-> C:/Users/x")


def test_relative_allow_outside_resolves_against_the_sandbox() -> None:
    sibling = call("Read", file_path="/tmp/shared/data.csv")
    assert escape_check(sibling).message is not None
    verdict = escape_check(sibling, extra=", allow_outside: ['../shared']")
    # ai-tester compares the relative entry as written, so it never allows anything
    assert verdict.message is None and Rule.RELATIVE_ALLOW in verdict.rules


def test_tools_narrows_the_check_and_a_root_overrides_the_trace() -> None:
    bash = call("Bash", command="cat /etc/passwd", cwd="/etc")
    assert escape_check(bash, extra=", tools: [Read]").message is None
    assert escape_check(bash).message is not None
    assert escape_check(call("Read", file_path="/srv/a"), extra=", root: /srv").message is None


def test_no_sandbox_root_fails() -> None:
    verdict = escape_check(call("Read", file_path="a"), sandbox=None)
    assert verdict.message is not None and verdict.classification == "path_escape"


def test_at_most_three_escapes_are_listed() -> None:
    many = [call("Read", file_path=f"/etc/{n}") for n in range(5)]
    message = escape_check(*many).message or ""
    assert message.startswith("5 path(s) leave the sandbox") and message.count("->") == 3


# --- load problems: file and line --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("- id: a\n  type: tool_caled\n  tool: X\n", 2,
         "t[0].type: 'tool_caled' is not a trace assertion (did you mean 'tool_called'?)"),
        ("- id: a\n  type: tool_called\n  tol: X\n", 3,
         "t[0].tol: unknown key (did you mean 'tool'?)"),
        ("- id: a\n  type: tool_called\n", 1,
         "t[0]: tool_called needs exactly one of 'tool' or 'tool_pattern'"),
        ("- id: a\n  type: no_tool_called\n  tool: A\n  tool_pattern: B\n", 1,
         "t[0]: no_tool_called needs exactly one of 'tool' or 'tool_pattern'"),
        ("- type: output_contains\n  pattern: x\n", 1, "t[0].id: expected a non-empty string"),
        ("- id: a\n  type: output_contains\n  pattern: x\n  weight: 0\n", 4,
         "t[0].weight: expected a number above 0, got 0"),
        ("- id: a\n  type: no_tool_called\n  tool: B\n  args_match:\n    command: '(unclosed'\n",
         5, "t[0].args_match.command: invalid regex '(unclosed'"),
        ("- id: a\n  type: tool_call_sequence\n  sequence:\n    - tool: A\n    - tool: B\n"
         "      args_match:\n        x: '['\n", 7, "t[0].sequence[1].args_match.x: invalid regex"),
        ("- id: a\n  type: tool_call_sequence\n  sequence:\n    - tool: A\n    - 3\n", 5,
         "t[0].sequence[1] must be a mapping with 'tool'"),
        ("- id: a\n  type: output_contains\n  pattern: 'a{100000}'\n", 3, "is too large"),
        # sized before it is compiled: compiling would copy the atom 10**9 times
        ("- id: a\n  type: output_contains\n  pattern: 'a{1000000000}'\n", 3, "is too large"),
        ("- id: a\n  type: tool_called\n  tool: B\n  call_index: -1\n", 4,
         "t[0].call_index must be an integer, 0 or more, got -1"),
        ("- id: a\n  type: turn_count_at_most\n  max: 0\n", 3,
         "t[0].max must be an integer, 1 or more"),
        ("- id: a\n  type: token_budget\n  max: .inf\n", 3, "t[0].max must be a number above 0"),
        ("- id: a\n  type: tool_call_sequence\n  sequence: []\n", 3,
         "t[0].sequence must be a non-empty list of steps"),
        ("- id: a\n  type: tool_call_sequence\n  sequence: [{tool: A, args: {}}]\n", 3,
         "t[0].sequence[0]: unknown key 'args'"),
        ("- id: a\n  type: no_path_escape\n  allow_outside: /etc\n", 3,
         "t[0].allow_outside must be a list of strings"),
        ("- id: a\n  type: tool_called\n  tool: B\n  args_match: {x: 2021-01-01}\n", 4,
         "t[0].args_match.x must be a regex or JSON data"),
        ("- id: a\n  type: tool_called\n  tool: B\n  args_match: {'$..': x}\n", 4,
         "t[0].args_match.$..:"),
        ("- {id: a, type: output_contains, pattern: x}\n"
         "- {id: a, type: output_contains, pattern: y}\n", 2,
         "duplicate assertion id 'a' (first at line 1)"),
        ("- 3\n", 1, "t[0]: expected a mapping with 'id' and 'type'"),
        ("- id: a\n  type: tool_called\n  tool: B\n  args_match: {'a..b': x}\n", 4,
         "t[0].args_match.a..b: a dot path has an empty step"),
        ("- id: a\n  type: tool_called\n  tool: B\n  args_match: {'/a~2': x}\n", 4,
         "'~' in a JSON Pointer must be ~0 or ~1"),
    ],
)  # fmt: skip
def test_load_problems_name_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(PackError) as caught:
        compile_trace_assertions(parse_yaml(text, shown="c.yaml"), "t", "c.yaml", 1)
    assert (caught.value.file, caught.value.line) == ("c.yaml", line)
    assert message in caught.value.message


def test_an_invalid_regex_in_no_tool_called_is_a_load_problem_not_a_pass() -> None:
    # ai-tester silently passes no_tool_called when the regex does not compile
    with pytest.raises(PackError, match="invalid regex"):
        compile_one("- {id: a, type: no_tool_called, tool: B, args_match: {command: '[z-a]'}}")


def test_tool_pattern_selects_tools_by_regex() -> None:
    mcp = trace(call("mcp__github__create_issue", title="x"), call("Read", file_path="a"))
    assert (
        check("- {id: a, type: tool_called, tool_pattern: '^mcp__github__'}", mcp).message is None
    )
    verdict = check("- {id: a, type: no_tool_called, tool_pattern: '^mcp__'}", mcp)
    assert verdict.message == (
        "a tool matching '^mcp__' was called (1 time(s)), first with {'title': 'x'}"
    )
    missing = check("- {id: a, type: tool_called, tool_pattern: '^Web'}", mcp)
    assert missing.message == "a tool matching '^Web' was never called"
