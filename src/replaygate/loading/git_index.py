"""Whether git tracks a file, read from the repository's index: the image has no git."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from replaygate.loading.files import find_repository_root

_HEADER = struct.Struct(">4sII")  # "DIRC", version, number of entries
_FIXED = 40  # ctime, mtime, dev, ino, mode, uid, gid, size: ten 32-bit numbers
_EXTENDED = 0x4000  # a flag of version 3 and later: two more bytes of flags follow
_MAX_INDEX_BYTES = 512 * 1024 * 1024


def is_tracked(path: Path) -> bool:
    """Whether the git repository holding ``path`` (as named) has it in its index.

    A repository whose index cannot be read tracks nothing that can be told: False.
    """
    lexical = Path(os.path.abspath(path))
    root = find_repository_root(lexical.parent, follow_links=False)
    if root is None:
        return False
    index = _index_file(root)
    relative = lexical.relative_to(root).as_posix().encode("utf-8", "surrogateescape")
    try:
        return relative in _tracked_paths(index, _hash_size(index.parent))
    except (OSError, ValueError, struct.error):
        return False


def _index_file(root: Path) -> Path:
    """``.git/index``, or the index of the git directory a ``.git`` file points to."""
    dot_git = root / ".git"
    if dot_git.is_file():
        try:
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return dot_git / "index"
        if text.startswith("gitdir:"):
            return (root / text.removeprefix("gitdir:").strip()) / "index"
    return dot_git / "index"


def _hash_size(git_dir: Path) -> int:
    """20 bytes for SHA-1 repositories, 32 for those made with ``objectformat = sha256``."""
    try:
        config = (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 20
    lines = (line.replace(" ", "").lower() for line in config.splitlines())
    return 32 if "objectformat=sha256" in lines else 20


def _tracked_paths(index: Path, hash_size: int) -> set[bytes]:
    """Every path of the index, of versions 2, 3 and 4 (whose paths are prefix-compressed)."""
    with index.open("rb") as handle:
        data = handle.read(_MAX_INDEX_BYTES)
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3, 4):
        raise ValueError("not a git index")
    paths: set[bytes] = set()
    offset, previous = _HEADER.size, b""
    for _ in range(count):
        start = offset
        offset += _FIXED + hash_size
        (flags,) = struct.unpack_from(">H", data, offset)
        offset += 2 + (2 if version >= 3 and flags & _EXTENDED else 0)
        if version == 4:
            strip, offset = _varint(data, offset)
            end = data.index(b"\0", offset)
            previous = previous[: len(previous) - strip] + data[offset:end]
            offset = end + 1
        else:
            end = data.index(b"\0", offset)
            previous = data[offset:end]
            offset = start + ((end - start) // 8 + 1) * 8  # 1 to 8 NULs pad to 8 bytes
        paths.add(previous)
    return paths


def _varint(data: bytes, offset: int) -> tuple[int, int]:
    """Git's offset encoding of index version 4: 7 bits a byte, each continuation adding 1."""
    byte = data[offset]
    value = byte & 0x7F
    while byte & 0x80:
        offset += 1
        byte = data[offset]
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, offset + 1
