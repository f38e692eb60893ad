"""Benchmark `replaygate run` against the time it takes only to read and parse the same files.

Usage: python bench/bench_run.py [--corpus synthetic|realistic] [--quick] [--sizes 1000,10000]
                                 [--repeat N] [--keep DIR]

Each measurement runs in a fresh subprocess (this script with --child), so peak RSS is that
of one run only. Timings exclude interpreter start-up, which is measured on its own. When
`replaygate run` has `--cache DIR`, a warm run (a second run over the same cache) is timed
too; without it, the table says the warm column is not available.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CASES_PER_CONTRACT = 10
CONTRACTS_PER_PACK = 100
NEGATIVE_EVERY = 10  # one case in ten is a negative fixture (expect_ok: false)
BASELINE_CASES = 10  # memory and time growth are measured above a run of this size

PACK_YAML = """\
pack_id: "bench-{k:04d}"
name: "synthetic pack {k}"
version: "0.1.0"
schema_version: "v0.1"
provider: "openai"
default_model: "gpt-4o-mini"
"""

CONTRACT_HEAD = """\
# Synthetic contract {i}: refund workflow, four calls in order.
tool: multi_tool_call
expect_tools:
  - lookup_customer
  - fetch_orders
  - create_refund
  - send_email
tool_order: strict
pass_threshold: 1.0
expected_tool_calls:
  - name: lookup_customer
    argument_invariants:
      - path: $.customer_id
        regex: "^cus_[0-9]+$"
      - path: $.include_history
        type: boolean
  - name: fetch_orders
    argument_invariants:
      - path: $.customer_id
        equals: "cus_{i}"
      - path: $.limit
        gte: 1
        lte: 50
  - name: create_refund
    argument_invariants:
      - path: $.amount
        type: number
        gte: 0
        lte: 10000
      - path: $.reason
        one_of: ["damaged", "late", "wrong_item"]
  - name: send_email
    argument_invariants:
      - path: $.subject
        contains: "refund"
assertions:
  output_invariants:
    - path: $.tool_calls
      length_gte: 3
    - path: $.tool_calls[0].arguments.customer_id
      exists: true
golden_cases:
"""

CASE_OK = """\
  - id: c{i}_case{j}
    input_ref: c{i}_{j}.json
    expect_ok: true
"""

CASE_NEGATIVE = """\
  - id: c{i}_case{j}_no_email
    input_ref: negative/c{i}_{j}.json
    expect_ok: false
    expected_error: "tool_not_invoked"
