"""`replaygate hash`: write the fixtures' boundary hash fields, or check them (--check)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replaygate.core.errors import EXIT_CONFIG, EXIT_FAILED, EXIT_OK
from replaygate.options.inputs import add_case_targets


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "hash", help="write the fixtures' messages_hash, tool_schema_hash and system_prompt_hash"
    )
    add_case_targets(parser, "packs, contract files or PATH::CASE_ID (default: packs)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="change nothing; exit 1 when a field is missing or out of date (for pre-commit)",
    )


def _fixtures(selected: list[Any]) -> tuple[dict[Path, str], list[str]]:
    """Each fixture the cases name, once, with its shown path; and fixtures that cannot be found."""
    from replaygate.core.errors import PackError
    from replaygate.loading.files import shown_path
    from replaygate.loading.fixtures import fixture_path

    found: dict[Path, str] = {}
    problems: list[str] = []
    for item in selected:
        try:
            path = fixture_path(item.pack, item.contract, item.case)
        except PackError as exc:
            problems.append(str(exc))
            continue
        found.setdefault(path, shown_path(path, item.pack.root))
    return found, problems


def _update(path: Path, shown: str, check: bool) -> str | None:
    """What is out of date in one fixture (None: nothing); rewrites it unless ``check``."""
    from replaygate.core.errors import PackError
    from replaygate.loading.boundary import boundary_changes, with_changes
    from replaygate.loading.json_reader import load_json
    from replaygate.loading.normalize import FixtureShapeError
    from replaygate.report.files import write_atomic

    fixture = load_json(path, shown=shown)
    if not isinstance(fixture, dict):
        raise PackError(shown, 1, "a fixture must be a JSON object")
    if "request" not in fixture:  # nothing to hash: a response-only fixture is left as it is
        return None
    try:
        changes = boundary_changes(fixture)
    except FixtureShapeError as exc:
        raise PackError(shown, None, str(exc)) from None
    if not changes:
        return None
    if not check:
        text = json.dumps(with_changes(fixture, changes), indent=2, ensure_ascii=False)
        write_atomic(path, text + "\n")
    return ", ".join(changes)


def main(args: argparse.Namespace) -> int:
    from replaygate.core.errors import PackError
    from replaygate.loading.selection import select_cases
    from replaygate.report.escape import terminal_safe

    root = Path(args.root).resolve() if args.root else None
    loaded, selected = select_cases(args.paths, cwd=Path.cwd(), root=root, now=datetime.now(UTC))
    fixtures, problems = _fixtures(selected)
    problems = [str(p) for p in loaded.problems] + problems
    stale = []
    for path, shown in fixtures.items():
        try:
            fields = _update(path, shown, args.check)
        except PackError as exc:
            problems.append(str(exc))
            continue
        if fields:
            verb = "out of date" if args.check else "updated"
            stale.append(f"{shown}: {fields} {verb}")
    for line in problems + stale:
        print(terminal_safe(line), file=sys.stderr if line in problems else sys.stdout)
    if args.check and stale:
        print(f"{len(stale)} of {len(fixtures)} fixtures out of date: run `replaygate hash`")
    else:
        done = f"{len(stale)} updated" if stale else "all up to date"
        print(f"{len(fixtures)} fixtures, {done}")
    if problems:
        return EXIT_CONFIG
    return EXIT_FAILED if args.check and stale else EXIT_OK
