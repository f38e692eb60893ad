"""The NR allowlist (nr-allowlist.json): contracts whose failures are skipped, until a date."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replaygate.core.errors import PackError
from replaygate.core.model import Problem
from replaygate.loading import files, json_reader
from replaygate.loading.models import AllowlistModel

ALLOWLIST_FILE = "nr-allowlist.json"
Validate = Callable[[type[AllowlistModel], Any, str], AllowlistModel]


@dataclass(frozen=True, slots=True)
class Allowlist:
    listed: dict[str, str] = field(default_factory=dict)  # contract path -> why it is listed
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def load_allowlist(
    pack_dir: Path, root: Path, now: datetime, contracts: Collection[str], validate: Validate
) -> Allowlist:
    """The entries that apply; an expired entry is a warning and no longer applies."""
    path = pack_dir / ALLOWLIST_FILE
    if not os.path.lexists(path):
        return Allowlist()
    shown = files.shown_path(path, root)
    try:
        path = files.resolve_inside(
            pack_dir, ALLOWLIST_FILE, root=root, what="NR allowlist", file=shown, line=None,
            within=f"the pack directory {files.shown_path(pack_dir, root)}",
        )  # fmt: skip
        text = files.read_text(path, shown=shown, max_bytes=files.MAX_JSON_BYTES)
        model = validate(AllowlistModel, json_reader.parse_json(text, shown=shown), shown)
    except PackError as exc:
        return Allowlist(problems=exc.problems())
    found = Allowlist()
    for index, entry in enumerate(model.entries):
        line = json_reader.line_of_key(text, ("entries", index, "expiry_date"))
        where = f"entry {index} ({entry.contract_path}, owner {entry.owner})"
        expiry = _expiry(entry.expiry_date)
        listed_path = posixpath.normpath(entry.contract_path)
        if expiry is None:
            message = f"{where}: expiry_date '{entry.expiry_date}' is not an ISO 8601 date"
            found.problems.append(Problem(shown, line, message))
        elif expiry <= now:
            message = (
                f"{where} expired on {entry.expiry_date}: it no longer applies, so the "
                "contract's cases are judged normally; renew or remove it"
            )
            found.warnings.append(Problem(shown, line, message))
        elif listed_path not in contracts:
            # a typo here would otherwise allowlist nothing, silently
            line = json_reader.line_of_key(text, ("entries", index, "contract_path"))
            found.problems.append(Problem(shown, line, f"{where}: no such contract in the pack"))
        else:
            found.listed[listed_path] = f"{entry.reason_code} ({entry.owner}): {entry.rationale}"
    return found


def _expiry(text: str) -> datetime | None:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)
