"""Whatever a pack file holds, loading it gives a result or one located problem: never a crash."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck
from hypothesis import strategies as st

from packbuilder import CONTRACT, fixture, make_pack
from replaygate.core.errors import PackError
from replaygate.loading.fixtures import load_case_input
from replaygate.loading.pack import load_contract, load_packs
from sizes import sized

# Fragments of real contracts, shuffled and cut: closer to what people break than noise.
YAML_BITS = st.sampled_from(
    [
        *CONTRACT.splitlines(),
        "  - path: $.tool_calls[*].name",
        "    one_of: [a, b]",
        "&x [1]",
        "*x",
        "<<: {}",
        "!!python/object:os.system",
        "? complex",
        "---",
        "\t",
        "'",
        '"',
        ":",
        "- -",
        "        regex: '(a+)+$'",
        "    gte: .inf",
        "key: 0x1f",
        "y: 2024-13-45",
        "no: yes",
    ]
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@sized(
    150,
    lines=st.lists(YAML_BITS, max_size=30),
    noise=st.binary(max_size=40),
    suppress=[HealthCheck.too_slow],
)
def test_any_contract_text_loads_or_is_one_located_problem(
    tmp_path_factory: object, lines: list[str], noise: bytes
) -> None:
    root = tmp_path_factory.mktemp("repo")  # type: ignore[attr-defined]
    pack = make_pack(root)
    path = pack / "contracts" / "c.yaml"
    path.write_bytes("\n".join(lines).encode() + noise)
    try:
        load_contract(path, pack, root)
    except PackError as exc:
        assert "\n" not in str(exc)
        assert str(exc).startswith("packs/p/contracts/c.yaml")


@sized(
    150,
    request=JSON_VALUES,
    response=JSON_VALUES,
    calls=JSON_VALUES,
    suppress=[HealthCheck.too_slow],
)
def test_any_fixture_shape_evaluates_or_errors_the_case(
    tmp_path_factory: object, request: object, response: object, calls: object
) -> None:
    from replaygate.engine.runner import run_packs

    root = tmp_path_factory.mktemp("repo")  # type: ignore[attr-defined]
    body = fixture()
    body["request"] = request
    body["response"] = {"tool_calls": calls} if isinstance(response, dict) else response
    make_pack(root, fixtures={"ok.json": json.dumps(body)})
    loaded = load_packs(["packs"], cwd=Path(root), root=None, now=datetime.now(UTC))
    pack = loaded.packs[0]
    contract = pack.contracts[0]
    found = load_case_input(pack, contract, contract.golden_cases[0])
    assert isinstance(found, str) or found.response is None or "success" in found.response
    (case,) = run_packs(loaded, {}).cases
    assert case.status.value in {"passed", "failed", "error"}


# Keys of every shape: capitals, brackets, pydantic's own location words, any text at all.
KEYS = st.sampled_from(["Timeouts", "Name", "[key]", "list[str]", "PackPaths", "a[0]"]) | st.text(
    max_size=12
)
CONTRACT_DATA = {
    "tool": "get_weather",
    "expected_tool_calls": [{"name": "get_weather", "argument_invariants": [{"path": "$.city"}]}],
    "timeouts": {"total_ms": 5},
    "golden_cases": [{"id": "ok", "input_ref": "ok.json", "expect_ok": True}],
}
# Where a key can go: the mappings of the contract above, and pack.yaml's.
SPOTS = st.sampled_from(
    [
        ("contract",),
        ("contract", "expected_tool_calls", 0),
        ("contract", "expected_tool_calls", 0, "argument_invariants", 0),
        ("contract", "timeouts"),
        ("contract", "golden_cases", 0),
        ("pack",),
        ("pack", "paths"),
    ]
)


@sized(150, key=KEYS, value=JSON_VALUES, spot=SPOTS, suppress=[HealthCheck.too_slow])
def test_a_key_of_any_shape_anywhere_is_a_result_or_one_located_problem(
    tmp_path_factory: object, key: str, value: object, spot: tuple[str | int, ...]
) -> None:
    root = tmp_path_factory.mktemp("repo")  # type: ignore[attr-defined]
    files = {
        "contract": json.loads(json.dumps(CONTRACT_DATA)),
        "pack": {"pack_id": "p", "paths": {}},
    }
    node: Any = files
    for part in spot:
        node = node[part]
    node[key] = value
    make_pack(root, contract=json.dumps(files["contract"]), pack_yaml=json.dumps(files["pack"]))
    loaded = load_packs(["packs"], cwd=root, root=None, now=datetime.now(UTC))
    for problem in loaded.problems:
        assert "\n" not in str(problem)
        assert problem.file in ("packs/p/pack.yaml", "packs/p/contracts/c.yaml")
    assert loaded.packs or loaded.problems


# Keys YAML reads as something other than a string (null, numbers, booleans, dates), or
# that are strings but unknown; a key that is a list or a mapping.
YAML_KEYS = st.sampled_from(
    ["~", "null", "Null", "1", "-2", "0x1f", "3.5", ".nan", "1e3", "yes", "off", "true",
     "2024-01-01", "2024-01-01 10:00:00", "''", "'~'", "!!str 5", "[a]", "{a: 1}", "? [a, b]\n"]
) | st.integers().map(str)  # fmt: skip
CONTRACT_LINES = [
    "tool: get_weather",
    "expected_tool_calls:",
    "  - name: get_weather",
    "    argument_invariants:",
    "      - path: $.city",
    "        exists: true",
    "timeouts:",
    "  total_ms: 5",
    "golden_cases:",
    "  - id: ok",
    "    input_ref: ok.json",
    "    expect_ok: true",
]
PACK_LINES = ["pack_id: p", "paths:", "  golden_dir: packs/p/golden"]
# (file, the line the key goes after, its indentation): every kind of mapping in both files
KEY_SPOTS = st.sampled_from(
    [("c", 1, ""), ("c", 3, "    "), ("c", 5, "        "), ("c", 8, "  "), ("c", 10, "    "),
     ("p", 1, ""), ("p", 3, "  ")]
)  # fmt: skip


@sized(150, key=YAML_KEYS, spot=KEY_SPOTS, suppress=[HealthCheck.too_slow])
def test_a_key_of_any_yaml_type_is_one_problem_on_its_own_line(
    tmp_path_factory: object, key: str, spot: tuple[str, int, str]
) -> None:
    root = tmp_path_factory.mktemp("repo")  # type: ignore[attr-defined]
    which, after, indent = spot
    lines = list(CONTRACT_LINES if which == "c" else PACK_LINES)
    lines.insert(after, f"{indent}{key}: 1")
    text = "\n".join(lines) + "\n"
    if which == "c":
        make_pack(root, contract=text, pack_yaml="\n".join(PACK_LINES) + "\n")
    else:
        make_pack(root, pack_yaml=text)
    loaded = load_packs(["packs"], cwd=root, root=None, now=datetime.now(UTC))
    shown = "packs/p/contracts/c.yaml" if which == "c" else "packs/p/pack.yaml"
    assert [(p.file, p.line) for p in loaded.problems] == [(shown, after + 1)], loaded.problems
    (problem,) = loaded.problems
    assert "\n" not in str(problem)
