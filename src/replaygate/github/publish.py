"""Send a run's results to GitHub: annotations, log, step summary, outputs, check run, comment."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from replaygate.core.errors import cannot_write
from replaygate.core.model import RunResult
from replaygate.github import annotations as notes
from replaygate.github import env, workflow
from replaygate.github.comment_body import delta, failing_fingerprints, render_comment
from replaygate.report.grammar import totals_phrase
from replaygate.results.verdict import FailOn, conclusion

if TYPE_CHECKING:
    from replaygate.github.api import GitHubApi
    from replaygate.github.checks import CheckAnnotation
    from replaygate.github.wire import GitHubApiError

SUMMARY_LIMIT = 1024 * 1024  # bytes GitHub accepts of one step's summary; over it, none shows
CHECK_SUMMARY_BYTES = 60_000  # of the check run's 65,535-byte summary
FILES_NOTE = "the JUnit and JSON result files"
DEFAULT_API_URL = "https://api.github.com"


@dataclass(frozen=True, slots=True)
class PublishOptions:
    annotations: bool = True  # workflow-command annotations (the 10 most important)
    step_summary: bool = True  # markdown report appended to $GITHUB_STEP_SUMMARY
    check_run: bool = False  # a check run with every failure annotated (needs checks: write)
    pr_comment: bool = False  # one comment per pull request (needs pull-requests: write)
    junit_path: str = ""  # reported as outputs
    json_path: str = ""
    baseline: frozenset[str] | None = None  # the comment's reference when given
    fail_on: FailOn = FailOn.FAILURE
    root: str = ""  # repository root the result paths are relative to; "" is the workspace
    comment_author: str = env.DEFAULT_AUTHOR
    check_run_annotations: int = env.DEFAULT_CHECK_RUN_ANNOTATIONS  # sent with the check run
    api_deadline: float = env.DEFAULT_API_DEADLINE  # seconds for every API request together


def publish_options(
    args: argparse.Namespace, baseline: frozenset[str] | None = None
) -> PublishOptions:
    """Options from the arguments of `run` or `merge` (see reporting.add_report_options)
    and the baseline's fingerprints, loaded once by the command."""
    given = {"check_run_annotations": args.check_run_annotations, "api_deadline": args.api_deadline}
    return PublishOptions(
        **{name: value for name, value in given.items() if value is not None},
        annotations=args.annotations,
        step_summary=args.step_summary,
        check_run=args.check_run,
        pr_comment=args.pr_comment,
        junit_path=args.junit or "",
        json_path=args.json or "",
        baseline=baseline,
        fail_on=FailOn(args.fail_on),
        root=args.root or "",
        comment_author=args.comment_author or env.DEFAULT_AUTHOR,
    )


@dataclass(frozen=True, slots=True)
class Published:
    warnings: list[str]  # an API that refused or failed: printed as ``::warning::``
    failed: list[str]  # a file channel that could not be written, named: for report_failures


def publish(
    result: RunResult, options: PublishOptions, environ: Mapping[str, str], stdout: TextIO
) -> Published:
    """Publish ``result`` on every channel, each on its own: one that fails stops no other.

    An API that refuses or fails is a warning; a file channel (the step summary, the
    outputs) that cannot be written is a failure, which the caller reports and which
    makes the exit code 2.
    """
    log = workflow.log_for(stdout)
    root = options.root or result.meta.get("root") or env.workspace(environ)
    found = notes.collect(result)
    log.text(_render_text(result))
    workspace = env.workspace(environ)
    omitted = _annotate([notes.relocated(n, root, workspace) for n in found], options, log)
    log.text(_omitted_note(omitted, options))
    failed: list[str] = []
    summary = functools.partial(_step_summary, result, options, environ, omitted)
    warnings = _file_channel("step summary", "$GITHUB_STEP_SUMMARY", summary, failed)
    written = functools.partial(_write_outputs, result, options, environ)
    _file_channel("outputs", "$GITHUB_OUTPUT", written, failed)
    warnings += _api_features(result, options, environ, found, log)
    for message in warnings:
        log.command(workflow.warning(message, title="replaygate"))
    log.close()  # commands act again: a script may issue its own after this one
    return Published(warnings, failed)


def report_failures(failed: list[str], stdout: TextIO) -> None:
    """One ``::error`` line per channel that could not be written."""
    log = workflow.log_for(stdout)
    for message in failed:
        log.command(workflow.error(message, title="replaygate"))
    log.close()


def _file_channel(
    name: str, variable: str, write: Callable[[], list[str]], failed: list[str]
) -> list[str]:
    """``write()``'s warnings; when it cannot write the file in ``variable``, a failure
    naming the channel is added to ``failed``."""
    try:
        return write()
    except OSError as error:
        failed.append(f"{name} not written: {cannot_write(variable, error)}")
        return []


def outputs(result: RunResult, options: PublishOptions) -> dict[str, str]:
    counts = dataclasses.asdict(result.totals)
    return {name: str(count) for name, count in counts.items()} | {
        "fingerprints": json.dumps(failing_fingerprints(result)),
        "junit_path": options.junit_path,
        "json_path": options.json_path,
        "conclusion": conclusion(result, options.fail_on).value,
    }


def _annotate(
    found: list[notes.Annotation], options: PublishOptions, log: workflow.WorkflowLog
) -> int:
    """Print the annotations that GitHub will show; return how many failures are left out."""
    if not options.annotations:
        return 0
    selection = notes.select(found)
    for note in selection.shown:
        command = workflow.error if note.level is notes.Level.FAILURE else workflow.notice
        log.command(command(note.message, file=note.file, line=note.line, title=note.title))
    return selection.omitted


