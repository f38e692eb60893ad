"""`replaygate baseline`: write a baseline file that accepts every failure of a results file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from replaygate.core.errors import EXIT_OK


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("baseline", help="accept the failures of a results file")
    parser.add_argument("results", metavar="RESULTS.json", help="a results file (`run --json`)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the baseline here, keeping the justifications already in it "
                             "(default: print it)")  # fmt: skip


def main(args: argparse.Namespace) -> int:
    from replaygate.report.files import write_atomic
    from replaygate.report.json import read_results
    from replaygate.results.baseline import baseline_entries, load_entries, render_baseline

    result = read_results(args.results)
    if not args.output:
        sys.stdout.write(render_baseline(baseline_entries(result)))
        return EXIT_OK
    output = Path(args.output)
    entries = baseline_entries(result, load_entries(output) if output.exists() else None)
    write_atomic(output, render_baseline(entries))
    print(f"replaygate: wrote {len(entries)} fingerprints to {args.output}", file=sys.stderr)
    return EXIT_OK
