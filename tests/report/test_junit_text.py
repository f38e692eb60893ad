"""The JUnit writer against ElementTree's; the passed testcases it writes against junit-xml's."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

import junit_xml
import pytest
from hypothesis import strategies as st

from hostile_results import LINE, TEXT, results
from replaygate.core.model import RunResult
from replaygate.report import junit
from replaygate.report.junit import render_junit
from replaygate.report.junit_family import JunitFamily
from replaygate.report.junit_text import element_text
from sizes import sized

OPTIONAL = st.none() | TEXT


@st.composite
def junit_testcases(draw: st.DrawFn) -> junit_xml.TestCase:
    """A junit-xml testcase of raw text: every attribute and child it writes, or not."""
    testcase = junit_xml.TestCase(
        draw(TEXT),
        classname=draw(OPTIONAL),
        elapsed_sec=draw(st.none() | st.floats(0, 100)),
        stdout=draw(OPTIONAL),
        stderr=draw(OPTIONAL),
        file=draw(OPTIONAL),
        line=draw(st.none() | LINE),
    )
    outcome = draw(st.sampled_from(["passed", "failure", "error", "skipped"]))
    message, output, kind = draw(OPTIONAL), draw(OPTIONAL), draw(OPTIONAL)
    if outcome == "failure":
        testcase.add_failure_info(message=message, output=output, failure_type=kind)
    elif outcome == "error":
        testcase.add_error_info(message=message, output=output, error_type=kind)
    elif outcome == "skipped":
        testcase.add_skipped_info(message=message, output=output)
    return testcase


@sized(200, name=TEXT, cases=st.lists(junit_testcases(), max_size=4), file=OPTIONAL)
def test_the_writer_writes_what_elementtree_writes(
    name: str, cases: list[junit_xml.TestCase], file: str | None
) -> None:
    """Raw hostile text too: the writer escapes as ElementTree does, whatever reaches it."""
    element = junit_xml.TestSuite(name, cases, file=file).build_xml_doc()
    assert element_text(element) == ET.tostring(element, encoding="unicode")


def test_an_empty_element_is_written_short_and_text_is_escaped() -> None:
    element = ET.Element("a", {"b": '<&>"\r\n\t'})
    assert element_text(element) == '<a b="&lt;&amp;&gt;&quot;&#13;&#10;&#09;" />'
    element.text = "]]> <&>\"'\r\n"
    expected = '<a b="&lt;&amp;&gt;&quot;&#13;&#10;&#09;">]]&gt; &lt;&amp;&gt;"\'\r\n</a>'
    assert element_text(element) == expected


def built_by_junit_xml(result: RunResult, family: JunitFamily) -> str:
    """The report with every testcase junit-xml's, none written by us."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(junit, "_written_here", lambda case: False)
        return render_junit(result, family=family)


@sized(200, result=results(), family=st.sampled_from(JunitFamily))
def test_passed_testcases_are_what_junit_xml_builds(result: RunResult, family: JunitFamily) -> None:
    assert render_junit(result, family=family) == built_by_junit_xml(result, family)


@pytest.mark.parametrize("family", JunitFamily)
def test_the_shortcut_is_compared_on_passed_cases_of_every_shape(
    hostile: RunResult, family: JunitFamily
) -> None:
    """Hostile names, an empty contract file and line 0, beside cases junit-xml writes."""
    passed = hostile.cases[0]
    odd = (replace(passed, contract_file="", line=0), replace(passed, case_id=""), passed)
    result = replace(hostile, cases=(*odd, *hostile.cases))
    assert sum(map(junit._written_here, result.cases)) == 4
    assert render_junit(result, family=family) == built_by_junit_xml(result, family)
