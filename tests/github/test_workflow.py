"""Workflow commands as the runner reads them: our commands act exactly, nothing else acts."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st
from runner_oracle import Command, acted, effective, split_lines

from replaygate.github import workflow
from replaygate.github.workflow import GuardedStream, WorkflowLog, log_for

HOSTILE = [
    "::add-mask::secret",
    "::stop-commands::x",
    "::error::injected",
    "  \t::warning file=a.py,line=1::indented",
    "##[error]legacy",
    "text ##[warning]in the middle",
    "::set-output name=x::%0A::set-output name=y::z",
    "ok\r::warning::after a carriage return",
    "ok\r\n::notice::after crlf",
    "\u2003::error::after an em space",
    "::ERROR::upper case",
    "::endgroup::",
    "::group::fake",
    "##[set-output name=a;]b",
    "a" * 70_000 + "::error::long",
    "::debug::%25%0A%3A",
    "::error::lone \ud800 surrogate",
    "=leading equals ::error::",
]


def our_commands(output: str) -> list[tuple[str, dict[str, str], str]]:
    return [(c.name, c.properties, c.data) for c in effective(output)]


@pytest.mark.parametrize(
    ("value", "data", "prop"),
    [
        ("plain", "plain", "plain"),
        ("50%", "50%25", "50%25"),
        ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
        ("x: y, z", "x: y, z", "x%3A y%2C z"),
        ("%0A", "%250A", "%250A"),
    ],
)
def test_escaping_matches_the_toolkit(value: str, data: str, prop: str) -> None:
    assert workflow.escape_data(value) == data
    assert workflow.escape_property(value) == prop


def test_annotation_format_matches_the_toolkit() -> None:
    line = workflow.error("bad\nvalue", file="packs/a,b.yaml", line=12, title="wrong_tool (abc)")
    assert line == "::error title=wrong_tool (abc),file=packs/a%2Cb.yaml,line=12::bad%0Avalue"
    assert workflow.notice("n") == "::notice::n"
    assert workflow.warning("w", title="") == "::warning::w"
    assert workflow.stop_commands("tok") == "::stop-commands::tok"
    assert workflow.resume_commands("tok") == "::tok::"


def test_titles_are_cut_to_github_limit() -> None:
    (command,) = acted(workflow.error("m", title="t" * 400) + "\n")
    assert command.properties["title"] == "t" * workflow.TITLE_LIMIT


@pytest.mark.parametrize("text", HOSTILE)
def test_the_oracle_sees_hostile_text_act_when_printed_raw(text: str) -> None:
    raw = workflow.printable(text).replace("a" * 70_000, "").replace("=leading equals ", "")
    assert acted(raw + "\n"), "the fixture must be dangerous for the test to mean anything"


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_in_a_command_stays_one_command(text: str) -> None:
    line = workflow.error(text, file=text, line=3, title=text)
    (command,) = acted(line + "\n")
    expected = workflow.printable(text)
    assert (command.name, command.data) == ("error", expected)
    # The runner drops a leading '=' of a property value (.NET Split quirk, see the oracle).
    prop = expected.lstrip("=")
    assert command.properties == {"file": prop, "line": "3", "title": expected[:255].lstrip("=")}


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_through_the_log_never_acts(text: str) -> None:
    out = io.StringIO()
    log = WorkflowLog(out)
    log.command(workflow.notice("before"))
    log.text(text)
    log.command(workflow.error("after", file="f.yaml", line=2, title="t"))
    log.text(text)
    log.close()
    assert our_commands(out.getvalue()) == [
        ("notice", {}, "before"),
        ("error", {"file": "f.yaml", "line": "2", "title": "t"}, "after"),
    ]
    assert workflow.printable(text) in out.getvalue(), "the text is still shown"


def test_text_without_newline_is_closed_before_the_next_command() -> None:
    out = io.StringIO()
    log = WorkflowLog(out)
    log.text("no newline ::error::x")
    log.command(workflow.notice("ours"))
    assert our_commands(out.getvalue()) == [("notice", {}, "ours")]


def test_text_that_contains_the_token_gets_a_new_block() -> None:
    out = io.StringIO()
    log = WorkflowLog(out)
    log.text("first\n")
    token = next(c.data for c in acted(out.getvalue()) if c.name == "stop-commands")
    log.text(f"::{token}::\n::error::resumed?\n")
    log.close()
    assert our_commands(out.getvalue()) == []


def test_guarded_stream_routes_print_through_the_log() -> None:
    out = io.StringIO()
    stream = GuardedStream(WorkflowLog(out))
    print("::add-mask::x", file=stream)
    log_for(stream).command(workflow.warning("w"))  # type: ignore[arg-type]
    assert our_commands(out.getvalue()) == [("warning", {}, "w")]
    assert log_for(out) is not log_for(out)


@given(
    texts=st.lists(st.text(alphabet=":#[]%, =\r\n\t abc\u0085\u2028", max_size=40), max_size=6),
    message=st.text(alphabet=":#[]%,\r\n =ab", max_size=20).filter(lambda m: m[:1] != "="),
)
def test_any_text_interleaved_with_commands_leaves_only_ours(
    texts: list[str], message: str
) -> None:
    out = io.StringIO()
    log = WorkflowLog(out)
    for text in texts:
        log.text(text)
        log.command(workflow.error(message, file=message, line=1, title=message))
    log.close()
    expected = {"file": message, "line": "1", "title": message} if message else {"line": "1"}
    expected = {k: v for k, v in expected.items() if v}
    assert our_commands(out.getvalue()) == [("error", expected, message)] * len(texts)


def test_oracle_splits_lines_like_the_runner() -> None:
    assert split_lines("a\rb\nc\r\nd") == ["a", "b", "c", "d"]
    assert split_lines("a\u2028b\x85c\n") == ["a\u2028b\x85c"]


def test_oracle_honours_stop_commands_and_legacy_resume() -> None:
    output = "::stop-commands::t0k3n\n::error::no\n##[t0k3n]\n::error::yes\n"
    assert effective(output) == [Command("error", {}, "yes", "::error::yes")]


def test_invisible_and_control_characters_in_an_annotation_are_shown_as_escapes() -> None:
    """A zero-width space, a bidi override or ESC would hide or reorder text in the diff."""
    line = workflow.error(
        "case a\u200bb \u202eevil \x1b[31mred", file="p/c.yaml", line=3, title="t\u2066x"
    )
    assert line == (
        "::error title=t\\u2066x,file=p/c.yaml,line=3::case a\\u200bb \\u202eevil \\x1b[31mred"
    )
