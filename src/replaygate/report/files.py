"""Report files written whole or not at all: a cancelled run never leaves a truncated report."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

from replaygate.core.errors import ReplayGateError, cannot_write
from replaygate.loading.files import named_path

_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)  # Windows: no CRLF
_owner: tuple[int, int] | None = None
# A temporary name adds 19 bytes to the target's: a longer name gets a fixed one (a file
# name is at most 255 bytes on the usual file systems).
_LONGEST_NAME = 200


def report_path(path: str, cwd: Path) -> Path:
    """Where the report ``path`` goes: see loading.files.named_path. A path whose last part
    is no file name (``.``, ``/``, ``..``) is refused: it can only name a folder."""
    found = named_path(path, cwd, "report")
    if found.name in ("", ".", ".."):
        raise ReplayGateError(f"report {path!r} names a folder; give a file name")
    return found


def give_new_files_to(uid: int, gid: int) -> None:
    """Every file and folder written from now on gets this owner (the action runs as root)."""
    global _owner
    _owner = (uid, gid)


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write beside the target, flush to disk, then rename over it (atomic on POSIX).

    ``text`` may come in pieces, written as they are made: a large report is never held
    whole. A piece that fails to render leaves no file, as a failed write does.

    The temporary name is chosen before the file exists, so a cancellation that
    lands anywhere (even inside the open call) still removes it. The file gets the
    usual permissions (0666 less the umask), not mkstemp's 0600: in the action's
    container the run is root, and later steps of the job read the reports as the
    runner's user.
    """
    if _is_special(path):
        _write_through(path, text)
        return
    temp = _temporary(path)
    try:
        _write_temporary(temp, text)
        os.replace(temp, path)
    except OSError as exc:
        _remove(temp)
        raise _cannot_write(path, exc) from None
    except BaseException:
        _remove(temp)
        raise


def _temporary(path: Path) -> Path:
    """A name beside ``path`` for its text until it is whole: its own name with a random
    part (not secrets: a slow import), or, for a name too long to take more, a fixed one."""
    name = path.name if len(os.fsencode(path.name)) <= _LONGEST_NAME else "replaygate"
    return path.with_name(f".{name}.{os.urandom(6).hex()}.tmp")


def _write_temporary(temp: Path, text: str | Iterable[str]) -> None:
    _make_folder(temp.parent)
    fd = os.open(temp, _WRITE_FLAGS, 0o666)
    _give(fd)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.writelines(_pieces(text))
        handle.flush()
        os.fsync(handle.fileno())


def _cannot_write(path: Path, exc: OSError) -> ReplayGateError:
    return ReplayGateError(cannot_write(path, exc))


def _remove(temp: Path) -> None:
    """Remove what a failed write left, as far as it can be: a path that never could be a
    file, or a file system that refuses (read-only), is no more trouble than the error that
    made the write fail, which is the one reported."""
    with contextlib.suppress(OSError):
        temp.unlink()


def _is_special(path: Path) -> bool:
    """Whether ``path`` leads to a device, a FIFO or a socket (/dev/stdout, a pipe).

    Renaming over one would replace it with a regular file (as root, even /dev/null):
    such a target is written to, as `tee` would, and cannot be written atomically anyway.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _pieces(text: str | Iterable[str]) -> Iterable[str]:
    return [text] if isinstance(text, str) else text


def _write_through(path: Path, text: str | Iterable[str]) -> None:
    try:
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.writelines(_pieces(text))
    except OSError as exc:
        raise _cannot_write(path, exc) from None


def _make_folder(folder: Path) -> None:
    missing = [f for f in (folder, *folder.parents) if not f.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    for created in missing:
        _give(created)


def _give(target: int | Path) -> None:
    if _owner is None or sys.platform == "win32":  # Windows: set only by the Linux image
        return
    # Where root cannot give files away (a user namespace without that uid, root-squashed
    # storage), they stay as they are: ownership is a courtesy, the report still matters.
    with contextlib.suppress(OSError):
        os.chown(target, *_owner)
