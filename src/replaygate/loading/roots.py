"""The repository root a pack's paths resolve against, and why it is that folder."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from replaygate.core.errors import PackError
from replaygate.loading import files


@dataclass(frozen=True, slots=True)
class Root:
    path: Path
    why: str  # "the nearest folder above the pack holding .git"

    def explain(self) -> str:
        """Which root was used and why, for a message about a path that did not resolve."""
        return f"paths resolve against the repository root {self.path} ({self.why}; --root sets it)"


def root_for(pack_file: Path, given: Path | None, cwd: Path) -> Root:
    """``--root`` when it holds the pack; else the nearest folder above the pack holding
    ``.git``, as git finds it; else the current folder when it holds the pack (where
    ``npx replayci`` resolves pack paths), else the pack's parent folder. A pack named
    explicitly is always accepted: a root that does not hold it is not used for it."""
    pack_dir = pack_file.parent
    if given is not None and files.is_inside(pack_dir, given):
        return Root(given, "given with --root")
    found = files.find_repository_root(pack_dir)
    outside = f"the pack is outside --root {given}; " if given is not None else ""
    if found is not None:
        return Root(found, f"{outside}the nearest folder above the pack holding .git")
    if files.is_inside(pack_dir, cwd):
        return Root(
            Path(os.path.realpath(cwd)), f"{outside}no .git above the pack: the current folder"
        )
    return Root(
        Path(os.path.realpath(pack_dir.parent)),
        f"{outside}no .git above the pack: its parent folder",
    )


def resolve_pack_path(
    root: Root, pack_dir: Path, text: str, *, what: str, file: str, line: int | None
) -> Path:
    """A directory named in pack.yaml, resolved against the root; a problem says which root
    was used and the spelling that would work when the path exists relative to the pack."""
    try:
        where = files.resolve_inside(
            root.path,
            text,
            root=root.path,
            what=what,
            within="the repository",
            file=file,
            line=line,
        )
    except PackError as exc:
        raise PackError(file, line, f"{exc.message}; {root.explain()}") from None
    if where.is_dir():
        return where
    message = f"{what} '{text}' is not a directory: {root.explain()}"
    beside = Path(os.path.realpath(pack_dir / text))
    if beside.is_dir() and files.is_inside(beside, root.path):
        message += (
            f"; relative to the pack it exists: write '{files.shown_path(beside, root.path)}'"
        )
    raise PackError(file, line, message)


def root_lines(roots: Mapping[Path, str]) -> list[str]:
    """``root: /work/repo (the nearest folder above the pack holding .git)``, once per root."""
    return [f"root: {path} ({why})" for path, why in roots.items()]
