"""The JUnit XML report: one testsuite per contract, one testcase per golden case."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import junit_xml

from replaygate.errors import where
from replaygate.report.escape import truncate, xml_safe
from replaygate.report.grammar import (
    assertion_notes,
    case_line,
    failure_line,
    score_text,
    value_text,
)
from replaygate.results.model import CaseResult, Problem, RunResult, Status

PROBLEMS_SUITE = "replaygate.problems"
_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n'
_MESSAGE_LIMIT = 1000  # characters of an attribute
_VALUE_LIMIT = 2000  # characters of one expected or actual value
_FAILURE_LIMIT = 50  # failures listed in one testcase's text


def render_junit(result: RunResult) -> str:
    """The whole report; every untrusted string passes through ``xml_safe`` first.

    junit-xml deletes some characters XML cannot carry and writes lone
    surrogates as character references that no parser accepts, so it never
    sees one. Its output is ASCII (other characters become references).
    """
    suites = [_suite(cases) for cases in _by_contract(result.cases)]
    if result.problems:
        suites.append(_problems_suite(result.problems))
    body: str = junit_xml.to_xml_report_string(suites, prettyprint=False)
    return _DECLARATION + body + "\n"


def _by_contract(cases: Iterable[CaseResult]) -> list[list[CaseResult]]:
    groups: dict[tuple[str, str], list[CaseResult]] = {}
    for case in cases:
        groups.setdefault((case.pack, case.contract), []).append(case)
    return list(groups.values())


def _suite(cases: list[CaseResult]) -> Any:
    first = cases[0]
    return junit_xml.TestSuite(
        _safe(f"{first.pack}/{first.contract}"),
        [_testcase(case) for case in cases],
        file=_safe(first.contract_file),
    )


def _testcase(case: CaseResult) -> Any:
    testcase = junit_xml.TestCase(
        _safe(case.case_id),
        classname=_safe(classname(case.pack, case.contract)),
        elapsed_sec=_seconds(case.duration_s),
        file=_safe(case.contract_file),
        line=case.line,
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
    lines = [f"fingerprint: {case.fingerprint or '-'}"]
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
    lines = [f"score: {score_text(case)}"]
    lines += [f"{item.status.value}: {item.id} ({item.type})" for item in case.assertions]
    lines += assertion_notes(case)
    return xml_safe(truncate("\n".join(lines), _VALUE_LIMIT * 5))


def _problems_suite(problems: Iterable[Problem]) -> Any:
    testcases = []
    for problem in problems:
        testcase = junit_xml.TestCase(
            _safe(where(problem.file, problem.line)),
            classname=PROBLEMS_SUITE,
            file=_safe(problem.file),
            line=problem.line,
        )
        testcase.add_error_info(message=_safe(problem.message), error_type="problem")
        testcases.append(testcase)
    return junit_xml.TestSuite(PROBLEMS_SUITE, testcases)


def _seconds(duration: float) -> float:
    # Whole tenths of milliseconds: junit-xml writes sums with str(), and a float
    # below 1e-4 would come out as "1e-05", which the Surefire time pattern rejects.
    return round(duration, 4)


def _safe(text: str) -> str:
    return xml_safe(truncate(text, _MESSAGE_LIMIT))
