"""Other tools' files named on the command line: ai-tester runs and Connexity test cases,
told apart by the formats' registry (loading/formats/registry.py)."""

from __future__ import annotations

import dataclasses
import gc
import importlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaygate.core.errors import PackError
from replaygate.core.model import Problem
from replaygate.loading import files, json_reader
from replaygate.loading.contract import Contract
from replaygate.loading.files import shown_path
from replaygate.loading.formats.registry import EXPECTED, NAMED_FILES, Kind, PeerOptions, kind_of
from replaygate.loading.pack import load_packs
from replaygate.loading.packs import ContractBatch, Loaded, Pack
from replaygate.loading.targets import MISNAMED_PACK_FILE, PACK_FILE, pack_above

if TYPE_CHECKING:
    from replaygate.loading.formats.aitester_trace import Run

# The readers of other tools' files (loading/formats/) are imported where those files are read,
# not above: their pydantic models cost a run of packs alone about 20 ms of start-up.

SNIFFED = 20  # JSON files of a folder looked at to tell it holds other tools' files


@dataclass(frozen=True, slots=True)
class _File:
    path: Path
    shown: str


def _is_peer(path: Path) -> bool:
    """A JSON file or an @isdk fixture, or a folder without any pack file whose first JSON
    files include an ai-tester trace or a Connexity test case, or that holds @isdk fixtures
    (a pack misnamed ``pack.yml`` stays a pack)."""
    try:
        if path.is_file():  # an @isdk fixture inside a pack runs as the pack's
            return path.suffix == ".json" or (
                _named_reader(path) is not None and pack_above(path) is None
            )
        folder = path.is_dir()
    except OSError:  # a name the system refuses (too long): no peer's; the run says why
        return False
    if not folder or any(
        next(files.iter_pack_files(path, name), None) is not None
        for name in (PACK_FILE, MISNAMED_PACK_FILE)
    ):
        return False
    if _named_files(path):
        return pack_above(path / PACK_FILE) is None
    return any(kind_of(_peek(found)) is not None for found in islice(_json_files(path), SNIFFED))


def _named_reader(path: Path) -> str | None:
    """The reader of a file a format knows by its name (``x.fixture.yaml``), or None."""
    return next((r for suffix, r in NAMED_FILES.items() if path.name.endswith(suffix)), None)


def _named_files(folder: Path) -> list[Path]:
    """The files directly in ``folder`` that a format knows by their name."""
    return sorted(p for p in folder.iterdir() if _named_reader(p) is not None and p.is_file())


def _peek(path: Path) -> Any:
    try:
        return json_reader.load_json(path, shown=str(path))
    except PackError:
        return None


def _json_files(folder: Path) -> Iterator[Path]:
    yield from walk(folder, (".json",))


def walk(folder: Path, suffixes: tuple[str, ...]) -> Iterator[Path]:
    """Files below ``folder`` with one of the suffixes, sorted; symlinked folders and .git
    are not entered."""
    for here, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        yield from (Path(here) / n for n in sorted(names) if n.endswith(suffixes))


def inside(folder: Path, path: Path, root: Path) -> Path:
    """``path`` found in ``folder``, refused when it is a symlink that leads out of it."""
    relative = os.path.relpath(path, folder)
    shown = shown_path(path, root)
    return files.resolve_inside(folder, relative, root=folder, what="file", file=shown, line=None)


def load_all(
    targets: Sequence[str],
    *,
    cwd: Path,
    root: Path | None,
    now: datetime,
    peers: PeerOptions,
    warnings: Sequence[Problem] = (),
    load: ContractBatch | None = None,
) -> Loaded:
    """Packs, plus ai-tester runs and Connexity test cases where a target names them;
    ``load`` makes the packs' contracts (default: each parsed in turn)."""
    is_peer = {target: _is_peer((cwd / target).absolute()) for target in targets}
    peer_paths = [(cwd / t).absolute() for t in targets if is_peer[t]]
    pack_targets = [t for t in targets if not is_peer[t]]
    if not peer_paths:
        return load_packs(targets, cwd=cwd, root=root, now=now, warnings=warnings, load=load)
    loaded = Loaded((), (), tuple(warnings))
    if pack_targets:
        loaded = load_packs(pack_targets, cwd=cwd, root=root, now=now, warnings=warnings, load=load)
    base = root or files.find_repository_root(peer_paths[0].parent) or cwd
    # Every trace is read whole and kept for the run: collecting while they are built would
    # rescan them again and again (the runner freezes them before evaluating).
    gc.disable()
    try:
        found, problems = _peer_packs(peer_paths, base.resolve(), peers)
    finally:
        gc.enable()
    return dataclasses.replace(
        loaded, packs=(*loaded.packs, *found), problems=(*loaded.problems, *problems)
    )


