"""Options shared by `run` and `merge`: which reports to write, and the exit code of a result."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypeVar

from replaygate.commands.output import (
    STDOUT,
    add_output_options,
    choice,
    stdout_report,
    wants_color,
)
from replaygate.core.errors import EXIT_CONFIG, ReplayGateError
from replaygate.core.model import RunResult
from replaygate.github.env import DEFAULT_AUTHOR
from replaygate.loading.files import named_path
from replaygate.report.files import report_path, write_atomic
from replaygate.report.junit_family import JunitFamily
from replaygate.results.verdict import FailOn, exit_code

if TYPE_CHECKING:
    from replaygate.loading.formats.registry import PeerOptions
    from replaygate.loading.packs import ContractBatch, Loaded
    from replaygate.providers.client import Provider

SUMMARY_NOTE = "the JUnit and JSON result files"
Value = TypeVar("Value", int, float)


def add_case_targets(parser: argparse.ArgumentParser, paths_help: str) -> None:
    """The PATH arguments and --root of the commands that act on chosen cases."""
    parser.add_argument("paths", nargs="*", default=[], metavar="PATH", help=paths_help)
    parser.add_argument("--root", metavar="DIR", help="repository root (see `run --help`)")


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
        type=_count,
        metavar="N",
        help="send at most N annotations with the check run (default 1000)",
    )
    gh.add_argument(
        "--api-deadline",
        type=_seconds,
        metavar="SECONDS",
        help="time for every GitHub API request together; what is left then is skipped "
        "with a warning (default 60)",
    )
    add_output_options(parser)


def _count(text: str) -> int:
    from replaygate.core.numerals import whole_number

    return _argument(whole_number, text)


def job_count(text: str) -> int:
    """``--jobs``: a whole number of at least 1."""
    from replaygate.core.numerals import whole_number

    try:
        jobs = whole_number(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return jobs


def _seconds(text: str) -> float:
    from replaygate.github.env import seconds

    return _argument(seconds, text)


def _argument(parse: Callable[[str], Value], text: str) -> Value:
    """An option's value read by the action's parser of the same input (github/env.py)."""
    try:
        return parse(text)
    except ValueError as problem:
        raise argparse.ArgumentTypeError(f"{problem}, got {text!r}") from None


def add_peer_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("ai-tester runs and Connexity test cases")
    group.add_argument(
        "--scenarios",
        metavar="DIR",
        help="where ai-tester scenarios live, when the path a trace records does not resolve",
    )
    group.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="only Connexity test cases with this tag (repeatable: any of them)",
    )
    group.add_argument(
        "--difficulty",
        type=_difficulty,
        metavar="normal|hard",
        help="only Connexity test cases of this difficulty",
    )


def _difficulty(text: str) -> str:
    # the enum's module loads pydantic: imported only when the option is given
    from replaygate.loading.formats.connexity import Difficulty

    if text not in set(Difficulty):
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(Difficulty)}, got {text!r}")
    return text


def peer_options(args: argparse.Namespace) -> PeerOptions:
    from replaygate.loading.formats.registry import PeerOptions

    scenarios = Path(args.scenarios).absolute() if args.scenarios else None
    return PeerOptions(scenarios, tuple(args.tag), args.difficulty)


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


def provider_option(parser: argparse.ArgumentParser, *, required: bool) -> None:
    """--provider and what a live provider needs: --base-url, --model, --api-key-env."""
    from replaygate.providers.names import ProviderName

    names = ", ".join(str(name) for name in ProviderName)
    group = parser.add_argument_group("provider")
    group.add_argument(
        "--provider",
        required=required,
        type=_provider if required else _provider_or_recorded,
        default=None if required else "recorded",
        metavar="NAME",
        help=f"{names}"
        + ("" if required else " (live: nothing is written), or recorded (default)"),
    )
    group.add_argument("--base-url", metavar="URL", help="the provider's API base URL")
    group.add_argument("--model", metavar="M", help="send this model instead of the fixture's")
    group.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="environment variable holding the API key (default: OPENAI_API_KEY, "
        "ANTHROPIC_API_KEY; none for openai-compatible)",
    )


def _provider(text: str) -> str:
    from replaygate.providers.names import ProviderName

    if text not in set(ProviderName):
        valid = ", ".join(str(name) for name in ProviderName)
        raise argparse.ArgumentTypeError(f"must be one of {valid}, got {text!r}")
    return text


def _provider_or_recorded(text: str) -> str:
    return text if text == "recorded" else _provider(text)


def provider_setup(args: argparse.Namespace, environ: Mapping[str, str]) -> Provider:
    """The provider the options name, with its key; one clear line when something is missing."""
    from urllib.parse import urlsplit

    from replaygate.providers.client import Provider
    from replaygate.providers.names import ProviderName
    from replaygate.providers.redact import Redactor
    from replaygate.providers.wire import WIRES

    name = ProviderName(args.provider)
    wire = WIRES[name]
    base = args.base_url or wire.base_url
    if base is None:
        raise ReplayGateError(f"--base-url is needed for {name}")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ReplayGateError(f"--base-url {base!r} is not an http(s) URL")
    key_env = args.api_key_env or wire.key_env
    key = environ.get(key_env) if key_env else None
    if key_env and not key:
        raise ReplayGateError(f"{key_env} is not set: the {name} provider needs an API key")
    if key_env and key:
        _check_key(key_env, key)
    return Provider(name, base, key, Redactor.build(environ, [key] if key else []))


def _check_key(key_env: str, key: str) -> None:
    """A key an HTTP header cannot carry stops the run here, before any request."""
    if key != key.strip() or not key.isprintable():
        raise ReplayGateError(
            f"{key_env} has a space, newline or control character in it: remove it"
        )
    try:
        key.encode("latin-1")
    except UnicodeEncodeError:
        raise ReplayGateError(
            f"{key_env} has characters an HTTP header cannot carry (outside Latin-1): "
            "check its value"
        ) from None


def refuse_untrusted_event(environ: Mapping[str, str]) -> None:
    """Recording sends a key to a provider: never for code a fork's pull request controls."""
    from replaygate.github.env import FORK_EVENTS, PR_EVENTS, carries_fork_payload, read_event

    event = read_event(environ)
    if event.name in FORK_EVENTS:
        unreadable = _unreadable(environ.get("GITHUB_EVENT_PATH", ""))
        if unreadable:
            raise ReplayGateError(
                f"refusing to record on a {event.name} event: its event file "
                f"(GITHUB_EVENT_PATH) {unreadable}, so where its code comes from is unknown"
            )
    if event.name == "pull_request_target":
        raise ReplayGateError(
            "refusing to record on a pull_request_target event: it runs with the base "
            "repository's secrets on a pull request's code"
        )
    if carries_fork_payload(environ):  # the cache's rule: one rule for a fork's events
        article = "an" if event.name[:1] in "aeiou" else "a"
        where = "" if event.name in PR_EVENTS else f"{article} {event.name} event for "
        raise ReplayGateError(
            f"refusing to record on {where}a pull request from a fork (or one whose head is "
            "not known): its code must not get the API key"
        )


