"""A reader of step output as the Actions runner reads it: which lines act as commands.

Modelled on the runner's ActionCommand.TryParseV2 / TryParse and
ActionCommandManager.TryProcessCommand: lines split on \\r\\n, \\r and \\n; a line
is a command when, after leading whitespace, it starts with ``::name`` and has a
second ``::``, or when it contains ``##[name`` with a later ``]``; only registered
names count (case-insensitively); ``stop-commands`` pauses every command until one
named by its token. The property list is trimmed (the last value loses trailing
whitespace) and a value loses its leading '=' (see ``_pair``). Leading whitespace is
stripped by Python's ``str.isspace``, a superset of .NET's ``char.IsWhiteSpace``, so
the oracle errs towards seeing more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

REGISTERED = frozenset(
    {
        "add-mask",
        "add-matcher",
        "add-path",
        "debug",
        "echo",
        "endgroup",
        "error",
        "group",
        "notice",
        "remove-matcher",
        "save-state",
        "set-env",
        "set-output",
        "stop-commands",
        "warning",
    }
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_DATA = (("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))
_PROPERTY = (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%"))
_LEGACY = (("%3B", ";"), ("%0D", "\r"), ("%0A", "\n"), ("%5D", "]"), ("%25", "%"))


@dataclass(frozen=True)
class Command:
    name: str
    properties: dict[str, str]
    data: str
    line: str


@dataclass
class Runner:
    """The command processor of one step; ``feed`` returns the commands that acted."""

    stop_token: str | None = None
    acted: list[Command] = field(default_factory=list)

    def feed(self, output: str) -> list[Command]:
        for line in split_lines(output):
            self._process(line)
        return self.acted

    def _process(self, line: str) -> None:
        registered = REGISTERED | ({self.stop_token.lower()} if self.stop_token else set())
        found = parse_v2(line, registered) or parse_legacy(line, registered)
        if found is None:
            return
        if self.stop_token is not None:
            if found.name.lower() == self.stop_token.lower():
                self.stop_token = None
                self.acted.append(found)
            return
        if found.name.lower() == "stop-commands":
            self.stop_token = found.data
        self.acted.append(found)


def split_lines(output: str) -> list[str]:
    """Lines as .NET's StreamReader.ReadLine yields them (no other separator counts)."""
    lines = _LINE_BREAK.split(output)
    return lines[:-1] if lines and lines[-1] == "" else lines


def _pair(item: str) -> tuple[str, str]:
    """``key=value`` as .NET's Split('=', 2, RemoveEmptyEntries) cuts it.

    Empty pieces are skipped before the last one, so ``title==x`` gives ``x``:
    the runner drops leading '=' of a value.
    """
    key, _, value = item.lstrip("=").partition("=")
    return key, value.lstrip("=")


def _unescape(value: str, mappings: tuple[tuple[str, str], ...]) -> str:
    for escaped, token in mappings:
        value = value.replace(escaped, token)
    return value


def parse_v2(line: str, registered: frozenset[str] | set[str]) -> Command | None:
    message = line.lstrip()
    if not message.startswith("::"):
        return None
    end = message.find("::", 2)
    if end < 0:
        return None
    info = message[2:end]
    name, _, rest = info.partition(" ")
    if name.lower() not in registered:
        return None
    properties: dict[str, str] = {}
    for item in rest.strip().split(","):
        key, value = _pair(item)
        if key and value:
            properties[key] = _unescape(value, _PROPERTY)
    return Command(name, properties, _unescape(message[end + 2 :], _DATA), line)


def parse_legacy(line: str, registered: frozenset[str] | set[str]) -> Command | None:
    start = line.find("##[")
    if start < 0:
        return None
    end = line.find("]", start)
    if end < 0:
        return None
    name, _, rest = line[start + 3 : end].partition(" ")
    if name.lower() not in registered:
        return None
    properties: dict[str, str] = {}
    for item in rest.split(";"):
        key, value = _pair(item)
        if key and value:
            properties[key] = _unescape(value, _LEGACY)
    return Command(name, properties, _unescape(line[end + 1 :], _LEGACY), line)


def acted(output: str) -> list[Command]:
    """Every command that acts in ``output``, stop-commands and its resume included."""
    return Runner().feed(output)


def effective(output: str) -> list[Command]:
    """The commands that act, less the stop-commands/resume pairs (they only guard text)."""
    commands = acted(output)
    tokens = {c.data.lower() for c in commands if c.name.lower() == "stop-commands"}
    return [
        c for c in commands if c.name.lower() != "stop-commands" and c.name.lower() not in tokens
    ]


def runner_outputs(text: str) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it (heredocs only: we write no other form)."""
    lines, found = text.split("\n"), dict[str, str]()
    index = 0
    while index < len(lines) and lines[index]:
        name, _, delimiter = lines[index].partition("<<")
        end = lines.index(delimiter, index + 1)
        found[name] = "\n".join(lines[index + 1 : end])
        index = end + 1
    return found
