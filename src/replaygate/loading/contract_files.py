"""A pack's contract files: those pack.yaml lists (or its contracts folder holds), each kept
inside the contracts folder, and the YAML files there that will not run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from replaygate.core.errors import PackError
from replaygate.core.model import Problem
from replaygate.loading import files, yaml_reader
from replaygate.loading.models import PackModel
from replaygate.loading.packs import contract_path
from replaygate.loading.targets import CONTRACT_SUFFIXES


def contract_files(
    model: PackModel,
    raw: Any,
    contracts_dir: Path,
    root: Path,
    shown: str,
    problems: list[Problem],
    globbed: list[Path],
) -> list[Path]:
    """The pack's contract files, each checked to stay inside the contracts directory:
    those pack.yaml lists, else those ``globbed`` (``contracts_in``).

    Globbed names get the same check as listed ones: a symlink named ``x.yaml``
    may point anywhere, and its text would reach the report.
    """
    names: list[tuple[str, int | None]]
    if model.contracts is None:
        names = [(p.name, None) for p in globbed]
    else:
        names = [
            (n, yaml_reader.line_of(raw, ("contracts", i))) for i, n in enumerate(model.contracts)
        ]
    within = f"the contracts directory {files.shown_path(contracts_dir, root)}"
    found: dict[Path, int | None] = {}
    for name, line in names:
        try:
            path = files.resolve_inside(
                contracts_dir,
                name,
                root=root,
                what="contract",
                within=within,
                file=shown,
                line=line,
            )
        except PackError as exc:
            problems.extend(exc.problems())
            continue
        if path in found:
            problems.append(Problem(shown, line, f"contract {name!r} is listed twice"))
            continue
        found[path] = line
    return list(found)


def contracts_in(contracts_dir: Path) -> list[Path]:
    return sorted(p for suffix in CONTRACT_SUFFIXES for p in contracts_dir.glob(f"*{suffix}"))


def every_contract_file(contracts_dir: Path) -> list[Path]:
    """Every YAML file at any depth below the contracts directory, any case of suffix."""
    found: list[Path] = []
    for folder, subfolders, names in os.walk(contracts_dir):
        subfolders.sort()
        found += [Path(folder, n) for n in sorted(names) if n.lower().endswith(CONTRACT_SUFFIXES)]
    return found


def unlisted(
    model: PackModel,
    contracts_dir: Path,
    pack_dir: Path,
    raw: Any,
    shown: str,
    globbed: list[Path],
) -> list[Problem]:
    """YAML files in (or below) the contracts directory that will not run: never checked.

    A file pack.yaml lists (or, without a list, one the directory's glob takes) is not one of
    them even when it was refused: that has its own problem already.
    """
    listed = model.contracts is not None
    names = model.contracts if model.contracts is not None else globbed
    considered = {os.path.normpath(os.path.join(contracts_dir, name)) for name in names}
    folder = contract_path(contracts_dir, pack_dir, pack_dir.parent)
    line = yaml_reader.line_of(raw, ("contracts",)) if listed else None
    why = (
        "not listed in pack.yaml `contracts`; list it, or move it out"
        if listed
        else "not run: without a `contracts` list in pack.yaml only the .yaml and .yml files "
        "directly in it run; list the contracts, or move it out"
    )
    return [
        Problem(
            shown,
            line,
            f"{contract_path(path, pack_dir, pack_dir.parent)} is in {folder}/ but {why}",
        )
        for path in every_contract_file(contracts_dir)
        if os.path.normpath(path) not in considered
    ]
