"""Workflow commands on stdout, escaped as @actions/core escapes them, and a guard for free text."""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from typing import TextIO

from replaygate.report.escape import xml_safe

TITLE_LIMIT = 255  # characters GitHub keeps of an annotation title


def escape_data(value: str) -> str:
    """A command's message as the toolkit escapes it: it can no longer end its line."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """A command property: also ``:`` and ``,``, which would end the property list."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def printable(text: str) -> str:
    """``text`` as UTF-8 can carry it: a lone surrogate (possible in a fixture) becomes \\udXXX."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def command(name: str, properties: Mapping[str, str | int | None], message: str) -> str:
    """One command line (no newline); empty properties are left out, as the toolkit does.

    Controls, bidi and invisible characters are shown as escapes (``\\u200b``) first: an
    annotation in a pull request's diff must not hide or reorder what it says.
    """
    shown = [
        f"{key}={escape_property(xml_safe(str(value)))}"
        for key, value in properties.items()
        if value
    ]
    head = f"::{name} {','.join(shown)}" if shown else f"::{name}"
    return printable(f"{head}::{escape_data(xml_safe(message))}")


def _annotation(
    level: str, message: str, file: str | None, line: int | None, title: str | None
) -> str:
    # The toolkit's order; with ``line`` last, the runner's trim of the property
    # list cannot eat trailing whitespace of a title or a path.
    properties = {"title": title and title[:TITLE_LIMIT], "file": file, "line": line}
    return command(level, properties, message)


def error(
    message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> str:
    return _annotation("error", message, file, line, title)


def warning(
    message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> str:
    return _annotation("warning", message, file, line, title)


def notice(
    message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> str:
    return _annotation("notice", message, file, line, title)


def stop_commands(token: str) -> str:
    """From this line on the runner ignores every command until ``resume_commands(token)``."""
    return command("stop-commands", {}, token)


def resume_commands(token: str) -> str:
    return command(token, {}, "")


def new_token(avoid: str = "") -> str:
    """A random stop-commands token that does not occur in ``avoid``."""
    # secrets.token_hex reads os.urandom too, but importing secrets loads hmac and OpenSSL:
    # 10-20 ms of the action's start.
    token = os.urandom(16).hex()
    while token in avoid:
        token = os.urandom(16).hex()
    return token


class WorkflowLog:
    """stdout as the runner reads it: our commands act, any other text is shown and never acts.

    Free text is written inside a ``::stop-commands::<token>`` block opened on demand
    and closed before the next command, so a fixture that prints ``::add-mask::``,
    ``##[error]`` or ``\\r::warning::`` stays inert on every line the runner splits.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._token: str | None = None
        self._line_start = True

    def command(self, line: str) -> None:
        """Write one of our commands (from ``command``, ``error``, ...) on a line of its own."""
        self._resume()
        self._write(line + "\n")

    def text(self, text: str) -> None:
        """Write untrusted text; it is shown as it is but cannot issue a command."""
        text = printable(text)
        if not text:
            return
        if self._token is not None and self._token in text:
            self._resume()
        if self._token is None:
            self._token = new_token(text)
            self._end_line()
            self._write(stop_commands(self._token) + "\n")
        self._write(text)

    def close(self) -> None:
        """Let commands act again (the next step starts with a clean slate anyway)."""
        self._resume()
        self._stream.flush()

    def flush(self) -> None:
        self._stream.flush()

    def _resume(self) -> None:
        if self._token is None:
            return
        self._end_line()
        self._write(resume_commands(self._token) + "\n")
        self._token = None

    def _end_line(self) -> None:
        if not self._line_start:
            self._write("\n")

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._line_start = text.endswith(("\n", "\r"))


class GuardedStream(io.TextIOBase):
    """A text stream whose every write goes through ``WorkflowLog.text``.

    The entrypoint puts it in place of sys.stdout and sys.stderr, so that nothing
    printed by the run (a problem line, a warning from a library) can act as a command.
    """

    def __init__(self, log: WorkflowLog) -> None:
        super().__init__()
        self.log = log

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.log.text(text)
        return len(text)

    def flush(self) -> None:
        self.log.flush()


def log_for(stream: TextIO) -> WorkflowLog:
    """The WorkflowLog behind ``stream`` when it is guarded, else a new one writing to it."""
    if isinstance(stream, GuardedStream):
        return stream.log
    return WorkflowLog(stream)
