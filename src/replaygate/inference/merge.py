"""`infer --merge`: inferred assertions added to a hand-written contract, nothing overwritten."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from replaygate.assertions.jsonpath import compile_path
from replaygate.core.errors import PackError
from replaygate.inference.learn import CallRule, Inferred
from replaygate.inference.write import (
    GoldenCase,
    assertion_node,
    call_node,
    case_node,
    dump,
    new_list,
    yaml_io,
)
from replaygate.loading import yaml_reader


def merge(text: str, inferred: Inferred, cases: Sequence[GoldenCase], *, shown: str) -> str:
    """``text`` (a contract replaygate has loaded) with the inferred rules it lacks added.

    A hand-written assertion on a path covers it; an expected call of the same name and
    rank takes the inferred call's uncovered assertions; golden cases are added for
    fixtures no case names. Unchanged when nothing is missing.
    """
    doc = yaml_io().load(text)
    added = _add_calls(doc, inferred, shown) + _add_cases(doc, cases)
    if not added:
        return text
    merged = dump(doc)
    if not _keeps(
        yaml_reader.parse_yaml(merged, shown=shown), yaml_reader.parse_yaml(text, shown=shown)
    ):
        raise PackError(
            shown,
            None,
            "merging would change how a hand-written value reads back; the contract is left "
            "as it was (quote the value, then merge again)",
        )
    return merged


def _add_calls(doc: Any, inferred: Inferred, shown: str) -> int:
    """Inferred calls into the hand-written list: into the entry of the same tool and rank,
    else a new entry; under `tool_order: strict`, placed where the recordings make the call."""
    written = _section(doc, "expected_tool_calls")
    ranked = _ranked(inferred.calls)
    entries = [_entry(written, call.name, rank) for rank, call in ranked]
    ordered = doc.get("tool_order") == "strict"
    if ordered and None in entries and not _order_known(inferred):
        line = doc.lc.key("tool_order")[0] + 1
        raise PackError(
            shown,
            line,
            "tool_order is strict, but the recordings make their calls in different orders: "
            "there is no one place to add a call (add it by hand)",
        )
    added = 0
    for index, ((_, call), entry) in enumerate(zip(ranked, entries, strict=True)):
        if entry is None:
            later = next((e for e in entries[index + 1 :] if e is not None), None)
            at = len(written) if later is None or not ordered else _index(written, later)
            written.insert(at, call_node(call.name, call.rules))
            added += 1
            continue
        covered = {_path_key(a.get("path")) for a in entry.get("argument_invariants") or ()}
        missing = [rule for rule in call.rules if _path_key(rule.path) not in covered]
        if missing:
            invariants = _section(entry, "argument_invariants")
            invariants.extend(assertion_node(rule) for rule in missing)
            added += len(missing)
    return added


def _entry(written: Sequence[Any], name: str, rank: int) -> Any:
    """The hand-written expected call that is the ``rank``-th (from 0) of tool ``name``."""
    mine = [c for c in written if isinstance(c, Mapping) and c.get("name") == name]
    return mine[rank] if rank < len(mine) else None


def _index(written: Sequence[Any], entry: Any) -> int:
    return next(i for i, item in enumerate(written) if item is entry)


def _order_known(inferred: Inferred) -> bool:
    """Whether every recording makes the inferred calls in the one order they are listed in."""
    return inferred.strict_order or inferred.samples == 1 or len(inferred.calls) == 1


def _add_cases(doc: Any, cases: Sequence[GoldenCase]) -> int:
    written = _section(doc, "golden_cases")
    refs = {case.get("input_ref") for case in written if isinstance(case, Mapping)}
    ids = {case.get("id") for case in written if isinstance(case, Mapping)}
    added = 0
    for case_id, ref in cases:
        if ref in refs:
            continue
        unique, number = case_id, 2
        while unique in ids:
            unique, number = f"{case_id}-{number}", number + 1
        written.append(case_node((unique, ref)))
        ids.add(unique)
        added += 1
    return added


def _section(node: Any, key: str) -> Any:
    """The list under ``key``, created (before golden_cases, or last) when absent."""
    if key in node and node[key] is None:  # `key:` left empty
        node[key] = new_list()
    elif key not in node:
        keys = list(node)
        at = (
            keys.index("golden_cases")
            if "golden_cases" in keys and key != "golden_cases"
            else len(keys)
        )
        node.insert(at, key, new_list())
    return node[key]


def _ranked(calls: Sequence[CallRule]) -> list[tuple[int, CallRule]]:
    seen: dict[str, int] = {}
    ranked = []
    for call in calls:
        ranked.append((seen.get(call.name, 0), call))
        seen[call.name] = seen.get(call.name, 0) + 1
    return ranked


def _path_key(text: Any) -> Any:
    """Paths that name the same value alike: `$.a` and `$['a']`."""
    if not isinstance(text, str):
        return text
    try:
        compiled = compile_path(text)
    except ValueError:
        return text
    return compiled.steps if compiled.steps is not None else text


def _keeps(merged: Any, original: Any) -> bool:
    """Whether ``merged`` holds ``original`` unchanged, with only keys and items added."""
    if original is None and isinstance(merged, list):
        return True  # an empty key the merge filled
    if isinstance(original, dict):
        return isinstance(merged, dict) and all(
            key in merged and _keeps(merged[key], value) for key, value in original.items()
        )
    if isinstance(original, list):  # each item kept, in order; added ones may sit between
        remaining = iter(merged) if isinstance(merged, list) else iter(())
        return isinstance(merged, list) and all(
            any(_keeps(m, o) for m in remaining) for o in original
        )
    return type(merged) is type(original) and merged == original
