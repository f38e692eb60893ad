"""A corpus shaped like real projects: a distinct tool schema per contract, parallel calls,
several kinds of negative case, nested and array arguments.

The synthetic corpus in bench_run.py repeats four tool schemas, so every schema-dependent cost
(compiling validators, meta-validating schemas) is paid a handful of times. Real packs (and the
function-calling benchmarks they are often generated from) have about one schema per contract.
This generator builds such a corpus deterministically from the contract index, so two runs
write the same bytes. Every case is expected to pass (negative cases fail the way their
`expected_error` says), so a correct run exits 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

Fixture = Callable[[int, int, str | None], str]

CASES_PER_CONTRACT = 10
CONTRACTS_PER_PACK = 100

PACK_YAML = """\
pack_id: "real-{k:04d}"
name: "generated pack {k}"
version: "0.1.0"
schema_version: "v0.1"
provider: "openai"
default_model: "gpt-4o-mini"
"""

DOMAINS = ("flight", "hotel", "invoice", "ticket", "shipment", "patient", "repo", "sensor")
UNITS = ("celsius", "fahrenheit", "kelvin")
PRIORITIES = ("low", "normal", "high", "urgent")

# Negative kinds cycle over the last two cases of each contract.
NEGATIVES = ("wrong_tool", "malformed_arguments", "schema_violation", "tool_not_invoked")


def _names(i: int) -> tuple[str, str]:
    domain = DOMAINS[i % len(DOMAINS)]
    return f"search_{domain}_{i}", f"get_{domain}_details_{i}"


def _search_schema(i: int) -> dict[str, Any]:
    """A search tool whose shape varies with i: extra properties, bounds and nesting."""
    props: dict[str, Any] = {
        "query": {"type": "string", "minLength": 1, "maxLength": 200 + i % 50},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10 + i % 90},
        "filters": {
            "type": "object",
            "properties": {
                "priority": {"type": "string", "enum": list(PRIORITIES[: 2 + i % 3])},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5 + i % 5},
                "since": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
            },
            "additionalProperties": i % 2 == 0,
        },
    }
    for extra in range(i % 4):
        props[f"option_{i}_{extra}"] = {"type": ["string", "null"]}
    return {"type": "object", "properties": props, "required": ["query", "limit"]}


def _details_schema(i: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": f"^{DOMAINS[i % len(DOMAINS)][:3]}_[0-9]+$"},
            "unit": {"type": "string", "enum": list(UNITS)},
            "fields": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        },
        "required": ["id"],
        "additionalProperties": False,
    }


def tools(i: int) -> list[dict[str, Any]]:
    search, details = _names(i)
    return [
        {"type": "function", "function": {"name": search, "description": f"Search {i}.",
                                          "parameters": _search_schema(i)}},
        {"type": "function", "function": {"name": details, "description": f"Details {i}.",
                                          "parameters": _details_schema(i)}},
    ]  # fmt: skip


def _arguments(i: int, j: int) -> tuple[dict[str, Any], dict[str, Any]]:
    prefix = DOMAINS[i % len(DOMAINS)][:3]
    filters = {"priority": PRIORITIES[j % 2], "tags": ["a", "b"], "since": f"2026-01-0{1 + j % 9}"}
    search = {
        "query": f"case {j} of contract {i}: late delivery to Zürich",
        "limit": 1 + (i + j) % 10,
        "filters": filters,
    }
    details = {"id": f"{prefix}_{i * 100 + j}", "unit": UNITS[j % 3], "fields": ["status", "eta"]}
    return search, details


def _call(n: int, name: str, arguments: Any) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": text}}


def _calls(i: int, j: int, kind: str | None) -> list[dict[str, Any]]:
    search_name, details_name = _names(i)
    search, details = _arguments(i, j)
    if kind == "wrong_tool":
        return [_call(0, search_name, search), _call(1, f"delete_record_{i}", details)]
    if kind == "malformed_arguments":
        return [_call(0, search_name, search), _call(1, details_name, '{"id": "x", ')]
    if kind == "schema_violation":
        return [_call(0, search_name, {**search, "limit": 0}), _call(1, details_name, details)]
    if kind == "tool_not_invoked":
        return []
    return [_call(0, search_name, search), _call(1, details_name, details)]


def document(i: int, j: int, kind: str | None) -> dict[str, Any]:
    """Case j of contract i as a recording (what the fixture file holds)."""
    calls = _calls(i, j, kind)
    user = f"Case {j}: find the record for contract {i} and show its status and ETA."
    return {
        "boundary_version": "1.0",
        "provider": "openai",
        "model_id": "gpt-4o-mini",
        "tool_choice_mode": "auto",
        "request": {
            "messages": [
                {"role": "system", "content": f"You are assistant {i}. Use the tools."},
                {"role": "user", "content": user},
            ],
            "tools": tools(i),
            "tool_choice": "auto",
            "parallel_tool_calls": True,
            "temperature": 0,
        },
        "response": {
            "success": True,
            "tool_calls": calls,
            "content": None if calls else "I cannot look that up.",
        },
    }


def fixture(i: int, j: int, kind: str | None) -> str:
    return json.dumps(document(i, j, kind), ensure_ascii=False)


def contract(i: int, cases: list[tuple[int, str | None]]) -> str:
    search, details = _names(i)
    prefix = DOMAINS[i % len(DOMAINS)][:3]
    lines = [
        f"# Generated contract {i}: a search and a lookup, in parallel (any order).",
        "tool: multi_tool_call",
        f"expect_tools: [{search}, {details}]",
        "tool_order: any",
        "expected_tool_calls:",
        f"  - name: {search}",
        "    argument_invariants:",
        "      - path: $.query",
        "        type: string",
        "        length_gte: 1",
        "      - path: $.limit",
        "        gte: 1",
        f"        lte: {10 + i % 90}",
        "      - path: $.filters.priority",
        f"        one_of: [{', '.join(PRIORITIES)}]",
        f"  - name: {details}",
        "    argument_invariants:",
        "      - path: $.id",
        f'        regex: "^{prefix}_[0-9]+$"',
        "      - path: $.fields[*]",
        "        type: string",
        "assertions:",
        "  output_invariants:",
        "    - path: $.tool_calls",
        "      length_lte: 4",
        "golden_cases:",
    ]
    for j, kind in cases:
        ref = f"negative/c{i}_{j}.json" if kind else f"c{i}_{j}.json"
        lines += [f"  - id: c{i}_case{j}", f"    input_ref: {ref}"]
        if kind:
            lines += ["    expect_ok: false", f"    expected_error: {kind}"]
        else:
            lines.append("    expect_ok: true")
    return "\n".join(lines) + "\n"


def cases_of(i: int) -> list[tuple[int, str | None]]:
    """Contract i's cases: (j, the negative kind, or None for a case that passes)."""
    cases: list[tuple[int, str | None]] = []
    for j in range(CASES_PER_CONTRACT):
        negative = j >= CASES_PER_CONTRACT - 2
        cases.append((j, NEGATIVES[(i * 2 + j) % len(NEGATIVES)] if negative else None))
    return cases