def _peer_packs(
    paths: list[Path], root: Path, options: PeerOptions
) -> tuple[list[Pack], list[Problem]]:
    from replaygate.loading.formats import connexity
    from replaygate.loading.formats.aitester_trace import read_run

    runs: list[tuple[Run, str]] = []  # read at once: the parsed JSON is dropped file by file
    cases: list[_File] = []
    problems: list[Problem] = []
    # @isdk fixtures, named or in a folder named (whose .results.json files are theirs)
    named_dirs = [p for p in paths if p.is_dir() and _named_files(p)]
    named = [p for p in paths if p.is_file() and _named_reader(p) is not None]
    named += [f for folder in named_dirs for f in _named_files(folder)]
    paths = [p for p in paths if p not in named and p not in named_dirs]
    found = ((p, p.parent if p.is_file() else p) for p in paths)
    for path, folder in (
        (f, d) for p, d in found for f in ([p] if p.is_file() else _json_files(p))
    ):
        if path.name.endswith(connexity.TRANSCRIPT_SUFFIX):
            continue  # read with its test case
        shown = shown_path(path, root)
        try:
            data = json_reader.load_json(inside(folder, path, root), shown=shown)
        except PackError as exc:
            problems.append(Problem(exc.file, exc.line, exc.message))
            continue
        kind = kind_of(data)
        if kind is None:
            problems.append(Problem(shown, None, EXPECTED))
        elif kind == Kind.CONNEXITY:
            cases.append(_File(path, shown))
        else:
            try:
                runs.append((read_run(data, shown), shown))
            except PackError as exc:
                problems.append(Problem(exc.file, exc.line, exc.message))
    first = paths[0] if paths else named[0]
    directory = first if first.is_dir() else first.parent
    packs = [
        _aitester_pack(runs, directory, root, options, problems) if runs else None,
        connexity.pack(cases, directory, root, options, problems) if cases else None,
        _named_pack(named, directory, root, problems) if named else None,
    ]
    return [p for p in packs if p is not None], problems


def _named_pack(
    paths: list[Path], directory: Path, root: Path, problems: list[Problem]
) -> Pack | None:
    """The @isdk fixtures named on the command line (or in a folder named), as one pack."""
    reader = importlib.import_module(_named_reader(paths[0]) or "")

    def shown(path: Path) -> tuple[str, str]:
        return shown_path(path, root), shown_path(path, directory)

    found = reader.load_files(paths, root, shown, problems)
    contracts = [contract for _, contract in found]
    return peer_pack("isdk", "@isdk fixtures", directory, root, contracts) if contracts else None


def _aitester_pack(
    found: list[tuple[Run, str]],
    directory: Path,
    root: Path,
    options: PeerOptions,
    problems: list[Problem],
) -> Pack | None:
    from replaygate.loading.formats import aitester

    by_scenario: dict[Path, list[tuple[Run, str]]] = {}
    index: dict[str, Path] | None = None
    if options.scenarios is not None and not options.scenarios.is_dir():
        missing = shown_path(options.scenarios, root)
        problems.append(Problem(missing, None, "--scenarios: no such folder"))
        index = {}
    recorded: dict[str | None, Path | None] = {}  # runs of one scenario record one path
    for run, shown in found:
        try:
            if run.scenario_path not in recorded:
                recorded[run.scenario_path] = aitester.recorded_scenario(run, root, shown)
            path = recorded[run.scenario_path]
            if path is None and options.scenarios is not None:
                if index is None:
                    scenarios = walk(options.scenarios, (".yaml", ".yml"))
                    index = aitester.scenario_index(scenarios, root, problems)
                path = index.get(run.scenario)
        except PackError as exc:
            problems.append(Problem(exc.file, exc.line, exc.message))
            continue
        if path is None:
            where = f"at {run.scenario_path!r}" if run.scenario_path else "(no path recorded)"
            hint = "" if options.scenarios else "; pass --scenarios DIR"
            message = f"scenario {run.scenario!r} not found {where}{hint}"
            problems.append(Problem(shown, None, message))
            continue
        by_scenario.setdefault(path, []).append((run, shown))
    contracts = []
    for path, runs in by_scenario.items():
        try:
            contract = aitester.load_scenario(path, directory, root, runs[0][0].budget)
        except PackError as exc:
            problems.append(Problem(exc.file, exc.line, exc.message))
            continue
        contracts.append(_with_runs(contract, runs, problems))
    if not contracts:
        return None
    return peer_pack(Kind.AI_TESTER, "ai-tester runs", directory, root, contracts)


def _with_runs(
    contract: Contract, runs: list[tuple[Run, str]], problems: list[Problem]
) -> Contract:
    from replaygate.loading.formats import aitester

    kept = []
    for run, shown in runs:
        if run.scenario != contract.tool:
            holds = f"{contract.file} holds {contract.tool!r}"
            message = f"the run is of scenario {run.scenario!r}, but {holds}"
            problems.append(Problem(shown, None, message))
        else:
            kept.append((run, shown))
    pairs = list(zip(aitester.unique_ids([run.scenario for run, _ in kept]), kept, strict=True))
    cases = tuple(aitester.case_for(contract, i, shown) for i, (_, shown) in pairs)
    inputs = {i: aitester.case_input(run, shown) for i, (run, shown) in pairs}
    return dataclasses.replace(contract, golden_cases=cases, case_inputs=inputs)


def peer_pack(
    pack_id: str, name: str, directory: Path, root: Path, contracts: list[Contract]
) -> Pack:
    """A pack of other tools' files: its contracts carry their case inputs."""
    return Pack(
        pack_id, name, directory, shown_path(directory, root), root, directory, directory,
        directory, tuple(contracts), {},
    )  # fmt: skip
