"""Command line: parse arguments, dispatch to one module per command, handle every error once."""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
import traceback
from collections.abc import Sequence

from replaygate import __version__
from replaygate.errors import EXIT_BUG, ReplayGateError

COMMANDS = ("run", "validate", "merge", "baseline", "infer", "hash", "record")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise ReplayGateError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="replaygate", description=__doc__)
    parser.add_argument("--version", action="version", version=f"replaygate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        # Each command module is imported only when the parser is built, so
        # `--version` answers before pydantic and friends are loaded.
        importlib.import_module(f"replaygate.commands.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        print(f"replaygate {__version__}")
        return 0
    try:
        parsed = build_parser().parse_args(args)
        module = importlib.import_module(f"replaygate.commands.{parsed.command}")
        code: int = module.main(parsed)
        return code
    except ReplayGateError as exc:
        from replaygate.report.escape import terminal_safe  # messages quote pack text

        print(f"replaygate: {terminal_safe(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("replaygate: cancelled", file=sys.stderr)
        return 130
    except Exception as exc:  # the one place a bug becomes a message
        print(bug_report(exc), file=sys.stderr)
        return EXIT_BUG


def bug_report(exc: BaseException) -> str:
    """What a bug report needs: the error, the traceback, and the versions it ran on."""
    trace = "".join(traceback.format_exception(exc)).rstrip("\n")
    return (
        f"replaygate: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in replaygate. Please report it with the command you ran and this text:\n"
        f"replaygate {__version__}, Python {platform.python_version()}, {platform.platform()}\n"
        f"{trace}"
    )


if __name__ == "__main__":
    sys.exit(main())
