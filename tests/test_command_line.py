"""What a user sees on the command line: usage, help, exit codes, colour, verbosity, stdout."""

from __future__ import annotations

import argparse
import json
import os
import pty
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from packbuilder import CONTRACT, fixture, golden_case, make_pack
from replaygate.cli import COMMANDS, build_parser

ESC = "\x1b["
FAILING = {"ok.json": fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])}
TWO_CASES = CONTRACT + golden_case("bad", "bad.json")


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    quiet = {"NO_COLOR", "FORCE_COLOR", "TERM"}
    base = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_") and k not in quiet}
    return subprocess.run(
        [sys.executable, "-m", "replaygate.cli", *args],
        cwd=cwd,
        env=base | env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def two_case_pack(root: Path) -> None:
    bad = fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    make_pack(root, contract=TWO_CASES, fixtures={"ok.json": fixture(), "bad.json": bad})


# --- usage and help ---------------------------------------------------------------------


def test_no_arguments_shows_the_usage_and_exits_4_without_a_doubled_prefix(
    tmp_path: Path,
) -> None:
    done = run([], tmp_path)
    assert done.returncode == 4
    assert done.stderr.splitlines() == [
        "usage: replaygate [-h] [--version] COMMAND ...",
        f"replaygate: no command given; choose one of {', '.join(COMMANDS)}",
    ]


def test_a_misspelt_command_suggests_the_right_one(tmp_path: Path) -> None:
    done = run(["rn"], tmp_path)
    assert done.returncode == 4
    assert done.stderr.splitlines()[-1] == (
        "replaygate: unknown command 'rn' (did you mean 'run'?); "
        f"choose one of {', '.join(COMMANDS)}"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--bogus"], "replaygate run: unknown argument: --bogus"),
        (["run", "--jsno", "r.json"],
         "replaygate run: unknown argument: --jsno (did you mean --json?)"),
        (["merge", "a.json", "-x", "-y"], "replaygate merge: unknown arguments: -x -y"),
        (["validate", "-v"], "replaygate validate: unknown argument: -v"),
        (["run", "--fail-on", "x"], "replaygate run: --fail-on: 'x' is not one of failure, never"),
        (["run", "--json"], "replaygate run: --json needs a value"),
        (["run", "--color", "red"],
         "replaygate run: --color: 'red' is not one of auto, always, never"),
        (["run", "--junit-family", "x"],
         "replaygate run: --junit-family: 'x' is not one of xunit2, xunit1"),
        (["run", "--shard", "5/4"],
         "replaygate: shard '5/4': K must be between 1 and N, and N at least 1"),
        (["run", "-q", "-v"], "replaygate run: -v/--verbose cannot be used with -q/--quiet"),
    ],
)  # fmt: skip
def test_a_usage_error_exits_4_in_our_words(tmp_path: Path, args: list[str], message: str) -> None:
    make_pack(tmp_path)
    done = run(args, tmp_path)
    assert (done.returncode, done.stdout) == (4, "")
    assert done.stderr.splitlines()[-1] == message
    assert "argument " not in message


def test_a_pack_that_cannot_load_still_exits_2(tmp_path: Path) -> None:
    make_pack(tmp_path, contract="tool: [\n")
    assert run(["run"], tmp_path).returncode == 2


def test_help_is_written_for_users_with_an_example_and_the_exit_codes(tmp_path: Path) -> None:
    done = run(["--help"], tmp_path)
    assert done.returncode == 0
    assert "Check recorded LLM tool calls" in done.stdout
    assert "\n  replaygate run packs/my-pack -v " in done.stdout
    codes = done.stdout.split("exit codes:\n")[1]
    for code in ("0", "1", "2", "3", "4"):
        assert f"\n  {code} " in "\n" + codes
    assert "usage error" in codes and "could not be loaded" in codes
    assert "command line: parse arguments" not in done.stdout  # not the module docstring


