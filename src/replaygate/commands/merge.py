"""`replaygate merge`: combine the JSON results of shards into one result, reported like `run`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

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
    from replaygate.results.merge import merge_results

    stdout_report(args)  # refuses two reports on stdout before any work
    cwd = Path.cwd()
    named = [str(named_path(path, cwd, "results file")) for path in args.results]
    merged = merge_results([(path, read_results(path)) for path in named])
    return finish(merged, args)
