"""Build the action's image with docker or podman, run it as GitHub's runner does, measure it.

Usage: python bench/bench_image.py [--engine docker|podman] [--image TAG] [--no-build]
                                   [--runs N] [--keep DIR]

Prints the image's size and layers, the cold build time, one verdict line per runner-shaped
scenario (pass, fail with check run and comment, fork 403s, fail_on never, reports in a
subfolder, docker:// without defaults) and the in-container start time of a clean run on the
shipped packs. Exits 0 when every scenario holds, 1 when one does not, 2 when no container
engine is found. Standard library only: CI runs it with the runner's own python3.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from fake_github import FakeGitHub, not_accessible  # noqa: E402  (stdlib only)

RUNNER_UID = 1001  # the `runner` user of GitHub's hosted runners
HEAD_SHA = "a" * 40
FAILING_PACK = {
    "pack.yaml": 'pack_id: "bench-failing"\nname: "bench-failing"\nversion: "0.1.0"\n'
    'schema_version: "v0.1"\nprovider: "openai"\n',
    "contracts/lookup.yaml": "tool: lookup\nassertions:\n  output_invariants:\n"
    '    - path: $.tool_calls[0].arguments.city\n      equals: "Zurich"\n'
    "golden_cases:\n  - id: bench_failing\n    input_ref: lookup.json\n    expect_ok: true\n",
    "golden/lookup.json": json.dumps(
        {
            "boundary_version": "1.0",
            "provider": "openai",
            "model_id": "m",
            "request": {"messages": [{"role": "user", "content": "Weather in Zurich?"}]},
            "response": {
                "success": True,
                "content": None,
                "tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"city": "Bern"}}],
            },
        }
    ),
}
# Inside the container: the command's wall time and CPU time (user + system; less noisy than
# wall time on a busy machine).
TIMER = (
    "import resource, subprocess, sys, time\nt = time.perf_counter()\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "wall = time.perf_counter() - t\nu = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(f'{wall:.4f} {u.ru_utime + u.ru_stime:.4f}')\n"
)


@dataclass(frozen=True)
class Scenario:
    name: str
    inputs: dict[str, str] = field(default_factory=dict)  # the step's `with:`
    failing: bool = False  # add a pack with one failing case
    fork: bool = False  # the API refuses the check run and the comment (403)
    docker_url: bool = False  # `uses: docker://`: no action.yml, so no defaults
    exit: int = 0
    conclusion: str = "success"
    warnings: int = 0


API = {"check_run": "true", "pr_comment": "true"}
SCENARIOS = [
    Scenario("pass"),
    Scenario("fail-api", API, failing=True, exit=1, conclusion="failure"),
    Scenario("fork", API, failing=True, fork=True, exit=1, conclusion="failure", warnings=2),
    Scenario("fail-never", {"fail_on": "never"}, failing=True, conclusion="neutral"),
    Scenario(
        "reports-subdir",
        {"junit_path": "reports/junit.xml", "json_path": "reports/results.json"},
        failing=True,
        exit=1,
        conclusion="failure",
    ),
    Scenario(
        "docker-url", {"check_run": "true"}, failing=True, docker_url=True, exit=1,
        conclusion="failure", warnings=1,
    ),
]  # fmt: skip


def action_defaults() -> dict[str, str]:
    """The inputs of action.yml with their defaults, as the runner fills them in."""
    section = (ROOT / "action.yml").read_text().split("\ninputs:\n", 1)[1].split("\noutputs:", 1)[0]
    defaults: dict[str, str] = {}
    for name, body in re.findall(r"^  (\w+):\n((?:    .*\n|\n)*)", section + "\n", re.MULTILINE):
        found = re.search(r"^    default: (.*)$", body, re.MULTILINE)
        defaults[name] = found.group(1).strip().strip('"') if found else ""
    return defaults


def find_engine(wanted: str | None) -> str | None:
    names = [wanted] if wanted else ["docker", "podman"]
    return next((name for name in names if shutil.which(name)), None)


def engine_run(engine: str, *args: str, check: bool = True) -> str:
    done = subprocess.run([engine, *args], capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise SystemExit(f"{engine} {' '.join(args[:2])} failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip()


def build(engine: str, tag: str) -> float:
    started = time.monotonic()
    engine_run(engine, "build", "--no-cache", "--tag", tag, str(ROOT))
    return time.monotonic() - started


def describe(engine: str, tag: str) -> list[str]:
    size = int(engine_run(engine, "image", "inspect", "--format", "{{.Size}}", tag))
    layers = engine_run(engine, "image", "inspect", "--format", "{{len .RootFS.Layers}}", tag)
    history = engine_run(engine, "history", "--format", "{{.Size}}\t{{.CreatedBy}}", tag)
    lines = [f"image {tag}: {size / 1e6:.1f} MB, {layers} layers; newest first:"]
    for row in history.splitlines():
        layer_size, created = row.split("\t", 1)
        lines.append(f"  {layer_size:>10}  {created[:90]}")
    return lines


@dataclass
class Tree:
    """A runner's _work tree: workspace, home, workflow (the event) and file commands."""

    root: Path

    def __post_init__(self) -> None:
        self.workspace = self.root / "workspace"
        self.home, self.workflow = self.root / "home", self.root / "workflow"
        self.commands = self.root / "file_commands"

    def lay_out(self, scenario: Scenario) -> None:
        shutil.copytree(ROOT / "packs", self.workspace / "packs")
        for relative, text in FAILING_PACK.items() if scenario.failing else ():
            target = self.workspace / "packs" / "bench-failing" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        for folder in (self.home, self.workflow, self.commands):
            folder.mkdir()
        repo = {"full_name": "octo-org/octo-repo"}
        pull = {"number": 7, "head": {"sha": HEAD_SHA, "repo": repo}, "base": {"repo": repo}}
        (self.workflow / "event.json").write_text(json.dumps({"number": 7, "pull_request": pull}))
        for name in ("set_output", "step_summary", "set_env", "add_path", "save_state"):
            (self.commands / name).write_text("")
        if os.geteuid() == 0:  # the runner's tree belongs to the runner user, not root
            for path in [self.root, *self.root.rglob("*")]:
                os.lchown(path, RUNNER_UID, RUNNER_UID)

    def not_owned(self) -> list[str]:
        owner = self.workspace.stat().st_uid
        others = [p for p in self.workspace.rglob("*") if p.lstat().st_uid != owner]
        return sorted(str(p.relative_to(self.workspace)) for p in others)