def _positionals(parser: argparse.ArgumentParser) -> list[tuple[str, str | None]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += [(f"{name} {dest}", text) for dest, text in _positionals(sub)]
        elif not action.option_strings:
            found.append((action.dest, action.help))
    return found


def test_every_positional_argument_has_help() -> None:
    positionals = _positionals(build_parser())
    assert {name for name, _ in positionals} >= {"run paths", "validate paths", "merge results"}
    assert [name for name, text in positionals if not text] == []


# --- colour -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "env", "coloured"),
    [
        ([], {}, False),  # a pipe is not a terminal
        ([], {"FORCE_COLOR": "1"}, True),
        ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        ([], {"FORCE_COLOR": ""}, False),  # set but empty counts as unset
        (["--color", "always"], {"NO_COLOR": "1"}, True),
        (["--color", "never"], {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_follows_the_flag_then_no_color_and_force_color(
    tmp_path: Path, args: list[str], env: dict[str, str], coloured: bool
) -> None:
    make_pack(tmp_path, fixtures=FAILING)
    done = run(["run", *args], tmp_path, **env)
    assert done.returncode == 1
    assert (ESC in done.stdout) is coloured
    assert "'Paris' is not equal to 'Bern'" in done.stdout


def run_on_a_terminal(args: list[str], cwd: Path, **env: str) -> str:
    """The output of replaygate with a pseudo-terminal as its stdout."""
    leader, follower = pty.openpty()
    base = {k: v for k, v in os.environ.items() if k not in {"NO_COLOR", "FORCE_COLOR", "TERM"}}
    with subprocess.Popen(
        [sys.executable, "-m", "replaygate.cli", *args],
        cwd=cwd,
        env=base | env,
        stdout=follower,
        stderr=subprocess.DEVNULL,
    ) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: the process is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode()


@pytest.mark.parametrize(
    ("env", "coloured"),
    [({"TERM": "xterm"}, True), ({"TERM": "dumb"}, False), ({"NO_COLOR": "1"}, False)],
)
def test_auto_colours_a_terminal_unless_term_is_dumb_or_no_color(
    tmp_path: Path, env: dict[str, str], coloured: bool
) -> None:
    make_pack(tmp_path, fixtures=FAILING)
    shown = run_on_a_terminal(["run"], tmp_path, **env)
    assert "is not equal to" in shown
    assert (f"{ESC}31m" in shown) is coloured


def test_colour_cannot_let_fixture_text_drive_the_terminal(tmp_path: Path) -> None:
    city = "\x1b]0;owned\x07\x1b[2J"
    make_pack(
        tmp_path,
        fixtures={"ok.json": fixture([{"name": "get_weather", "arguments": {"city": city}}])},
    )
    done = run(["run", "--color", "always"], tmp_path)
    assert "\\x1b]0;owned\\x07\\x1b[2J" in done.stdout
    painted = {"\x1b[31m", "\x1b[0m"}
    stripped = done.stdout
    for code in painted:
        stripped = stripped.replace(code, "")
    assert "\x1b" not in stripped and "\x07" not in stripped


# --- how much the terminal report says --------------------------------------------------


def test_quiet_prints_only_problems_failures_and_the_totals_line(tmp_path: Path) -> None:
    two_case_pack(tmp_path)
    make_pack(tmp_path, "broken", contract="tool: [\n")
    done = run(["run", "-q"], tmp_path)
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("packs/broken/contracts/c.yaml:")
    assert lines[1].startswith("packs/p/contracts/c.yaml:6: $.city: 'Paris' is not equal to")
    assert lines[2].startswith("1 passed, 1 failed, 0 errors, 0 skipped, 1 problem in ")


def test_verbose_prints_every_case_with_its_time(tmp_path: Path) -> None:
    two_case_pack(tmp_path)
    done = run(["run", "--verbose"], tmp_path)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("packs/p/contracts/c.yaml:8: passed (case ok) in 0.")
    assert lines[1].startswith("packs/p/contracts/c.yaml:6: $.city: 'Paris' is not equal to")
    assert "(case bad) in 0." in lines[1]
    assert all(line.endswith("s") for line in lines)
    assert len(lines) == 3


# --- reports on stdout ------------------------------------------------------------------


@pytest.mark.parametrize("report", ["--json", "--junit", "--summary"])
def test_a_report_on_stdout_leaves_stdout_parseable(tmp_path: Path, report: str) -> None:
    make_pack(tmp_path, fixtures=FAILING)
    done = run(["run", report, "-", "--color", "always"], tmp_path)
    assert done.returncode == 1
    if report == "--json":
        assert json.loads(done.stdout)["totals"]["failed"] == 1
    elif report == "--junit":
        assert ET.fromstring(done.stdout.encode()).get("failures") == "1"
    else:
        assert done.stdout.startswith("## \u274c replaygate: 0 passed, 1 failed")
    assert ESC not in done.stdout
    assert "is not equal to 'Bern'" in done.stderr  # the terminal report moved to stderr
    assert not (tmp_path / "-").exists()


def run_redirected(args: list[str], cwd: Path, out: Path, err: Path) -> int:
    """The command with stdout and stderr redirected to files, as a shell's `> out 2> err`."""
    with out.open("w") as stdout, err.open("w") as stderr:
        done = subprocess.run(
            [sys.executable, "-m", "replaygate.cli", *args], cwd=cwd, stdout=stdout,
            stderr=stderr, timeout=120, check=False,
        )  # fmt: skip
    return done.returncode


# Links of our own to the streams, not /dev/stdout itself: if the rule broke, this test would
# otherwise replace the machine's /dev/stdout (the test runs as root in the image's CI).
@pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/fd is Linux's")
@pytest.mark.parametrize("fd", [1, 2])
def test_a_report_to_the_file_a_stream_is_open_on_is_not_renamed_over_it(
    tmp_path: Path, fd: int
) -> None:
    """stdout's file takes the report as `-` does; stderr's (a regular file) is refused."""
    make_pack(tmp_path / "repo", fixtures=FAILING)
    link = tmp_path / "stream"
    link.symlink_to(f"/proc/self/fd/{fd}")
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    code = run_redirected(["run", "--junit", str(link)], tmp_path / "repo", out, err)
    assert link.is_symlink(), "the link was replaced by the report"
    if fd == 1:
        assert code == 1
        assert ET.fromstring(out.read_text()).get("failures") == "1"  # the report, whole
        assert "is not equal to 'Bern'" in err.read_text()  # the terminal report moved
    else:
        assert code == 4
        assert err.read_text() == (
            f"replaygate: --junit {link}: that is the file this run's messages go to; give "
            "another file, or - for standard output\n"
        )


def test_two_reports_cannot_share_stdout(tmp_path: Path) -> None:
    make_pack(tmp_path)
    done = run(["run", "--json", "-", "--junit", "-"], tmp_path)
    assert done.returncode == 4
    assert done.stderr == (
        "replaygate: --json and --junit cannot both write to stdout (-); give one of them a file\n"
    )


# --- validate and run say problems alike ------------------------------------------------


def test_validate_and_run_print_a_problem_to_stdout_in_the_same_words(tmp_path: Path) -> None:
    make_pack(tmp_path, contract=CONTRACT.replace("expect_ok", "expect_okk"))
    ran, validated = run(["run"], tmp_path), run(["validate"], tmp_path)
    assert ran.returncode == validated.returncode == 2
    assert ran.stderr == validated.stderr  # the root line only
    assert ran.stderr.startswith("root: ") and len(ran.stderr.splitlines()) == 1
    problem = ran.stdout.splitlines()[0]
    assert problem.startswith("packs/p/contracts/c.yaml:")
    assert validated.stdout.splitlines()[0] == problem
    assert validated.stdout.splitlines()[-1] == "1 pack, 0 contracts, 0 cases, 1 problem"
    assert ran.stdout.splitlines()[-1].startswith(
        "0 passed, 0 failed, 0 errors, 0 skipped, 1 problem "
    )


def test_counts_are_singular_for_one(tmp_path: Path) -> None:
    make_pack(tmp_path)
    done = run(["validate"], tmp_path)
    assert (done.returncode, done.stdout) == (0, "1 pack, 1 contract, 1 case, 0 problems\n")


def test_the_exit_codes_agree_in_errors_help_readme_and_the_action_docs() -> None:
    from replaygate.cli import EPILOG
    from replaygate.core import errors

    root = Path(__file__).resolve().parents[1]
    codes = {value for name, value in vars(errors).items() if name.startswith("EXIT_")}
    assert codes == {0, 1, 2, 3, 4, 130, 143}
    in_help = {int(line.split()[0]) for line in EPILOG.splitlines() if line[:3].strip().isdigit()}
    readme = (root / "README.md").read_text().split("| exit code | meaning |", 1)[1]
    in_readme = {int(row.split("|")[1]) for row in readme.split("\n\n", 1)[0].splitlines()[2:]}
    assert in_help >= codes and in_readme == codes
    action_docs = (root / "docs/action.md").read_text()
    assert "4 for an input the action cannot use" in action_docs
    assert errors.UsageError("x").exit_code == errors.EXIT_USAGE == 4