"""

TOOLS = json.dumps(
    [
        {
            "name": "lookup_customer",
            "description": "Look up a customer account by id, optionally with order history.",
            "parameters": {
                "type": "object",
                "properties": {
                    "customer_id": {"type": "string", "pattern": "^cus_[0-9]+$"},
                    "include_history": {"type": "boolean"},
                },
                "required": ["customer_id"],
                "additionalProperties": False,
            },
        },
        {
            "name": "fetch_orders",
            "description": "List a customer's most recent orders, newest first.",
            "parameters": {
                "type": "object",
                "properties": {
                    "customer_id": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                    "status": {"type": "string", "enum": ["open", "shipped", "delivered"]},
                },
                "required": ["customer_id"],
            },
        },
        {
            "name": "create_refund",
            "description": "Refund part or all of an order to the original payment method.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string"},
                    "amount": {"type": "number", "minimum": 0},
                    "currency": {"type": "string", "enum": ["USD", "EUR", "GBP"]},
                    "reason": {"type": "string", "enum": ["damaged", "late", "wrong_item"]},
                },
                "required": ["order_id", "amount", "reason"],
            },
        },
        {
            "name": "send_email",
            "description": "Send a transactional email to the customer.",
            "parameters": {
                "type": "object",
                "properties": {
                    "to": {"type": "string"},
                    "subject": {"type": "string", "maxLength": 120},
                    "body": {"type": "string"},
                },
                "required": ["to", "subject", "body"],
            },
        },
    ],
    indent=1,
)

SYSTEM_PROMPT = (
    "You are a customer support agent for an online store. Verify the customer, look at their "
    "recent orders, refund the affected order when the policy allows it (damaged, late or wrong "
    "item, up to the order total) and confirm by email. Never refund without checking orders."
)

CALLS = [
    ("lookup_customer", '{{"customer_id": "cus_{i}", "include_history": true}}'),
    ("fetch_orders", '{{"customer_id": "cus_{i}", "limit": 10, "status": "delivered"}}'),
    (
        "create_refund",
        '{{"order_id": "ord_{i}_{j}", "amount": {amount}, "currency": "USD", "reason": "damaged"}}',
    ),
    (
        "send_email",
        '{{"to": "customer{i}@example.com", "subject": "Your refund for order ord_{i}_{j}", '
        '"body": "We have issued a refund of {amount} USD. It will appear within 5 days."}}',
    ),
]


def fixture(i: int, j: int, negative: bool) -> str:
    """One golden fixture (~3 KB) with four tool schemas; a negative one omits the email."""
    amount = f"{(i * 7 + j * 13) % 500 + 9.99:.2f}"
    calls = CALLS[:3] if negative else CALLS
    tool_calls = [
        {
            "id": f"call_{i}_{j}_{n}",
            "type": "function",
            "function": {"name": name, "arguments": args.format(i=i, j=j, amount=amount)},
        }
        for n, (name, args) in enumerate(calls)
    ]
    user = (
        f"Hi, I'm customer cus_{i}. Order ord_{i}_{j} arrived broken (the box was crushed and "
        f"the item is cracked). I paid {amount} USD. Can I get my money back? Ticket #{j}."
    )
    messages = json.dumps(
        [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]
    )
    return (
        '{"boundary_version": "1.0", "provider": "openai", "model_id": "gpt-4o-mini",\n'
        f' "tool_schema_hash": "bench_tools_001", "messages_hash": "bench_{i}_{j}",\n'
        ' "tool_choice_mode": "required",\n'
        f' "request": {{"messages": {messages},\n "tools": {TOOLS},\n'
        ' "tool_choice": "required", "temperature": 0, "max_tokens": 1024},\n'
        f' "response": {{"success": true, "tool_calls": {json.dumps(tool_calls)}, '
        '"content": null}}\n'
    )


def write_contract(pack: Path, i: int) -> None:
    parts = [CONTRACT_HEAD.format(i=i)]
    golden = pack / "golden"
    for j in range(CASES_PER_CONTRACT):
        negative = j % NEGATIVE_EVERY == NEGATIVE_EVERY - 1
        template, target = (CASE_NEGATIVE, golden / "negative") if negative else (CASE_OK, golden)
        parts.append(template.format(i=i, j=j))
        (target / f"c{i}_{j}.json").write_text(fixture(i, j, negative), encoding="utf-8")
    (pack / "contracts" / f"refund_{i}.yaml").write_text("".join(parts), encoding="utf-8")


def generate(root: Path, cases: int) -> None:
    """Write a repository of packs with `cases` golden cases in total under root/packs."""
    contracts = max(1, cases // CASES_PER_CONTRACT)
    for i in range(contracts):
        k = i // CONTRACTS_PER_PACK
        pack = root / "packs" / f"p{k:04d}"
        if i % CONTRACTS_PER_PACK == 0:
            for sub in ("contracts", "golden/negative"):
                (pack / sub).mkdir(parents=True, exist_ok=True)
            (pack / "pack.yaml").write_text(PACK_YAML.format(k=k), encoding="utf-8")
        write_contract(pack, i)


def parse_floor(root: Path) -> None:
    """Read and parse every file under root: the floor replaygate's run is compared with."""
    import yaml

    for directory, _, names in os.walk(root / "packs"):
        for name in names:
            text = (Path(directory) / name).read_text(encoding="utf-8")
            if name.endswith(".yaml"):
                yaml.load(text, Loader=yaml.CSafeLoader)
            else:
                json.loads(text)


def replaygate_run(root: Path, options: list[str]) -> int:
    from replaygate import cli

    out = root / "out"
    out.mkdir(exist_ok=True)
    argv = ["run", *options, "--root", str(root), "--json", str(out / "results.json")]
    argv += ["--junit", str(out / "junit.xml"), str(root / "packs")]
    return cli.main(argv)


# What each mode passes to `replaygate run`; the cache modes share one cache folder, so
# "run-warm" (measured right after "run-cache") finds every result of the cold run there.
# The folder sits beside the corpus, not in it: replaygate refuses a cache inside a repository.
RUN_OPTIONS = {
    "run": [],
    "run-j1": ["--jobs", "1"],
    "run-cache": ["--cache", "{root}-cache"],
    "run-warm": ["--cache", "{root}-cache"],
}


def child(mode: str, root: Path, report: Path) -> None:
    """Measure one mode in this (fresh) process and write the figures as JSON."""
    start = time.perf_counter()
    code = 0
    if mode in RUN_OPTIONS:
        code = replaygate_run(root, [o.format(root=root) for o in RUN_OPTIONS[mode]])
    else:
        parse_floor(root)
    seconds = time.perf_counter() - start
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # forked processes (default --jobs on large runs): the largest one's peak
    workers_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    figures = {"seconds": seconds, "rss_mb": rss_mb, "workers_mb": workers_mb, "exit": code}
    report.write_text(json.dumps(figures))


