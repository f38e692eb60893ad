"""A run's pack directories, each resolved and checked once: fixtures are read through the
descriptor of their golden directory, and a missing recording is known from one listing."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from replaygate.loading import files

# A name whose spellings on any POSIX file system are its ASCII case variants: a listing can
# say it is absent. Any other name asks the file system: non-ASCII, a short name (`~`, vfat),
# `.` and `..` (never listed), a trailing dot (vfat drops it). Windows always asks: a device
# name (`CON.json`) exists in every folder.
_CERTAIN_NAME = re.compile(r"[A-Za-z0-9_-]([A-Za-z0-9._-]*[A-Za-z0-9_-])?")
_LISTED = os.name == "posix"
# Directories kept open at once, the least recently opened closed first: a repository of a
# thousand packs must not use up the process's descriptors (often 1,024), which its fixture
# reads need too. Cases are read pack by pack, so a few suffice.
MAX_OPEN = 16


@dataclass(frozen=True, slots=True)
class _Listing:
    names: frozenset[str]  # ASCII entries, lower-cased
    other: bool  # an entry that is not ASCII could be the same name on a folding file system


@dataclass(slots=True)
class _Run:
    folders: dict[tuple[str, str], files.Folder | None] = field(default_factory=dict)
    listings: dict[str, _Listing | None] = field(default_factory=dict)

    def close(self) -> None:
        for folder in self.folders.values():
            if folder is not None:
                os.close(folder.fd)


_RUNS: list[_Run] = []  # the runs reading() is inside, innermost last


@contextlib.contextmanager
def reading() -> Iterator[None]:
    """Within, ``folder`` and ``lexists`` answer from what this run opened and listed: the
    directories do not move during a run (a recording made meanwhile is not seen)."""
    run = _Run()
    _RUNS.append(run)
    try:
        yield
    finally:
        _RUNS.remove(run)
        run.close()


def folder(base: Path, root: Path) -> files.Folder | None:
    """``base`` opened once in this run for ``files.read_in``; None outside ``reading()`` or
    where ``files.open_folder`` declines."""
    if not _RUNS:
        return None
    opened = _RUNS[-1].folders
    key = (os.fspath(base), os.fspath(root))
    if key not in opened:
        if len(opened) >= MAX_OPEN:
            oldest = opened.pop(next(iter(opened)))
            if oldest is not None:
                os.close(oldest.fd)
        opened[key] = files.open_folder(base, root)
    return opened[key]


def lexists(path: str) -> bool:
    """``os.path.lexists(path)``, answered False from this run's listing of its directory
    when that listing proves it: no entry is ``path``'s name in any case."""
    directory, _, name = path.rpartition(os.sep)
    if _RUNS and _LISTED and directory and _CERTAIN_NAME.fullmatch(name):
        listings = _RUNS[-1].listings
        if directory not in listings:
            listings[directory] = _list(directory)
        listing = listings[directory]
        if listing is not None and not listing.other and name.lower() not in listing.names:
            return False
    return os.path.lexists(path)


def _list(directory: str) -> _Listing | None:
    try:
        entries = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return _Listing(frozenset(), other=False)  # nothing can be found below it either
    except OSError:
        return None  # unreadable, but a name in it may still be looked up
    ascii_names = [entry for entry in entries if entry.isascii()]
    return _Listing(
        frozenset(entry.lower() for entry in ascii_names), len(ascii_names) != len(entries)
    )
