"""`replaygate validate`: load packs, contracts and fixtures without evaluating any case."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from replaygate.core.errors import EXIT_CONFIG, EXIT_OK
from replaygate.options.inputs import add_peer_options, load_named
from replaygate.options.output import add_color_option, wants_color


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("validate", help="check that packs and contracts load")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="as for `run`")
    parser.add_argument("--pack", action="append", default=[], metavar="PATH", help="a pack")
    parser.add_argument("--root", metavar="DIR", help="repository root (see `run --help`)")
    add_peer_options(parser)
    add_color_option(parser)


def main(args: argparse.Namespace) -> int:
    from replaygate.core.model import Problem
    from replaygate.loading import folders
    from replaygate.loading.fixtures import load_case_input
    from replaygate.report.grammar import counted
    from replaygate.report.text import render_problems, render_warnings

    loaded = load_named(args)
    problems = list(loaded.problems)
    with folders.reading():  # each golden directory opened once, as `run` reads them
        for pack in loaded.packs:
            for contract in pack.contracts:
                for case in contract.golden_cases:
                    found = load_case_input(pack, contract, case)
                    if isinstance(found, str):
                        message = f"case {case.id!r}: {found}"
                        problems.append(Problem(contract.file, case.line, message))
    color = wants_color(args.color, os.environ, sys.stdout)
    lines = render_problems(problems, color=color)
    lines += render_warnings(loaded.warnings, color=color)
    contracts = sum(p.summary.contracts for p in loaded.packs)  # an @isdk file counts once
    cases = sum(len(c.golden_cases) for p in loaded.packs for c in p.contracts)
    counts = [(len(loaded.packs), "pack"), (contracts, "contract"), (cases, "case")]
    counts.append((len(problems), "problem"))
    counts += [(len(loaded.warnings), "warning")] if loaded.warnings else []
    lines.append(", ".join(counted(n, noun) for n, noun in counts))
    print("\n".join(lines))
    return EXIT_CONFIG if problems else EXIT_OK
