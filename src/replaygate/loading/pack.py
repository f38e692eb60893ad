"""Pack loading: pack.yaml, contracts, NR allowlist; every problem collected."""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from replaygate.core.errors import PackError
from replaygate.core.model import Problem
from replaygate.loading import files, yaml_reader
from replaygate.loading.allowlist import Allowlist, load_allowlist
from replaygate.loading.contract import Contract, assertion_problems, compile_contract
from replaygate.loading.contract_files import contract_files, contracts_in, unlisted
from replaygate.loading.formats.registry import PACK_FOLDERS
from replaygate.loading.golden import unused_fixtures
from replaygate.loading.models import ContractModel, PackModel
from replaygate.loading.packs import (
    ContractBatch,
    ContractItem,
    Loaded,
    Pack,
    contract_path,
    validate,
)
from replaygate.loading.roots import Root, resolve_pack_path, root_for
from replaygate.loading.targets import Selection, find_packs


def load_contract(path: Path, pack_dir: Path, root: Path) -> Contract:
    shown = files.shown_path(path, root)
    raw = yaml_reader.load_yaml(path, shown=shown)
    if not isinstance(raw, Mapping):
        raise PackError(shown, 1, "a contract must be a mapping of keys (tool, golden_cases, ...)")
    try:
        model = validate(ContractModel, raw, shown)
    except PackError as exc:  # with the problems of its assertions on other lines
        lines = {each.line for each in exc.each()}
        found = [*exc.each(), *(e for e in assertion_problems(raw, shown) if e.line not in lines)]
        raise PackError(exc.file, exc.line, exc.message, also=tuple(found[1:])) from None
    return compile_contract(model, raw, path=contract_path(path, pack_dir, root), file=shown)


# How a contract file becomes a Contract, given the pack as far as it is loaded (its
# settings; no contracts, no allowlist yet): parsed, or (run --cache) known from a cache entry.
ContractLoader = Callable[[Path, Pack], Contract]


def parse_contract(path: Path, pack: Pack) -> Contract:
    """The contract file parsed and compiled."""
    return load_contract(path, pack.directory, pack.root)


def one_by_one(load: ContractLoader) -> ContractBatch:
    """The batch that loads each file in turn with ``load``."""

    def batch(items: Sequence[ContractItem]) -> list[Contract | list[Problem]]:
        outcomes: list[Contract | list[Problem]] = []
        for item in items:
            try:
                outcomes.append(load(item.path, item.pack))
            except PackError as exc:
                outcomes.append(exc.problems())
        return outcomes

    return batch


@dataclass(frozen=True, slots=True)
class _Layout:
    contracts_dir: Path
    golden_dir: Path
    negative_dir: Path


def _layout(model: PackModel, raw: Any, pack_dir: Path, root: Root, shown: str) -> _Layout:
    def folder(key: str, default: Path) -> Path:
        text = getattr(model.paths, key, None) if model.paths is not None else None
        if text is None:
            return default
        line = yaml_reader.line_of(raw, ("paths", key))
        return resolve_pack_path(root, pack_dir, text, what=f"paths.{key}", file=shown, line=line)

    contracts_dir = folder("contracts_dir", pack_dir / "contracts")
    golden_dir = folder("golden_dir", pack_dir / "golden")
    if not golden_dir.is_dir() and not _other_formats(pack_dir):  # e.g. @isdk alone: no golden
        raise PackError(shown, None, _no_golden_dir(golden_dir, pack_dir, root.path))
    return _Layout(
        contracts_dir, golden_dir, folder("negative_golden_dir", golden_dir / "negative")
    )


def _check_redact(paths: list[str], raw: Any, shown: str) -> None:
    if not paths:  # most packs redact nothing: the JSONPath compiler is not imported
        return
    from replaygate.assertions.jsonpath import compile_path

    for index, text in enumerate(paths):
        try:
            compile_path(text)
        except ValueError as exc:
            line = yaml_reader.line_of(raw, ("redact", index))
            raise PackError(shown, line, f"redact: {exc}") from None


def _no_golden_dir(golden_dir: Path, pack_dir: Path, root: Path) -> str:
    """One problem for every case: their fixtures are in a folder that does not exist."""
    message = (
        f"the golden directory {files.shown_path(golden_dir, root)} does not exist "
        "(fixtures are read from the pack's golden/ folder, or from paths.golden_dir)"
    )
    return message + _folder_hint(golden_dir, pack_dir, "golden_dir")


def _folder_hint(missing: Path, pack_dir: Path, key: str) -> str:
    """ "; did you mean contract/? ..." when a folder of the pack is named like ``missing``."""
    folders = [entry.name for entry in pack_dir.iterdir() if entry.is_dir()]
    close = difflib.get_close_matches(missing.name, folders, n=1)
    if not close:
        return ""
    return f"; did you mean {close[0]}/? rename it {missing.name}/, or set paths.{key}"


