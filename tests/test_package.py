"""The package as users install it: ranges, not the lock; an sdist and a wheel that run."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# Not part of what the sdist is built from: environments, caches, build output.
LEFT_OUT = shutil.ignore_patterns(
    ".git", ".venv*", "__pycache__", "*.egg-info", ".hypothesis", "build", "dist", ".*_cache"
)


def locked() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line.split("#", 1)[0])
            (pin,) = requirement.specifier  # one exact pin a line, perhaps with a marker
            pins[canonicalize_name(requirement.name)] = pin.version
    return pins


def test_dependencies_are_ranges_that_the_lock_satisfies() -> None:
    assert "dependencies" not in PROJECT.get("dynamic", [])  # never the lock itself
    pins = locked()
    for text in PROJECT["dependencies"]:
        requirement = Requirement(text)
        assert len(requirement.specifier) == 1, text
        assert next(iter(requirement.specifier)).operator == ">=", text  # .ci/lowest reads it
        assert pins[canonicalize_name(requirement.name)] in requirement.specifier, text


def test_every_direct_dependency_of_the_lock_has_a_range() -> None:
    text = (ROOT / "requirements.lock").read_text().split("# direct", 1)[1].split("\n\n#", 1)[0]
    direct = {canonicalize_name(line.split("==")[0]) for line in text.split() if "==" in line}
    ranged = {canonicalize_name(Requirement(text).name) for text in PROJECT["dependencies"]}
    assert direct == ranged


def run(*args: str | Path, cwd: Path = ROOT) -> str:
    done = subprocess.run(
        [str(arg) for arg in args], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_sdist_and_wheel_pass_twine_and_the_wheel_runs_in_a_clean_venv(tmp_path: Path) -> None:
    source, dist, venv = tmp_path / "source", tmp_path / "dist", tmp_path / "venv"
    shutil.copytree(ROOT, source, ignore=LEFT_OUT)
    # No isolation: the backend is the one installed with the test extra, so no download.
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, source)
    built = sorted(path.name for path in dist.iterdir())
    assert [name.rsplit(".", 1)[-1] for name in built] == ["whl", "gz"], built
    assert "PASSED" in run(sys.executable, "-m", "twine", "check", "--strict", *dist.iterdir())
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    pip = (sys.executable, "-m", "pip", "--python", python)
    run(*pip, "install", "--no-deps", "--no-index", next(dist.glob("*.whl")))
    # The dependencies come from this environment, offline: a path line, not its .pth files,
    # so the editable replaygate of this checkout stays out.
    site = run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").strip()
    (Path(site) / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    run(*pip, "check")  # the ranges are met
    where = run(python, "-c", "import replaygate; print(replaygate.__file__)")
    assert where.startswith(str(venv))
    replaygate = venv / "bin" / "replaygate"
    assert run(replaygate, "--version").startswith("replaygate ")
    assert " passed, 0 failed, 0 errors" in run(replaygate, "run", "packs")
