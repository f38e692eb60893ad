"""The report options `run` and `merge` share: which reports to write and where, the
GitHub channels, and the exit code of a result once every report went out."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

from replaygate.core.errors import EXIT_CONFIG, ReplayGateError
from replaygate.core.model import RunResult
from replaygate.github.env import DEFAULT_AUTHOR
from replaygate.loading.files import named_path
from replaygate.options.output import STDOUT, add_output_options, choice, stdout_report, wants_color
from replaygate.options.values import count, seconds_value
from replaygate.report.files import report_path, write_atomic
from replaygate.report.junit_family import JunitFamily
from replaygate.results.verdict import FailOn, exit_code

SUMMARY_NOTE = "the JUnit and JSON result files"


def add_report_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "reports", "FILE may be - for stdout; the terminal report then goes to stderr"
    )
    group.add_argument("--junit", metavar="FILE", help="write a JUnit XML report")
    group.add_argument(
        "--junit-family",
        type=choice(JunitFamily),
        default=JunitFamily.XUNIT2,
        metavar="{xunit2,xunit1}",
        help="xunit2 (default): valid for Jenkins' junit-10.xsd; xunit1: adds the file and "
        "line of each case, which PR annotators read (docs/results.md)",
    )
    group.add_argument("--json", metavar="FILE", help="write the JSON results (docs/results.md)")
    group.add_argument("--summary", metavar="FILE", help="write a markdown summary")
    group.add_argument(
        "--baseline",
        metavar="FILE",
        help="accepted fingerprints: their failures are reported as known",
    )
    group.add_argument(
        "--fail-on",
        choices=[value.value for value in FailOn],  # plain strings: argparse lists their repr
        default=FailOn.FAILURE.value,
        help="exit 1 on a failed or errored case (default), or never (load problems still exit 2)",
    )
    gh = parser.add_argument_group("GitHub (used by the action)")
    gh.add_argument(
        "--github",
        action="store_true",
        help="annotate, write the step summary and outputs, from GITHUB_* variables",
    )
    gh.add_argument(
        "--no-annotations",
        dest="annotations",
        action="store_false",
        help="no workflow-command annotations on the contract lines",
    )
    gh.add_argument(
        "--no-step-summary",
        dest="step_summary",
        action="store_false",
        help="do not append the markdown report to $GITHUB_STEP_SUMMARY",
    )
    gh.add_argument("--check-run", action="store_true", help="also create a check run")
    gh.add_argument("--pr-comment", action="store_true", help="also keep one PR comment up to date")
    gh.add_argument(
        "--comment-author",
        metavar="LOGIN",
        help=f"login that owns our PR comment (default: {DEFAULT_AUTHOR})",
    )
    gh.add_argument(
        "--check-run-annotations",
        type=count,
        metavar="N",
        help="send at most N annotations with the check run (default 1000)",
    )
    gh.add_argument(
        "--api-deadline",
        type=seconds_value,
        metavar="SECONDS",
        help="time for every GitHub API request together; what is left then is skipped "
        "with a warning (default 60)",
    )
    add_output_options(parser)


# A report file: its channel name, its path as given, and its renderer.
Report = tuple[str, str, Callable[[], Iterable[str]]]


def finish(result: RunResult, args: argparse.Namespace) -> int:
    """Apply the baseline, write and publish the reports; the exit code of `run` and `merge`.

    A report or channel that could not be written makes it 2, whatever the cases did.
    """
    accepted: frozenset[str] | None = None
    if args.baseline:
        from replaygate.results import baseline

        accepted = baseline.load_baseline(named_path(args.baseline, Path.cwd(), "baseline"))
        result = baseline.apply_baseline(result, accepted)
    sent = emit(result, args, accepted)
    return exit_code(result, FailOn(args.fail_on)) if sent else EXIT_CONFIG


def emit(
    result: RunResult,
    args: argparse.Namespace,
    accepted: frozenset[str] | None = None,
    stdout: TextIO | None = None,
) -> bool:
    """Write the requested report files, print the terminal report, publish to GitHub.

    Each goes out on its own: one that fails is reported by name (an ``::error`` line
    on GitHub) and the others still go. Returns whether every one went out. A report
    asked for on stdout (``-``) has stdout to itself: the terminal report and the GitHub
    log go to stderr, so stdout stays parseable.
    """
    out = stdout or sys.stdout
    terminal = sys.stderr if stdout_report(args) else out
    reports = _report_files(result, args)
    failed = [problem for report in reports if (problem := _write_report(report, out))]
    out.flush()
    if args.github:
        from replaygate.github.publish import publish, publish_options, report_failures

        failed += publish(result, publish_options(args, accepted), os.environ, terminal).failed
        report_failures(failed, terminal)
    else:
        from replaygate.report.escape import terminal_safe
        from replaygate.report.text import render_text

        color = wants_color(args.color, os.environ, terminal)
        terminal.write(render_text(result, color=color, verbosity=args.verbosity))
        for problem in failed:
            print(f"replaygate: {terminal_safe(problem)}", file=sys.stderr)
    terminal.flush()
    return not failed


def _report_files(result: RunResult, args: argparse.Namespace) -> list[Report]:
    """(channel name, path, renderer) of each report file asked for."""
    files = [
        ("JSON report", args.json, lambda: _json(result)),
        ("JUnit report", args.junit, lambda: _junit(result, args.junit_family)),
        ("summary", args.summary, lambda: _markdown(result)),
    ]
    return [(name, path, render) for name, path, render in files if path]


# A renderer's module is imported only when its report is asked for: a plain run needs none.
# Each renders in pieces, written as they come: a report of 100,000 cases is never held whole.
def _json(result: RunResult) -> Iterable[str]:
    from replaygate.report.json import json_chunks

    return json_chunks(result)


def _junit(result: RunResult, family: JunitFamily) -> Iterable[str]:
    from replaygate.report.junit import junit_chunks

    return junit_chunks(result, family=family)


def _markdown(result: RunResult) -> Iterable[str]:
    from replaygate.report.markdown import render_markdown

    return [render_markdown(result, files_note=SUMMARY_NOTE)]


def _write_report(report: Report, stdout: TextIO) -> str | None:
    """Write one report file (or to ``stdout`` for ``-``); the problem, naming the report,
    when it cannot be written."""
    name, path, render = report
    if path == STDOUT:
        stdout.writelines(render())
        return None
    try:
        write_atomic(report_path(path, Path.cwd()), render())
    except ReplayGateError as error:
        return f"{name} not written: {error}"
    return None
