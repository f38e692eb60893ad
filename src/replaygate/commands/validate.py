"""`replaygate validate`: load packs, contracts and fixtures without evaluating any case."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replaygate.commands.options import add_peer_options, peer_options
from replaygate.errors import EXIT_CONFIG, EXIT_OK, where


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("validate", help="check that packs and contracts load")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="as for `run`")
    parser.add_argument("--pack", action="append", default=[], metavar="PATH", help="a pack")
    parser.add_argument("--root", metavar="DIR", help="repository root (see `run --help`)")
    add_peer_options(parser)


def main(args: argparse.Namespace) -> int:
    from replaygate.loading.fixtures import load_case_input
    from replaygate.loading.peers import load_all
    from replaygate.loading.roots import root_lines
    from replaygate.loading.targets import command_targets
    from replaygate.report.escape import terminal_safe
    from replaygate.report.grammar import message_line

    root = Path(args.root).resolve() if args.root else None
    cwd = Path.cwd()
    named = command_targets(args.paths, args.pack, cwd)
    loaded = load_all(
        named.targets,
        cwd=cwd,
        root=root,
        now=datetime.now(UTC),
        warnings=named.warnings,
        peers=peer_options(args),
    )
    for line in root_lines(loaded.roots):
        print(terminal_safe(line), file=sys.stderr)
    for warning in loaded.warnings:
        line = message_line(warning.file, warning.line, f"warning: {warning.message}")
        print(terminal_safe(line), file=sys.stderr)
    problems = [str(problem) for problem in loaded.problems]
    for pack in loaded.packs:
        for contract in pack.contracts:
            for case in contract.golden_cases:
                found = load_case_input(pack, contract, case)
                if isinstance(found, str):
                    problems.append(f"{where(contract.file, case.line)}: case {case.id!r}: {found}")
    for problem in problems:
        print(terminal_safe(problem), file=sys.stderr)
    contracts = sum(p.summary.contracts for p in loaded.packs)  # an @isdk file counts once
    cases = sum(len(c.golden_cases) for p in loaded.packs for c in p.contracts)
    print(
        f"{len(loaded.packs)} packs, {contracts} contracts, {cases} cases, {len(problems)} problems"
    )
    return EXIT_CONFIG if problems else EXIT_OK
