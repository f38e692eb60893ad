"""Pack discovery and loading: pack.yaml, contracts, NR allowlist; every problem collected."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from replaygate.errors import PackError
from replaygate.loading import files, json_reader, yaml_reader
from replaygate.loading.contract import Contract, compile_contract
from replaygate.loading.models import AllowlistModel, ContractModel, PackModel, validation_errors
from replaygate.results.model import PackSummary, Problem

PACK_FILE = "pack.yaml"
ALLOWLIST_FILE = "nr-allowlist.json"
ANY_VALUE_OPERATORS = ("equals", "contains", "one_of")


@dataclass(frozen=True, slots=True)
class Pack:
    pack_id: str
    name: str
    directory: Path
    shown: str  # the pack directory relative to the repository root
    root: Path
    golden_dir: Path
    negative_dir: Path
    recordings_dir: Path
    contracts: tuple[Contract, ...]
    allowlist: Mapping[str, str]  # contract path within the pack -> why it is allowlisted

    @property
    def summary(self) -> PackSummary:
        return PackSummary(self.pack_id, self.name, self.shown, len(self.contracts))


def shown_path(path: Path | str, root: Path | str) -> str:
    """``path`` relative to ``root`` with forward slashes, or as given when outside it."""
    text, top = os.fspath(path), os.fspath(root).rstrip(os.sep)
    if text == top:
        return "."
    if text.startswith(top + os.sep):
        text = text[len(top) + 1 :]
    return text.replace(os.sep, "/")


def find_packs(targets: Sequence[str], cwd: Path) -> tuple[list[Path], list[Problem]]:
    """pack.yaml files named by targets: a pack directory, a pack.yaml, or a folder searched."""
    found: list[Path] = []
    problems: list[Problem] = []
    for target in targets:
        path = (cwd / target).absolute()
        if path.is_file() and path.name == PACK_FILE:
            found.append(path)
        elif (path / PACK_FILE).is_file():
            found.append(path / PACK_FILE)
        elif path.is_dir():
            found.extend(files.iter_pack_files(path, PACK_FILE))
        else:
            problems.append(Problem(target, None, "no such pack directory"))
    unique = list(dict.fromkeys(Path(os.path.realpath(p)) for p in found))  # no loop error
    return unique, problems


def _validate(model: type[BaseModel], data: Any, shown: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = validation_errors(exc)
    loc, message = errors[0]
    surprise = yaml_reader.surprise_at(data, loc)
    if surprise is not None:
        message += f"; {yaml_reader.describe_surprise(surprise, yaml_reader.value_at(data, loc))}"
    extra = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    raise PackError(shown, yaml_reader.line_of(data, loc), message + extra)


def _pack_dir(paths: Any, key: str, default: Path, root: Path, raw: Any, shown: str) -> Path:
    text = getattr(paths, key, None) if paths is not None else None
    if text is None:
        return default
    line = yaml_reader.line_of(raw, ("paths", key))
    where = files.resolve_inside(
        root, text, root=root, what=f"paths.{key}", within="the repository", file=shown, line=line
    )
    if not where.is_dir():
        raise PackError(
            shown,
            line,
            f"paths.{key} '{text}' is not a directory "
            "(paths are resolved against the repository root)",
        )
    return where


def _contract_files(
    model: PackModel,
    raw: Any,
    contracts_dir: Path,
    root: Path,
    shown: str,
    problems: list[Problem],
) -> list[Path]:
    """The pack's contract files, each checked to stay inside the contracts directory.

    Globbed names get the same check as listed ones: a symlink named ``x.yaml``
    may point anywhere, and its text would reach the report.
    """
    names: list[tuple[str, int | None]]
    if model.contracts is None:
        names = [(p.name, None) for p in sorted(contracts_dir.glob("*.yaml"))]
    else:
        names = [
            (n, yaml_reader.line_of(raw, ("contracts", i))) for i, n in enumerate(model.contracts)
        ]
    within = f"the contracts directory {shown_path(contracts_dir, root)}"
    found: dict[Path, int | None] = {}
    for name, line in names:
        try:
            path = files.resolve_inside(
                contracts_dir,
                name,
                root=root,
                what="contract",
                within=within,
                file=shown,
                line=line,
            )
        except PackError as exc:
            problems.append(Problem(exc.file, exc.line, exc.message))
            continue
        if path in found:
            problems.append(Problem(shown, line, f"contract {name!r} is listed twice"))
            continue
        found[path] = line
    return list(found)


def contract_path(path: Path, pack_dir: Path, root: Path) -> str:
    """A contract's name in results and fingerprints: within the pack, else within the repository.

    Never absolute, so a fingerprint is the same in every checkout.
    """
    inside = shown_path(path, pack_dir)
    return inside if not os.path.isabs(inside) else shown_path(path, root)


def _surprising_operator_values(raw: Any, shown: str) -> None:
    """Refuse YAML 1.1 surprises where any type is accepted: `equals: no` is almost never false."""
    for node in yaml_reader.walk_maps(raw):
        if "path" not in node:
            continue
        for key in ANY_VALUE_OPERATORS:
            where: tuple[str | int, ...] = (key,)
            value = node.get(key)
            spots = (
                [where] + [(key, i) for i in range(len(value))]
                if isinstance(value, list)
                else [where]
            )
            for spot in spots:
                text = yaml_reader.surprise_at(node, spot)
                if text is not None:
                    raise PackError(
                        shown,
                        yaml_reader.line_of(node, spot),
                        yaml_reader.describe_surprise(text, yaml_reader.value_at(node, spot)),
                    )


def load_contract(path: Path, pack_dir: Path, root: Path) -> Contract:
    shown = shown_path(path, root)
    raw = yaml_reader.load_yaml(path, shown=shown)
    if not isinstance(raw, Mapping):
        raise PackError(shown, 1, "a contract must be a mapping of keys (tool, golden_cases, ...)")
    _surprising_operator_values(raw, shown)
    model = _validate(ContractModel, raw, shown)
    return compile_contract(model, raw, path=contract_path(path, pack_dir, root), file=shown)


def _allowlist(
    pack_dir: Path, root: Path, now: datetime, contracts: set[str], problems: list[Problem]
) -> dict[str, str]:
    path = pack_dir / ALLOWLIST_FILE
    if not path.exists():
        return {}
    shown = shown_path(path, root)
    try:
        model = _validate(AllowlistModel, json_reader.load_json(path, shown=shown), shown)
    except PackError as exc:
        problems.append(Problem(exc.file, exc.line, exc.message))
        return {}
    listed: dict[str, str] = {}
    for index, entry in enumerate(model.entries):
        expiry = _expiry(entry.expiry_date)
        where = f"entry {index} ({entry.contract_path}, owner {entry.owner})"
        if expiry is None:
            problems.append(
                Problem(
                    shown,
                    None,
                    f"{where}: expiry_date '{entry.expiry_date}' is not an ISO 8601 date",
                )
            )
        elif expiry <= now:
            problems.append(Problem(shown, None, f"{where} expired on {entry.expiry_date}"))
        elif (listed_path := posixpath.normpath(entry.contract_path)) not in contracts:
            # a typo here would otherwise allowlist nothing, silently
            problems.append(Problem(shown, None, f"{where}: no such contract in the pack"))
        else:
            listed[listed_path] = f"{entry.reason_code} ({entry.owner}): {entry.rationale}"
    return listed


def _expiry(text: str) -> datetime | None:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def load_pack(pack_file: Path, root: Path, now: datetime) -> tuple[Pack | None, list[Problem]]:
    """Load a pack; contracts that fail to load are problems, the others still load."""
    problems: list[Problem] = []
    pack_dir = pack_file.parent
    shown = shown_path(pack_file, root)
    try:
        raw = yaml_reader.load_yaml(pack_file, shown=shown)
        model: PackModel = _validate(PackModel, raw if raw is not None else {}, shown)
        paths = model.paths
        contracts_dir = _pack_dir(paths, "contracts_dir", pack_dir / "contracts", root, raw, shown)
        golden_dir = _pack_dir(paths, "golden_dir", pack_dir / "golden", root, raw, shown)
        negative = _pack_dir(
            paths, "negative_golden_dir", golden_dir / "negative", root, raw, shown
        )
        contract_files = _contract_files(model, raw, contracts_dir, root, shown, problems)
    except PackError as exc:
        return None, [*problems, Problem(exc.file, exc.line, exc.message)]
    contracts = list(_load_contracts(contract_files, pack_dir, root, problems))
    pack = Pack(
        model.pack_id,
        model.name or model.pack_id,
        pack_dir,
        shown_path(pack_dir, root),
        root,
        golden_dir,
        negative,
        pack_dir / "recordings",
        tuple(contracts),
        _allowlist(
            pack_dir,
            root,
            now,
            {contract_path(p, pack_dir, root) for p in contract_files},
            problems,
        ),
    )
    return pack, problems


def _load_contracts(
    paths: Iterable[Path], pack_dir: Path, root: Path, problems: list[Problem]
) -> Iterable[Contract]:
    for path in paths:
        try:
            yield load_contract(path, pack_dir, root)
        except PackError as exc:
            problems.append(Problem(exc.file, exc.line, exc.message))


@dataclass(frozen=True, slots=True)
class Loaded:
    packs: tuple[Pack, ...]
    problems: tuple[Problem, ...]


def _root_for(pack_file: Path, root: Path | None, cwd: Path) -> Path:
    if root is not None:
        return root
    return files.find_repository_root(pack_file.parent) or cwd


def load_packs(targets: Sequence[str], *, cwd: Path, root: Path | None, now: datetime) -> Loaded:
    """Every pack under ``targets``; problems collected, the packs that load still load."""
    pack_files, problems = find_packs(targets, cwd)
    packs: list[Pack] = []
    seen: dict[str, str] = {}
    for pack_file in pack_files:
        pack, found = load_pack(pack_file, _root_for(pack_file, root, cwd).resolve(), now)
        problems.extend(found)
        if pack is None:
            continue
        if pack.pack_id in seen:
            problems.append(
                Problem(
                    f"{pack.shown}/pack.yaml",
                    None,
                    f"pack_id '{pack.pack_id}' is already used by {seen[pack.pack_id]}",
                )
            )
            continue
        seen[pack.pack_id] = pack.shown
        packs.append(pack)
    if not pack_files and not problems:
        problems.append(Problem(", ".join(targets), None, "no pack.yaml found"))
    return Loaded(tuple(packs), tuple(problems))
