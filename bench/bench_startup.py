"""Benchmark start-up: `replaygate run packs` on the shipped packs, beside `python -c pass`.

Usage: python bench/bench_startup.py [--runs 20] [--python OTHER_VENV_PYTHON ...]

Each run is a fresh process started from this checkout's root; the commands take turns, so
a load that comes and goes on a shared machine hits them alike. Printed per command: the
median and best wall time, and the median CPU time (user + system of the child). For the run
of packs/: how many modules it imported, and which of those a small run should not need
(tests/test_cli.py holds that list at zero). ``--python`` adds the same run under another
interpreter, e.g. a venv holding the parent commit: a before/after measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The modules a run of small packs leaves alone, as tests/test_cli.py lists them.
UNNEEDED = (
    "jsonschema", "referencing", "jsonpath_ng", "requests", "urllib3", "junit_xml", "xml.etree",
    "tqdm", "ruamel", "multiprocessing", "replaygate.github.publish", "replaygate.report.json",
    "replaygate.report.junit", "replaygate.report.markdown", "replaygate.providers.wire",
    "replaygate.inference", "msgspec", "pydantic", "importlib.metadata",
    # other tools' readers (the formats' registry itself is light: every run consults it)
    "replaygate.loading.formats.isdk", "replaygate.loading.formats.isdk_expect",
    "replaygate.loading.formats.isdk_scoring", "replaygate.loading.formats.aitester",
    "replaygate.loading.formats.aitester_trace", "replaygate.loading.formats.connexity",
)  # fmt: skip
RUN = "import sys; from replaygate.cli import main; sys.exit(main(['run', 'packs', '-q']))"
COUNT = (
    "import json, sys; from replaygate.cli import main; main(['run', 'packs', '-q']); "
    "print(json.dumps(sorted(sys.modules)))"
)


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``command`` (its exit code must be 0)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench_startup: {' '.join(command)} failed: {process.stderr.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime


def modules(python: str) -> list[str]:
    done = subprocess.run([python, "-c", COUNT], cwd=ROOT, capture_output=True, check=True)
    loaded: list[str] = json.loads(done.stdout.decode().splitlines()[-1])
    return loaded


def unneeded(loaded: list[str]) -> list[str]:
    return sorted({h for m in loaded for h in UNNEEDED if m == h or m.startswith(h + ".")})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--python", action="append", default=[], metavar="PYTHON")
    args = parser.parse_args(argv)
    commands = {f"run packs ({python})": [python, "-c", RUN] for python in [sys.executable]}
    commands |= {f"run packs ({python})": [python, "-c", RUN] for python in args.python}
    commands["python -c pass"] = [sys.executable, "-c", "pass"]
    for command in commands.values():
        timed(command)  # byte code written, files cached: no run pays for that below
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, command in commands.items():
            samples[name].append(timed(command))
    for name, values in samples.items():
        walls, cpus = zip(*values, strict=True)
        print(
            f"{name}: wall median {statistics.median(walls) * 1000:.0f} ms "
            f"(best {min(walls) * 1000:.0f}), CPU median {statistics.median(cpus) * 1000:.0f} ms"
        )
    for python in [sys.executable, *args.python]:
        loaded = modules(python)
        print(f"modules after run packs ({python}): {len(loaded)}; unneeded: {unneeded(loaded)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
