"""A pack as loaded, and what every reader of a pack's files shares: the pack model, a
contract's name, model validation with located problems, and the batch that loads a run's
contract files. The bottom of pack loading: imports no reader."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

from pydantic_core import ValidationError

from replaygate.core.errors import PackError
from replaygate.core.model import PackSummary, Problem
from replaygate.loading import files, yaml_reader
from replaygate.loading.contract import Contract
from replaygate.loading.model_errors import validation_errors
from replaygate.loading.records import Model, Record
from replaygate.loading.targets import Selection

if TYPE_CHECKING:
    from pydantic import BaseModel


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
    provider: str | None = None
    default_model: str | None = None
    max_age_days: int = 90  # recordings older than this get a warning
    redact: tuple[str, ...] = ()  # JSONPaths into recorded responses
    contracts_dir: Path | None = None  # where `run` reads contracts (None: not a ReplayCI pack)
    contract_list: tuple[str, ...] | None = None  # pack.yaml `contracts` (None: the folder's)

    @property
    def summary(self) -> PackSummary:
        paths = {contract.path for contract in self.contracts}  # an @isdk file holds several
        return PackSummary(self.pack_id, self.name, self.shown, len(paths))


M = TypeVar("M", bound="Record | BaseModel")


def validate(model: type[M], data: Any, shown: str) -> M:
    """``data`` as ``model``; every problem located, unknown keys first, in one PackError."""
    try:
        return cast(M, model.model_validate(data))  # each kind returns its own class
    except ValidationError as exc:
        root = cast("Model", model)
        errors = validation_errors(exc, data, root, lambda loc: yaml_reader.line_of(data, loc))
    found = [
        PackError(shown, yaml_reader.line_of(data, loc), _hinted(data, loc, message))
        for loc, message in errors
    ]
    raise PackError(found[0].file, found[0].line, found[0].message, also=tuple(found[1:]))


def _hinted(data: Any, loc: tuple[str | int, ...], message: str) -> str:
    surprise = yaml_reader.surprise_at(data, loc)
    if surprise is None:
        return message
    return f"{message}; {yaml_reader.describe_surprise(surprise, yaml_reader.value_at(data, loc))}"


def contract_path(path: Path, pack_dir: Path, root: Path) -> str:
    """A contract's name in results and fingerprints: within the pack, else within the repository.

    Never absolute, so a fingerprint is the same in every checkout.
    """
    inside = files.shown_path(path, pack_dir)
    return inside if not os.path.isabs(inside) else files.shown_path(path, root)


class ContractItem(NamedTuple):
    """A chosen contract file of a run, with its pack as far as it is loaded (its settings
    and NR allowlist; no contracts) and what of the pack the command line selects."""

    path: Path
    pack: Pack
    selection: Selection


# Every chosen contract file of a run, in order: each file's Contract, or the problems that
# kept it from loading. One call for all of them, so that a run can share them out between
# processes (engine/runner.py) or know some from the results cache (cache/).
ContractBatch = Callable[[Sequence[ContractItem]], list["Contract | list[Problem]"]]


@dataclass(frozen=True, slots=True)
class Loaded:
    packs: tuple[Pack, ...]
    problems: tuple[Problem, ...]
    warnings: tuple[Problem, ...] = ()
    roots: Mapping[Path, str] = field(default_factory=dict)  # each root used, and why
