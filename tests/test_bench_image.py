"""bench/bench_image.py reads action.yml as the runner does and says when it cannot measure."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench/bench_image.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_image", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_inputs_and_defaults_are_those_of_action_yml() -> None:
    declared = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    expected = {name: str(spec.get("default", "")) for name, spec in declared.items()}
    assert load_bench().action_defaults() == expected


@pytest.mark.posix  # a clean environment: Windows needs more than PATH to start Python
def test_without_a_container_engine_it_says_so_and_measures_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        env={"PATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == (
        "bench_image: no container engine found (docker or podman on PATH): nothing was measured\n"
    )
