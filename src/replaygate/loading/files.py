"""Safe reading of repository files: every path a pack names is untrusted (a fork PR sets it)."""

from __future__ import annotations

import codecs
import errno
import functools
import operator
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from replaygate.core.errors import PackError, ReplayGateError

# Limits on what a pack can make replaygate read. Hand-written YAML (pack.yaml, contracts) is
# far below 2 MiB; JSON fixtures and recordings carry whole prompts and tool schemas, so they
# get more room. Deeper nesting than MAX_DEPTH containers is refused in both formats: no real
# contract or fixture comes close, and it keeps every recursive consumer (JSONPath, JSON
# Schema, reporters) far from Python's recursion limit.
MAX_YAML_BYTES = 2 * 1024 * 1024
MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64

EXCERPT_CHARS = 40  # of a file's text quoted in a message: enough to find it, not to copy it

_SYSTEM_DIRS = ("/proc", "/sys", "/dev")
# On POSIX a FIFO or a terminal cannot block the read or take over the run, and the descriptor
# is not inherited; Windows has none of these flags, and needs O_BINARY for bytes as they are.
_OPEN_FLAGS = functools.reduce(
    operator.or_,
    (getattr(os, flag, 0) for flag in ("O_NONBLOCK", "O_NOCTTY", "O_CLOEXEC", "O_BINARY")),
    os.O_RDONLY,
)
# Reading relative to a directory's descriptor (``read_in``) needs these; without them (Windows)
# every read takes the full path check.
_OPEN_AT = (
    os.open in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and os.stat in os.supports_follow_symlinks
    and hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
)
_FOLDER_FLAGS = functools.reduce(
    operator.or_,
    (getattr(os, flag, 0) for flag in ("O_DIRECTORY", "O_NOFOLLOW", "O_CLOEXEC")),
    os.O_RDONLY,
)
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
}


def resolve_inside(
    base: Path,
    relative: str,
    *,
    root: Path,
    what: str,
    file: str,
    line: int | None,
    within: str | None = None,
) -> Path:
    """``base / relative`` with symlinks resolved, refused unless it stays inside ``base`` and
    ``root`` and out of ``.git``.

    ``what`` names the reference in messages (``input_ref``); ``file`` and ``line`` locate it.
    ``within`` names ``base`` (``the golden directory packs/p/golden``); by default
    ``the directory packs/p/golden``, or ``the repository`` when ``base`` is the root.
    """
    within = within or _describe(base, root)

    def refuse(problem: str) -> PackError:
        return PackError(file, line, f"{what} {relative!r} {problem}")

    if not relative or "\x00" in relative:
        raise refuse("is not a usable path")
    if os.path.isabs(relative):
        raise refuse(f"is an absolute path; give it relative to {within}")
    real_base = _real_dir(os.fspath(base))
    lexical = os.path.normpath(os.path.join(real_base, relative))
    if not _inside(lexical, real_base):
        raise refuse(f"leaves {within}")
    target = os.path.realpath(lexical) if _has_link(real_base, lexical) else lexical
    if not _inside(target, real_base):
        raise refuse(f"leaves {within} through a symlink")
    real_root = _real_dir(os.fspath(root))
    if not _inside(target, real_root):
        raise refuse("leaves the repository")
    if _is_git(relative.split("/")) or _is_git(target[len(real_root) :].split(os.sep)):
        raise refuse("points into a .git directory")
    return Path(target)


def excerpt(text: str) -> str:
    """A short excerpt of file text (a key, a value) for a one-line message: cut, and every
    character that is not printable (a line break, a control) shown as an escape."""
    cut = text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "..."
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in cut)


def named_path(path: str, cwd: Path, what: str) -> Path:
    """A file named by an option or an action input (a report, a baseline, a results file).

    ``path`` as given, refused when it is in ``cwd`` as written but a symlink takes it
    out (or into ``.git``), or when a relative path leaves ``cwd``: in the action ``cwd``
    is the workspace, where a PR can commit ``reports -> /anywhere``. An absolute path
    outside ``cwd`` is the caller's explicit choice and is kept. ``what`` names the file.
    """
    lexical = os.path.normpath(os.path.join(os.path.abspath(cwd), path))
    if os.path.isabs(path) and os.path.relpath(lexical, cwd).startswith(os.pardir):
        return Path(path)
    relative = os.path.relpath(lexical, cwd) if os.path.isabs(path) else path
    try:
        within = "the working directory"
        resolve_inside(cwd, relative, root=cwd, what=what, within=within, file="", line=None)
    except PackError as refused:
        raise ReplayGateError(refused.message.replace(repr(relative), repr(path))) from None
    # The kernel applies ".." after following a symlink (reports/../x leaves with reports ->
    # /a/b), which the lexical check above folds away: the real path must stay inside too.
    real, real_cwd = os.path.realpath(os.path.join(cwd, path)), os.path.realpath(cwd)
    if not _inside(real, real_cwd):
        raise ReplayGateError(f"{what} {path!r} leaves the working directory through a symlink")
    if _is_git(os.path.relpath(real, real_cwd).split(os.sep)):
        raise ReplayGateError(f"{what} {path!r} points into a .git directory")
    return Path(path)


