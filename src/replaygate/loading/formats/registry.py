"""Other tools' formats, found in one place: what a JSON file named on the command line is,
and which folder of a pack holds another tool's files. Pack loading (loading/pack.py) and
the command line (loading/peers.py) consult this table and nothing else to tell a format.

Light on purpose: the readers (and their pydantic models, about 20 ms of start-up) are
imported only where their files are read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any


class Kind(StrEnum):
    """A format whose files are named on the command line, each file a case or a run."""

    AI_TESTER = "ai-tester"
    CONNEXITY = "connexity"


# What each kind's JSON files say of themselves, tried in order: an ai-tester trace has a
# schemaVersion, a Connexity test case a name (it has no version of its own).
_FILE_KINDS: tuple[tuple[Kind, Callable[[Mapping[str, Any]], bool]], ...] = (
    (Kind.AI_TESTER, lambda data: "schemaVersion" in data),
    (Kind.CONNEXITY, lambda data: "name" in data),
)
# A pack's folders that hold another tool's files, with their reader's module: @isdk fixtures
# (`<pack>/isdk/*.fixture.yaml`), each read into contracts with their cases' inputs.
PACK_FOLDERS: Mapping[str, str] = {"isdk": "replaygate.loading.formats.isdk"}
# Files named on the command line (or a folder of them, with no pack file) that a format
# reads by their name alone: @isdk fixtures, read as a pack folder's are, with the reader's
# module.
NAMED_FILES: Mapping[str, str] = {".fixture.yaml": "replaygate.loading.formats.isdk"}
# What a file that is no format's is told it is not.
EXPECTED = "not an ai-tester trace (schemaVersion) or a Connexity test case (name)"


def kind_of(data: Any) -> Kind | None:
    """The kind of a parsed JSON file, or None when it is no format's."""
    if not isinstance(data, dict):
        return None
    return next((kind for kind, says in _FILE_KINDS if says(data)), None)


@dataclass(frozen=True, slots=True)
class PeerOptions:
    """What the command line says of other tools' files."""

    scenarios: Path | None = None  # where ai-tester scenarios live, when a trace's path fails
    tags: tuple[str, ...] = ()  # Connexity: only cases with one of these tags
    difficulty: str | None = None  # Connexity: only cases of this difficulty
