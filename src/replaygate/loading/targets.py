"""What a command line names: packs, one contract, one case (``PATH::CASE_ID``), or the
pack of ``.replayci.yml``; and the folder they resolve against."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from replaygate.assertions.values import suggestion
from replaygate.core.errors import PackError
from replaygate.core.model import Problem
from replaygate.loading import files, yaml_reader
from replaygate.loading.contract import Contract
from replaygate.loading.model_errors import key_problem, unknown_key

PACK_FILE = "pack.yaml"
MISNAMED_PACK_FILE = "pack.yml"
CONFIG_FILE = ".replayci.yml"
CONFIG_READ = ("pack",)
CONFIG_IGNORED = ("provider", "model")  # live runs take --provider and --model instead
CONTRACT_SUFFIXES = (".yaml", ".yml")
CASE_SEPARATOR = "::"
DEFAULT_PACKS = "packs"


def split_target(text: str) -> tuple[str, str | None]:
    """``packs/p/contracts/c.yaml::case_id`` as (path, case id); a path alone as (path, None)."""
    path, separator, case = text.partition(CASE_SEPARATOR)
    return (path, case) if separator else (text, None)


Pick = tuple[Path | None, str | None]  # a contract file (None: any) and a case id (None: any)


@dataclass(slots=True)
class Selection:
    """What to run of one pack: everything, or some contracts, or some cases of them."""

    picks: set[Pick] = field(default_factory=set)
    # cases named after a folder of several packs: one pack having one is enough, so they are
    # judged over the folder (``Found.spread``); the case ids of this pack are kept for that
    spread: set[str] = field(default_factory=set)
    ids: list[str] = field(default_factory=list)

    @property
    def everything(self) -> bool:
        return (None, None) in self.picks

    def wants_contract(self, path: Path) -> bool:
        return any(contract in (None, path) for contract, _ in self.picks)

    def wants_case(self, path: Path, case: str) -> bool:
        return any(c in (None, path) and k in (None, case) for c, k in self.picks)

    def apply(self, loaded: list[tuple[Path, Contract]]) -> list[Contract]:
        """The loaded contracts (with their files) cut down to the selected cases."""
        if self.everything:
            return [contract for _, contract in loaded]
        return [
            replace(contract, golden_cases=cases)
            for path, contract in loaded
            if (cases := tuple(c for c in contract.golden_cases if self.wants_case(path, c.id)))
        ]

    def unmatched(
        self, loaded: list[tuple[Path, Contract]], chosen: list[Path], shown: str, root: Path
    ) -> list[Problem]:
        """A contract or case named on the command line that the pack does not have."""
        problems = []
        for contract_file, case in sorted(self.picks, key=str):
            where = files.shown_path(contract_file, root) if contract_file else shown
            if contract_file is not None and contract_file not in chosen:
                message = "not a contract of its pack (see pack.yaml `contracts`)"
                problems.append(Problem(where, None, message))
                continue
            ids = [
                c.id
                for path, contract in loaded
                if contract_file in (None, path)
                for c in contract.golden_cases
            ]
            if contract_file is None and case in self.spread:
                self.ids += ids
            elif case is not None and case not in ids and loaded:
                message = f"no golden case {case!r} here{suggestion(case, ids)}"
                problems.append(Problem(where, None, message))
        return problems


@dataclass(frozen=True, slots=True)
class Spread:
    """A case named after a folder of several packs (``packs::trip-3``)."""

    target: str  # the folder as named
    case: str
    packs: tuple[Path, ...]  # the pack files found in it, resolved

    def unmatched(self, selections: dict[Path, Selection]) -> Problem | None:
        """One problem when no pack of the folder has the case (none if none loaded)."""
        ids = [i for pack in self.packs for i in selections[pack].ids]
        if not ids or self.case in ids:
            return None
        message = f"no golden case {self.case!r} in any pack here{suggestion(self.case, ids)}"
        return Problem(self.target, None, message)


@dataclass(frozen=True, slots=True)
class Found:
    """The pack files named by the targets, with what to run of each."""

    packs: dict[Path, Selection]
    problems: list[Problem]
    named: dict[Path, Path]  # each pack file, resolved -> as first named (for its containment)
    spread: list[Spread] = field(default_factory=list)

    def unmatched(self) -> list[Problem]:
        """The cases named after folders of packs that no pack of the folder has; call it
        once every pack is loaded."""
        found = (spread.unmatched(self.packs) for spread in self.spread)
        return [problem for problem in found if problem is not None]


def find_packs(targets: Sequence[str], cwd: Path) -> Found:
    """pack.yaml files named by targets: a pack directory, a pack.yaml, a contract file,
    or a folder searched; any of them may end in ``::CASE_ID``."""
    found = Found({}, [], {})
    direct: set[tuple[Path, str | None]] = set()  # a pack named with a case: it must have it
    for target in targets:
        path_text, case = split_target(target)
        if case == "":
            found.problems.append(Problem(target, None, "no case id after '::'"))
            continue
        named = _pack_files(target, path_text, cwd, found.problems)
        reals = []
        for pack_file, contract in named:
            real = Path(os.path.realpath(pack_file))  # one pack however it is named: no loop
            found.packs.setdefault(real, Selection()).picks.add((contract, case))
            found.named.setdefault(real, pack_file)
            reals.append(real)
        if case is not None and len(named) > 1:  # a folder of packs
            found.spread.append(Spread(path_text, case, tuple(reals)))
        else:
            direct.update((real, case) for real in reals)
    for spread in found.spread:
        for real in spread.packs:
            if (real, spread.case) not in direct:
                found.packs[real].spread.add(spread.case)
    return found


def _pack_files(
    target: str, text: str, cwd: Path, problems: list[Problem]
) -> list[tuple[Path, Path | None]]:
    path = (cwd / text).absolute()
    if path.is_file():
        return _named_file(target, path, problems)
    if (path / PACK_FILE).is_file():
        return [(path / PACK_FILE, None)]
    if path.is_dir():
        packs = list(files.iter_pack_files(path, PACK_FILE))
        if not packs:
            problems.extend(_misnamed(path, cwd) or [Problem(target, None, "no pack.yaml found")])
        return [(pack, None) for pack in packs]
    problems.append(Problem(target, None, _no_such_path(text, cwd)))
    return []


def _no_such_path(text: str, cwd: Path) -> str:
    message = "no such pack directory, pack.yaml or contract file"
    top = files.find_repository_root(cwd)
    if top is not None and top != Path(os.path.realpath(cwd)) and (top / text).exists():
        message += (
            f" here; it exists from the repository root: name {os.path.relpath(top / text, cwd)}"
        )
    return message


def _named_file(target: str, path: Path, problems: list[Problem]) -> list[tuple[Path, Path | None]]:
    if path.name == PACK_FILE:
        return [(path, None)]
    if path.name == MISNAMED_PACK_FILE:
        problems.append(_misnamed_problem(target))
        return []
    if path.suffix in CONTRACT_SUFFIXES:
        pack = pack_above(path)
        if pack is not None:
            return [(pack, Path(os.path.realpath(path)))]
        problems.append(
            Problem(target, None, "a contract file, but no folder above it holds pack.yaml")
        )
        return []
    problems.append(Problem(target, None, "not a pack directory, pack.yaml or contract file"))
    return []


def pack_above(path: Path) -> Path | None:
    """The pack file of the nearest folder above ``path`` that holds one, within its
    repository, or None."""
    for folder in path.parents:
        if (folder / PACK_FILE).is_file():
            return folder / PACK_FILE
        if files.is_repository_root(folder):
            return None
    return None


def _misnamed(folder: Path, cwd: Path) -> list[Problem]:
    return [
        _misnamed_problem(files.shown_path(path, cwd))
        for path in files.iter_pack_files(folder, MISNAMED_PACK_FILE)
    ]


def _misnamed_problem(shown: str) -> Problem:
    return Problem(shown, None, "the pack file is named pack.yaml, not pack.yml: rename it")


@dataclass(frozen=True, slots=True)
class Defaults:
    """The targets of a command line that names none, and warnings about how they were found."""

    targets: list[str]
    warnings: list[Problem]


def default_targets(cwd: Path) -> Defaults:
    """The pack of ``.replayci.yml`` (here, else at the repository root), else the ``packs``
    folder of the repository root (of the current folder when there is no repository)."""
    top = files.find_repository_root(cwd)
    for folder in dict.fromkeys([cwd, *([top] if top else [])]):
        config = folder / CONFIG_FILE
        if os.path.lexists(config):
            shown = files.shown_path(config, top or cwd)
            contained = files.resolve_inside(
                folder, CONFIG_FILE, root=top or cwd, what="config file",
                within="the repository", file=shown, line=None,
            )  # fmt: skip
            return _read_config(contained, cwd, shown, top or cwd)
    return Defaults([os.path.relpath((top or cwd) / DEFAULT_PACKS, cwd)], [])


def _read_config(config: Path, cwd: Path, shown: str, root: Path) -> Defaults:
    data = yaml_reader.load_yaml(config, shown=shown)
    if not isinstance(data, dict):
        raise PackError(shown, 1, "expected a mapping of keys (pack: ./packs/my-pack)")
    known = (*CONFIG_READ, *CONFIG_IGNORED)
    note = "replaygate reads `pack`; `provider` and `model` are accepted and not used"
    warnings = [
        Problem(shown, yaml_reader.line_of(data, (key,)), f"{_unknown_config_key(key)}; {note}")
        for key in data
        if key not in known
    ]
    pack = data.get("pack")
    if pack is None:
        return Defaults([os.path.relpath(config.parent / DEFAULT_PACKS, cwd)], warnings)
    line = yaml_reader.line_of(data, ("pack",))
    if not isinstance(pack, str) or not pack:
        raise PackError(shown, line, "pack: expected a path")
    # a committed file names the pack: it stays in the repository, as every path a pack names
    relative = os.path.relpath(os.path.join(config.parent, pack), root)
    files.resolve_inside(
        root, relative, root=root, what="pack", within="the repository", file=shown, line=line
    )
    return Defaults([os.path.relpath(config.parent / pack, cwd)], warnings)


def _unknown_config_key(key: Any) -> str:
    if isinstance(key, str):
        return unknown_key(key, (*CONFIG_READ, *CONFIG_IGNORED), {})
    return key_problem(key)


def command_targets(paths: Sequence[str], packs: Sequence[str], cwd: Path) -> Defaults:
    """The targets named (``PATH`` arguments and ``--pack``), else the defaults."""
    named = [*paths, *packs]
    return Defaults(named, []) if named else default_targets(cwd)