@functools.lru_cache(maxsize=1024)
def _real_dir(path: str) -> str:
    """A pack's directories resolved once per process: they do not move during a run."""
    return os.path.realpath(path)


def is_inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or below it, symlinks resolved."""
    return _inside(os.path.realpath(path), os.path.realpath(folder))


def is_inside_lexically(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or below it as written (made absolute)."""
    return _inside(os.path.abspath(path), os.path.abspath(folder))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _has_link(real_base: str, lexical: str) -> bool:
    """Whether a component of ``lexical`` below ``real_base`` is a symlink.

    Most references are a name or two below their directory: a few lstat calls
    here spare the full realpath walk of every component from the file system root.
    The caller opens ``lexical`` itself, so ``..`` after a symlink cannot take it elsewhere.
    """
    current = real_base
    below = lexical[len(real_base) :].lstrip(os.sep)
    for part in below.split(os.sep) if below else ():
        current = os.path.join(current, part)
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return True
        except OSError:
            return False  # missing: reading it will say so
    return False


def _describe(base: Path, root: Path) -> str:
    folder, top = Path(os.path.abspath(base)), Path(os.path.abspath(root))
    if folder == top:
        return "the repository"
    shown = folder.relative_to(top).as_posix() if folder.is_relative_to(top) else str(folder)
    # folder names come from the repository: keep the message on one line
    return f"the directory {shown if shown.isprintable() else repr(shown)}"


def _is_git(parts: Iterable[str]) -> bool:
    # casefold: on a case-insensitive file system .GIT is the same directory
    return any(part.casefold() == ".git" for part in parts)


def read_text(path: Path, *, shown: str, max_bytes: int) -> str:
    """The text of a regular file of at most ``max_bytes``, strict UTF-8, without a BOM."""
    return _decode(_read_bytes(path, shown, max_bytes), shown)


def _read_bytes(path: Path, shown: str, max_bytes: int) -> bytes:
    try:
        # stat before opening: opening a FIFO or a device can block or have side effects
        before = os.stat(path)
        _check_regular(before, shown, max_bytes)
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise PackError(shown, None, _os_problem(exc)) from None
    return _read_opened(fd, before, shown, max_bytes)


def _read_opened(fd: int, before: os.stat_result, shown: str, max_bytes: int) -> bytes:
    """The bytes of the file open as ``fd`` (closed here), which was ``before`` when checked."""
    try:
        after = os.fstat(fd)
        # the file opened is the file checked, even if a symlink was swapped in between
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            raise PackError(shown, None, "file changed while it was being read")
        # ask for the size fstat gave plus one byte, and read on to the limit only if the file
        # grew: asking for the limit itself would allocate 16 MiB for every 2 KB fixture
        data = _read_up_to(fd, min(after.st_size, max_bytes) + 1)
        if len(data) > after.st_size:
            data += _read_up_to(fd, max_bytes + 1 - len(data))
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise PackError(shown, None, f"file is too large (the limit is {_size(max_bytes)})")
    return data


def _read_up_to(fd: int, count: int) -> bytes:
    """``count`` bytes, fewer only at the end of the file (a read may return less)."""
    chunks = []
    while count > 0 and (chunk := os.read(fd, count)):
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


@dataclass(frozen=True, slots=True)
class Folder:
    """A directory resolved, found inside the repository and out of ``.git``, and opened
    once, so that a plain name in it is read through the descriptor (``read_in``)."""

    real: str  # the directory's real path: a file in it is os.path.join(real, name)
    fd: int


def open_folder(base: Path, root: Path) -> Folder | None:
    """``base`` opened for ``read_in``, or None when its files must take ``resolve_inside``:
    ``base`` is outside ``root``, in ``.git``, not a directory, or the system has no ``openat``.
    The caller closes ``fd``."""
    real_base, real_root = _real_dir(os.fspath(base)), _real_dir(os.fspath(root))
    inside = _inside(real_base, real_root)
    if not _OPEN_AT or not inside or _is_git(real_base[len(real_root) :].split(os.sep)):
        return None
    try:
        # O_NOFOLLOW: the directory checked is the directory opened, unless a parent moved
        return Folder(real_base, os.open(real_base, _FOLDER_FLAGS))
    except OSError:
        return None


