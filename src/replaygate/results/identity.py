"""Which workflow run wrote a results file, so that `merge` takes only its own run's shards."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from replaygate.core.errors import PackError
from replaygate.core.model import RunResult

# the results file's "run" object, and the runner's variable each of its members comes from
RUN_VARIABLES = {"id": "GITHUB_RUN_ID", "attempt": "GITHUB_RUN_ATTEMPT", "sha": "GITHUB_SHA"}
Identity = Mapping[str, str]
Named = tuple[str, RunResult]  # a results file as shown, and its content


def run_identity(environ: Mapping[str, str]) -> dict[str, str] | None:
    """The workflow run this process is part of; None outside one (a variable unset)."""
    values = {key: environ.get(variable, "").strip() for key, variable in RUN_VARIABLES.items()}
    return values if all(values.values()) else None


def check_identities(named: Sequence[Named], current: Identity | None) -> None:
    """Refuse a results file that another run, or another commit, wrote.

    In a workflow run every file must be this run's, for this commit; an earlier attempt
    of it is this run's too (re-running failed jobs keeps the other shards' results).
    Outside one, the files must agree with each other.
    """
    if not named:
        return
    reference = current if current is not None else named[0][1].meta.get("run")
    for shown, result in named:
        problem = _mismatch(result.meta.get("run"), reference, current is not None)
        if problem:
            raise PackError(shown, None, problem)


def _mismatch(found: Identity | None, wanted: Identity | None, in_a_run: bool) -> str:
    if wanted is None:
        return "" if found is None else f"written by workflow run {_shown(found)}, the others not"
    if found is None:
        where = "outside this workflow run" if in_a_run else "outside a workflow run"
        return f"written {where}: only results this run wrote are merged ({_shown(wanted)})"
    if (found["id"], found["sha"]) != (wanted["id"], wanted["sha"]) or _later(found, wanted):
        return f"written by workflow run {_shown(found)}, not by {_shown(wanted)}"
    return ""


def _later(found: Identity, wanted: Identity) -> bool:
    """An attempt after the merging one: no earlier attempt could have read it."""
    numbers = found["attempt"], wanted["attempt"]
    if all(number.isascii() and number.isdigit() for number in numbers):
        return int(numbers[0]) > int(numbers[1])
    return numbers[0] != numbers[1]


def _shown(identity: Identity) -> str:
    return f"{identity['id']} attempt {identity['attempt']} for commit {identity['sha'][:12]}"