def _no_contract(
    model: PackModel, raw: Any, contracts_dir: Path, pack_dir: Path, root: Path, shown: str
) -> Problem:
    """Why a pack that would run nothing is a problem: a green check must have checked."""
    if model.contracts is not None:  # an empty list
        line = yaml_reader.line_of(raw, ("contracts",))
        return Problem(shown, line, "the pack has no contract: its `contracts` list is empty")
    folder = files.shown_path(contracts_dir, root)
    if not contracts_dir.is_dir():
        why = f"the contracts directory {folder} does not exist"
        why += _folder_hint(contracts_dir, pack_dir, "contracts_dir")
    else:
        why = f"the contracts directory {folder} holds no .yaml or .yml file"
    return Problem(shown, None, f"the pack has no contract: {why}")


def load_pack(
    pack_file: Path,
    root: Root,
    now: datetime,
    selection: Selection | None = None,
    load: ContractLoader = parse_contract,
) -> tuple[Pack | None, list[Problem], list[Problem]]:
    """Load a pack (the selected part of it): the pack, its problems and its warnings.

    Contracts that fail to load are problems, the others still load.
    """
    plan = _plan(pack_file, root, selection or Selection({(None, None)}), now)
    if plan.draft is None:
        return None, plan.problems, []
    return _finish(plan, one_by_one(load)(plan.items()))


@dataclass(slots=True)
class _Plan:
    """A pack read up to its contracts: which files to load, and its problems so far."""

    pack_file: Path
    root: Root
    selection: Selection
    problems: list[Problem]
    draft: Pack | None = None  # None: the pack cannot load (its problems say why)
    contract_files: list[Path] = field(default_factory=list)
    chosen: list[Path] = field(default_factory=list)
    allowlist: Allowlist = field(default_factory=Allowlist)

    def items(self) -> list[ContractItem]:
        if self.draft is None:
            return []
        return [ContractItem(path, self.draft, self.selection) for path in self.chosen]


def _plan(pack_file: Path, root: Root, selection: Selection, now: datetime) -> _Plan:
    problems: list[Problem] = []
    pack_dir = pack_file.parent
    shown = files.shown_path(pack_file, root.path)
    plan = _Plan(pack_file, root, selection, problems)
    try:
        raw = yaml_reader.load_yaml(pack_file, shown=shown)
        model: PackModel = validate(PackModel, raw if raw is not None else {}, shown)
        layout = _layout(model, raw, pack_dir, root, shown)
        # the folder's contracts, listed once (without a `contracts` list: they are the run's)
        globbed = contracts_in(layout.contracts_dir) if model.contracts is None else []
        chosen_files = contract_files(
            model, raw, layout.contracts_dir, root.path, shown, problems, globbed
        )
        _check_redact(model.redact or [], raw, shown)
    except PackError as exc:
        problems += exc.problems()
        return plan
    if selection.everything:
        left_out = unlisted(model, layout.contracts_dir, pack_dir, raw, shown, globbed)
        problems += left_out
        if not (chosen_files or model.contracts or left_out or _other_formats(pack_dir)):
            problems.append(
                _no_contract(model, raw, layout.contracts_dir, pack_dir, root.path, shown)
            )
    plan.contract_files = chosen_files
    plan.chosen = [path for path in chosen_files if selection.wants_contract(path)]
    # read before the contracts: a contract loaded in another process is judged there
    names = {contract_path(path, pack_dir, root.path) for path in chosen_files}
    plan.allowlist = load_allowlist(pack_dir, root.path, now, names, validate)
    plan.draft = replace(
        _draft(model, pack_dir, root.path, layout), allowlist=plan.allowlist.listed
    )
    return plan


def _finish(
    plan: _Plan, outcomes: Sequence[Contract | list[Problem]]
) -> tuple[Pack, list[Problem], list[Problem]]:
    """The planned pack with its chosen contracts' ``outcomes`` (in order), its @isdk
    fixtures and allowlist; its problems and warnings."""
    assert plan.draft is not None
    draft, selection, problems = plan.draft, plan.selection, plan.problems
    pack_dir, root = plan.pack_file.parent, plan.root.path
    loaded: list[tuple[Path, Contract]] = []
    for path, outcome in zip(plan.chosen, outcomes, strict=True):
        if isinstance(outcome, Contract):
            loaded.append((path, outcome))
        else:
            problems += outcome
    isdk = [
        (path, contract)
        for path, contract in _formats_contracts(pack_dir, root, problems)
        if selection.wants_contract(path)
    ]
    loaded += isdk
    chosen = plan.chosen + list(dict.fromkeys(path for path, _ in isdk))
    contracts = selection.apply(loaded)
    allowlist = plan.allowlist
    pack = replace(draft, contracts=tuple(contracts))
    shown = files.shown_path(plan.pack_file, root)
    problems += allowlist.problems + selection.unmatched(loaded, chosen, shown, root)
    warnings = list(allowlist.warnings)
    if selection.everything and not problems:
        warnings += unused_fixtures(pack)
    return pack, problems, warnings


