"""The JUnit XML report: one testsuite per contract, one testcase per golden case."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import junit_xml

from replaygate.core.model import CaseResult, Problem, RunResult, Status
from replaygate.core.places import where
from replaygate.report.escape import truncate, xml_safe
from replaygate.report.grammar import (
    assertion_notes,
    case_line,
    failure_line,
    judged_text,
    score_text,
    value_text,
)
from replaygate.report.junit_family import JunitFamily
from replaygate.report.junit_text import attribute, element_rest, element_text, start_tag

PROBLEMS_SUITE = "replaygate.problems"
_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n'
_MESSAGE_LIMIT = 1000  # characters of an attribute
_VALUE_LIMIT = 2000  # characters of one expected or actual value
_FAILURE_LIMIT = 50  # failures listed in one testcase's text
_COUNTS = ("tests", "failures", "errors")


def render_junit(result: RunResult, *, family: JunitFamily = JunitFamily.XUNIT2) -> str:
    """The whole report (see ``junit_chunks``) as one text."""
    return "".join(junit_chunks(result, family=family))


def junit_chunks(result: RunResult, *, family: JunitFamily = JunitFamily.XUNIT2) -> Iterator[str]:
    """The report in pieces; every untrusted string passes through ``xml_safe`` first.

    junit-xml builds the suites and every testcase with a child (a passed one, all
    attributes, is written here: see ``_written_here``), and ``junit_text`` writes them
    as ElementTree would; every ``time`` is written here, in whole milliseconds, and the
    counts junit-10.xsd does not define (``disabled``) are left out. junit-xml deletes
    some characters XML cannot carry and writes lone surrogates as character references
    that no parser accepts, so it never sees one. The output is ASCII (other characters
    become references).

    Each suite is serialised as soon as it is built, and its elements dropped: the
    ``testsuites`` element's totals come first in the file, so the suites' texts wait
    for them, but the elements of 10,000 cases would take several times their text.
    """
    located = family is JunitFamily.XUNIT1
    suites: Iterable[_Suite] = (_suite(cases, located) for cases in _by_contract(result.cases))
    if result.problems:
        suites = itertools.chain(suites, [_problems_suite(result.problems, located)])
    totals = dict.fromkeys(_COUNTS, 0)
    milliseconds = 0
    texts = []
    for suite in suites:
        element = suite.built.build_xml_doc()
        element.set("tests", str(len(suite.cases)))  # with the testcases written here
        for count in _COUNTS:
            totals[count] += int(element.get(count, 0))
        milliseconds += sum(ms for ms, _ in suite.cases)
        texts.append(_suite_text(element, suite.cases))
    root = ET.Element("testsuites", {count: str(totals[count]) for count in _COUNTS})
    root.set("time", _seconds(milliseconds))
    if not texts:  # an empty element is written in its short form
        yield _DECLARATION + _ascii(element_text(root)) + "\n"
        return
    yield _DECLARATION + _ascii(element_text(root)).removesuffix(" />") + ">"
    yield from texts
    yield "</testsuites>\n"


def _ascii(text: str) -> str:
    # Made ASCII once per suite, with the character references ElementTree's ASCII writer uses.
    return text.encode("ascii", "xmlcharrefreplace").decode()


class _Suite(NamedTuple):
    built: Any  # junit_xml.TestSuite of the cases that are not passed ones (see _passed_text)
    cases: list[tuple[int, str | None]]  # each case's milliseconds, and its text if written here


def _suite_text(element: ET.Element, cases: list[tuple[int, str | None]]) -> str:
    """A suite junit-xml built, with our times and the passed cases' texts in their places."""
    element.attrib.pop("disabled", None)
    element.set("time", _seconds(sum(ms for ms, _ in cases)))  # in junit-xml's place for it
    built = iter(element)
    testcases = [_testcase_text(next(built), ms) if text is None else text for ms, text in cases]
    return _ascii(
        f"{start_tag('testsuite', element.attrib.items())}>{''.join(testcases)}</testsuite>"
    )


def _testcase_text(testcase: ET.Element, milliseconds: int) -> str:
    attributes = testcase.attrib
    # Second, where junit-xml writes a time it is given: it is given none (it would leave
    # out a time of 0, a cached result's, and write six decimals), so it is written here.
    first = [("name", attributes.pop("name")), ("time", _seconds(milliseconds))]
    return start_tag("testcase", [*first, *attributes.items()]) + element_rest(testcase)


def _by_contract(cases: Iterable[CaseResult]) -> list[list[CaseResult]]:
    groups: dict[tuple[str, str], list[CaseResult]] = {}
    for case in cases:
        groups.setdefault((case.pack, case.contract), []).append(case)
    return list(groups.values())


def _suite(cases: list[CaseResult], located: bool) -> _Suite:
    first = cases[0]
    # The same for every case of the contract: escaped once, not once per case.
    shared = _shared(
        _safe(classname(first.pack, first.contract)), _safe(first.contract_file), located
    )
    texts = [_passed_text(case, shared) if _written_here(case) else None for case in cases]
    suite = junit_xml.TestSuite(
        _safe(f"{first.pack}/{first.contract}"),
        [_testcase(case, shared) for case, text in zip(cases, texts, strict=True) if text is None],
        file=shared.file,
    )
    return _Suite(
        suite, [(round(c.duration_s * 1000), text) for c, text in zip(cases, texts, strict=True)]
    )


