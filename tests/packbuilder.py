"""Build small packs on disk for tests: a repository root with one or more packs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONTRACT = """\
tool: get_weather
expected_tool_calls:
  - name: get_weather
    argument_invariants:
      - path: $.city
        equals: Bern
golden_cases:
  - id: ok
    input_ref: ok.json
    expect_ok: true
"""


def fixture(calls: list[dict[str, Any]] | None = None, **response: Any) -> dict[str, Any]:
    tools = [
        {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {"city": {"type": "string"}},
            },
        }
    ]
    body = {
        "success": True,
        "tool_calls": calls
        if calls is not None
        else [{"name": "get_weather", "arguments": {"city": "Bern"}}],
        **response,
    }
    return {
        "boundary_version": "1.0",
        "provider": "openai",
        "model_id": "gpt-4o-mini",
        "request": {"messages": [{"role": "user", "content": "weather?"}], "tools": tools},
        "response": body,
    }


def make_pack(
    root: Path,
    name: str = "p",
    *,
    contract: str = CONTRACT,
    contracts: dict[str, str] | None = None,
    fixtures: dict[str, Any] | None = None,
    pack_yaml: str | None = None,
) -> Path:
    """A pack at root/packs/<name>; fixtures map golden-relative paths to JSON data or text."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    pack = root / "packs" / name
    (pack / "contracts").mkdir(parents=True)
    (pack / "golden" / "negative").mkdir(parents=True)
    (pack / "pack.yaml").write_text(pack_yaml if pack_yaml is not None else f"pack_id: {name}\n")
    for file, text in (contracts or {"c.yaml": contract}).items():
        (pack / "contracts" / file).write_text(text)
    for ref, data in (fixtures if fixtures is not None else {"ok.json": fixture()}).items():
        target = pack / "golden" / ref
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(data if isinstance(data, str) else json.dumps(data))
    return pack