def _draft(model: PackModel, pack_dir: Path, root: Path, layout: _Layout) -> Pack:
    """The pack before its contracts and allowlist are loaded."""
    return Pack(
        model.pack_id,
        model.name or model.pack_id,
        pack_dir,
        files.shown_path(pack_dir, root),
        root,
        layout.golden_dir,
        layout.negative_dir,
        pack_dir / "recordings",
        (),
        {},
        model.provider,
        model.default_model,
        model.recordings.max_age_days if model.recordings else 90,
        tuple(model.redact or ()),
        layout.contracts_dir,
        None if model.contracts is None else tuple(model.contracts),
    )


def _other_formats(pack_dir: Path) -> list[tuple[Path, str]]:
    """The pack's folders of other tools' files (the formats' registry), with their reader."""
    return [
        (pack_dir / name, reader)
        for name, reader in PACK_FOLDERS.items()
        if (pack_dir / name).is_dir()
    ]


def _formats_contracts(
    pack_dir: Path, root: Path, problems: list[Problem]
) -> list[tuple[Path, Contract]]:
    """The contracts of the pack's other tools' files (@isdk fixtures), each with its file.

    Most packs have none: a reader's module is imported only when its folder is there."""

    def shown(path: Path) -> tuple[str, str]:
        return files.shown_path(path, root), contract_path(path, pack_dir, root)

    found: list[tuple[Path, Contract]] = []
    for folder, reader in _other_formats(pack_dir):
        found += importlib.import_module(reader).load_fixtures(folder, root, shown, problems)
    return found


def _escape(named: Path, cwd: Path) -> Problem | None:
    """Why the pack file, as named, is not read: a symlink takes it out of the repository
    it is written in (or its folder, without one), or into ``.git``. None when it stays."""
    top = files.find_repository_root(named.parent, follow_links=False)
    if top is None:
        inside = files.is_inside_lexically(named, cwd)
        top = Path(os.path.abspath(cwd)) if inside else named.parent.parent
    relative = os.path.relpath(named, top).replace(os.sep, "/")
    try:
        files.resolve_inside(
            top, relative, root=top, what="pack file", within="the repository", file=relative,
            line=None,
        )  # fmt: skip
    except PackError as exc:
        return Problem(exc.file, exc.line, exc.message)
    return None


def load_packs(
    targets: Sequence[str],
    *,
    cwd: Path,
    root: Path | None,
    now: datetime,
    warnings: Sequence[Problem] = (),
    load: ContractBatch | None = None,
) -> Loaded:
    """Every pack under ``targets``; problems collected, the packs that load still load.

    ``load`` makes every pack's contracts in one call (default: each parsed in turn).
    """
    found = find_packs(targets, cwd)
    problems, noted = list(found.problems), list(warnings)
    roots: dict[Path, str] = {}
    planned: list[_Plan | Problem] = []  # each pack in order: its plan, or why it is not read
    for pack_file, selection in found.packs.items():
        escape = _escape(found.named[pack_file], cwd)
        if escape is not None:
            planned.append(escape)
            continue
        pack_root = root_for(pack_file, root, cwd)
        roots.setdefault(pack_root.path, pack_root.why)
        planned.append(_plan(pack_file, pack_root, selection, now))
    items = [item for plan in planned if isinstance(plan, _Plan) for item in plan.items()]
    outcomes = iter((load or one_by_one(parse_contract))(items))
    packs: list[Pack] = []
    seen: dict[str, str] = {}
    for plan in planned:
        if isinstance(plan, Problem):
            problems.append(plan)
            continue
        if plan.draft is None:
            problems += plan.problems
            continue
        pack, pack_problems, pack_warnings = _finish(plan, [next(outcomes) for _ in plan.chosen])
        problems += pack_problems
        noted += pack_warnings
        if pack.pack_id in seen:
            message = f"pack_id '{pack.pack_id}' is already used by {seen[pack.pack_id]}"
            problems.append(Problem(f"{pack.shown}/pack.yaml", None, message))
            continue
        seen[pack.pack_id] = pack.shown
        packs.append(pack)
    problems += found.unmatched()
    if not found.packs and not problems:
        problems.append(Problem(", ".join(targets), None, "no pack.yaml found"))
    return Loaded(tuple(packs), tuple(problems), tuple(noted), roots)
