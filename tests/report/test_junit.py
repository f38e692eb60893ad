"""The JUnit report: structure, the Jenkins schema, and hostile text that must not break it."""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import junit_xml
import pytest
import xmlschema

from replaygate.core.model import (
    AssertionOutcome,
    AssertionStatus,
    CaseResult,
    Failure,
    Problem,
    RunResult,
    Status,
)
from replaygate.report.escape import xml_safe
from replaygate.report.junit import PROBLEMS_SUITE, classname, junit_chunks, render_junit
from replaygate.report.junit_family import JunitFamily

# Jenkins xunit-plugin's junit-10.xsd as upstream has it (tests/data/README.md says where from).
XSD = xmlschema.XMLSchema(Path(__file__).parents[1] / "data" / "junit-10.xsd")


def parse(result: RunResult) -> ET.Element:
    """The default report, checked against the upstream schema."""
    text = render_junit(result)
    assert text.startswith('<?xml version="1.0" encoding="utf-8"?>\n')
    XSD.validate(text)
    return ET.fromstring(text.encode("utf-8"))


def parse_xunit1(result: RunResult) -> ET.Element:
    return ET.fromstring(render_junit(result, family=JunitFamily.XUNIT1).encode("utf-8"))


def find_case(root: ET.Element, name: str) -> ET.Element:
    found = [case for case in root.iter("testcase") if case.get("name") == name]
    assert len(found) == 1
    return found[0]


def test_one_suite_per_contract_and_problems_last(mixed: RunResult) -> None:
    root = parse(mixed)
    suites = root.findall("testsuite")
    assert [suite.get("name") for suite in suites] == [
        "demo/weather.yaml", "other/sub/order.yaml", PROBLEMS_SUITE,
    ]  # fmt: skip
    assert [suite.get("tests") for suite in suites] == ["6", "2", "1"]
    assert suites[0].get("file") == "packs/demo/contracts/weather.yaml"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("9", "1", "2")


def test_testcase_attributes(mixed: RunResult) -> None:
    case = find_case(parse(mixed), "rainy")
    assert case.attrib == {"name": "rainy", "classname": "demo.weather", "time": "0.001"}
    assert find_case(parse(mixed), "nr").get("classname") == "other.sub.order"


def test_xunit1_testcases_carry_the_file_and_line_that_pr_annotators_read(
    mixed: RunResult,
) -> None:
    # publish-unit-test-result-action reads testcase file and line; action-junit-report
    # reads testcase file and line before it falls back to the testsuite's file.
    root = parse_xunit1(mixed)
    assert find_case(root, "rainy").attrib == {
        "name": "rainy", "classname": "demo.weather", "time": "0.001",
        "file": "packs/demo/contracts/weather.yaml", "line": "40",
    }  # fmt: skip
    assert all(case.get("file") and case.get("line") for case in root.iter("testcase"))


def test_xunit1_is_what_the_upstream_schema_refuses(mixed: RunResult) -> None:
    assert not XSD.is_valid(render_junit(mixed, family=JunitFamily.XUNIT1))


def test_default_keeps_the_suite_file_for_annotators_and_no_disabled_counts(
    mixed: RunResult,
) -> None:
    root = parse(mixed)
    assert all("disabled" not in element.attrib for element in root.iter())
    assert all(case.get("file") is None for case in root.iter("testcase"))
    assert root[0].get("file") == "packs/demo/contracts/weather.yaml"


def test_the_default_still_gives_action_junit_report_a_file_and_line(mixed: RunResult) -> None:
    # action-junit-report, without file or line on the testcase or failure, takes the
    # testsuite's file and the line of the last ` <...file>...:<n>` in the failure text.
    root = parse(mixed)
    failure = find_case(root, "rainy").find("failure")
    assert failure is not None and failure.text is not None
    file = root[0].get("file") or ""
    found = re.findall(" [^ ]*" + re.escape(file) + r".*?:\d+", failure.text.strip())
    assert (file, found[-1].rsplit(":", 1)[1]) == ("packs/demo/contracts/weather.yaml", "14")