def _render_text(result: RunResult) -> str:
    from replaygate.report.text import render_text

    return render_text(result)


def files_note(options: PublishOptions) -> str:
    """Where the whole report is: the files this run wrote, by name."""
    names = [name for name in (options.junit_path, options.json_path) if name]
    return " and ".join(names) if names else FILES_NOTE


def _omitted_note(omitted: int, options: PublishOptions) -> str:
    if not omitted:
        return ""
    return f"{omitted} more failures are not annotated; see {files_note(options)}.\n"


def _step_summary(
    result: RunResult, options: PublishOptions, environ: Mapping[str, str], omitted: int
) -> list[str]:
    path = environ.get("GITHUB_STEP_SUMMARY", "")
    if not (options.step_summary and path):
        return []
    from replaygate.report.escape import markdown_text
    from replaygate.report.markdown import render_markdown

    note = f"\n{markdown_text(_omitted_note(omitted, options).strip())}\n" if omitted else ""
    room = SUMMARY_LIMIT - _size(path) - len(note.encode("utf-8"))
    if room < 1024:
        return ["the step summary is full: the report is not added to it"]
    markdown = render_markdown(result, max_bytes=room, files_note=files_note(options))
    env.append_step_summary(path, markdown + note)
    return []


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _write_outputs(
    result: RunResult, options: PublishOptions, environ: Mapping[str, str]
) -> list[str]:
    path = environ.get("GITHUB_OUTPUT", "")
    if path:
        env.write_outputs(path, outputs(result, options))
    return []


def _api_features(
    result: RunResult,
    options: PublishOptions,
    environ: Mapping[str, str],
    found: list[notes.Annotation],
    log: workflow.WorkflowLog,
) -> list[str]:
    """The check run and the PR comment; each failure becomes a warning and nothing more."""
    features: list[tuple[str, Callable[[], None]]] = []
    event = env.read_event(environ)
    # One client for both: the deadline and a rate limit's pause hold across them. Made
    # on first use, so that a missing token is a warning of each feature.
    api = functools.cache(lambda: _api(environ, options.api_deadline))
    if options.check_run:
        features.append(("check run", lambda: _check_run(api(), result, options, event, found)))
    if options.pr_comment and event.pr_number is None:
        log.text(f"replaygate: no pull request in a {event.name or 'local'} run: no comment\n")
    elif options.pr_comment:
        features.append(("PR comment", lambda: _comment(api(), result, options, event)))
    return [warning for name, send in features if (warning := _attempt(name, send, event))]


def _attempt(name: str, send: Callable[[], None], event: env.Event) -> str | None:
    from replaygate.github.wire import GitHubApiError

    try:
        send()
    except GitHubApiError as error:
        return f"{name} not published: {error}{_hint(error, event)}"
    return None


def _hint(error: GitHubApiError, event: env.Event) -> str:
    if not error.permission_denied:
        return ""
    if event.fork and event.name == "pull_request":
        return " (a pull request from a fork gets a read-only token)"
    return " (check the job's permissions: checks: write, pull-requests: write)"


def _api(environ: Mapping[str, str], deadline: float) -> GitHubApi:
    from replaygate.github.api import GitHubApi

    url = environ.get("GITHUB_API_URL") or DEFAULT_API_URL
    token, repository = env.api_token(environ), environ.get("GITHUB_REPOSITORY", "")
    return GitHubApi(url, token, repository, deadline=deadline)


def _check_run(
    api: GitHubApi,
    result: RunResult,
    options: PublishOptions,
    event: env.Event,
    found: list[notes.Annotation],
) -> None:
    """Every failure annotated, up to ``check_run_annotations``: the summary says how many not."""
    from replaygate.github.checks import create_check_run
    from replaygate.report.markdown import render_markdown

    sent = found[: options.check_run_annotations]
    note = _left_out_note(len(found) - len(sent), options)
    room = CHECK_SUMMARY_BYTES - len(note.encode("utf-8"))
    create_check_run(
        api,
        head_sha=event.head_sha,
        conclusion=conclusion(result, options.fail_on),
        title=totals_phrase(result),
        summary=render_markdown(result, max_bytes=room, files_note=files_note(options)) + note,
        annotations=[_check_annotation(annotation) for annotation in sent],
    )


def _left_out_note(count: int, options: PublishOptions) -> str:
    if not count:
        return ""
    from replaygate.report.escape import markdown_text

    limit = options.check_run_annotations
    return (
        f"\n**{count} more annotations are left out of this check run** (the limit is {limit}); "
        f"see {markdown_text(files_note(options))}.\n"
    )


def _check_annotation(note: notes.Annotation) -> CheckAnnotation:
    from replaygate.github.checks import CheckAnnotation

    line = note.line or 1
    return CheckAnnotation(note.file, line, line, note.level, note.message, note.title)


def _comment(api: GitHubApi, result: RunResult, options: PublishOptions, event: env.Event) -> None:
    """Compare with the baseline when there is one, else with our previous comment."""
    from replaygate.github import comment

    number, author = event.pr_number or 0, options.comment_author
    # Listed once: the comment found here is both the reference and the one to edit.
    previous = comment.find_comment(api, number, marker=comment.MARKER, author=author)
    reference: frozenset[str] | set[str] = options.baseline or frozenset()
    against = "against the baseline"
    if options.baseline is None:
        reference = comment.previous_fingerprints(previous.body) if previous else set()
        against = "since the last run" if previous else "first run"
    body = render_comment(result, delta(result, reference), against)
    comment.upsert_comment(api, number, body, previous, marker=comment.MARKER, author=author)
