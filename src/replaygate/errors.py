"""The one user-facing exception type and the process exit codes."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1  # a case failed or errored
EXIT_CONFIG = 2  # no pack found, or a pack, contract or option could not be loaded
EXIT_BUG = 3  # an internal error: a bug in replaygate


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
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"
