"""no_path_escape: which tool inputs name a path, and whether a path stays in the sandbox."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator

from replaygate.assertions.trace import TraceCall
from replaygate.assertions.trace_match import Rule

# The input fields that name a path, by tool (Claude Code, Codex as ai-tester maps it, ACP).
PATH_FIELDS: dict[str, tuple[str, ...]] = {
    "Read": ("file_path",),
    "Write": ("file_path",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "NotebookRead": ("notebook_path", "file_path"),
    "NotebookEdit": ("notebook_path", "file_path"),
    "Glob": ("path",),
    "Grep": ("path",),
    "LS": ("path",),
    "fs/read_text_file": ("path",),
    "fs/write_text_file": ("path",),
    "terminal/create": ("cwd",),
}
# Any other tool: these fields, when present, are paths too.
GENERIC_FIELDS = ("file_path", "notebook_path", "path", "cwd")
# What ai-tester (TypeScript) checks: only these tools and fields.
_PEER_CHECKS = {("Read", "file_path"), ("Write", "file_path"), ("Edit", "file_path")}
_PEER_CHECKS |= {("Glob", "path"), ("Grep", "path")}
_HOME = "~"
_HOME_DIR = "/home/~"  # where `~` is expanded offline: a home of its own, in no sandbox
_USERS = "/home/"  # `~name`: name's home
_DRIVE = re.compile(r"[A-Za-z]:")


def path_inputs(call: TraceCall) -> Iterator[tuple[str, str]]:
    """(field, raw path) of each non-empty string path field of the call's input."""
    if call.arguments is None:
        return
    for name in PATH_FIELDS.get(call.name, GENERIC_FIELDS):
        value = call.arguments.get(name)
        if isinstance(value, str) and value:
            yield name, value


def resolve(raw: str, sandbox: str) -> str:
    """``raw`` made absolute against the sandbox with ``..`` folded. Backslashes separate
    steps and ``C:`` starts an absolute path, as on Windows. ``~`` is expanded to a home of
    its own (shown as ``~``) before ``..`` is folded, so ``~/../..`` climbs out of it."""
    text = raw.replace("\\", "/")
    if text.startswith(_HOME):
        head, _, rest = text.partition("/")
        home = _HOME_DIR if head == _HOME else _USERS + head[1:]
        path = posixpath.normpath(f"{home}/{rest}")
        return _HOME + path[len(_HOME_DIR) :] if _inside(path, _HOME_DIR) else path
    if not is_absolute(text):
        text = resolve(sandbox, "/").rstrip("/") + "/" + text
    drive = _DRIVE.match(text)
    if drive is None:
        return posixpath.normpath(text)
    return drive.group(0).upper() + posixpath.normpath("/" + text[2:].lstrip("/"))


def is_absolute(raw: str) -> bool:
    """Rooted: ``/``, ``\\``, ``~`` or a drive letter (``C:\\``, ``C:/``)."""
    return raw.startswith(("/", "\\", _HOME)) or _DRIVE.match(raw) is not None


def allowed_prefixes(sandbox: str, allow_outside: Iterable[str]) -> list[tuple[str, bool]]:
    """(prefix, relative) for the sandbox and each allow_outside entry, with macOS aliases."""
    found = [(resolve(sandbox, "/"), False)]
    for entry in allow_outside:
        found.append((resolve(entry, sandbox), not is_absolute(entry)))
    return [(alias, rel) for prefix, rel in found for alias in _aliases(prefix)]


def _aliases(prefix: str) -> list[str]:
    if prefix.startswith("/private/"):
        return [prefix, prefix[len("/private") :]]
    if prefix.startswith(("/var/", "/tmp/")) or prefix in ("/var", "/tmp"):
        return [prefix, "/private" + prefix]
    return [prefix]


def _inside(path: str, prefix: str) -> bool:
    if _DRIVE.match(prefix):  # Windows compares paths case-insensitively
        path, prefix = path.casefold(), prefix.casefold()
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def escape(
    call: TraceCall, field: str, raw: str, prefixes: list[tuple[str, bool]], rules: set[Rule]
) -> str | None:
    """The resolved path when it leaves every allowed prefix, else None; notes the rules."""
    if not is_absolute(raw) and ".." not in raw.replace("\\", "/").split("/"):
        return None  # relative, without `..`: inside the sandbox whatever the sandbox is
    sandbox = prefixes[0][0]
    path = resolve(raw, sandbox)
    holder = next((rel for prefix, rel in prefixes if _inside(path, prefix)), None)
    if holder is True:
        rules.add(Rule.RELATIVE_ALLOW)
    if holder is not None:
        return None
    if raw.startswith(_HOME):
        rules.add(Rule.TILDE)
    if "\\" in raw or _DRIVE.match(raw):
        rules.add(Rule.WINDOWS_PATHS)
    if (call.name, field) not in _PEER_CHECKS:
        rules.add(Rule.PATH_FIELDS)
    return path
