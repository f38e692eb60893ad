"""The golden cases a command names (packs, contract files, ``PATH::CASE_ID``), one by one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.pack import load_packs
from replaygate.loading.packs import Loaded, Pack
from replaygate.loading.targets import command_targets


@dataclass(frozen=True, slots=True)
class Selected:
    pack: Pack
    contract: Contract
    case: GoldenCase


def select_cases(
    targets: Sequence[str], *, cwd: Path, root: Path | None, now: datetime
) -> tuple[Loaded, list[Selected]]:
    """The loaded packs (cut down to what the targets name) and their cases, in pack order."""
    named = command_targets(targets, [], cwd)
    loaded = load_packs(named.targets, cwd=cwd, root=root, now=now, warnings=named.warnings)
    chosen = [
        Selected(pack, contract, case)
        for pack in loaded.packs
        for contract in pack.contracts
        for case in contract.golden_cases
    ]
    return loaded, chosen