def test_every_time_is_whole_milliseconds_without_float_artefacts(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    durations = [0.0034000000000000002, 0.0, 0.0001, 0.1 + 0.2]
    cases = [make_case(case_id=str(n), duration_s=d) for n, d in enumerate(durations)]
    root = parse(make_run(*cases))
    assert [case.get("time") for case in root.iter("testcase")] == [
        "0.003", "0.000", "0.000", "0.300",
    ]  # fmt: skip
    assert root[0].get("time") == root.get("time") == "0.303"


@pytest.mark.parametrize(
    ("pack", "contract", "expected"),
    [("p", "a.yaml", "p.a"), ("p", "dir/sub/b.yml", "p.dir.sub.b"), ("p", "c", "p.c")],
)
def test_classname(pack: str, contract: str, expected: str) -> None:
    assert classname(pack, contract) == expected


def test_failure_has_classification_message_and_details(mixed: RunResult) -> None:
    failure = find_case(parse(mixed), "rainy").find("failure")
    assert failure is not None
    assert failure.get("type") == "wrong_tool"
    assert failure.get("message") == (
        "packs/demo/contracts/weather.yaml:14: "
        "expected a call to 'get_weather', but the model called lookup [wrong_tool] (0123456789ab)"
    )
    assert failure.text == (
        "fingerprint: 0123456789ab\n"
        "judged: packs/demo/golden/wrong_tool.json\n"
        "packs/demo/contracts/weather.yaml:14: "
        "expected a call to 'get_weather', but the model called lookup [wrong_tool]\n"
        '  expected: "get_weather"\n'
        '  actual: "lookup"'
    )


def test_every_failure_is_listed(
    make_run: Callable[..., RunResult],
    make_case: Callable[..., CaseResult],
    make_failure: Callable[..., Failure],
) -> None:
    failures = tuple(make_failure(line=n, message=f"m{n}") for n in range(1, 61))
    root = parse(make_run(make_case(Status.FAILED, failures=failures)))
    text = find_case(root, "sunny").findtext("failure") or ""
    assert "weather.yaml:1: m1 [wrong_tool]" in text
    assert "weather.yaml:50: m50 [wrong_tool]" in text
    assert "m51" not in text and text.endswith("... 10 more failures")


def test_error_case(mixed: RunResult) -> None:
    case = find_case(parse(mixed), "broken")
    error = case.find("error")
    assert error is not None and case.find("failure") is None
    assert error.get("type") == "error"
    assert error.get("message") == (
        "packs/demo/contracts/weather.yaml:30: fixture is not valid JSON"
    )
    assert "reason: fixture is not valid JSON" in (error.text or "")


def test_skipped_case(mixed: RunResult) -> None:
    skipped = find_case(parse(mixed), "live").find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "provider_modes excludes 'recorded'"


def test_known_failure_is_skipped_with_the_fingerprint(mixed: RunResult) -> None:
    case = find_case(parse(mixed), "old")
    skipped = case.find("skipped")
    assert case.find("failure") is None and skipped is not None
    assert skipped.get("message") == "known failure fedcba987654 (baseline)"
    assert "but the model called lookup [wrong_tool]" in (skipped.text or "")


def test_passed_case_has_no_child(mixed: RunResult) -> None:
    assert list(find_case(parse(mixed), "sunny")) == []


def test_problems_become_errored_testcases(make_run: Callable[..., RunResult]) -> None:
    problems = (Problem("packs/a/pack.yaml", 4, "bad key"), Problem("packs/b", None, "no pack"))
    root = parse(make_run(problems=problems))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == PROBLEMS_SUITE
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == ["packs/a/pack.yaml:4", "packs/b"]
    located = parse_xunit1(make_run(problems=problems)).iter("testcase")
    assert [(case.get("file"), case.get("line")) for case in located] == [
        ("packs/a/pack.yaml", "4"), ("packs/b", None),
    ]  # fmt: skip
    messages = [error.get("message") for error in suite.iter("error")]
    assert messages == ["bad key", "no pack"]


@pytest.mark.parametrize("duration", [0.0, 0.00001, 0.00004, 0.00005, 1e-9, 12345.678901])
def test_any_duration_gives_a_surefire_time(
    duration: float, make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    cases = [make_case(case_id=str(n), duration_s=duration) for n in range(3)]
    parse(make_run(*cases))  # the schema checks every time attribute


def test_hostile_text_survives_everywhere(hostile: RunResult, hostile_text: str) -> None:
    root = parse(hostile)
    shown = xml_safe(hostile_text)
    names = [case.get("name") for case in root.iter("testcase")]
    assert names.count(shown) == len(hostile.cases)
    failure = next(root.iter("failure"))
    assert failure.get("type") == shown
    assert "\\x00" in (failure.get("message") or "") and "\\ud800" in (failure.text or "")
    assert "</testcase> &amp;" in (failure.text or "")  # markup is text, not structure
    assert len(list(root.iter("testcase"))) == len(hostile.cases) + 1


def test_junit_xml_alone_would_break_or_lose_text() -> None:
    """Why everything passes through xml_safe: junit-xml drops some characters silently
    and turns a lone surrogate into a character reference no parser accepts."""
    suite = junit_xml.TestSuite("s", [junit_xml.TestCase("a\x1bb\ud800")])
    text = junit_xml.to_xml_report_string([suite], prettyprint=False)
    assert "a" + "b&#55296;" in text
    with pytest.raises(ET.ParseError):
        ET.fromstring(text)


def test_empty_run_is_an_empty_valid_report() -> None:
    assert list(parse(RunResult(cases=()))) == []
    empty = '<testsuites tests="0" failures="0" errors="0" time="0.000" />'
    assert render_junit(RunResult(cases=())) == f'<?xml version="1.0" encoding="utf-8"?>\n{empty}\n'


def test_a_case_of_no_time_is_written_as_one_of_some_time(mixed: RunResult) -> None:
    """A cached result has a duration of 0: junit-xml leaves such a time out, and the
    attribute added afterwards would move, so a warm run's report would differ from a cold
    one's in more than the times."""
    timed = replace(mixed, cases=tuple(replace(c, duration_s=0.25) for c in mixed.cases))
    untimed = replace(mixed, cases=tuple(replace(c, duration_s=0.0) for c in mixed.cases))
    for family in JunitFamily:
        cold, warm = render_junit(timed, family=family), render_junit(untimed, family=family)
        assert 'time="0.250"' in cold and 'time="0.250"' not in warm
        blank = functools.partial(re.sub, r'time="[0-9.]+"', 'time="X"')
        assert blank(warm) == blank(cold)


def test_the_report_in_pieces_is_the_report(mixed: RunResult) -> None:
    """Suites are serialised one by one under totals written first: the same bytes as the
    whole tree serialised at once."""
    for family in JunitFamily:
        pieces = list(junit_chunks(mixed, family=family))
        assert len(pieces) > 3
        root = ET.fromstring("".join(pieces).split("\n", 1)[1])
        whole = ET.tostring(root, encoding="unicode").encode("ascii", "xmlcharrefreplace")
        assert "".join(pieces) == '<?xml version="1.0" encoding="utf-8"?>\n' + whole.decode() + "\n"


def test_text_beyond_ascii_is_written_as_character_references(mixed: RunResult) -> None:
    name = "café ☃ 😀"
    result = replace(mixed, cases=(replace(mixed.cases[0], case_id=name),), problems=())
    text = render_junit(result)
    assert text.isascii()
    assert 'name="caf&#233; &#9731; &#128512;"' in text
    assert find_case(parse(result), name).get("classname") == "demo.weather"


GOLDEN = Path(__file__).parents[1] / "data" / "junit_golden"


@pytest.mark.parametrize("family", list(JunitFamily), ids=lambda family: family.value)
@pytest.mark.parametrize("name", ["mixed", "hostile"])
def test_the_report_is_byte_for_byte_the_one_elementtree_wrote(
    name: str, family: JunitFamily, request: pytest.FixtureRequest
) -> None:
    """Pinned bytes: attribute order (a suite's ``time`` before ``file``), a problem's time,
    every escape; what a comparison of two paths of today's code cannot see."""
    result: RunResult = request.getfixturevalue(name)
    expected = (GOLDEN / f"{name}_{family.value}.xml").read_bytes().decode("utf-8")
    assert render_junit(result, family=family) == expected


def test_each_case_with_a_text_names_the_files_it_judged(
    mixed: RunResult, make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    # a passed plain case has no text (a testcase of attributes only): JSON names its files
    failure = find_case(parse(mixed), "rainy").find("failure")
    assert failure is not None and failure.text is not None
    assert failure.text.splitlines()[1] == "judged: packs/demo/golden/wrong_tool.json"
    traced = make_case(
        case_id="synth#2",
        inputs=("runs/b.json",),
        run_id="run-2",
        score=1.0,
        assertions=(
            AssertionOutcome("a", "tool_called", AssertionStatus.PASSED, 1.0, None, "s.yaml", 3),
        ),
    )
    out = find_case(parse(make_run(traced)), "synth#2").find("system-out")
    assert out is not None and out.text is not None
    assert out.text.splitlines()[0] == "judged: runs/b.json (run run-2)"
