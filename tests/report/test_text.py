"""The terminal summary: order, house grammar, totals and escaping."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from replaygate.core.model import CaseResult, Failure, Problem, RunResult, Status
from replaygate.report.text import Verbosity, render_text


def test_mixed_run_reads_problems_failures_skips_then_totals(mixed: RunResult) -> None:
    assert render_text(mixed).splitlines() == [
        "packs/bad/pack.yaml:3: unknown key 'nmae' (did you mean 'name'?)",
        "packs/demo/contracts/weather.yaml:14: expected a call to 'get_weather', "
        "but the model called lookup [wrong_tool] (0123456789ab) (case rainy)",
        "packs/demo/contracts/weather.yaml:14: expected a call to 'get_weather', "
        "but the model called lookup [wrong_tool] (fedcba987654) (case old, known)",
        "packs/demo/contracts/weather.yaml:30: fixture is not valid JSON (case broken)",
        "2 skipped: provider_modes excludes 'recorded'",
        "1 skipped: nr-allowlist: model_nondeterminism (team-ml): flaky",
        "2 passed, 2 failed, 1 error, 3 skipped, 1 known, 1 problem in 0.04s",
    ]


def test_all_passed_is_one_totals_line(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    result = make_run(make_case(), make_case(case_id="b"), duration_s=1.234)
    assert render_text(result) == "2 passed, 0 failed, 0 errors, 0 skipped in 1.23s\n"


def test_failure_uses_its_own_file_and_line_not_the_cases(
    make_run: Callable[..., RunResult],
    make_case: Callable[..., CaseResult],
    make_failure: Callable[..., Failure],
) -> None:
    first = make_failure(file="packs/p/contracts/c.yaml", line=7, path=None, message="boom")
    second = make_failure(line=99, message="second")
    case = make_case(Status.FAILED, failures=(first, second), fingerprint="aaaaaaaaaaaa")
    line = render_text(make_run(case)).splitlines()[0]
    assert line == "packs/p/contracts/c.yaml:7: boom [wrong_tool] (aaaaaaaaaaaa) (case sunny)"


def test_every_failure_of_a_case_is_printed_primary_first_up_to_a_cap(
    make_run: Callable[..., RunResult],
    make_case: Callable[..., CaseResult],
    make_failure: Callable[..., Failure],
) -> None:
    primary = make_failure(line=7, path="$.city", message="'Paris' is not equal to 'Bern'")
    schema = make_failure(
        classification="schema_violation", line=3, path="$.days", message="15 is greater than 14"
    )
    case = make_case(Status.FAILED, failures=(primary, schema), fingerprint="aaaaaaaaaaaa")
    assert render_text(make_run(case)).splitlines()[:2] == [
        "packs/demo/contracts/weather.yaml:7: $.city: 'Paris' is not equal to 'Bern' "
        "[wrong_tool] (aaaaaaaaaaaa) (case sunny)",
        "  packs/demo/contracts/weather.yaml:3: $.days: 15 is greater than 14 [schema_violation]",
    ]
    verbose = render_text(make_run(case), verbosity=Verbosity.VERBOSE).splitlines()
    assert verbose[1].startswith("  packs/demo/contracts/weather.yaml:3: $.days:")
    many = tuple(make_failure(line=index + 1, message=f"m{index}") for index in range(25))
    lines = render_text(make_run(replace(case, failures=many))).splitlines()
    assert lines[0].startswith("packs/demo/contracts/weather.yaml:1: m0 [wrong_tool]")
    assert lines[1:11] == [
        f"  packs/demo/contracts/weather.yaml:{index + 1}: m{index} [wrong_tool]"
        for index in range(1, 11)
    ]
    assert lines[11:13] == [
        "  ... and 14 more failures of this case",
        "0 passed, 1 failed, 0 errors, 0 skipped in 0.04s",
    ]


def test_cases_group_only_when_all_their_failures_are_the_same(
    make_run: Callable[..., RunResult],
    make_case: Callable[..., CaseResult],
    make_failure: Callable[..., Failure],
) -> None:
    two = (make_failure(), make_failure(line=20, message="other"))
    cases = [make_case(Status.FAILED, case_id=f"c{i}", failures=two) for i in range(3)]
    differs = make_case(Status.FAILED, case_id="d", failures=two[:1])
    lines = render_text(make_run(*cases, differs)).splitlines()
    assert [line for line in lines if "(case " in line or "same problem" in line] == [
        lines[0],
        "... and 2 more cases: same problem",
        lines[3],
    ]
    assert lines[3].endswith("(case d)")


def test_error_without_failures_uses_case_line_and_reason(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    case = make_case(Status.ERROR, reason="input_ref leaves the pack", fingerprint=None, line=12)
    line = render_text(make_run(case)).splitlines()[0]
    assert line == "packs/demo/contracts/weather.yaml:12: input_ref leaves the pack (case sunny)"


def test_failed_case_without_failure_or_reason_gets_a_default_message(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    case = make_case(Status.FAILED, failures=(), classification="unexpected_pass")
    line = render_text(make_run(case)).splitlines()[0]
    assert line.endswith(": the case failed [unexpected_pass] (0123456789ab) (case sunny)")


def test_problem_without_line_is_file_colon_message(make_run: Callable[..., RunResult]) -> None:
    result = make_run(problems=(Problem("packs/x/pack.yaml", None, "not a mapping"),))
    assert render_text(result).splitlines()[0] == "packs/x/pack.yaml: not a mapping"
    assert render_text(result).splitlines()[-1].endswith(", 1 problem in 0.04s")


def test_skip_reasons_are_grouped_most_frequent_first(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    reasons = ["b", "a", "b", None]
    cases = [make_case(Status.SKIPPED, case_id=str(i), reason=r) for i, r in enumerate(reasons)]
    lines = render_text(make_run(*cases)).splitlines()
    assert lines[:3] == ["2 skipped: b", "1 skipped: a", "1 skipped: no reason given"]


def test_color_paints_failures_red_and_a_clean_run_green(
    mixed: RunResult, make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    lines = render_text(mixed, color=True).splitlines()
    assert lines[1].startswith("\x1b[31mpacks/demo/") and lines[1].endswith("\x1b[0m")
    assert lines[2].startswith("\x1b[33m")  # known: yellow
    assert lines[-1].startswith("\x1b[31m")
    clean = render_text(make_run(make_case()), color=True)
    assert clean.startswith("\x1b[32m")
    assert "\x1b" not in render_text(mixed)


def test_hostile_text_stays_on_its_line_and_cannot_drive_the_terminal(
    hostile: RunResult,
) -> None:
    out = render_text(hostile, color=True)
    lines = out.splitlines()
    assert len(lines) == 1 + 3 + 1 + 1  # problem, 3 failed/errored, 1 skip reason, totals
    assert all(line.startswith(("\x1b[31mpacks/", "\x1b[33m")) for line in lines[:-1])
    assert lines[-1].startswith("\x1b[31m1 passed, 2 failed, 1 error, 1 skipped, 1 known")
    uncoloured = re.sub(r"\x1b\[(31|32|33|0)m", "", out)
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", uncoloured)
    out.encode("utf-8")  # no lone surrogate reaches stdout
    assert "\\x1b[31mred" in out and "\\ud800" in out and "\\u202eevil" in out


def test_huge_values_are_truncated(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    case = make_case(Status.ERROR, reason="x" * 100_000)
    out = render_text(make_run(case))
    assert len(out) < 3000
    assert "more characters]" in out


def test_identical_failures_print_once_with_a_count(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    same = [make_case(Status.FAILED, case_id=f"c{i}", fingerprint=f"{i:012x}") for i in range(4)]
    other = make_case(Status.ERROR, case_id="z", reason="fixture is not valid JSON")
    lines = render_text(make_run(*same, other)).splitlines()
    assert lines == [
        "packs/demo/contracts/weather.yaml:14: expected a call to 'get_weather', "
        "but the model called lookup [wrong_tool] (000000000000) (case c0)",
        "... and 3 more cases: same problem",
        "packs/demo/contracts/weather.yaml:30: fixture is not valid JSON (case z)",
        "0 passed, 4 failed, 1 error, 0 skipped in 0.04s",
    ]


def test_ten_thousand_identical_errors_are_two_lines(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    cases = [
        make_case(Status.ERROR, case_id=f"c{i}", line=i + 1, reason="recording is missing")
        for i in range(10_000)
    ]
    lines = render_text(make_run(*cases)).splitlines()
    assert lines[1:] == [
        "... and 9,999 more cases: same problem",
        "0 passed, 0 failed, 10000 errors, 0 skipped in 0.04s",
    ]


def test_warnings_are_printed_and_counted_but_do_not_fail(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    warning = Problem("packs/p/golden/old.json", None, "no golden case names this fixture")
    text = render_text(make_run(make_case(), warnings=(warning,)), color=True)
    assert text.splitlines() == [
        "\x1b[33mpacks/p/golden/old.json: warning: no golden case names this fixture\x1b[0m",
        "\x1b[32m1 passed, 0 failed, 0 errors, 0 skipped, 1 warning in 0.04s\x1b[0m",
    ]
