"""Command line: parse arguments, dispatch to one module per command, handle every error once."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import FrameType
from typing import TYPE_CHECKING

from replaygate import __version__
from replaygate.core.errors import (
    EXIT_BUG,
    EXIT_CANCELLED,
    EXIT_TERMINATED,
    ReplayGateError,
    UsageError,
)

if TYPE_CHECKING:
    from pathlib import Path

COMMANDS = ("run", "validate", "merge", "baseline", "infer", "hash", "record", "observe")

DESCRIPTION = """\
Check recorded LLM tool calls against the YAML contracts of ReplayCI packs,
offline: every golden case's recorded response is judged against its contract,
and each failure is reported on the contract line that made it.

examples:
  replaygate run                          every pack under packs/
  replaygate run packs/my-pack -v         one pack, every case with its time
  replaygate run --junit junit.xml --json results.json
  replaygate validate                     load everything, evaluate nothing
"""

EPILOG = """\
exit codes:
  0    every case passed or was skipped
  1    a case failed or errored
  2    no pack was found, or a pack, contract, fixture or results file could not be loaded,
       or a report could not be written
  3    internal error: a bug in replaygate, or a worker of --jobs was killed
  4    usage error: an unknown command or option, or a bad option value
  130  cancelled by Ctrl-C (SIGINT)
  143  cancelled by SIGTERM; no report is written

