"""`replaygate record`: send the selected cases' requests to a provider, write their recordings."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replaygate.core.errors import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, exit_on_signal
from replaygate.options.inputs import (
    add_case_targets,
    provider_option,
    provider_setup,
    refuse_untrusted_event,
)
from replaygate.options.values import job_count


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "record", help="record the selected cases' responses from a provider (writes recordings/)"
    )
    add_case_targets(
        parser, "packs, contract files, or PATH::CASE_ID for one case (default: packs)"
    )
    provider_option(parser, required=True)
    parser.add_argument(
        "--mode",
        type=_mode,
        default="record-new",
        metavar="MODE",
        help="record-new (default): only cases without a recording or with a stale one; "
        "refresh: every selected case",
    )
    parser.add_argument(
        "--jobs", type=job_count, default=4, metavar="N", help="requests in flight (default: 4)"
    )


def _mode(text: str) -> Any:
    from replaygate.providers.recorder import RecordMode

    try:
        return RecordMode(text)
    except ValueError:
        valid = ", ".join(str(mode) for mode in RecordMode)
        raise argparse.ArgumentTypeError(f"must be one of {valid}, got {text!r}") from None


def _printer(total: int) -> tuple[Callable[[Any], None], Callable[[], None]]:
    """Progress: a bar on a terminal, else one line per case."""
    from replaygate.report.escape import terminal_safe

    lock = threading.Lock()
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=total, unit="case", file=sys.stderr)
        counts: Counter[str] = Counter()

        def tick(outcome: Any) -> None:
            with lock:
                counts[str(outcome.outcome)] += 1
                bar.set_postfix(
                    recorded=counts["recorded"] + counts["stale refreshed"],
                    failed=counts["failed"],
                    refresh=False,
                )
                bar.update(1)

        return tick, bar.close

    def line(outcome: Any) -> None:
        reason = f": {outcome.reason}" if outcome.reason else ""
        with lock:
            print(terminal_safe(f"{outcome.outcome} {outcome.target}{reason}"), flush=True)

    return line, lambda: None


def summary(outcomes: Sequence[Any], seconds: float) -> str:
    """The end table: counts per outcome, the failures with their reasons, tokens per model."""
    from replaygate.providers.recorder import Outcome
    from replaygate.report.escape import terminal_safe

    counts = Counter(outcome.outcome for outcome in outcomes)
    always = (Outcome.RECORDED, Outcome.UNCHANGED, Outcome.REFRESHED, Outcome.FAILED)
    rows = [kind for kind in Outcome if counts[kind] or kind in always]
    lines = [f"{kind!s:<16}{counts[kind]:>6}" for kind in rows]
    lines += [
        terminal_safe(f"  {o.target}: {o.reason}") for o in outcomes if o.outcome is Outcome.FAILED
    ]
    written = (Outcome.RECORDED, Outcome.REFRESHED)  # their reasons are warnings
    lines += [
        terminal_safe(f"  {o.target}: warning: {o.reason}")
        for o in outcomes
        if o.outcome in written and o.reason
    ]
    not_sent = Counter(key for o in outcomes for key in o.not_sent)
    if not_sent:  # said once: most fixtures carry temperature
        counted = ", ".join(
            f"{key} ({n} {'case' if n == 1 else 'cases'})" for key, n in sorted(not_sent.items())
        )
        lines.append(f"not sent, as the provider's API no longer takes them: {counted}")
    for model, (inp, out) in sorted(_tokens(outcomes).items()):
        lines.append(terminal_safe(f"tokens {model}: {inp} in, {out} out"))
    lines.append(f"{len(outcomes)} cases in {seconds:.2f}s")
    return "\n".join(lines) + "\n"


def _tokens(outcomes: Sequence[Any]) -> dict[str, tuple[int, int]]:
    tokens: dict[str, tuple[int, int]] = {}
    for outcome in outcomes:
        usage = outcome.usage or {}
        inp, out = tokens.get(outcome.model, (0, 0))
        if usage:
            tokens[outcome.model] = (
                inp + (usage.get("input_tokens") or 0),
                out + (usage.get("output_tokens") or 0),
            )
    return tokens


def main(args: argparse.Namespace) -> int:
    from replaygate.loading.selection import select_cases
    from replaygate.options.stopping import stop_on_signals
    from replaygate.providers.recorder import Outcome, RecordOptions, record_all
    from replaygate.report.escape import terminal_safe

    refuse_untrusted_event(os.environ)
    provider = provider_setup(args, os.environ)  # a missing key stops here, before any request
    root = Path(args.root).resolve() if args.root else None
    loaded, selected = select_cases(args.paths, cwd=Path.cwd(), root=root, now=datetime.now(UTC))
    if loaded.problems:  # nothing is sent for a pack that does not load as it should
        for problem in loaded.problems:
            print(terminal_safe(str(problem)), file=sys.stderr)
        return EXIT_CONFIG
    started = time.perf_counter()
    tick, close = _printer(len(selected))
    options = RecordOptions(args.mode, args.model, args.jobs)
    try:
        with stop_on_signals(provider) as (stop, caught):
            outcomes = record_all(selected, provider, options, stop, tick)
    finally:
        close()
        provider.close()
    sys.stdout.write(summary(outcomes, time.perf_counter() - started))
    if caught:
        print(f"replaygate: stopped by {signal.Signals(caught[0]).name}", file=sys.stderr)
        return exit_on_signal(caught[0])
    return EXIT_FAILED if any(o.outcome is Outcome.FAILED for o in outcomes) else EXIT_OK
