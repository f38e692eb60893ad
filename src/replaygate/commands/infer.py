"""`replaygate infer`: write a first contract from several recordings of the same request."""

from __future__ import annotations

import argparse
import os
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaygate.core.errors import EXIT_OK, ReplayGateError

if TYPE_CHECKING:
    from replaygate.inference.learn import Inferred, Sample
    from replaygate.inference.write import GoldenCase
    from replaygate.loading.packs import Pack


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("infer", help="write a contract from recordings of one request")
    parser.add_argument(
        "recordings",
        nargs="+",
        metavar="RECORDING",
        help="fixtures in the pack's golden directory (their sidecar recordings are used, "
        "as in `run`), or folders of fixtures or of recordings (recordings/observed)",
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="CONTRACT",
        help="the contract to write, in a pack's contracts folder; or that folder (ending in "
        "/), for a contract per tool named after it",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="add to an existing contract: keep every assertion and comment in it, add "
        "inferred assertions only for paths it does not cover",
    )
    parser.add_argument("--root", metavar="DIR", help="repository root (as for `run`)")


def main(args: argparse.Namespace) -> int:
    from replaygate.inference.folders import by_tool, expand
    from replaygate.inference.samples import find_pack_file, read_samples
    from replaygate.loading.pack import load_pack
    from replaygate.loading.roots import root_for

    output = Path(args.output)
    into_folder = output.is_dir() or args.output.endswith(("/", os.sep))
    pack_file = find_pack_file(output / "contract.yaml" if into_folder else output)
    given = Path(args.root).resolve() if args.root else None
    root = root_for(pack_file.absolute(), given, Path.cwd())
    pack, problems, _ = load_pack(pack_file.absolute(), root, datetime.now(UTC))
    if pack is None:
        raise ReplayGateError(str(problems[-1]))
    fixtures, folder = expand(pack, args.recordings)
    samples = read_samples(pack, fixtures)
    groups = by_tool(samples) if folder or into_folder else {"": samples}
    if into_folder:
        for tool, group in groups.items():
            _infer_into(output / f"{_file_name(tool)}.yaml", pack, group, merge=args.merge)
    elif len(groups) > 1:
        raise ReplayGateError(
            f"the recordings call different tools first ({', '.join(sorted(groups))}): give -o the "
            "contracts folder to write a contract per tool"
        )
    else:
        _infer_into(output, pack, next(iter(groups.values()), []), merge=args.merge)
    return EXIT_OK


def _file_name(tool: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", tool).strip(".") or "tool"


def _infer_into(output: Path, pack: Pack, samples: list[Sample], *, merge: bool) -> None:
    from replaygate.inference.learn import infer, tier
    from replaygate.inference.samples import golden_cases, where_run_reads

    if not samples:
        raise ReplayGateError("no recording calls a tool: nothing to infer")
    _inside_the_repository(output, pack)
    where_run_reads(output, pack)
    inferred = infer(samples)
    action = _write(output, pack, inferred, golden_cases(samples), merge=merge)
    count = f"{len(samples)} recording{'' if len(samples) == 1 else 's'}"
    print(f"replaygate: {action} {output} from {count} (confidence {tier(len(samples))})",
          file=sys.stderr)  # fmt: skip


def _inside_the_repository(output: Path, pack: Pack) -> None:
    """The contract is read and written under `run`'s rules: a path (a committed symlink
    included) that leaves the repository or goes into .git is refused, nothing read there."""
    from replaygate.loading.files import resolve_inside

    relative = os.path.relpath(os.path.abspath(output), pack.root)
    resolve_inside(
        pack.root, relative, root=pack.root, what="the contract", file=str(output), line=None
    )


def _write(
    output: Path, pack: Pack, inferred: Inferred, cases: list[GoldenCase], *, merge: bool
) -> str:
    """Write the contract (or merge into it); returns what was done, in a few words."""
    from replaygate.inference.merge import merge as merge_into
    from replaygate.inference.write import render
    from replaygate.loading.files import MAX_YAML_BYTES, read_text, shown_path
    from replaygate.loading.pack import load_contract
    from replaygate.report.files import write_atomic

    if not output.exists():
        write_atomic(output, render(inferred, cases))
        return "wrote"
    if not merge:
        raise ReplayGateError(f"{output} exists: pass --merge to add inferred assertions to it")
    shown = shown_path(output.resolve(), pack.root)
    load_contract(output.resolve(), pack.directory, pack.root)  # refuse what `run` would refuse
    original = read_text(output, shown=shown, max_bytes=MAX_YAML_BYTES)
    text = merge_into(original, inferred, cases, shown=shown)
    if text == original:
        return "nothing to add to"
    write_atomic(output, text)
    return "merged into"
