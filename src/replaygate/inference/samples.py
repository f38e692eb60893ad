"""The recordings `infer` learns from: fixtures of the pack the contract goes into."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from replaygate.core.errors import ReplayGateError
from replaygate.inference.learn import Sample
from replaygate.inference.write import GoldenCase
from replaygate.loading.files import shown_path
from replaygate.loading.fixtures import load_input
from replaygate.loading.packs import Pack
from replaygate.loading.targets import CONTRACT_SUFFIXES, PACK_FILE


def find_pack_file(contract: Path) -> Path:
    """The pack.yaml nearest above the contract to write."""
    for folder in contract.absolute().parents:
        if (folder / PACK_FILE).is_file():
            return folder / PACK_FILE
    raise ReplayGateError(
        f"no {PACK_FILE} above {contract}: write the contract into a pack's contracts folder"
    )


def where_run_reads(contract: Path, pack: Pack) -> None:
    """Refuse a contract `run` would never read: outside the pack's contracts folder, or (when
    pack.yaml lists no `contracts`) not a *.yaml or *.yml file directly in it. A contract
    pack.yaml's list leaves out gets a note."""
    if pack.contracts_dir is None:
        return
    folder = pack.contracts_dir.resolve()
    target = contract.parent.resolve() / contract.name
    shown = shown_path(pack.contracts_dir, pack.root)
    if not target.is_relative_to(folder):
        raise ReplayGateError(
            f"{contract}: outside the pack's contracts folder {shown}, where `run` reads contracts"
        )
    name = target.relative_to(folder).as_posix()
    if pack.contract_list is None:
        if target.parent != folder or target.suffix not in CONTRACT_SUFFIXES:
            raise ReplayGateError(
                f"{contract}: `run` reads the *.yaml and *.yml files directly in {shown} "
                "(or those pack.yaml `contracts` lists): write it there"
            )
    elif not any((folder / listed).resolve() == target for listed in pack.contract_list):
        print(
            f"replaygate: note: pack.yaml `contracts` does not list {name!r}: add it, "
            "or `run` will not read it",
            file=sys.stderr,
        )


def read_samples(pack: Pack, paths: Sequence[str]) -> list[Sample]:
    """One sample a fixture, its response taken as `run` takes it (sidecar recording first)."""
    refs: dict[str, str] = {}
    for path in paths:  # one fixture, however it is spelt, is one sample
        refs.setdefault(_ref(pack, path), path)
    return [_sample(pack, ref, path) for ref, path in refs.items()]


def _ref(pack: Pack, path: str) -> str:
    """The fixture's path in the golden directory, as an input_ref names it."""
    ref = os.path.relpath(os.path.realpath(path), os.path.realpath(pack.golden_dir))
    golden = shown_path(pack.golden_dir, pack.root)
    if ref.startswith(os.pardir) or os.path.isabs(ref):
        message = f"not in the pack's golden directory {golden}: golden cases name fixtures there"
        raise ReplayGateError(f"{path}: {message}")
    return ref.replace(os.sep, "/")


def _sample(pack: Pack, ref: str, path: str) -> Sample:
    loaded = load_input(pack, ref, file=path, line=0)  # line 0: every problem names its file
    if isinstance(loaded, str):
        raise ReplayGateError(loaded)
    if loaded.stale is not None:  # learning from it would write a contract for another request
        raise ReplayGateError(
            f"{path}: {loaded.looked_in} answers an older request ({loaded.stale}); "
            "refresh it (replaygate record --mode refresh) or leave it out"
        )
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
