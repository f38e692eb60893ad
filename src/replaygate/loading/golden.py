"""The golden directories: where a case's input_ref points, and fixtures no case names."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from replaygate.loading import files
from replaygate.results.model import Problem

if TYPE_CHECKING:  # pack.py imports this module to check a loaded pack
    from replaygate.loading.pack import Pack

NEGATIVE_PREFIX = "negative/"
FIXTURE_SUFFIX = ".json"


def input_base(ref: str, golden_dir: Path, negative_dir: Path) -> tuple[Path, str]:
    """The directory an input_ref is relative to, and the rest of it: ``negative/`` names the
    negative golden directory."""
    ref = ref.replace("\\", "/")
    if ref.startswith(NEGATIVE_PREFIX):
        return negative_dir, ref[len(NEGATIVE_PREFIX) :]
    return golden_dir, ref


def unused_fixtures(pack: Pack) -> list[Problem]:
    """A warning for each fixture in the golden directories that no case of the pack names."""
    named = set()
    for contract in pack.contracts:
        for case in contract.golden_cases:
            base, rest = input_base(case.input_ref, pack.golden_dir, pack.negative_dir)
            named.add(os.path.normpath(os.path.join(base, rest)))
    folders = dict.fromkeys([pack.golden_dir, pack.negative_dir])
    return [
        Problem(
            files.shown_path(path, pack.root),
            None,
            "no golden case names this fixture; add a case for it, or remove it",
        )
        for path in sorted(dict.fromkeys(_fixtures(folders)))
        if path not in named
    ]


def _fixtures(folders: Iterable[Path]) -> Iterator[str]:
    for folder in folders:
        for top, subfolders, names in os.walk(folder):  # symlinked folders are not followed
            subfolders[:] = [name for name in subfolders if name != ".git"]
            for name in names:
                if name.endswith(FIXTURE_SUFFIX):
                    yield os.path.normpath(os.path.join(top, name))
