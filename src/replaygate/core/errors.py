"""The one user-facing exception type and the process exit codes."""

from __future__ import annotations

from replaygate.core.model import Problem
from replaygate.core.places import where

EXIT_OK = 0
EXIT_FAILED = 1  # a case failed or errored
EXIT_CONFIG = 2  # no pack found, or a pack, contract or option could not be loaded
EXIT_BUG = 3  # an internal error: a bug in replaygate
EXIT_USAGE = 4  # an unknown option or a bad option value (pytest's code)
SIGNAL_BASE = 128  # plus the signal's number: how a shell reports a run a signal stopped
EXIT_CANCELLED = SIGNAL_BASE + 2  # 130: stopped by SIGINT (Ctrl-C), or cancelled
EXIT_TERMINATED = SIGNAL_BASE + 15  # 143: stopped by SIGTERM (a CI runner cancelling the job)


def exit_on_signal(signum: int) -> int:
    """The exit code of a run the signal ``signum`` stopped: 130 for SIGINT, 143 for SIGTERM."""
    return SIGNAL_BASE + signum


def cannot_write(path: object, exc: OSError) -> str:
    """The one message for a file or stream that cannot be written, with the system's reason."""
    return f"cannot write {path}: {exc.strerror or exc}"


class ReplayGateError(Exception):
    """An error the user can fix. Printed as one line; never a traceback."""

    exit_code = EXIT_CONFIG


class PackError(ReplayGateError):
    """A problem in a file of a pack, located by file and line.

    ``file`` is the path as it should be shown (relative to the repository root
    where possible); ``line`` is 1-based, or None when no line applies.
    """

    def __init__(
        self, file: str, line: int | None, message: str, *, also: tuple[PackError, ...] = ()
    ) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.message = message
        self.also = also  # further problems found in the same file, each reported

    def each(self) -> tuple[PackError, ...]:
        """This problem and the ones found with it."""
        return (self, *self.also)

    def __str__(self) -> str:
        return f"{where(self.file, self.line)}: {self.message}"

    def problems(self) -> list[Problem]:
        """This error and the ones found with it as problems of the run: each reported, and
        the other packs still run."""
        return [Problem(each.file, each.line, each.message) for each in self.each()]


class UsageError(ReplayGateError):
    """A command line (or action input) replaygate cannot use: an unknown option, a bad value."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, usage: str = "") -> None:
        super().__init__(message)
        self.usage = usage  # the command's usage line, shown before the message