def _unreadable(path: str) -> str | None:
    """Why the event file cannot be read, or None when it can."""
    import json

    if not path:
        return "is not set"
    try:
        with open(path, encoding="utf-8") as handle:
            json.load(handle)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    except ValueError:
        return "is not JSON"
    return None


def progress_bar(total: int) -> tuple[Callable[[], None], Callable[[], None]]:
    """A progress bar on stderr when it is a terminal (else nothing): tick, close."""
    if not sys.stderr.isatty():
        return (lambda: None), (lambda: None)
    from tqdm import tqdm

    bar = tqdm(total=total, unit="case", file=sys.stderr)

    def tick() -> None:
        bar.update(1)

    return tick, bar.close


def load_named(args: argparse.Namespace, load: ContractBatch | None = None) -> Loaded:
    """What the command line names (packs, contracts, cases, peer files), loaded (the packs'
    contracts by ``load``, else parsed); the repository root each resolved against is
    printed once, on stderr."""
    from datetime import UTC, datetime

    from replaygate.loading.peers import load_all
    from replaygate.loading.roots import root_lines
    from replaygate.loading.targets import command_targets
    from replaygate.report.escape import terminal_safe

    cwd = Path.cwd()
    named = command_targets(args.paths, args.pack, cwd)
    loaded = load_all(
        named.targets,
        cwd=cwd,
        root=Path(args.root).resolve() if args.root else None,
        now=datetime.now(UTC),
        warnings=named.warnings,
        peers=peer_options(args),
        load=load,
    )
    for line in root_lines(loaded.roots):
        print(terminal_safe(line), file=sys.stderr)
    return loaded