def _written_here(case: CaseResult) -> bool:
    """A passed case without trace assertions: a testcase of attributes only.

    Such cases are nearly all of a report, and junit-xml's objects, the element it builds
    from them and the walk to write it cost several times the text: it is written here,
    with the attributes junit-xml gives it, in its order, and escaped by the same writer.
    junit-xml still builds every suite and every case with a child (failure, error,
    skipped, system-out). tests/report/test_junit_text.py holds the report to the one
    junit-xml builds whole.
    """
    return case.status is Status.PASSED and not case.assertions


def _passed_text(case: CaseResult, shared: _Shared) -> str:
    """``_testcase(case, shared)`` as junit-xml builds it and ``_testcase_text`` writes it."""
    located = shared.located and case.line  # junit-xml leaves out line 0
    line = f' line="{attribute(str(case.line))}"' if located else ""
    name = attribute(_safe(case.case_id))
    time = _seconds(round(case.duration_s * 1000))
    return f'<testcase name="{name}" time="{time}"{shared.attributes}{line} />'


class _Shared(NamedTuple):
    classname: str
    file: str
    located: bool
    attributes: str  # a passed testcase's after its time, written: see _shared


def _shared(name: str, file: str, located: bool) -> _Shared:
    # the attributes junit-xml gives a passed testcase after its name, leaving out empty ones
    attributes = [("classname", name)] if name else []
    if located and file:
        attributes.append(("file", file))
    return _Shared(name, file, located, start_tag("", attributes).removeprefix("<"))


def _testcase(case: CaseResult, shared: _Shared) -> Any:
    testcase = junit_xml.TestCase(
        _safe(case.case_id),
        classname=shared.classname,
        file=shared.file if shared.located else None,
        line=case.line if shared.located else None,
        stdout=_assertions(case),
    )
    if case.status is Status.FAILED and case.known:
        message = f"known failure {case.fingerprint} (baseline)"
        testcase.add_skipped_info(message=_safe(message), output=_details(case))
    elif case.status is Status.FAILED:
        message = _safe(case_line(case))
        kind = _safe(case.classification or "failure")
        testcase.add_failure_info(message=message, output=_details(case), failure_type=kind)
    elif case.status is Status.ERROR:
        message = _safe(case_line(case))
        kind = _safe(case.classification or "error")
        testcase.add_error_info(message=message, output=_details(case), error_type=kind)
    elif case.status is Status.SKIPPED:
        testcase.add_skipped_info(message=_safe(case.reason or "skipped"))
    return testcase


def classname(pack: str, contract: str) -> str:
    """``<pack>.<contract path without .yaml, slashes to dots>``."""
    stem = contract.removesuffix(".yaml").removesuffix(".yml")
    return f"{pack}.{stem.replace('/', '.')}"


def _details(case: CaseResult) -> str:
    """The failure text: fingerprint, reason, then each failure with its values."""
    lines = [f"fingerprint: {case.fingerprint or '-'}", *_judged(case)]
    if case.reason:
        lines.append(f"reason: {truncate(case.reason, _VALUE_LIMIT)}")
    if not case.failures:
        lines.append(case_line(case, fingerprint=False))
    for failure in case.failures[:_FAILURE_LIMIT]:
        lines.append(truncate(failure_line(failure), _VALUE_LIMIT))
        lines.append(f"  expected: {truncate(value_text(failure.expected), _VALUE_LIMIT)}")
        lines.append(f"  actual: {truncate(value_text(failure.actual), _VALUE_LIMIT)}")
    if len(case.failures) > _FAILURE_LIMIT:
        lines.append(f"... {len(case.failures) - _FAILURE_LIMIT} more failures")
    return xml_safe("\n".join(lines))


def _assertions(case: CaseResult) -> str | None:
    """A trace case's score and each assertion's verdict, as the testcase's output."""
    if not case.assertions:
        return None
    lines = [*_judged(case), f"score: {score_text(case)}"]
    lines += [f"{item.status.value}: {item.id} ({item.type})" for item in case.assertions]
    lines += assertion_notes(case)
    return xml_safe(truncate("\n".join(lines), _VALUE_LIMIT * 5))


def _judged(case: CaseResult) -> list[str]:
    """``judged: <files> (run <id>)`` when the case read any."""
    if not case.inputs and case.run_id is None:
        return []
    return [f"judged: {truncate(judged_text(case), _VALUE_LIMIT)}"]


def _problems_suite(problems: Iterable[Problem], located: bool) -> _Suite:
    testcases = []
    for problem in problems:
        testcase = junit_xml.TestCase(
            _safe(where(problem.file, problem.line)),
            classname=PROBLEMS_SUITE,
            file=_safe(problem.file) if located else None,
            line=problem.line if located else None,
        )
        testcase.add_error_info(message=_safe(problem.message), error_type="problem")
        testcases.append(testcase)
    return _Suite(junit_xml.TestSuite(PROBLEMS_SUITE, testcases), [(0, None)] * len(testcases))


def _seconds(milliseconds: int) -> str:
    """Seconds with exactly three decimals: sums of whole milliseconds have no float error."""
    return f"{milliseconds // 1000}.{milliseconds % 1000:03d}"


def _safe(text: str) -> str:
    return xml_safe(truncate(text, _MESSAGE_LIMIT))
