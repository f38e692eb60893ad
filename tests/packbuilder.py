"""Build small packs on disk for tests: a repository root with one or more packs.

CONTRACT is a get_weather contract with one case (ok.json); HEAD is its tool and expected
call, for a test that writes its own cases: contract(golden_case("a"), golden_case("b", ...)).
fixture() is an OpenAI fixture that calls get_weather; request_only() has no response, as a
live run or recording starts from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HEAD = """\
tool: get_weather
expected_tool_calls:
  - name: get_weather
    argument_invariants:
      - path: $.city
        equals: Bern
"""


def golden_case(
    case_id: str, ref: str = "ok.json", *, expect_ok: bool = True, more: str = ""
) -> str:
    """One item of `golden_cases:` as YAML; ``more`` is further keys, each line indented 4."""
    ok = "true" if expect_ok else "false"
    return f"  - id: {case_id}\n    input_ref: {ref}\n    expect_ok: {ok}\n{more}"


def contract(*cases: str, head: str = HEAD) -> str:
    """A contract: ``head`` (CONTRACT's tool and expected call) with these golden_case()s."""
    return f"{head}golden_cases:\n{''.join(cases)}"


CONTRACT = contract(golden_case("ok"))


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


def request_only(content: str | None = None, *, max_tokens: int | None = None) -> dict[str, Any]:
    """fixture() without its response (what a live run sends, what recording starts from),
    with another question or a max_tokens setting if given."""
    data = fixture()
    del data["response"]
    if content is not None:
        data["request"]["messages"][0]["content"] = content
    if max_tokens is not None:
        data["request"]["max_tokens"] = max_tokens
    return data


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
