"""A pack to observe into."""

from __future__ import annotations

from pathlib import Path


def empty_pack(root: Path) -> Path:
    """A repository with one pack and no contract yet: what a team starts observing into."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    pack = root / "packs" / "p"
    (pack / "contracts").mkdir(parents=True)
    (pack / "golden").mkdir()
    (pack / "pack.yaml").write_text("pack_id: p\n")
    return pack
