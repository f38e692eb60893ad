"""The image's entrypoint: with arguments, the `replaygate` CLI; without, the Docker action.

As the action, the INPUT_* variables become `replaygate` arguments, nothing more.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import TYPE_CHECKING, TextIO, cast

if TYPE_CHECKING:
    from replaygate.github.env import ActionInputs
    from replaygate.github.workflow import WorkflowLog

_received: list[int] = []


class Cancelled(KeyboardInterrupt):
    """The job was cancelled: the run stops where it is, report files stay whole."""


def _cancel(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    if len(_received) == 1:  # a second signal must not interrupt the cleanup of the first
        raise Cancelled(signal.Signals(signum).name)


def install_signal_handlers() -> None:
    """As PID 1 of the container, Python would ignore SIGTERM without a handler of its own."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _cancel)


def give_new_files_to_the_workspace_owner(environ: Mapping[str, str]) -> None:
    """Files and folders the run creates belong to whoever owns GITHUB_WORKSPACE.

    The runner starts the container as root: root's files could not be changed or removed
    by the job's later steps, nor by the next checkout on a self-hosted runner.
    """
    workspace = environ.get("GITHUB_WORKSPACE", "")
    if sys.platform == "win32" or os.geteuid() != 0 or not os.path.isdir(workspace):
        return
    owner = os.stat(workspace)
    if owner.st_uid != 0:
        from replaygate.report.files import give_new_files_to

        give_new_files_to(owner.st_uid, owner.st_gid)


def arguments(inputs: ActionInputs) -> list[str]:
    """The command line that does what the inputs ask: `run` on packs, or `merge` of results.

    Every path is out of reach of argparse's option syntax: values as `--option=value`, and
    the expanded globs after `--`, since a committed folder named `--baseline=x` would
    otherwise be read as an option. The token is not on it: the GitHub layer reads it from
    the environment.
    """
    from replaygate.github import env

    argv = ["merge" if inputs.merge else "run"]
    if not inputs.merge:
        argv += [f"--shard={inputs.shard}"] if inputs.shard else []
        argv += [f"--scenarios={inputs.scenarios}"] if inputs.scenarios else []
        argv += [f"--cache={inputs.cache_dir}"] if inputs.cache_dir else []
    argv += [f"--root={inputs.root}"] if inputs.root else []
    argv += [f"--junit={inputs.junit_path}", f"--json={inputs.json_path}"]
    argv += [f"--junit-family={inputs.junit_family}"]
    argv += [f"--fail-on={inputs.fail_on}", "--github"]
    argv += [f"--baseline={inputs.baseline}"] if inputs.baseline else []
    if inputs.comment_author != env.DEFAULT_AUTHOR:
        argv += [f"--comment-author={inputs.comment_author}"]
    if inputs.check_run_annotations != env.DEFAULT_CHECK_RUN_ANNOTATIONS:
        argv += [f"--check-run-annotations={inputs.check_run_annotations}"]
    if inputs.api_deadline_seconds != env.DEFAULT_API_DEADLINE:
        argv += [f"--api-deadline={inputs.api_deadline_seconds:g}"]
    flags = {
        "--no-annotations": not inputs.annotations,
        "--no-step-summary": not inputs.summary,
        "--check-run": inputs.check_run,
        "--pr-comment": inputs.pr_comment,
    }
    argv += [flag for flag, wanted in flags.items() if wanted]
    # the action never calls a provider, whatever `packs` holds
    argv += [] if inputs.merge else ["--provider=recorded"]
    return [*argv, "--", *(inputs.merge or inputs.packs)]


def main(argv: Sequence[str] = ()) -> int:
    """No arguments: the action. Arguments: the CLI, its output guarded as well inside a job."""
    from replaygate.core.errors import EXIT_CANCELLED, exit_on_signal

    install_signal_handlers()
    give_new_files_to_the_workspace_owner(os.environ)
    try:
        if argv and os.environ.get("GITHUB_ACTIONS") != "true":
            from replaygate.cli import main as cli_main

            code = cli_main(argv)  # no job around it: the output is the user's, unwrapped
        else:
            code = _guarded(argv)
    except Cancelled:
        code = EXIT_CANCELLED
    return exit_on_signal(_received[0]) if _received else code


def _guarded(argv: Sequence[str]) -> int:
    from replaygate.cli import main as cli_main
    from replaygate.github.workflow import GuardedStream, WorkflowLog

    log = WorkflowLog(sys.stdout)
    # Everything printed from here on is shown but cannot act as a workflow command;
    # the GitHub layer writes its own commands through the same log.
    sys.stdout = sys.stderr = cast(TextIO, GuardedStream(log))
    try:
        return cli_main(argv) if argv else _run_action(log)
    finally:
        log.close()


def _run_action(log: WorkflowLog) -> int:
    from replaygate.cli import main as cli_main
    from replaygate.github.env import InputError, read_inputs
    from replaygate.github.workflow import error, notice

    try:
        inputs = read_inputs(os.environ)
    except InputError as problem:
        log.command(error(str(problem), title="replaygate"))
        return problem.exit_code
    if inputs.cache and not inputs.cache_dir and not inputs.merge:
        message = "the results cache is not used on a pull request from a fork"
        log.command(notice(message, title="replaygate"))
    return cli_main(arguments(inputs))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
