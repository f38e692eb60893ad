"""The package runs where the README says it runs: Windows lacks POSIX-only os flags."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WITHOUT_POSIX = """
import importlib, os, pkgutil
for name in ("O_NOCTTY", "O_NONBLOCK", "O_CLOEXEC", "O_NOFOLLOW", "fork", "geteuid", "mkfifo"):
    if hasattr(os, name):
        delattr(os, name)
import replaygate
for module in pkgutil.walk_packages(replaygate.__path__, "replaygate."):
    importlib.import_module(module.name)
from replaygate.cli import main
raise SystemExit(main(["validate", "packs"]))
"""


def test_every_module_imports_and_validates_without_posix_only_os_names() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_POSIX], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "7 contracts" in done.stdout and "0 problems" in done.stdout
