"""The markdown report: content, escaping against a hostile fixture, and the byte budget."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from replaygate.core.model import CaseResult, Failure, Problem, RunResult, Status
from replaygate.report.markdown import render_markdown

MIB = 1024 * 1024
NOTE = re.compile(r"\*\*Report cut to fit:\*\* (.*) not shown(; see .*)?\.")


def test_mixed_report(mixed: RunResult) -> None:
    assert render_markdown(mixed) == (
        "## \u274c replaygate (shard 1/2): 2 passed, 2 failed, 1 error, 3 skipped, 1 known, "
        "1 problem in 0.04s\n"
        "\n"
        "| pack | contracts | passed | failed | errors | skipped |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: |\n"
        "| ` demo ` | 1 | 2 | 2 | 1 | 1 |\n"
        "| ` other ` | 1 | 0 | 0 | 0 | 2 |\n"
        "\n"
        "### Problems (1)\n"
        "\n"
        "- ` packs/bad/pack.yaml:3 ` ` unknown key 'nmae' (did you mean 'name'?) `\n"
        "\n"
        "### Failures (2)\n"
        "\n"
        "| contract | case | classification | fingerprint | message | judged |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        "| ` demo/weather.yaml ` | ` rainy ` | ` wrong_tool ` | ` 0123456789ab ` | "
        "` packs/demo/contracts/weather.yaml:14: "
        "expected a call to 'get_weather', but the model called lookup ` | "
        "` packs/demo/golden/wrong_tool.json ` |\n"
        "| ` demo/weather.yaml ` | ` broken ` | ` error ` |  | "
        "` packs/demo/contracts/weather.yaml:30: fixture is not valid JSON ` |  |\n"
        "\n"
        "### Known failures, accepted by the baseline (1)\n"
        "\n"
        "| contract | case | fingerprint | judged |\n"
        "| --- | --- | --- | --- |\n"
        "| ` demo/weather.yaml ` | ` old ` | ` fedcba987654 ` | "
        "` packs/demo/golden/wrong_tool.json ` |\n"
        "\n"
        "### Skipped (3)\n"
        "\n"
        "- 2: ` provider_modes excludes 'recorded' `\n"
        "- 1: ` nr-allowlist: model_nondeterminism (team-ml): flaky `\n"
    )


def test_clean_run_has_a_check_mark_and_no_empty_sections(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    report = render_markdown(make_run(make_case(), make_case(Status.FAILED, known=True)))
    assert report.startswith("## \u2705 replaygate: 1 passed, 1 failed, 0 errors, 0 skipped, ")
    assert "### Failures" not in report and "### Problems" not in report
    assert "### Known failures, accepted by the baseline (1)" in report


def test_a_problem_alone_fails_the_headline(make_run: Callable[..., RunResult]) -> None:
    report = render_markdown(make_run(problems=(Problem("p/pack.yaml", None, "x"),)))
    assert report.startswith("## \u274c ")
    assert "- ` p/pack.yaml ` ` x `\n" in report


def table_rows(report: str) -> list[str]:
    return [line for line in report.splitlines() if line.startswith("|")]


def cells(row: str) -> list[str]:
    """A table row split as GFM splits it: at each pipe that a backslash does not escape."""
    found, current, escaped = [], "", False
    for char in row:
        if char == "|" and not escaped:
            found.append(current)
            current = ""
        else:
            current += char
        escaped = char == "\\" and not escaped
    return [cell.strip() for cell in found[1:]]


def one_code_span(cell: str) -> bool:
    fence = re.match("`+", cell)
    if fence is None or not cell.endswith(" " + fence.group()):
        return False
    body = cell[len(fence.group()) + 1 : -len(fence.group()) - 1]
    return all(len(run) != len(fence.group()) for run in re.findall("`+", body))


def test_hostile_text_cannot_break_a_table_or_inject_markup(hostile: RunResult) -> None:
    report = render_markdown(hostile)
    report.encode("utf-8")  # no lone surrogate
    widths = {6, 4}  # the pack and failures tables, the known one
    for row in table_rows(report):
        found = cells(row)
        assert len(found) in widths, row
        assert all(re.fullmatch("[a-z ]*|-+:?|[0-9]+", c) or one_code_span(c) for c in found)
    lines = report.splitlines()
    assert len(lines) == 26  # the fixed layout: every hostile line break became a space
    assert not re.search("<", _outside_code(report))  # no tag
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", report)
    for mention in ("@everyone", "@org/team", "#123", "http://e/i.png"):
        assert mention in report  # shown, inside code, where GitHub links nothing
        assert mention not in _outside_code(report)
    assert not re.search(r"[\[\]!*_~$]", _outside_code(report).replace("---", ""))


def _outside_code(report: str) -> str:
    """The report without its code spans and the table rules and headings we write."""
    text = re.sub(r"(`+) .*? \1", "", report)
    return re.sub(r"^(#+ |- )", "", text, flags=re.MULTILINE).replace("**", "")


def test_hostile_problem_location_is_an_inert_code_span(hostile: RunResult) -> None:
    line = next(line for line in render_markdown(hostile).splitlines() if line.startswith("- `"))
    fence = re.match("`+", line[2:])
    assert fence is not None and len(fence.group()) == 4  # the hostile text has a run of 3
    assert "<script>" in line.split(fence.group())[1]  # literal inside code, not HTML


def test_no_budget_or_a_big_one_gives_the_whole_report(
    make_many: Callable[[int], RunResult],
) -> None:
    result = make_many(50)
    whole = render_markdown(result)
    assert render_markdown(result, max_bytes=len(whole.encode())) == whole
    assert "Report cut" not in whole and len(table_rows(whole)) == 3 + 2 + 50


def check_cut(report: str, max_bytes: int, failures: int) -> int:
    """Assert the cut report is well formed; return how many failure rows it shows."""
    assert len(report.encode("utf-8")) <= max_bytes
    assert report.endswith(".\n")
    note = NOTE.search(report.splitlines()[-1])
    assert note is not None, report[-300:]
    rows = [row for row in table_rows(report) if row.startswith("| ` demo/")]
    assert all(_ROW.search(row) for row in rows), rows[:1]
    assert f"{failures - len(rows)} more failures" in note.group(1)
    return len(rows)


_ROW = re.compile(
    r"\U0001f680 ` \| ` wrong_tool ` \| ` [0-9a-f]{12} ` \| ` "
    r"packs/demo/contracts/weather.yaml:\d+: "
    r"expected a call to 'get_weather', but the model called lookup ` \| "
    r"` packs/demo/golden/wrong_tool.json ` \|$"
)


def test_cut_at_a_row_boundary_with_a_note_that_fits(
    make_many: Callable[[int], RunResult],
) -> None:
    result = make_many(1000)
    report = render_markdown(result, max_bytes=20_000, files_note="replaygate-junit.xml")
    shown = check_cut(report, 20_000, 1000)
    assert 50 < shown < 1000
    assert report.splitlines()[-1] == (
        f"**Report cut to fit:** {1000 - shown} more failures not shown; see replaygate-junit.xml."
    )


def test_every_budget_is_respected(make_many: Callable[[int], RunResult]) -> None:
    result = make_many(40)
    whole = len(render_markdown(result).encode("utf-8"))
    shown = [
        check_cut(render_markdown(result, max_bytes=size, files_note="x.json"), size, 40)
        for size in range(600, whole, 97)
    ]
    assert shown == sorted(shown) and shown[0] < shown[-1]


@pytest.mark.parametrize("size", [0, 1, 10, 60, 200])
def test_a_budget_smaller_than_the_note_still_holds(
    size: int, make_many: Callable[[int], RunResult]
) -> None:
    report = render_markdown(make_many(5), max_bytes=size, files_note="the JUnit file")
    assert len(report.encode("utf-8")) <= size


def test_the_step_summary_cap(make_many: Callable[[int], RunResult]) -> None:
    result = make_many(10_000)
    report = render_markdown(result, max_bytes=MIB, files_note="junit.xml and results.json")
    assert MIB - 1000 < len(report.encode("utf-8")) <= MIB
    check_cut(report, MIB, 10_000)


def test_later_sections_are_counted_in_the_note(
    make_run: Callable[..., RunResult],
    make_case: Callable[..., CaseResult],
    make_failure: Callable[..., Failure],
) -> None:
    failed = [
        make_case(Status.FAILED, case_id=f"f{n}", failures=(make_failure(line=n + 1),))
        for n in range(30)
    ]
    known = [make_case(Status.FAILED, case_id=f"k{n}", known=True) for n in range(4)]
    skipped = [make_case(Status.SKIPPED, case_id=f"s{n}", reason=f"r{n}") for n in range(3)]
    report = render_markdown(make_run(*failed, *known, *skipped), max_bytes=2500)
    assert len(report.encode()) <= 2500
    note = report.splitlines()[-1]
    assert re.fullmatch(
        r"\*\*Report cut to fit:\*\* \d+ more failures, 4 more known failures, "
        r"3 more skip reasons not shown\.",
        note,
    )
    assert "### Known failures" not in report and "### Skipped" not in report


def test_files_note_is_escaped(make_many: Callable[[int], RunResult]) -> None:
    report = render_markdown(make_many(100), max_bytes=3000, files_note="[x](http://e) @a")
    assert report.endswith("see &#91;x&#93;(http://e) @&#8203;a.\n")


def test_warnings_have_their_own_section_and_count(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    warning = Problem("packs/p/nr-allowlist.json", 8, "entry 0 expired <b>")
    report = render_markdown(make_run(make_case(), warnings=(warning,)))
    assert "### Warnings (1)" in report
    assert "- ` packs/p/nr-allowlist.json:8 ` ` entry 0 expired <b> `" in report
    assert report.startswith("## \u2705 replaygate: 1 passed, 0 failed, 0 errors, 0 skipped, ")


def test_the_budget_is_exact_to_the_byte(make_many: Callable[[int], RunResult]) -> None:
    result = make_many(40)
    whole = render_markdown(result)
    size = len(whole.encode("utf-8"))
    assert render_markdown(result, max_bytes=size, files_note="x.json") == whole
    check_cut(render_markdown(result, max_bytes=size - 1, files_note="x.json"), size - 1, 40)


def test_identical_failures_are_one_row_with_every_fingerprint_in_a_collapsed_section(
    make_many: Callable[..., RunResult],
) -> None:
    result = make_many(500, alike=True)
    report = render_markdown(result)
    failure_rows = [row for row in table_rows(report) if "| ` wrong_tool ` |" in row]
    assert failure_rows == [
        "| ` demo/weather.yaml ` | \u00d7 500 cases | ` wrong_tool ` | below | "
        "` packs/demo/contracts/weather.yaml:14: "
        "expected a call to 'get_weather', but the model called lookup ` | below |"
    ]
    assert "### Failures (500)" in report
    details = report.split("<details><summary>", 1)[1]
    assert details.startswith("Cases and fingerprints of the grouped failures (500)</summary>\n")
    assert details.endswith("\n</details>\n")
    for case in result.cases:
        assert report.count(f"| ` {case.fingerprint} ` |") == 1
    # 500 rows with the message were 96 KB; each grouped row names its files (about 40 bytes)
    assert len(report.encode()) < 60_000


def test_a_single_failure_stays_one_plain_row_without_a_collapsed_section(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    report = render_markdown(make_run(make_case(Status.FAILED, case_id="rainy")))
    assert report.split("### Failures (1)\n", 1)[1] == (
        "\n"
        "| contract | case | classification | fingerprint | message | judged |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        "| ` demo/weather.yaml ` | ` rainy ` | ` wrong_tool ` | ` 0123456789ab ` | "
        "` packs/demo/contracts/weather.yaml:14: "
        "expected a call to 'get_weather', but the model called lookup ` | "
        "` packs/demo/golden/wrong_tool.json ` |\n"
    )
    assert "<details>" not in report


def test_failures_group_only_with_the_same_line_and_message(
    make_run: Callable[..., RunResult],
    make_case: Callable[..., CaseResult],
    make_failure: Callable[..., Failure],
) -> None:
    cases = [
        make_case(Status.FAILED, case_id="a"),
        make_case(Status.FAILED, case_id="b", failures=(make_failure(line=15),)),
        make_case(Status.FAILED, case_id="c", failures=(make_failure(message="other"),)),
        make_case(Status.FAILED, case_id="d", classification="schema_violation"),
        make_case(Status.FAILED, case_id="e"),
    ]
    rows = [row for row in table_rows(render_markdown(make_run(*cases))) if "demo/" in row]
    cells = [row.split(" | ")[1].strip("` ") for row in rows]
    assert cells[:4] == ["\u00d7 2 cases", "b", "c", "d"]
    assert cells[4:] == ["a", "e"]  # the collapsed section


def test_a_cut_report_closes_its_collapsed_section_within_every_budget(
    make_many: Callable[..., RunResult],
) -> None:
    result = make_many(300, alike=True)
    whole = len(render_markdown(result).encode())
    for size in range(300, whole + 1, 211):
        report = render_markdown(result, max_bytes=size, files_note="results.json")
        assert len(report.encode()) <= size
        assert report.count("<details>") == report.count("</details>")


def test_listed_cases_name_the_files_they_judged(
    make_run: Callable[..., RunResult], make_case: Callable[..., CaseResult]
) -> None:
    failed = make_case(
        Status.FAILED, case_id="a", classification="x", inputs=("packs/demo/golden/a.json",)
    )
    alike = [
        make_case(Status.FAILED, case_id=f"g{i}", inputs=(f"runs/{i}.json",), run_id=f"r{i}")
        for i in range(2)
    ]
    other = make_case(Status.ERROR, case_id="e", reason="boom")
    text = render_markdown(make_run(failed, other, *alike))
    rows = [line for line in text.splitlines() if line.startswith("| ` demo/")]
    assert rows[0].endswith("| ` packs/demo/golden/a.json ` |")
    assert rows[2].endswith("| below |")  # grouped: each case's files in the collapsed table
    assert rows[3].endswith("| ` runs/0.json (run r0) ` |")
    assert rows[4].endswith("| ` runs/1.json (run r1) ` |")
