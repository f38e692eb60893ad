"""`replaygate merge`: combine the JSON results of shards into one result, reported like `run`."""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path
from typing import Any

from replaygate.core.errors import PackError
from replaygate.options.output import stdout_report
from replaygate.options.reports import add_report_options, finish


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("merge", help="combine the JSON results of shards into one report")
    parser.add_argument("results", nargs="+", metavar="RESULTS.json",
                        help="results files written by `run --json` (one per shard)")  # fmt: skip
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="repository root the results' file paths are relative to, for annotations "
        "when the checkout is a subfolder (default: the workspace)",
    )
    add_report_options(parser)


def main(args: argparse.Namespace) -> int:
    from replaygate.loading.files import named_path
    from replaygate.report.json import read_results
    from replaygate.results.identity import check_identities, run_identity
    from replaygate.results.merge import merge_results

    stdout_report(args)  # refuses two reports on stdout before any work
    cwd = Path.cwd()
    named = [str(named_path(path, cwd, "results file")) for path in args.results]
    _refuse_tracked(named)
    _refuse_twice(named)
    results = [(path, read_results(path)) for path in named]
    identity = run_identity(os.environ)
    check_identities(results, identity)
    merged = merge_results(results)
    if identity is not None:  # the merged file is this run's too: it can be merged again
        merged = dataclasses.replace(merged, meta={**merged.meta, "run": identity})
    return finish(merged, args)


def _refuse_twice(named: list[str]) -> None:
    """One file named twice (`merge a.json a.json`) would pass for two shards' results."""
    seen: dict[str, str] = {}
    for path in named:
        real = os.path.realpath(path)
        if real in seen:
            also = "" if seen[real] == path else f" (also as {seen[real]})"
            raise PackError(path, None, f"given twice{also}: each results file is merged once")
        seen[real] = path


def _refuse_tracked(named: list[str]) -> None:
    """A committed results file is the pull request's word, not a shard's: refused."""
    from replaygate.loading.git_index import is_tracked

    for path in named:
        if is_tracked(Path(path)):
            message = "tracked by git: only results written by the workflow run are merged"
            raise PackError(path, None, message)
