"""The golden directories: where a case's input_ref points and its recording's name, and
fixtures no case names (light: a warm cached run keys cases with it)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from replaygate.core.model import Problem
from replaygate.loading import files

if TYPE_CHECKING:  # pack.py imports this module to check a loaded pack
    from replaygate.loading.packs import Pack

NEGATIVE_PREFIX = "negative/"
FIXTURE_SUFFIX = ".json"
RECORDING_SUFFIX = ".recording.json"
_NOT_PLAIN = frozenset("/\\:")


def plain(name: str) -> bool:
    """Whether ``name`` has no separator, drive or leading dot: joined to a normalised folder
    (other than the file system's root), it needs no normalising and stays inside it."""
    return name[:1] not in ("", ".") and _NOT_PLAIN.isdisjoint(name)


def joined(folder: str, name: str) -> str:
    """``os.path.normpath(os.path.join(folder, name))`` for a normalised ``folder``; a plain
    name (nearly every input_ref and every file listed) is joined without normalising."""
    if plain(name) and folder[-1:] != os.sep:
        return folder + os.sep + name
    return os.path.normpath(os.path.join(folder, name))


def recording_name(input_ref: str) -> str:
    """The sidecar recording's name within the recordings directory."""
    ref = input_ref.replace("\\", "/")
    return (ref[: -len(".json")] if ref.endswith(".json") else ref) + RECORDING_SUFFIX


def input_base(ref: str, golden_dir: Path, negative_dir: Path) -> tuple[Path, str]:
    """The directory an input_ref is relative to, and the rest of it: ``negative/`` names the
    negative golden directory."""
    ref = ref.replace("\\", "/")
    if ref.startswith(NEGATIVE_PREFIX):
        return negative_dir, ref[len(NEGATIVE_PREFIX) :]
    return golden_dir, ref


def unused_fixtures(pack: Pack) -> list[Problem]:
    """A warning for each fixture in the golden directories that no case of the pack names."""
    named: dict[str, set[str]] = {}  # a normalised folder: the names cases give in it
    normal = {folder: os.path.normpath(folder) for folder in (pack.golden_dir, pack.negative_dir)}
    for contract in pack.contracts:
        for case in contract.golden_cases:
            base, rest = input_base(case.input_ref, pack.golden_dir, pack.negative_dir)
            folder, name = (normal[base], rest) if plain(rest) else _split(normal[base], rest)
            named.setdefault(folder, set()).add(name)
    # each folder's listing less its named files, a set operation; a set of few paths, since
    # the negative folder may be walked twice (it is inside the golden one by default)
    unused = {
        joined(folder, name)
        for folder, names in _fixtures(dict.fromkeys([pack.golden_dir, pack.negative_dir]))
        for name in names - named.get(folder, set())
    }
    return [
        Problem(
            files.shown_path(path, pack.root),
            None,
            "no golden case names this fixture; add a case for it, or remove it",
        )
        for path in sorted(unused)
    ]


def _split(folder: str, name: str) -> tuple[str, str]:
    """The folder and name of ``name`` joined to ``folder`` and normalised."""
    path = joined(folder, name)
    return os.path.dirname(path), os.path.basename(path)


def _fixtures(folders: Iterable[Path]) -> Iterator[tuple[str, set[str]]]:
    """Each folder under ``folders`` (normalised) with the fixtures listed in it."""
    for folder in folders:
        for top, subfolders, names in os.walk(folder):  # symlinked folders are not followed
            subfolders[:] = [name for name in subfolders if name != ".git"]
            yield os.path.normpath(top), {name for name in names if name.endswith(FIXTURE_SUFFIX)}
