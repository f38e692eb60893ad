"""`replaygate run`: evaluate packs in recorded mode and report."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import gc
import importlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from replaygate.core.errors import UsageError
from replaygate.options.inputs import (
    add_peer_options,
    load_named,
    provider_option,
    provider_setup,
    refuse_untrusted_event,
)
from replaygate.options.output import stdout_report
from replaygate.options.reports import add_report_options, finish
from replaygate.options.values import job_count
from replaygate.results.verdict import nothing_judged

if TYPE_CHECKING:
    from replaygate.core.model import RunResult
    from replaygate.engine.runner import Select
    from replaygate.loading.packs import Loaded
    from replaygate.results.shard import Shard

MAX_DEFAULT_JOBS = 8  # more processes than this rarely pay for their start-up
# Objects allocated between two young collections while a run builds what it keeps to its end.
# CPython's default, 700, makes loading 1,000 contracts trigger full collections that rescan
# every contract loaded so far (bench/README.md: the collector's time fell from 0.35-0.5 s to
# about 0.1 s of a 10k-case run; 50,000 made young collections cost more again).
GC_YOUNG_THRESHOLD = 20_000


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("run", help="check every golden case of the packs")
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="pack directories, folders searched for pack.yaml, contract files; PATH::CASE_ID "
        "runs one case (default: the pack of .replayci.yml, else the repository's packs folder); "
        "ai-tester trace files and Connexity test cases, or folders of them",
    )
    parser.add_argument(
        "--pack", action="append", default=[], metavar="PATH", help="a pack to run (as PATH)"
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="repository root: pack.yaml paths resolve against it and reports name files "
        "from it (default: the nearest folder above the pack holding .git, else the pack's "
        "parent folder); PATH arguments stay relative to the current directory",
    )
    parser.add_argument("--shard", metavar="K/N", help="run only shard K of N (for a job matrix)")
    add_peer_options(parser)
    parser.add_argument(
        "--jobs",
        type=job_count,
        default=0,
        metavar="N",
        help=f"processes that load contracts and judge cases (default: one per CPU, at most "
        f"{MAX_DEFAULT_JOBS}, for runs whose contract files are large enough to pay for a "
        "process: about 250 KB of them; smaller runs use one); --jobs 1 keeps everything in "
        "one process",
    )
    provider_option(parser, required=False)
    parser.add_argument(
        "--cache",
        metavar="DIR",
        help="reuse the result of every case whose files, settings and replaygate version "
        "are unchanged since a run that stored it in DIR (a folder outside the repository); "
        "packs with symbolic links or an NR allowlist, and errored cases, are judged anew",
    )
    add_report_options(parser)


def _default_jobs() -> int:
    if not hasattr(os, "sched_getaffinity"):
        return 1
    return min(len(os.sched_getaffinity(0)), MAX_DEFAULT_JOBS)


def main(args: argparse.Namespace) -> int:
    # What this import builds (the engine, the loaders, pydantic's validators) lives as long as
    # the process: collecting while it is built finds nothing (long_lived then freezes it).
    # A cached run imports the cache's modules instead: one that judges no case never needs
    # the engine, whose import is a tenth of a warm run.
    with uncollected():
        cached = args.cache is not None
        importlib.import_module("replaygate.cache.stage" if cached else "replaygate.engine.runner")
    with long_lived():
        return _main(args)


@contextlib.contextmanager
def uncollected() -> Iterator[None]:
    """No collection while the block builds what lives to the run's end (modules, a cached
    run's contracts and results): a collection would only scan it. Frozen at the end: no
    later collection scans it either."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """Collect rarely while a run loads and judges: nearly all it allocates lives to its end.

    What exists already (the imported modules) is frozen: no collection scans it again.
    """
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def _main(args: argparse.Namespace) -> int:
    from replaygate.results.identity import run_identity
    from replaygate.results.shard import parse_shard

    stdout_report(args)  # refuses two reports on stdout before any work
    if args.cache is not None and args.provider != "recorded":
        raise UsageError("--cache: live runs are never cached; drop --cache or --provider")
    shard = parse_shard(args.shard) if args.shard is not None else None
    if args.cache is not None:
        loaded, result = _run_cached(args, shard)
    elif args.provider == "recorded":
        loaded, result = _run_recorded(args, shard)
    else:
        loaded = load_named(args)
        result = _run_live(args, loaded, _selected(loaded, shard))
    meta = dict(result.meta)
    if shard is not None:
        meta["shard"] = {"index": shard.index, "count": shard.count}
    else:  # a shard may hold no case: the other shards judge them
        result = dataclasses.replace(result, problems=result.problems + nothing_judged(result))
    identity = run_identity(os.environ)
    if identity is not None:  # so that `merge` can tell this run's shards from planted ones
        meta["run"] = identity
    roots = {str(pack.root) for pack in loaded.packs}
    if len(roots) == 1:  # the GitHub layer maps result paths from it to the workspace
        meta["root"] = roots.pop()
    return finish(dataclasses.replace(result, meta=meta), args)


def _selected(loaded: Loaded, shard: Shard | None) -> Select | None:
    """Which cases run: those of ``shard``, else all."""
    if shard is None:
        return None
    # the engine is imported where a case is judged: a warm cached run may judge none
    from replaygate.engine.runner import case_keys

    return shard.select(case_keys(loaded.packs)).__contains__


def _run_recorded(args: argparse.Namespace, shard: Shard | None) -> tuple[Loaded, RunResult]:
    """Recorded mode: each contract's cases judged as it loads, unless a shard selects the
    cases, which needs every contract loaded first."""
    from replaygate.engine.runner import JudgingLoader, run_packs
    from replaygate.loading.fixtures import load_case_input

    env, jobs = dict(os.environ), args.jobs or _default_jobs()
    source = functools.partial(load_case_input, model=args.model)
    loader = JudgingLoader(jobs, env, source) if shard is None else None
    loaded = load_named(args, loader)
    judged = loader.judged if loader is not None else None
    select = _selected(loaded, shard)
    result = run_packs(loaded, env, select, jobs=jobs, source=source, judged=judged)
    return loaded, result


def _run_cached(args: argparse.Namespace, shard: Shard | None) -> tuple[Loaded, RunResult]:
    """``--cache``: unchanged contracts known from the cache, their cases' results too."""
    from replaygate.cache.stage import run_cached, warm_contracts
    from replaygate.report.files import write_atomic

    jobs = args.jobs or _default_jobs()
    warm = warm_contracts(args.cache, dict(os.environ), args.model, jobs)
    with uncollected():  # a warm run decodes thousands of results: 3-5% of it in collections
        loaded = load_named(args, warm.batch)
    select = _selected(loaded, shard)
    env = dict(os.environ)
    result = run_cached(
        args.cache, warm, loaded, env, select, jobs=jobs, model=args.model, write=write_atomic
    )
    return loaded, result


def _run_live(args: argparse.Namespace, loaded: Any, select: Any) -> Any:
    """Live mode: the same contracts judged on fresh answers; no recording is written."""
    from replaygate.engine.runner import run_packs
    from replaygate.loading.selection import Selected
    from replaygate.options.inputs import progress_bar
    from replaygate.options.stopping import Stopped, stop_on_signals
    from replaygate.providers.live import fetch_all

    refuse_untrusted_event(os.environ)
    provider = provider_setup(args, os.environ)
    chosen = [
        Selected(pack, contract, case)
        for pack in loaded.packs
        for contract in pack.contracts
        for case in contract.golden_cases
        if select is None or select((pack.pack_id, contract.path, case.id))
    ]
    tick, close = progress_bar(len(chosen))
    try:
        with stop_on_signals(provider) as (stop, caught):
            source = fetch_all(chosen, provider, args.model, args.jobs or 4, tick, stop)
    finally:
        close()
        provider.close()
    if caught:  # no report: the cases not asked would read as failures
        raise Stopped(caught[0])
    result = run_packs(loaded, dict(os.environ), select, source=source, mode=args.provider)
    return dataclasses.replace(result, meta={**result.meta, "provider": args.provider})
