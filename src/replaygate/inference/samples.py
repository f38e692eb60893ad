"""The recordings `infer` learns from: fixtures of the pack the contract goes into."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from replaygate.errors import ReplayGateError
from replaygate.inference.learn import Sample
from replaygate.inference.write import GoldenCase
from replaygate.loading.files import shown_path
from replaygate.loading.fixtures import load_input
from replaygate.loading.pack import Pack
from replaygate.loading.targets import PACK_FILE


def find_pack_file(contract: Path) -> Path:
    """The pack.yaml nearest above the contract to write."""
    for folder in contract.absolute().parents:
        if (folder / PACK_FILE).is_file():
            return folder / PACK_FILE
    raise ReplayGateError(
        f"no {PACK_FILE} above {contract}: write the contract into a pack's contracts folder"
    )


def read_samples(pack: Pack, paths: Sequence[str]) -> list[Sample]:
    """One sample a fixture, its response taken as `run` takes it (sidecar recording first)."""
    return [_sample(pack, path) for path in dict.fromkeys(paths)]


def _sample(pack: Pack, path: str) -> Sample:
    ref = os.path.relpath(os.path.abspath(path), pack.golden_dir)
    golden = shown_path(pack.golden_dir, pack.root)
    if ref.startswith(os.pardir) or os.path.isabs(ref):
        message = f"not in the pack's golden directory {golden}: golden cases name fixtures there"
        raise ReplayGateError(f"{path}: {message}")
    ref = ref.replace(os.sep, "/")
    loaded = load_input(pack, ref, file=path, line=None)
    if isinstance(loaded, str):
        raise ReplayGateError(loaded)
    if loaded.response is None:
        raise ReplayGateError(
            f"{path}: no recorded response (and no recording at {loaded.looked_in})"
        )
    if loaded.response["success"] is False:
        raise ReplayGateError(
            f"{path}: the recorded response is an error; infer learns from successes"
        )
    for call in loaded.calls:
        if call.malformed:
            raise ReplayGateError(f"{path}: '{call.name}': {call.malformed}")
    return Sample(ref, tuple((call.name, call.arguments) for call in loaded.calls))


def golden_cases(samples: Sequence[Sample]) -> list[GoldenCase]:
    """A golden case a sample, named after its fixture (unique)."""
    cases: list[GoldenCase] = []
    taken: set[str] = set()
    for sample in samples:
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(sample.input_ref).stem) or "recording"
        case_id, number = stem, 2
        while case_id in taken:
            case_id, number = f"{stem}-{number}", number + 1
        taken.add(case_id)
        cases.append((case_id, sample.input_ref))
    return cases
