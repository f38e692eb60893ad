"""The terminal report's options: colour, how much it says, and which report takes stdout."""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import TextIO, TypeVar

from replaygate.core.errors import UsageError
from replaygate.report.text import Verbosity

STDOUT = "-"  # a report file name that means standard output
REPORT_OPTIONS = ("json", "junit", "summary")
_E = TypeVar("_E", bound=StrEnum)


class ColorMode(StrEnum):
    AUTO = "auto"  # when the stream is a terminal, unless NO_COLOR, FORCE_COLOR or TERM say
    ALWAYS = "always"
    NEVER = "never"


def choice(kind: type[_E]) -> Callable[[str], _E]:
    """An argparse ``type`` for a StrEnum option whose error lists the valid values."""

    def parse(text: str) -> _E:
        try:
            return kind(text)
        except ValueError:
            valid = ", ".join(kind)
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {valid}") from None

    return parse


def add_color_option(parser: argparse._ActionsContainer) -> None:
    parser.add_argument(
        "--color",
        type=choice(ColorMode),
        default=ColorMode.AUTO,
        metavar="{auto,always,never}",
        help="colour the terminal report: auto (default) colours a terminal unless NO_COLOR "
        "is set or TERM=dumb; FORCE_COLOR forces it",
    )


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """--color, and -q/-v: how much the terminal report says."""
    group = parser.add_argument_group("terminal report")
    add_color_option(group)
    amount = group.add_mutually_exclusive_group()
    amount.add_argument(
        "-q",
        "--quiet",
        dest="verbosity",
        action="store_const",
        const=Verbosity.QUIET,
        default=Verbosity.NORMAL,
        help="print only load problems, failed or errored cases and the totals line",
    )
    amount.add_argument(
        "-v",
        "--verbose",
        dest="verbosity",
        action="store_const",
        const=Verbosity.VERBOSE,
        help="print every case, passed ones too, with its time",
    )


def wants_color(mode: ColorMode, environ: Mapping[str, str], stream: TextIO) -> bool:
    """Whether to colour ``stream``: the flag, then NO_COLOR, FORCE_COLOR, TERM=dumb, a tty.

    NO_COLOR and FORCE_COLOR count when set to anything but the empty string
    (no-color.org, force-color.org); NO_COLOR wins when both are set.
    """
    if mode is not ColorMode.AUTO:
        return mode is ColorMode.ALWAYS
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    if environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


def stdout_report(args: argparse.Namespace) -> str | None:
    """The report written to stdout (``--json -`` ...), if any; only one can be.

    A path naming the file stdout is open on (``/dev/stdout``, ``/proc/self/fd/1``, a link
    to them, the file the shell redirected stdout to) is read as ``-``: written atomically,
    the report would be renamed over that path (as root, over ``/dev/stdout`` itself) and the
    terminal report would follow it into a file no longer named. Standard error's file is
    refused when it is a regular file, for the same reason.
    """
    for name in REPORT_OPTIONS:
        path = getattr(args, name, None)
        if not path or path == STDOUT:
            continue
        if _names_stream(path, 1):
            setattr(args, name, STDOUT)
        elif _names_stream(path, 2, regular=True):
            raise UsageError(
                f"--{name} {path}: that is the file this run's messages go to; give another "
                "file, or - for standard output"
            )
    chosen = [name for name in REPORT_OPTIONS if getattr(args, name, None) == STDOUT]
    if len(chosen) > 1:
        names = " and ".join(f"--{name}" for name in chosen)
        raise UsageError(f"{names} cannot both write to stdout (-); give one of them a file")
    return chosen[0] if chosen else None


def _names_stream(path: str, fd: int, *, regular: bool = False) -> bool:
    """Whether ``path`` is the file open as ``fd`` (a regular file, when ``regular``)."""
    try:
        named, stream = os.stat(path), os.fstat(fd)
    except (OSError, ValueError):  # no such path, or no such stream (closed, detached)
        return False
    if regular and not stat.S_ISREG(stream.st_mode):
        return False
    return (named.st_dev, named.st_ino) == (stream.st_dev, stream.st_ino)
