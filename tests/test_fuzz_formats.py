"""Fuzzed @isdk fixtures load or are one located problem; an inferred contract always passes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck
from hypothesis import strategies as st

from replaygate.cli import main
from replaygate.engine.runner import run_packs
from replaygate.loading.pack import load_packs
from sizes import sized

ISDK_BITS = st.sampled_from(
    [
        "---", "scoring: true", "passScore: 40", "- title: a", "  output: /^x/i",
        "  expect:", "    tools:", "      - name: get_user", "        args: {id: 7}",
        "    messages: {$contains: {role: assistant}}", "    output: {$and: [a, {$not: b}]}",
        "      $sequence: [{name: a}, {name: b}]", "  not: true", "  strict: object",
        "  $score: 3", "- output: {$nth: {$index: 1, a: 1}}", "  skip: true", "'", ":", "- -",
        "  output: {$gt: x}", "  output: '{{x}}'", "  output: !re /x/",
    ]
)  # fmt: skip
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)


@sized(
    60,
    lines=st.lists(ISDK_BITS, max_size=25),
    results=JSON_VALUES,
    fast=20,
    suppress=[HealthCheck.too_slow],
)
def test_any_isdk_fixture_runs_or_is_one_located_problem(
    tmp_path_factory: Any, lines: list[str], results: Any
) -> None:
    root = tmp_path_factory.mktemp("repo")
    isdk = root / "packs" / "p" / "isdk"
    isdk.mkdir(parents=True)
    (isdk.parent / "pack.yaml").write_text('pack_id: "p"\n', encoding="utf-8")
    (isdk / "t.fixture.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (isdk / "t.results.json").write_text(json.dumps(results), encoding="utf-8")
    loaded = load_packs(["packs"], cwd=Path(root), root=root, now=datetime.now(UTC))
    for problem in loaded.problems:
        assert "\n" not in str(problem) and str(problem).startswith("packs/p/isdk/t.")
    for case in run_packs(loaded, {}).cases:
        assert case.status.value in {"passed", "failed", "error", "skipped"}
        assert case.score is None or 0.0 <= case.score <= 1.0


ARGUMENTS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4)


@sized(
    60,
    samples=st.lists(st.lists(ARGUMENTS, min_size=1, max_size=2), min_size=1, max_size=6),
    fast=20,
    suppress=[HealthCheck.too_slow],
)
def test_an_inferred_contract_passes_on_its_recordings(
    tmp_path_factory: Any, samples: list[list[dict[str, Any]]]
) -> None:
    root = tmp_path_factory.mktemp("repo")
    pack = root / "packs" / "p"
    (pack / "golden").mkdir(parents=True)
    (pack / "contracts").mkdir()
    (pack / "pack.yaml").write_text('pack_id: "p"\n', encoding="utf-8")
    paths = []
    for index, arguments in enumerate(samples):
        calls = [{"name": f"tool{n % 2}", "arguments": args} for n, args in enumerate(arguments)]
        body = {"response": {"success": True, "tool_calls": calls}}
        paths.append(pack / "golden" / f"s{index}.json")
        paths[-1].write_text(json.dumps(body), encoding="utf-8")
    contract = pack / "contracts" / "c.yaml"
    args = ["infer", *map(str, paths), "-o", str(contract), "--root", str(root)]
    assert main(args) == 0
    out = root / "results.json"
    assert main(["run", "--root", str(root), "--json", str(out), str(root / "packs")]) == 0, (
        contract.read_text(encoding="utf-8"),
        out.read_text(encoding="utf-8"),
    )
