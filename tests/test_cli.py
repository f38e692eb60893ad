"""The command line: exit codes, one-line errors, reports, shards."""

from __future__ import annotations

import gc
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from packbuilder import CONTRACT, contract, fixture, golden_case, make_pack
from replaygate import __version__
from replaygate.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run(
        [sys.executable, "-m", "replaygate.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_version() -> None:
    done = run(["--version"], ROOT)
    assert (done.returncode, done.stdout) == (0, f"replaygate {__version__}\n")


def test_version_imports_nothing_heavy() -> None:
    code = (
        "import sys, replaygate.cli as c; c.main(['--version']); "
        "print(sorted(m for m in ('pydantic','requests','jsonpath_ng','yaml','jsonschema') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"


def test_a_failing_case_exits_1_with_the_located_failure(tmp_path: Path) -> None:
    make_pack(
        tmp_path,
        fixtures={"ok.json": fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])},
    )
    done = run(["run"], tmp_path)
    assert done.returncode == 1
    assert (
        "packs/p/contracts/c.yaml:6: $.city: 'Paris' is not equal to 'Bern' "
        "[schema_violation]" in done.stdout
    )


def test_a_broken_pack_exits_2_and_the_others_still_run(tmp_path: Path) -> None:
    make_pack(tmp_path, "good")
    make_pack(tmp_path, "bad", contract="tool: [\n")
    done = run(["run", "--json", "r.json"], tmp_path)
    assert done.returncode == 2
    results = json.loads((tmp_path / "r.json").read_text())
    assert results["totals"]["passed"] == 1
    assert results["problems"][0]["file"] == "packs/bad/contracts/c.yaml"


def test_no_pack_exits_2(tmp_path: Path) -> None:
    done = run(["run", "nowhere"], tmp_path)
    assert done.returncode == 2 and "nowhere: no such pack directory" in done.stdout


def test_a_target_name_the_system_refuses_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    """A case id of 1,500 characters makes ``PATH::CASE_ID`` longer than a file name may be."""
    make_pack(tmp_path, "p")  # the folders exist: the system reads up to the long name
    target = "packs/p/contracts/c.yaml::" + "c" * 1500
    done = run(["run", target], tmp_path)
    assert done.returncode == 2 and "c.yaml: no golden case 'ccc" in done.stdout
    assert "Traceback" not in done.stderr


def test_bad_option_is_one_line(tmp_path: Path) -> None:
    done = run(["run", "--shard", "5/4"], tmp_path)
    assert done.returncode == 4
    assert done.stderr.strip().splitlines() == [
        "replaygate: shard '5/4': K must be between 1 and N, and N at least 1"
    ]


def test_fail_on_never(tmp_path: Path) -> None:
    make_pack(tmp_path, fixtures={"ok.json": fixture([])})
    assert run(["run", "--fail-on", "never"], tmp_path).returncode == 0


BROKEN_INPUTS: dict[str, dict[str, str]] = {
    "invalid yaml": {"contracts/c.yaml": "tool: [\n"},
    "tab indentation": {"contracts/c.yaml": "tool: x\n\tgolden_cases: []\n"},
    "non utf-8": {"contracts/c.yaml": "tool: caf\xe9\n"},
    "alias bomb": {"contracts/c.yaml": "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"},
    "deep nesting": {"contracts/c.yaml": "a: " + "[" * 5000 + "]" * 5000 + "\n"},
    "two documents": {"contracts/c.yaml": CONTRACT + "---\ntool: y\n"},
    "pack.yaml list": {"pack.yaml": "- 1\n"},
    "pack.yaml empty": {"pack.yaml": ""},
    "unknown operator": {"contracts/c.yaml": CONTRACT.replace("equals:", "equalz:")},
    "bad regex": {"contracts/c.yaml": CONTRACT.replace("equals: Bern", "regex: 'a{1000000000}'")},
    "bad jsonpath": {"contracts/c.yaml": CONTRACT.replace("$.city", "$.[?(")},
    "bad allowlist": {"nr-allowlist.json": '{"version": "1.0", "entries": [{}], }'},
}


@pytest.mark.parametrize("name", sorted(BROKEN_INPUTS))
def test_broken_input_is_one_located_line_never_a_traceback(tmp_path: Path, name: str) -> None:
    pack = make_pack(tmp_path)
    for relative, text in BROKEN_INPUTS[name].items():
        (pack / relative).write_bytes(text.encode("latin-1" if name == "non utf-8" else "utf-8"))
    done = run(["run", "--junit", "j.xml", "--json", "r.json"], tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    results = json.loads((tmp_path / "r.json").read_text())
    (problem,) = results["problems"]
    assert problem["file"].startswith("packs/p/")
    assert "\n" not in problem["message"]


def test_shards_split_the_cases_stably_and_evenly(tmp_path: Path) -> None:
    make_pack(tmp_path, contract=contract(*(golden_case(f"c{i}") for i in range(7))))
    seen: list[set[str]] = []
    for k in (1, 2, 3):
        assert (
            main(
                [
                    "run",
                    "--root",
                    str(tmp_path),
                    str(tmp_path / "packs"),
                    "--shard",
                    f"{k}/3",
                    "--json",
                    str(tmp_path / f"{k}.json"),
                ]
            )
            == 0
        )
        data = json.loads((tmp_path / f"{k}.json").read_text())
        assert data["shard"] == {"index": k, "count": 3}
        seen.append({c["case_id"] for c in data["cases"]})
    assert sorted(len(s) for s in seen) == [2, 2, 3]
    assert set().union(*seen) == {f"c{i}" for i in range(7)}


def test_validate_reports_fixture_problems(tmp_path: Path) -> None:
    make_pack(tmp_path, fixtures={"ok.json": "{"})
    done = run(["validate"], tmp_path)
    assert done.returncode == 2
    assert "packs/p/golden/ok.json:1: invalid JSON" in done.stdout
    assert done.stdout.endswith("\n1 pack, 1 contract, 1 case, 1 problem\n")


PARALLEL_RUN = """
import sys
from replaygate import cli, parallel
parallel.MIN_BYTES = 1
jobs = int(sys.argv[1])
assert parallel.worth_forking(jobs, lambda: 1) == (jobs > 1), "the path under test is the one meant"
sys.exit(cli.main(["run", "--jobs", str(jobs), "--json", sys.argv[2], *sys.argv[3:]]))
"""


@pytest.mark.posix
@pytest.mark.parametrize("shard", [[], ["--shard", "2/3"]], ids=["loaded-and-judged", "shard"])
def test_parallel_evaluation_gives_the_serial_results(tmp_path: Path, shard: list[str]) -> None:
    """Forked, every contract is loaded and judged in the process that loads it (a shard
    loads them all first, then judges in shares): the results are the serial ones."""
    cases = [golden_case(f"c{i}", "bad.json" if i % 3 else "ok.json") for i in range(12)]
    bad = fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    contracts = {f"c{n}.yaml": contract(*cases) for n in range(5)}
    make_pack(tmp_path, contracts=contracts, fixtures={"ok.json": fixture(), "bad.json": bad})
    runs = []
    for jobs in ("1", "2"):
        # a fresh process: forking this one, which may run server threads, is not safe
        done = subprocess.run(
            [sys.executable, "-c", PARALLEL_RUN, jobs, f"{jobs}.json", *shard],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 1, done.stderr
        cases_seen = json.loads((tmp_path / f"{jobs}.json").read_text())["cases"]
        runs.append([{k: v for k, v in c.items() if k != "duration_s"} for c in cases_seen])
    assert len(runs[0]) == (20 if shard else 60)
    assert runs[0] == runs[1]
    assert "failed" in {c["status"] for c in runs[0]}


@pytest.mark.parametrize("command", ["run", "record"])
@pytest.mark.parametrize("value", ["0", "\u00b2", "\u0663", "\uff13", "1_0"])
def test_jobs_must_be_a_positive_ascii_number(
    capsys: pytest.CaptureFixture[str], command: str, value: str
) -> None:
    provider = ["--provider", "openai"] if command == "record" else []
    assert main([command, *provider, "--jobs", value]) == 4
    err = capsys.readouterr().err
    assert f"--jobs: must be a whole number of at least 1, got {value!r}" in err
    assert "Traceback" not in err


def _broken_validate(args: object) -> int:
    raise ZeroDivisionError("a bug")


def test_an_internal_error_prints_what_a_bug_report_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("replaygate.commands.validate.main", _broken_validate)
    assert main(["validate"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("replaygate: internal error: ZeroDivisionError: a bug\n")
    assert "Please report it" in err
    assert f"replaygate {__version__}, Python {platform.python_version()}, " in err
    assert "Traceback (most recent call last):" in err
    assert 'in _broken_validate\n    raise ZeroDivisionError("a bug")' in err


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bug in `validate`, run from a repository at tmp_path/repo, HOME at tmp_path/home."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setattr("replaygate.commands.validate.main", _broken_validate)
    return tmp_path


@pytest.mark.parametrize("state", ["state", None, "relative/state"])
def test_an_internal_error_is_also_written_to_a_log_and_stderr_says_where(
    broken: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    state: str | None,
) -> None:
    if state is not None:  # XDG_STATE_HOME when absolute; a relative one is ignored
        monkeypatch.setenv("XDG_STATE_HOME", str(broken / state) if state == "state" else state)
    assert main(["validate", "--tag", "a b"]) == 3
    err = capsys.readouterr().err
    base = broken / "state" if state == "state" else broken / "home" / ".local" / "state"
    log = base / "replaygate" / "replaygate.log"
    report, also = err.rstrip("\n").rsplit("\n", 1)
    assert also == f"replaygate: this report is also in {log}"
    assert (
        log.read_text(encoding="utf-8") == f"command: replaygate validate --tag 'a b'\n{report}\n"
    )
    assert f"replaygate {__version__}, Python {platform.python_version()}, " in report
    assert 'raise ZeroDivisionError("a bug")' in report
    assert not (broken / "repo" / "relative").exists()


def test_a_bug_log_inside_the_repository_is_not_written(
    broken: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(broken / "repo" / ".state"))
    assert main(["validate"]) == 3
    err = capsys.readouterr().err
    assert "Please report it" in err and "also in" not in err
    assert not (broken / "repo" / ".state").exists()


def test_a_bug_log_that_cannot_be_written_leaves_the_report_on_stderr(
    broken: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (broken / "state").write_text("a file where the folder would be", encoding="utf-8")
    monkeypatch.setenv("XDG_STATE_HOME", str(broken / "state"))
    assert main(["validate"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("replaygate: internal error: ZeroDivisionError: a bug\n")
    assert err.endswith("\nZeroDivisionError: a bug\n")


INTERRUPTED_RUN = """
import os, signal, sys
from replaygate import cli
from replaygate.engine import runner

evaluate = runner.run_packs

def interrupted(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, delivered while the cases are evaluated
    return evaluate(*args, **kwargs)

runner.run_packs = interrupted
# as in a terminal: a shell starts background jobs (a suite run with `&`) with SIGINT ignored
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.exit(cli.main(["run", "--json", "r.json"]))
"""


def test_ctrl_c_exits_130_with_one_line_and_no_partial_report(tmp_path: Path) -> None:
    make_pack(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_RUN], cwd=tmp_path, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (130, "")
    assert done.stderr.splitlines()[-1:] == ["replaygate: cancelled"]  # after the root line
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r.json").exists()


def test_summary_file_is_the_markdown_report(tmp_path: Path) -> None:
    bad = fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    make_pack(tmp_path, fixtures={"ok.json": bad})
    done = run(["run", "--summary", "summary.md"], tmp_path)
    assert done.returncode == 1, done.stderr
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## \u274c replaygate: 0 passed, 1 failed, 0 errors, 0 skipped")
    assert "packs/p/contracts/c.yaml:6:" in summary


@pytest.mark.parametrize("shard", ["2-4", "x/4", "1/", "/4", "1/2/3", "0/0", ""])
def test_a_malformed_shard_is_one_line_naming_it(tmp_path: Path, shard: str) -> None:
    make_pack(tmp_path)
    done = run(["run", "--shard", shard], tmp_path)
    assert done.returncode == 4  # a usage error
    (line,) = done.stderr.splitlines()
    assert line.startswith("replaygate: shard ") and repr(shard) in line


def test_the_default_jobs_are_documented_as_the_code_sets_them() -> None:
    from replaygate import parallel
    from replaygate.commands import run as run_command

    size = f"about {parallel.MIN_BYTES // 1000} KB"
    cap = f"one per CPU, at most {run_command.MAX_DEFAULT_JOBS}, for runs of {size}"
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"{cap} of contract files" in readme
    helped = " ".join(run(["run", "--help"], ROOT).stdout.split())
    assert f"at most {run_command.MAX_DEFAULT_JOBS}, for runs whose contract files" in helped
    assert f"{size} of them" in helped


def test_a_report_that_cannot_be_written_stops_no_other(tmp_path: Path) -> None:
    make_pack(tmp_path)
    (tmp_path / "results.json").mkdir()
    done = run(["run", "--json", "results.json", "--junit", "junit.xml"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "replaygate: JSON report not written: cannot write results.json: Is a directory"
    )
    assert "1 passed" in done.stdout and (tmp_path / "junit.xml").exists()


@pytest.mark.parametrize(
    ("args", "what"),
    [(["run", "--baseline", "b.json"], "baseline"), (["merge", "b.json"], "results file")],
)
def test_a_baseline_or_results_file_symlinked_out_of_the_directory_is_not_read(
    tmp_path: Path, args: list[str], what: str
) -> None:
    repo = tmp_path / "repo"
    make_pack(repo)
    (tmp_path / "secret.json").write_text('{"ghp_SECRET": 1}')
    (repo / "b.json").symlink_to(tmp_path / "secret.json")
    done = run(args, repo)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"replaygate: {what} 'b.json' leaves the working directory through a symlink"
    )
    assert "SECRET" not in done.stderr


@pytest.mark.parametrize("collecting", [True, False])
def test_run_leaves_the_collector_as_it_found_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collecting: bool
) -> None:
    """`run` pauses the collector while its modules load; a caller's setting is kept."""
    make_pack(tmp_path)
    monkeypatch.chdir(tmp_path)
    (gc.enable if collecting else gc.disable)()
    try:
        assert main(["run", "-q"]) == 0
        assert gc.isenabled() is collecting
    finally:
        gc.enable()


def test_a_run_that_judges_no_case_exits_2_naming_the_pack(tmp_path: Path) -> None:
    contract = CONTRACT.rstrip("\n") + "\n    provider_modes: [live]\n"
    make_pack(tmp_path, contract=contract)
    done = run(["run", "--json", "r.json"], tmp_path)
    assert done.returncode == 2
    results = json.loads((tmp_path / "r.json").read_text())
    assert results["problems"] == [
        {
            "file": "packs/p/pack.yaml",
            "line": None,
            "message": "no case was judged: its 1 case was skipped (provider_modes excludes "
            "'recorded'); a run that checks nothing does not pass",
        }
    ]