Run `replaygate COMMAND --help` for a command's options.
"""


def _command_choice(match: re.Match[str]) -> str:
    given = match["value"].strip("'\"")
    close = difflib.get_close_matches(given, COMMANDS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown command {given!r}{hint}; choose one of {', '.join(COMMANDS)}"


# argparse's messages, said in our words; anything else keeps its text.
_MESSAGES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (
        re.compile(r"the following arguments are required: COMMAND"),
        lambda m: f"no command given; choose one of {', '.join(COMMANDS)}",
    ),
    (re.compile(r"argument COMMAND: invalid choice: (?P<value>\S+).*"), _command_choice),
    (
        re.compile(r"the following arguments are required: (?P<names>.+)"),
        lambda m: f"missing {m['names']}",
    ),
    (
        re.compile(
            r"argument (?P<name>\S+): invalid choice: (?P<value>.+?) \(choose from (?P<of>.+)\)"
        ),
        lambda m: f"{m['name']}: {m['value']} is not one of {m['of'].replace(chr(39), '')}",
    ),
    (
        re.compile(r"argument (?P<name>\S+): not allowed with argument (?P<other>\S+)"),
        lambda m: f"{m['name']} cannot be used with {m['other']}",
    ),
    (
        re.compile(r"argument (?P<name>\S+): expected one argument"),
        lambda m: f"{m['name']} needs a value",
    ),
    (
        re.compile(r"argument (?P<name>\S+): (?P<message>.+)"),
        lambda m: f"{m['name']}: {m['message']}",
    ),
)


def _our_words(message: str) -> str:
    for pattern, say in _MESSAGES:
        match = pattern.fullmatch(message)
        if match:
            return say(match)
    return message


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {_our_words(message)}", usage=self.format_usage())


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="replaygate",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"replaygate {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )
    for name in COMMANDS:
        # Each command module is imported only when the parser is built, so
        # `--version` answers before pydantic and friends are loaded.
        importlib.import_module(f"replaygate.commands.{name}").add_parser(sub)
        sub.choices[name].set_defaults(command_parser=sub.choices[name])
    return parser


def _parse(args: list[str]) -> argparse.Namespace:
    """The command line parsed; an unknown argument is refused by the command it was given to."""
    parsed, unknown = build_parser().parse_known_args(args)
    if unknown:
        command: argparse.ArgumentParser = parsed.command_parser
        options = [o for action in command._actions for o in action.option_strings]
        close = difflib.get_close_matches(unknown[0].partition("=")[0], options, 1, 0.8)
        hint = f" (did you mean {close[0]}?)" if close else ""
        plural = "s" if len(unknown) > 1 else ""
        command.error(f"unknown argument{plural}: {' '.join(unknown)}{hint}")
    return parsed


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        print(f"replaygate {__version__}")
        return 0
    with _terminated_as_interrupted() as received:
        return _run(args, received)


def _run(args: list[str], received: list[int]) -> int:
    parsed: argparse.Namespace | None = None
    try:
        parsed = _parse(args)
        module = importlib.import_module(f"replaygate.commands.{parsed.command}")
        code: int = module.main(parsed)
        return code
    except UsageError as exc:
        from replaygate.report.escape import terminal_safe  # messages quote what was typed

        where = "" if exc.usage else "replaygate: "  # the parser's messages name the command
        print(f"{exc.usage}{where}{terminal_safe(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except ReplayGateError as exc:
        _report_error(exc, github=getattr(parsed, "github", False))
        return exc.exit_code
    except KeyboardInterrupt:
        print("replaygate: cancelled", file=sys.stderr)
        return EXIT_TERMINATED if received else EXIT_CANCELLED
    except Exception as exc:  # the one place a bug becomes a message
        report = bug_report(exc)
        print(report, file=sys.stderr)
        logged = write_bug_log(f"command: replaygate {_shell_words(args)}\n{report}\n")
        if logged is not None:
            print(f"replaygate: this report is also in {logged}", file=sys.stderr)
        return EXIT_BUG


class Terminated(KeyboardInterrupt):
    """SIGTERM: the run stops where it is, as on Ctrl-C; no report is written half."""


@contextlib.contextmanager
def _terminated_as_interrupted() -> Iterator[list[int]]:
    """SIGTERM raises Terminated while the command runs, so that the clean-up that Ctrl-C
    gets happens (forked workers killed and reaped, temporary files removed); without it
    the process would die at once, its workers orphaned. A handler already in place (the
    image's entrypoint) is kept. Yields the signals received."""
    received: list[int] = []
    main_thread = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM) if main_thread else None
    if before is not signal.SIG_DFL:  # another thread's run, or someone else's handler
        yield received
        return

    def terminate(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        if len(received) == 1:  # a second signal must not interrupt the clean-up of the first
            raise Terminated(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, before)


def _report_error(exc: ReplayGateError, *, github: bool) -> None:
    """One line: on GitHub an ``::error`` annotation, or a job that stopped (a worker killed,
    a baseline that cannot be read) would show only a red cross and nothing on the run's page."""
    if github:
        from replaygate.github.workflow import error, log_for

        log = log_for(sys.stderr)
        log.command(error(str(exc), title="replaygate"))
        log.close()
        return
    from replaygate.report.escape import terminal_safe  # messages quote pack text

    print(f"replaygate: {terminal_safe(str(exc))}", file=sys.stderr)


def bug_report(exc: BaseException) -> str:
    """What a bug report needs: the error, the traceback, and the versions it ran on."""
    import platform  # only a bug needs these: a millisecond of every start otherwise
    import traceback

    trace = "".join(traceback.format_exception(exc)).rstrip("\n")
    return (
        f"replaygate: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in replaygate. Please report it with the command you ran and this text:\n"
        f"replaygate {__version__}, Python {platform.python_version()}, {platform.platform()}\n"
        f"{trace}"
    )


def _shell_words(args: list[str]) -> str:
    import shlex  # only a bug needs it

    return shlex.join(args)


def bug_log_path(environ: Mapping[str, str], cwd: Path) -> Path | None:
    """Where a bug report is also written: ``$XDG_STATE_HOME/replaygate/replaygate.log``, by
    default under ``~/.local/state`` (XDG's home for logs; ``~/.cache/replaygate`` is the
    action's saved results cache). None when that is inside the current folder's repository,
    which a run must not write into."""
    from pathlib import Path  # only a bug needs it, like the imports below

    from replaygate.loading.files import find_repository_root, is_inside

    state = environ.get("XDG_STATE_HOME", "")
    # XDG: a relative path is invalid and ignored; HOME is what Path.home() reads first
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    base = Path(state) if os.path.isabs(state) else home / ".local" / "state"
    path = base / "replaygate" / "replaygate.log"
    repository = find_repository_root(cwd) or cwd
    return None if is_inside(path, repository) else path


def write_bug_log(text: str) -> Path | None:
    """``text`` written to bug_log_path (replacing the last report), and where; None when it
    cannot be written there: the report on stderr is then the only one."""
    from pathlib import Path

    try:
        path = bug_log_path(os.environ, Path.cwd())
        if path is None:
            return None
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="backslashreplace")
    except (OSError, RuntimeError, ValueError):  # no home, a file in the way, a NUL in a path
        return None
    return path


if __name__ == "__main__":
    sys.exit(main())