@dataclass
class Measure:
    seconds: float
    rss_mb: float
    exit: int
    workers_mb: float = 0.0


def measure(mode: str, root: Path, repeat: int) -> Measure:
    """Best time of `repeat` fresh subprocesses (and the peak RSS of that run)."""
    best: Measure | None = None
    for _ in range(repeat):
        if mode == "run-cache":  # every cold run starts from an empty cache
            shutil.rmtree(f"{root}-cache", ignore_errors=True)
        (root / "out" / "results.json").unlink(missing_ok=True)  # totals() reads this run's
        report = root / f"{mode}.measure.json"
        cmd = [sys.executable, __file__, "--child", mode, str(root), str(report)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        m = Measure(**json.loads(report.read_text()))
        if m.exit >= 2:  # refused or broken: its time is no figure of a run
            raise SystemExit(f"bench: `replaygate run` in mode {mode} exited {m.exit}")
        best = m if best is None or m.seconds < best.seconds else best
    assert best is not None
    return best


def has_cache_option() -> bool:
    """Whether this replaygate's `run` takes `--cache DIR` (results kept between runs)."""
    cmd = [sys.executable, "-m", "replaygate.cli", "run", "--help"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return "--cache" in done.stdout


def totals(root: Path) -> dict[str, int]:
    """The last run's totals; empty when it wrote no results (a usage error)."""
    path = root / "out" / "results.json"
    if not path.exists():
        return {}
    return dict(json.loads(path.read_text(encoding="utf-8"))["totals"])


@dataclass
class Row:
    cases: int
    floor: Measure
    run: Measure
    run_j1: Measure
    totals: dict[str, int]
    warm: Measure | None = None  # None: this replaygate has no --cache
    cold_cache: Measure | None = None
    warm_totals: dict[str, int] | None = None


def generate_corpus(root: Path, cases: int, corpus: str) -> None:
    started = time.perf_counter()
    if corpus == "realistic":
        import corpus_realistic

        corpus_realistic.generate(root, cases)
    else:
        generate(root, cases)
    print(f"generated {cases} cases in {time.perf_counter() - started:.1f}s", file=sys.stderr)


def bench_size(base: Path, cases: int, repeat: int, corpus: str, cache: bool) -> Row:
    root = base / f"{corpus}-n{cases}"
    generate_corpus(root, cases, corpus)
    floor, run = measure("floor", root, repeat), measure("run", root, repeat)
    row = Row(cases, floor, run, measure("run-j1", root, repeat), totals(root))
    if cache:
        # one cold run fills the cache; the warm runs then find every case's result there
        row.cold_cache = measure("run-cache", root, 1)
        row.warm = measure("run-warm", root, repeat)
        row.warm_totals = totals(root)
    return row


def startup(best_of: int = 10) -> tuple[float, float]:
    """Best wall time of `replaygate --version` and of a bare interpreter, in seconds."""
    script = shutil.which("replaygate")
    version = [script] if script else [sys.executable, "-m", "replaygate.cli"]
    figures = []
    for cmd in ([*version, "--version"], [sys.executable, "-c", "pass"]):
        times = []
        for _ in range(best_of):
            start = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
        figures.append(min(times))
    return figures[0], figures[1]


def marginal(r: Row, baseline: Row) -> tuple[float, float]:
    """Seconds and MB per case above the baseline run (start-up and imports taken out)."""
    cases = r.cases - baseline.cases
    return (r.run.seconds - baseline.run.seconds) / cases, (
        r.run.rss_mb - baseline.run.rss_mb
    ) / cases


def kb_per_case(mb: float, baseline_mb: float, cases: int, baseline_cases: int) -> float:
    """Memory retained per case: peak RSS above the small run's, over the cases added."""
    return (mb - baseline_mb) * 1024 / max(1, cases - baseline_cases)


def print_table(rows: list[Row], baseline: Row) -> None:
    print(
        f"{'cases':>8} {'floor_s':>8} {'run_s':>8} {'ratio':>6} {'j1_s':>7} {'ratio1':>6} "
        f"{'warm_s':>7} {'ratioW':>6} {'floor_MB':>9} {'run_MB':>7} {'wk_MB':>6} "
        f"{'j1_MB':>6} {'KB/case':>8} {'KB/c1':>6} {'us/case':>8}  totals"
    )
    for r in rows:
        print(_row_line(r, baseline))
    (small_t, small_m), (large_t, large_m) = (
        marginal(rows[0], baseline),
        marginal(rows[-1], baseline),
    )
    print(
        f"growth {rows[-1].cases} vs {rows[0].cases} cases (per case, above a "
        f"{baseline.cases}-case run; linear = 1.0): "
        f"time {large_t / small_t:.2f}, memory {large_m / small_m:.2f}"
    )
    print(_warm_note(rows))
    print(_targets(rows[-1], baseline))


# Issue 12's targets on the 2-core machine: ratios to the floor, and memory per case.
TARGETS = {"run": 2.0, "j1": 3.0, "warm": 0.7, "kb_per_case": 3.0, "kb_per_case_j1": 3.0}


def _targets(r: Row, baseline: Row) -> str:
    """Which targets the largest size meets."""
    floor = r.floor.seconds
    figures = {
        "run": r.run.seconds / floor,
        "j1": r.run_j1.seconds / floor,
        "kb_per_case": kb_per_case(r.run.rss_mb, baseline.run.rss_mb, r.cases, baseline.cases),
        "kb_per_case_j1": kb_per_case(
            r.run_j1.rss_mb, baseline.run_j1.rss_mb, r.cases, baseline.cases
        ),
    }
    if r.warm is not None:
        figures["warm"] = r.warm.seconds / floor
    verdicts = [
        f"{name} {value:.2f} (<= {TARGETS[name]}: {'met' if value <= TARGETS[name] else 'NOT met'})"
        for name, value in figures.items()
    ]
    return f"targets at {r.cases} cases: " + "; ".join(verdicts)


def _row_line(r: Row, baseline: Row) -> str:
    floor = r.floor.seconds
    warm = f"{r.warm.seconds:>7.2f} {r.warm.seconds / floor:>6.2f}" if r.warm else f"{'n/a':>14}"
    kb = kb_per_case(r.run.rss_mb, baseline.run.rss_mb, r.cases, baseline.cases)
    kb1 = kb_per_case(r.run_j1.rss_mb, baseline.run_j1.rss_mb, r.cases, baseline.cases)
    return (
        f"{r.cases:>8} {floor:>8.2f} {r.run.seconds:>8.2f} {r.run.seconds / floor:>6.2f} "
        f"{r.run_j1.seconds:>7.2f} {r.run_j1.seconds / floor:>6.2f} {warm} "
        f"{r.floor.rss_mb:>9.0f} {r.run.rss_mb:>7.0f} {r.run.workers_mb:>6.0f} "
        f"{r.run_j1.rss_mb:>6.0f} {kb:>8.2f} {kb1:>6.2f} {r.run.seconds / r.cases * 1e6:>8.0f}  "
        f"{r.totals} exit={r.run.exit}/{r.run_j1.exit}"
    )


def _warm_note(rows: list[Row]) -> str:
    if rows[-1].warm is None:
        return "warm: not available (this replaygate's run has no --cache option)"
    parts = [
        f"{r.cases}: cold with --cache {r.cold_cache.seconds:.2f}s, warm {r.warm.seconds:.2f}s "
        f"exit={r.warm.exit} {r.warm_totals}"
        for r in rows
        if r.warm and r.cold_cache
    ]
    return "warm (a second run over the same --cache DIR): " + "; ".join(parts)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus",
        choices=("synthetic", "realistic"),
        default="synthetic",
        help="synthetic: 4 shared tool schemas; realistic: a distinct schema per contract, "
        "parallel calls, four kinds of negative case (corpus_realistic.py)",
    )
    parser.add_argument("--quick", action="store_true", help="1k and 10k cases only")
    parser.add_argument("--sizes", help="comma-separated case counts (overrides --quick)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; the best is kept")
    parser.add_argument("--keep", type=Path, help="generate under this directory (kept)")
    parser.add_argument("--child", nargs=3, metavar=("MODE", "ROOT", "REPORT"), help="internal")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        mode, root, report = args.child
        child(mode, Path(root), Path(report))
        return 0
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",")]
    base = args.keep or Path(tempfile.mkdtemp(prefix="replaygate-bench-"))
    cache = has_cache_option()
    try:
        baseline = bench_size(base, BASELINE_CASES, args.repeat, args.corpus, cache=False)
        rows = [bench_size(base, n, args.repeat, args.corpus, cache) for n in sizes]
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    version_s, python_s = startup()
    # the machine may be shared: the load says how far to trust absolute times
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(
        f"start-up: replaygate --version {version_s * 1000:.0f} ms (python -c pass: "
        f"{python_s * 1000:.0f} ms), best of 10"
    )
    print_table(rows, baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
