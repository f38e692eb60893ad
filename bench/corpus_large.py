"""The realistic corpus with larger fixtures: each recording carries the conversation so far.

Real recordings are rarely one question: the request holds earlier turns, a tool's answer
among them. This corpus is corpus_realistic.py's (the same contracts, tools, calls and
negative cases, about ten cases a contract) with an earlier exchange of the same tools
before the last question: a fixture is about 4.5 KB, some 40 MB at 9,000 cases.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import corpus_realistic

STATUSES = ("in transit", "delayed at the hub", "out for delivery", "held at customs")


def _records(i: int, j: int) -> list[dict[str, Any]]:
    """What the search tool answered in the earlier turn: a page of records."""
    prefix = corpus_realistic.DOMAINS[i % len(corpus_realistic.DOMAINS)][:3]
    return [
        {
            "id": f"{prefix}_{i * 100 + j * 10 + n}",
            "status": STATUSES[(i + j + n) % len(STATUSES)],
            "eta": f"2026-02-{10 + n:02d}T{8 + n:02d}:30:00Z",
            "owner": {"name": f"Customer {i}-{n}", "city": "Zürich", "tier": "gold"},
            "notes": f"Record {n} of case {j}: the carrier reported a scan at the depot; "
            "the customer asked twice for an update and was promised a call back.",
        }
        for n in range(6)
    ]


def _history(i: int, j: int) -> list[dict[str, Any]]:
    """The earlier exchange: a question, the search call, its answer, the summary."""
    search, _ = corpus_realistic._names(i)
    arguments, _ = corpus_realistic._arguments(i, j)
    call = corpus_realistic._call(99, search, arguments)
    return [
        {"role": "user", "content": f"Which records of contract {i} are late this week?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(_records(i, j))},
        {
            "role": "assistant",
            "content": f"Six records of contract {i} match; two are delayed at the hub and "
            "one is held at customs. I can look up the details of any of them.",
        },
    ]


def fixture(i: int, j: int, kind: str | None) -> str:
    document = corpus_realistic.document(i, j, kind)
    system, *rest = document["request"]["messages"]
    document["request"]["messages"] = [system, *_history(i, j), *rest]
    return json.dumps(document, ensure_ascii=False)


def generate(root: Path, cases: int) -> None:
    """Write a repository of packs with `cases` golden cases in total under root/packs."""
    corpus_realistic.generate(root, cases, fixture)
