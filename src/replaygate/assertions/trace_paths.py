"""no_path_escape: which tool inputs name a path, and whether a path stays in the sandbox."""

from __future__ import annotations

import posixpath
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


def path_inputs(call: TraceCall) -> Iterator[tuple[str, str]]:
    """(field, raw path) of each non-empty string path field of the call's input."""
    if call.arguments is None:
        return
    for name in PATH_FIELDS.get(call.name, GENERIC_FIELDS):
        value = call.arguments.get(name)
        if isinstance(value, str) and value:
            yield name, value


def resolve(raw: str, sandbox: str) -> str:
    """``raw`` made absolute against the sandbox with ``..`` folded; ``~`` stays the home
    directory, which offline is a place of its own, never inside the sandbox."""
    if raw.startswith(_HOME):
        head, _, rest = raw.partition("/")
        return head + posixpath.normpath("/" + rest).rstrip("/")
    return posixpath.normpath(posixpath.join(sandbox, raw))


def allowed_prefixes(sandbox: str, allow_outside: Iterable[str]) -> list[tuple[str, bool]]:
    """(prefix, relative) for the sandbox and each allow_outside entry, with macOS aliases."""
    found = [(posixpath.normpath(sandbox), False)]
    for entry in allow_outside:
        relative = not entry.startswith(("/", _HOME))
        found.append((resolve(entry, sandbox), relative))
    return [(alias, rel) for prefix, rel in found for alias in _aliases(prefix)]


def _aliases(prefix: str) -> list[str]:
    if prefix.startswith("/private/"):
        return [prefix, prefix[len("/private") :]]
    if prefix.startswith(("/var/", "/tmp/")) or prefix in ("/var", "/tmp"):
        return [prefix, "/private" + prefix]
    return [prefix]


def _inside(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def escape(
    call: TraceCall, field: str, raw: str, prefixes: list[tuple[str, bool]], rules: set[Rule]
) -> str | None:
    """The resolved path when it leaves every allowed prefix, else None; notes the rules."""
    if not raw.startswith(("/", _HOME)) and ".." not in raw.split("/"):
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
    if (call.name, field) not in _PEER_CHECKS:
        rules.add(Rule.PATH_FIELDS)
    return path