def fixture_path(i: int, j: int, kind: str | None) -> str:
    """Where case j of contract i is, relative to the corpus root."""
    negative = "negative/" if kind else ""
    return f"packs/p{i // CONTRACTS_PER_PACK:04d}/golden/{negative}c{i}_{j}.json"


def expected_calls(i: int, j: int) -> list[dict[str, Any]]:
    """The calls a correct answer to case j of contract i makes (what a negative case lacks)."""
    return _calls(i, j, None)


def write_contract(root: Path, i: int, make_fixture: Fixture = fixture) -> None:
    cases = cases_of(i)
    for j, kind in cases:
        (root / fixture_path(i, j, kind)).write_text(make_fixture(i, j, kind), encoding="utf-8")
    pack = root / "packs" / f"p{i // CONTRACTS_PER_PACK:04d}"
    (pack / "contracts" / f"lookup_{i}.yaml").write_text(contract(i, cases), encoding="utf-8")


def contracts_for(cases: int) -> int:
    return max(1, cases // CASES_PER_CONTRACT)


def generate(root: Path, cases: int, make_fixture: Fixture = fixture) -> None:
    """Write a repository of packs with `cases` golden cases in total under root/packs, each
    fixture written by ``make_fixture`` (corpus_large.py's holds a longer conversation)."""
    for i in range(contracts_for(cases)):
        k = i // CONTRACTS_PER_PACK
        pack = root / "packs" / f"p{k:04d}"
        if i % CONTRACTS_PER_PACK == 0:
            for sub in ("contracts", "golden/negative"):
                (pack / sub).mkdir(parents=True, exist_ok=True)
            (pack / "pack.yaml").write_text(PACK_YAML.format(k=k), encoding="utf-8")
        write_contract(root, i, make_fixture)
