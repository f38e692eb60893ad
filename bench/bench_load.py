"""Benchmark contract loading: `load_packs` on the realistic corpus, beside the YAML floor.

Usage: python bench/bench_load.py [--cases 10000] [--rounds 5] [--python OTHER_VENV_PYTHON ...]

Generates the realistic corpus (corpus_realistic.py: 1,000 contracts at 10k cases) once, then
each interpreter measures, in a fresh process, the best of a few in-process repeats of: all
packs loaded (`loading.pack.load_packs`: discovery, YAML with lines, validation, compiling);
our YAML reader alone on every contract; `yaml.load` with `CSafeLoader` on the same texts (the
floor bench_run.py parses with). Interpreters take turns, round after round, so a load that
comes and goes on a shared machine hits them alike; ``--python`` adds another venv, e.g. one
holding the parent commit, for a before/after in the same run. Figures are CPU seconds of the
process (time.process_time), less sensitive to other processes than wall time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import corpus_realistic

REPEATS = 3  # in-process repeats per round; the first pays for imports and cold caches
CHILD = """\
import json, sys, time
from datetime import datetime, timezone
from pathlib import Path
import yaml
from replaygate.loading.pack import load_packs
from replaygate.loading.yaml_reader import parse_yaml

root, repeats = Path(sys.argv[1]), int(sys.argv[2])
texts = [p.read_text() for p in sorted((root / "packs").rglob("contracts/*.yaml"))]
now = datetime.now(timezone.utc)
steps = {
    "load_packs": lambda: load_packs(["packs"], cwd=root, root=root, now=now),
    "yaml_reader": lambda: [parse_yaml(text, shown="c.yaml") for text in texts],
    "csafeloader": lambda: [yaml.load(text, Loader=yaml.CSafeLoader) for text in texts],
}
loaded = steps["load_packs"]()  # a corpus that fails to load would time nothing worth having
contracts = sum(len(pack.contracts) for pack in loaded.packs)
if loaded.problems or contracts != len(texts):
    sys.exit(f"{len(loaded.problems)} problems, {contracts} of {len(texts)} contracts loaded")
best = {}
for name, step in steps.items():
    for _ in range(repeats):
        started = time.process_time()
        step()
        spent = time.process_time() - started
        best[name] = min(best.get(name, spent), spent)
print(json.dumps(best))
"""


def measure(python: str, root: Path) -> dict[str, float]:
    done = subprocess.run(
        [python, "-c", CHILD, str(root), str(REPEATS)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"bench_load: {python} failed: {done.stderr.strip()}")
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--python", action="append", default=[], metavar="PYTHON")
    args = parser.parse_args(argv)
    pythons = [sys.executable, *args.python]
    best: dict[str, dict[str, float]] = {python: {} for python in pythons}
    with tempfile.TemporaryDirectory(prefix="replaygate-load-") as folder:
        root = Path(folder)
        corpus_realistic.generate(root, args.cases)
        for _ in range(args.rounds):
            for python in pythons:
                for name, spent in measure(python, root).items():
                    best[python][name] = min(best[python].get(name, spent), spent)
    contracts = args.cases // corpus_realistic.CASES_PER_CONTRACT
    print(f"{args.cases} cases, {contracts} contracts; best CPU seconds of {args.rounds} rounds")
    for python, figures in best.items():
        ratio = figures["yaml_reader"] / figures["csafeloader"]
        print(
            f"{python}: load_packs {figures['load_packs']:.3f}  yaml_reader "
            f"{figures['yaml_reader']:.3f}  csafeloader {figures['csafeloader']:.3f}  "
            f"reader/floor {ratio:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