def environment(scenario: Scenario, api_url: str, token: str) -> dict[str, str]:
    inputs = {} if scenario.docker_url else action_defaults()
    if not scenario.docker_url:
        inputs["github_token"] = token
    inputs |= scenario.inputs
    files = "/github/file_commands"
    runner = {
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "HOME": "/github/home",
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_REPOSITORY": "octo-org/octo-repo",
        "GITHUB_SHA": "c" * 40,
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_OUTPUT": f"{files}/set_output",
        "GITHUB_STEP_SUMMARY": f"{files}/step_summary",
        "GITHUB_ENV": f"{files}/set_env",
        "GITHUB_PATH": f"{files}/add_path",
        "GITHUB_STATE": f"{files}/save_state",
    }
    return runner | {f"INPUT_{name.upper()}": value for name, value in inputs.items()}


def run_container(
    engine: str, tag: str, tree: Tree, environ: dict[str, str], command: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`docker run` as the runner words it: the four mounts, the workspace as working dir."""
    argv = [engine, "run", "--rm", "--network", "host", "--workdir", "/github/workspace"]
    for name in environ:
        argv += ["--env", name]  # names only: the values come from the environment
    for source, target in (
        (tree.home, "/github/home"),
        (tree.workflow, "/github/workflow"),
        (tree.commands, "/github/file_commands"),
        (tree.workspace, "/github/workspace"),
    ):
        argv += ["--volume", f"{source}:{target}"]
    argv += ["--entrypoint", "python", tag, "-c", TIMER, *command] if command else [tag]
    return subprocess.run(
        argv, env=os.environ | environ, capture_output=True, text=True, timeout=300, check=False
    )


def outputs(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line:
            name, delimiter = line.split("<<", 1)
            found[name] = "\n".join(iter(lines.__next__, delimiter))
    return found


def run_scenario(engine: str, tag: str, scenario: Scenario, base: Path) -> tuple[bool, str]:
    tree = Tree(base / scenario.name)
    tree.lay_out(scenario)
    with FakeGitHub() as api:
        if scenario.fork:
            api.queue("POST", "/repos/{repo}/check-runs", not_accessible())
            api.queue("GET", "/repos/{repo}/issues/7/comments", not_accessible())
        started = time.monotonic()
        done = run_container(engine, tag, tree, environment(scenario, api.url, api.token))
        wall = time.monotonic() - started
        writes = [r for r in api.requests if r.method in ("POST", "PATCH")]
    log = done.stdout + done.stderr
    found = outputs((tree.commands / "set_output").read_text())
    checks = scenario_checks(scenario, done.returncode, log, found, tree, len(writes))
    failed = [name for name, holds in checks.items() if not holds]
    counts = " ".join(f"{k}={found.get(k, '-')}" for k in ("total", "passed", "failed"))
    verdict = f"{scenario.name:<15} {'ok' if not failed else 'FAIL':<4} exit {done.returncode}"
    verdict += f" in {wall:.1f} s  {counts} conclusion={found.get('conclusion', '-')}"
    return not failed, verdict + (f"  | failed: {', '.join(failed)}" if failed else "")


def scenario_checks(
    scenario: Scenario, code: int, log: str, found: dict[str, str], tree: Tree, writes: int
) -> dict[str, bool]:
    junit = tree.workspace / scenario.inputs.get("junit_path", "replaygate-junit.xml")
    results = tree.workspace / scenario.inputs.get("json_path", "replaygate-results.json")
    commands = [line.strip() for line in log.splitlines() if line.strip().startswith("::")]
    errors = [c for c in commands if c.startswith("::error ")]
    return {
        f"exit {scenario.exit}": code == scenario.exit,
        f"conclusion {scenario.conclusion}": found.get("conclusion") == scenario.conclusion,
        "reports written": junit.is_file() and results.is_file(),
        "summary written": bool((tree.commands / "step_summary").read_text().strip()),
        "no traceback": "Traceback (most recent call last)" not in log,
        "one ::error per failure": len(errors) == (1 if scenario.failing else 0),
        f"{scenario.warnings} ::warning": len([c for c in commands if c.startswith("::warning")])
        == scenario.warnings,
        "check run and comment sent": writes == 2 if scenario.name == "fail-api" else True,
        "workspace owner owns every file": tree.not_owned() == [],
    }


def start_time(engine: str, tag: str, base: Path, runs: int) -> list[str]:
    """In-container time of the pass scenario's entrypoint, beside `python -c pass`."""
    tree = Tree(base / "timing")
    tree.lay_out(SCENARIOS[0])
    commands = {
        "entrypoint": ["python", "/app/entrypoint.py"],
        "python -c pass": ["python", "-c", "pass"],
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    with FakeGitHub() as api:
        environ = environment(SCENARIOS[0], api.url, api.token)
        for _ in range(runs):
            for name, command in commands.items():
                done = run_container(engine, tag, tree, environ, command)
                wall, cpu = done.stdout.split()[-2:]
                samples[name].append((float(wall), float(cpu)))
    ms = {
        name: [statistics.median(column) * 1000 for column in zip(*values, strict=True)]
        for name, values in samples.items()
    }
    return [
        f"in-container start to exit, clean run on packs/ (median of {runs}): "
        f"{ms['entrypoint'][0]:.0f} ms wall, {ms['entrypoint'][1]:.0f} ms CPU "
        f"[python -c pass: {ms['python -c pass'][0]:.0f} ms wall, "
        f"{ms['python -c pass'][1]:.0f} ms CPU]"
    ]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("docker", "podman"), help="default: the first found")
    parser.add_argument("--image", default="replaygate-bench:latest", help="tag to build or use")
    parser.add_argument("--no-build", action="store_true", help="use --image as it is")
    parser.add_argument("--runs", type=int, default=5, help="timed runs (default 5)")
    parser.add_argument("--keep", type=Path, help="keep the scenarios' trees in this folder")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    engine = find_engine(args.engine)
    if engine is None:
        wanted = args.engine or "docker or podman"
        print(f"bench_image: no container engine found ({wanted} on PATH): nothing was measured")
        return 2
    if not args.no_build:
        seconds = build(engine, args.image)
        print(f"cold build ({engine} build --no-cache): {seconds:.1f} s", flush=True)
    for line in describe(engine, args.image):
        print(line, flush=True)
    base = Path(tempfile.mkdtemp(prefix="replaygate-bench-", dir=args.keep))
    base.chmod(0o755)
    try:
        verdicts = [run_scenario(engine, args.image, s, base) for s in SCENARIOS]
        for _, line in verdicts:
            print(line, flush=True)
        for line in start_time(engine, args.image, base, args.runs):
            print(line, flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0 if all(ok for ok, _ in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