def plain_name(name: str) -> bool:
    """Whether ``name`` is an entry of its directory that ``read_in`` may open itself: not
    ``.``, ``..`` or ``.git`` (resolve_inside words those refusals), no separator, no NUL."""
    return (
        name not in ("", ".", "..")
        and "/" not in name
        and os.sep not in name
        and "\x00" not in name
        and name.casefold() != ".git"
    )


def read_in(folder: Folder, name: str, *, shown: str, max_bytes: int) -> str | None:
    """``read_text`` of the ``plain_name`` ``name`` in ``folder``, checked the same way; None
    when ``resolve_inside`` and ``read_text`` must decide: a symlink (followed only after the
    full check), or any error (their message is the one to give)."""
    try:
        before = os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
    except OSError:
        return None
    if stat.S_ISLNK(before.st_mode):
        return None
    _check_regular(before, shown, max_bytes)
    try:
        # O_NOFOLLOW: a symlink swapped in since the stat is refused, not followed
        fd = os.open(name, _OPEN_FLAGS | os.O_NOFOLLOW, dir_fd=folder.fd)
    except OSError:
        return None
    return _decode(_read_opened(fd, before, shown, max_bytes), shown)


@functools.cache
def _system_devices() -> dict[int, str]:
    """The devices of /proc, /sys and /dev where they are file systems of their own.

    Checking the device of the file itself, rather than its path, also catches a
    symlink or bind mount that leads there; and costs no realpath walk per file.
    """
    devices: dict[int, str] = {}
    top = os.stat("/").st_dev
    for system_dir in _SYSTEM_DIRS:
        try:
            device = os.stat(system_dir).st_dev
        except OSError:
            continue
        if device != top:
            devices.setdefault(device, system_dir)
    return devices


def _check_regular(status: os.stat_result, shown: str, max_bytes: int) -> None:
    system_dir = _system_devices().get(status.st_dev)
    if system_dir is not None:
        raise PackError(shown, None, f"refusing to read a file under {system_dir}")
    if not stat.S_ISREG(status.st_mode):
        kind = _KINDS.get(stat.S_IFMT(status.st_mode), "not a file")
        raise PackError(shown, None, f"not a regular file ({kind})")
    if status.st_size > max_bytes:
        size, limit = _size(status.st_size), _size(max_bytes)
        raise PackError(shown, None, f"file is too large ({size}; the limit is {limit})")


def _os_problem(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "file not found"
    return f"cannot read the file ({exc.strerror})"


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.1f} MiB"
    return f"{count} bytes"


def _decode(data: bytes, shown: str) -> str:
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.start
        line_start = data.rfind(b"\n", 0, bad) + 1
        line = data.count(b"\n", 0, bad) + 1
        column = len(data[line_start:bad].decode("utf-8")) + 1  # everything before is valid
        message = f"not valid UTF-8 (byte 0x{data[bad]:02x} at column {column})"
        raise PackError(shown, line, message) from None


def shown_path(path: Path | str, root: Path | str) -> str:
    """``path`` relative to ``root`` with forward slashes, or as given when outside it."""
    text, top = os.fspath(path), os.fspath(root).rstrip(os.sep)
    if text == top:
        return "."
    if text.startswith(top + os.sep):
        text = text[len(top) + 1 :]
    return text.replace(os.sep, "/")


def is_repository_root(path: Path) -> bool:
    """Whether ``path`` holds ``.git`` (a directory, or a file in worktrees and submodules)."""
    return (path / ".git").exists()


def find_repository_root(start: Path, *, follow_links: bool = True) -> Path | None:
    """The nearest folder at or above ``start`` that is a repository root, resolved.

    With ``follow_links=False`` the walk is lexical and the folder is as named: the
    repository a path is written in, even when a symlinked folder leads elsewhere.
    """
    here = Path(os.path.realpath(start) if follow_links else os.path.abspath(start))
    for candidate in (here, *here.parents):
        if is_repository_root(candidate):
            return candidate
    return None


def iter_pack_files(start: Path, name: str = "pack.yaml") -> Iterator[Path]:
    """Every ``name`` below the folder ``start``, in sorted order.

    Symlinked folders are never followed (no loops, no escape), ``.git`` is skipped, and
    nothing below a folder that holds ``name`` is searched. A ``name`` that is not a
    regular file is still yielded, so that reading it reports the problem.
    """
    pending = [start]
    while pending:
        folder = pending.pop()
        marker = folder / name
        if os.path.lexists(marker):
            yield marker
        else:
            pending.extend(reversed(_subfolders(folder)))


def _subfolders(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            names = [
                e.name for e in entries if e.name != ".git" and e.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return []  # a folder that cannot be listed holds no pack we could read anyway
    return [folder / entry for entry in sorted(names)]
