"""Folders given to `infer` (golden or recordings folders, as observe writes) and their tools."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from replaygate.core.errors import ReplayGateError
from replaygate.inference.learn import Sample
from replaygate.loading.files import shown_path
from replaygate.loading.golden import RECORDING_SUFFIX
from replaygate.loading.packs import Pack


def expand(pack: Pack, paths: Sequence[str]) -> tuple[list[str], bool]:
    """The fixtures ``paths`` name, a folder's in name order; and whether a folder was given."""
    fixtures: list[str] = []
    for path in paths:
        fixtures += _in_folder(pack, Path(path)) if os.path.isdir(path) else [path]
    return fixtures, any(os.path.isdir(path) for path in paths)


def _in_folder(pack: Pack, folder: Path) -> list[str]:
    real = folder.resolve()
    recordings = pack.recordings_dir.resolve()
    if real.is_relative_to(recordings):
        inside = real.relative_to(recordings)
        found = [
            str(pack.golden_dir / inside / p.relative_to(real).parent / _fixture_name(p.name))
            for p in sorted(real.rglob(f"*{RECORDING_SUFFIX}"))
        ]
    else:
        found = [str(p) for p in sorted(folder.rglob("*.json")) if p.is_file()]
    if not found:
        shown = shown_path(real, pack.root)
        raise ReplayGateError(f"{shown}: no fixture or recording in this folder")
    return found


def _fixture_name(recording: str) -> str:
    return recording.removesuffix(RECORDING_SUFFIX) + ".json"


def by_tool(samples: Sequence[Sample]) -> dict[str, list[Sample]]:
    """The samples grouped by the first tool each calls (those that call none left out)."""
    groups: dict[str, list[Sample]] = {}
    for sample in samples:
        if sample.calls:
            groups.setdefault(sample.calls[0][0], []).append(sample)
    return groups
