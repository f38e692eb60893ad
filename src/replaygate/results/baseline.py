"""The baseline file: accepted failure fingerprints, reported as known, not failing the run."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replaygate.core.errors import PackError
from replaygate.core.fingerprint import is_fingerprint
from replaygate.core.model import CaseResult, RunResult, Status
from replaygate.loading.json_reader import load_json

VERSION = 1
_TOP_KEYS = frozenset({"version", "fingerprints", "comment"})
_DESCRIPTIVE = ("pack", "contract", "case_id", "classification")  # written from the results
_ENTRY_KEYS = frozenset({"fingerprint", *_DESCRIPTIVE, "justification", "comment"})
Entry = dict[str, str]


def load_baseline(path: Path) -> frozenset[str]:
    """The fingerprints a baseline file accepts; a bad file is one PackError naming it."""
    return frozenset(load_entries(path))


def load_entries(path: Path) -> dict[str, Entry]:
    """The entries of a baseline file by fingerprint (later duplicates win)."""
    shown = str(path)
    return _entries(shown, load_json(path, shown=shown))


def _entries(shown: str, document: Any) -> dict[str, Entry]:
    if not isinstance(document, dict):
        raise PackError(shown, None, "expected an object with 'version' and 'fingerprints'")
    unknown = sorted(set(document) - _TOP_KEYS)
    if unknown:
        raise PackError(shown, None, f"unknown key {unknown[0]!r} (expected {sorted(_TOP_KEYS)})")
    version = document.get("version")
    if version != VERSION:
        raise PackError(shown, None, f"'version' must be {VERSION}, got {version!r}")
    items = document.get("fingerprints")
    if not isinstance(items, list):
        raise PackError(shown, None, "'fingerprints' must be a list of objects")
    entries = [_entry(shown, n, item) for n, item in enumerate(items)]
    return {entry["fingerprint"]: entry for entry in entries}


def _entry(shown: str, index: int, item: Any) -> Entry:
    where = f"fingerprints[{index}]"
    if not isinstance(item, dict):
        raise PackError(shown, None, f"{where}: expected an object with a 'fingerprint'")
    unknown = sorted(set(item) - _ENTRY_KEYS)
    if unknown:
        raise PackError(shown, None, f"{where}: unknown key {unknown[0]!r}")
    if not all(isinstance(value, str) for value in item.values()):
        raise PackError(shown, None, f"{where}: every value must be a string")
    if not is_fingerprint(item.get("fingerprint")):
        found = item.get("fingerprint")
        raise PackError(shown, None, f"{where}: 'fingerprint' must be 12 hex digits, got {found!r}")
    return dict(item)


def apply_baseline(result: RunResult, fingerprints: frozenset[str]) -> RunResult:
    """``result`` with every failed case whose fingerprint is accepted marked known."""
    cases = tuple(_marked(case, fingerprints) for case in result.cases)
    return dataclasses.replace(result, cases=cases)


def _marked(case: CaseResult, fingerprints: frozenset[str]) -> CaseResult:
    accepted = case.status is Status.FAILED and case.fingerprint in fingerprints
    return dataclasses.replace(case, known=True) if accepted and not case.known else case


def baseline_entries(result: RunResult, previous: Mapping[str, Entry] | None = None) -> list[Entry]:
    """An entry for every failed case of ``result``, one per fingerprint, sorted.

    Errored cases are left out: a case that cannot be evaluated always fails the
    run. Justifications and comments of ``previous`` entries are kept.
    """
    entries: dict[str, Entry] = {}
    for case in result.cases:
        if case.status is Status.FAILED and case.fingerprint:
            entries.setdefault(case.fingerprint, _described(case, previous or {}))
    return [entries[key] for key in sorted(entries)]


def render_baseline(entries: list[Entry]) -> str:
    """The baseline file for ``entries``: the same entries always give the same bytes."""
    document = {"version": VERSION, "fingerprints": entries}
    return json.dumps(document, indent=2, ensure_ascii=True) + "\n"


def _described(case: CaseResult, previous: Mapping[str, Entry]) -> Entry:
    fingerprint = case.fingerprint or ""
    entry = {"fingerprint": fingerprint, "pack": case.pack, "contract": case.contract}
    entry |= {"case_id": case.case_id, "classification": case.classification or ""}
    kept = previous.get(fingerprint, {})
    entry |= {key: kept[key] for key in ("justification", "comment") if key in kept}
    return entry
