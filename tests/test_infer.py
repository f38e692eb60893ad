"""`replaygate infer`: contracts learned from recordings, confidence tiers, --merge, idempotence."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from replaygate.cli import main
from replaygate.core.errors import PackError
from replaygate.inference import merge as merge_module
from replaygate.inference.learn import Sample, Tier, infer, tier
from replaygate.inference.merge import merge
from replaygate.loading.identity import request_identity
from replaygate.providers.redact import Redactor
from replaygate.providers.store import recording_document, write_recording


def calls(i: int) -> list[dict[str, Any]]:
    """The i-th recording: stable tools and order, arguments that vary within bounds."""
    search = {
        "q": ["flights", "trains", "no"][i % 3],  # `no` must stay a string in the contract
        "limit": 5 + i,
        "filters": {"direct": True, "class": "eco" if i % 2 else "biz"},
        "tags": ["a", "bb"][: i % 3],
    }
    book = {"id": f"F-{i:03d}", "ratio": 1e-05 * (i + 1), "hold": i % 4 == 0}
    if i % 3 == 0:
        book["coupon"] = "SPRING"
    wrapped = {"name": "search", "arguments": json.dumps(search)}  # OpenAI shape, JSON text
    return [
        {"id": "c0", "type": "function", "function": wrapped},
        {"id": "c1", "name": "book", "arguments": book},
    ]


def make_repo(tmp_path: Path, count: int) -> Path:
    pack = tmp_path / "packs" / "trips"
    (pack / "contracts").mkdir(parents=True)
    (pack / "golden").mkdir()
    (pack / "pack.yaml").write_text('pack_id: "trips"\n', encoding="utf-8")
    for i in range(count):
        fixture = {
            "request": {"messages": [{"role": "user", "content": "Book a trip."}]},
            "response": {"success": True, "tool_calls": calls(i)},
        }
        (pack / "golden" / f"trip-{i:02d}.json").write_text(json.dumps(fixture), encoding="utf-8")
    return tmp_path


def recordings(root: Path, count: int) -> list[str]:
    return [str(root / "packs/trips/golden" / f"trip-{i:02d}.json") for i in range(count)]


def infer_cli(root: Path, count: int, output: str = "trip.yaml", *extra: str) -> int:
    contract = root / "packs/trips/contracts" / output
    return main(
        ["infer", *recordings(root, count), "-o", str(contract), "--root", str(root), *extra]
    )


def record(pack: Path, name: str, request: Any) -> None:
    """A sidecar recording of the fixture ``name``, answering ``request``."""
    document = recording_document(
        identity=request_identity(request, "gpt-4o-mini"), provider="openai",
        model="gpt-4o-mini", response={"success": True, "tool_calls": calls(0)}, status=200,
        body={}, now=datetime(2026, 11, 26, tzinfo=UTC),
    )  # fmt: skip
    write_recording(pack / "recordings" / f"{name}.recording.json", document, Redactor.build({}))


def run_packs(root: Path, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / "results.json"
    code = main(["run", "--root", str(root), "--json", str(out), str(root / "packs")])
    results: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert code == 0, results
    return results


@pytest.mark.parametrize(
    ("count", "level", "header"),
    [
        (1, "low", "from 1 recording: confidence low (fewer than 5 samples"),
        (4, "low", "from 4 recordings: confidence low (fewer than 5 samples"),
        (5, "medium", "from 5 recordings: confidence medium (5 to 9 samples"),
        (9, "medium", "from 9 recordings: confidence medium (5 to 9 samples"),
        (10, "high", "from 10 recordings: confidence high (10 or more samples)"),
        (12, "high", "from 12 recordings: confidence high (10 or more samples)"),
    ],
)
def test_infer_writes_a_contract_that_passes_on_its_recordings(
    tmp_path: Path, count: int, level: str, header: str
) -> None:
    root = make_repo(tmp_path, count)
    assert infer_cli(root, count) == 0
    text = (root / "packs/trips/contracts/trip.yaml").read_text(encoding="utf-8")
    assert header in text.splitlines()[0]
    assert f"- path: $.q  # confidence: {level} ({count} sample" in text
    results = run_packs(root, tmp_path)
    assert [case["status"] for case in results["cases"]] == ["passed"] * count
    assert [case["case_id"] for case in results["cases"]] == [f"trip-{i:02d}" for i in range(count)]


def test_one_recording_gives_types_but_no_ranges(tmp_path: Path) -> None:
    root = make_repo(tmp_path, 1)
    infer_cli(root, 1)
    text = (root / "packs/trips/contracts/trip.yaml").read_text(encoding="utf-8")
    assert "type: integer" in text
    assert not re.search(r"gte:|lte:|one_of|tool_order", text)


def test_twelve_recordings_give_order_one_of_bounds_and_optional(tmp_path: Path) -> None:
    root = make_repo(tmp_path, 12)
    infer_cli(root, 12)
    text = (root / "packs/trips/contracts/trip.yaml").read_text(encoding="utf-8")
    for fragment in [
        "tool: multi_tool_call\ntool_order: strict  # the same tools in the same order in all 12",
        "      - path: $.q  # confidence: high (12 samples)\n        exists: true\n"
        '        type: string\n        one_of: [flights, trains, "no"]\n',
        "        type: integer\n        gte: 5\n        lte: 16\n",
        "        each: {type: string}\n",
        "        gte: 1.0e-05\n",  # YAML 1.1 reads 1e-05 as text
        "      - path: $.coupon  # confidence: low (4 samples)\n        optional: true\n",
        "      - path: $.hold  # confidence: high (12 samples)\n        exists: true\n"
        "        type: boolean\n        one_of: [true, false]\n",
    ]:
        assert fragment in text, fragment


HAND_WRITTEN = """\
# Trips: written by hand.
tool: multi_tool_call
golden_cases:   # cases we trust
  - id: first
    input_ref: trip-00.json
    expect_ok: true
expected_tool_calls:
  - name: book   # the booking
    argument_invariants:
      - path: $['id']
        regex: "^F-"   # ids start with F-
      # the ratio is checked elsewhere
"""


def test_merge_keeps_hand_written_assertions_comments_and_order(tmp_path: Path) -> None:
    root = make_repo(tmp_path, 5)
    contract = root / "packs/trips/contracts/trip.yaml"
    contract.write_text(HAND_WRITTEN, encoding="utf-8")
    assert infer_cli(root, 5, "trip.yaml", "--merge") == 0
    text = contract.read_text(encoding="utf-8")
    remaining = iter(text.splitlines())
    assert all(line in remaining for line in HAND_WRITTEN.splitlines())  # each, in order
    assert "$.id" not in text  # $['id'] is hand-written: covered
    assert text.count("- path: $.ratio  # confidence: medium (5 samples)") == 1
    assert text.index("- name: book") < text.index("- name: search")
    ids = re.findall(r"- id: (\S+)", text)
    assert ids == ["first", "trip-01", "trip-02", "trip-03", "trip-04"]
    assert [c["status"] for c in run_packs(root, tmp_path)["cases"]] == ["passed"] * 5


def test_inferring_twice_gives_the_same_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo(tmp_path, 5)
    infer_cli(root, 5, "a.yaml")
    infer_cli(root, 5, "b.yaml")
    first = (root / "packs/trips/contracts/a.yaml").read_bytes()
    assert first == (root / "packs/trips/contracts/b.yaml").read_bytes()
    before = (root / "packs/trips/contracts/a.yaml").stat()
    assert infer_cli(root, 5, "a.yaml", "--merge") == 0
    after = (root / "packs/trips/contracts/a.yaml").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # untouched
    assert (root / "packs/trips/contracts/a.yaml").read_bytes() == first
    assert "nothing to add to" in capsys.readouterr().err
    contract = root / "packs/trips/contracts/c.yaml"
    contract.write_text(HAND_WRITTEN, encoding="utf-8")
    infer_cli(root, 5, "c.yaml", "--merge")
    merged = contract.read_bytes()
    infer_cli(root, 5, "c.yaml", "--merge")
    assert contract.read_bytes() == merged


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("exists", "trip.yaml exists: pass --merge to add inferred assertions to it"),
        ("outside", "not in the pack's golden directory packs/trips/golden"),
        ("error", "the recorded response is an error; infer learns from successes"),
        ("no_common_call", "the recordings have no tool call in common: nothing to infer"),
        ("broken_contract", "trip.yaml:1: a contract must be a mapping"),
        ("missing", "packs/trips/golden/trip-09.json: file not found"),
        ("directory", "packs/trips/golden/sub: no fixture or recording in this folder"),
        ("stale", "trip-01.json: packs/trips/recordings/trip-01.recording.json answers an older"),
        ("elsewhere", "trip.yaml: outside the pack's contracts folder packs/trips/contracts"),
        (
            "nested",
            "sub/trip.yaml: `run` reads the *.yaml and *.yml files directly in packs/trips/",
        ),
        ("suffix", "trip.txt: `run` reads the *.yaml and *.yml files directly in packs/trips/"),
    ],
)
def test_infer_refuses_with_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    setup: str,
    message: str,
) -> None:
    root = make_repo(tmp_path, 2)
    golden = root / "packs/trips/golden"
    contract = root / "packs/trips/contracts/trip.yaml"
    args = recordings(root, 2)
    if setup == "exists":
        contract.write_text(HAND_WRITTEN, encoding="utf-8")
    elif setup == "outside":
        args[1] = str(tmp_path / "elsewhere.json")
    elif setup == "error":
        (golden / "trip-01.json").write_text('{"response": {"success": false}}', encoding="utf-8")
    elif setup == "no_common_call":
        other = {"response": {"success": True, "tool_calls": [{"name": "x", "arguments": {}}]}}
        (golden / "trip-01.json").write_text(json.dumps(other), encoding="utf-8")
    elif setup in ("elsewhere", "nested", "suffix"):
        contract = {
            "elsewhere": golden.parent / "trip.yaml",
            "nested": contract.parent / "sub" / "trip.yaml",
            "suffix": contract.with_suffix(".txt"),
        }[setup]
    elif setup == "missing":  # named as typed, from the repository root
        monkeypatch.chdir(root)
        args[1] = "packs/trips/golden/trip-09.json"
    elif setup == "directory":
        monkeypatch.chdir(root)
        (golden / "sub").mkdir()
        args[1] = "packs/trips/golden/sub"
    elif setup == "stale":
        record(root / "packs/trips", "trip-01", {"messages": [{"role": "user", "content": "?"}]})
    else:
        contract.write_text("- not a mapping\n", encoding="utf-8")
    extra = ["--merge"] if setup == "broken_contract" else []
    code = main(["infer", *args, "-o", str(contract), "--root", str(root), *extra])
    err = capsys.readouterr().err
    assert (code, message in err, err.count("\n")) == (2, True, 1), err
    if setup in ("exists", "broken_contract"):
        assert contract.read_text(encoding="utf-8") != ""  # left as it was


def test_one_recording_named_twice_is_one_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo(tmp_path, 1)
    [path] = recordings(root, 1)
    spellings = [path, path.replace("/golden/", "/golden/../golden/"), "./" + os.path.relpath(path)]
    contract = root / "packs/trips/contracts/trip.yaml"
    assert main(["infer", *spellings, "-o", str(contract), "--root", str(root)]) == 0
    assert "from 1 recording (confidence low)" in capsys.readouterr().err
    assert contract.read_text(encoding="utf-8").count("- id: ") == 1


def test_no_pack_above_the_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path, 1)
    code = main(["infer", *recordings(root, 1), "-o", str(tmp_path / "loose.yaml")])
    assert code == 2
    assert "no pack.yaml above" in capsys.readouterr().err


def test_tiers_follow_replayci() -> None:
    assert [tier(n) for n in (1, 4, 5, 9, 10, 40)] == [
        Tier.LOW, Tier.LOW, Tier.MEDIUM, Tier.MEDIUM, Tier.HIGH, Tier.HIGH,
    ]  # fmt: skip


def test_calls_that_vary_keep_the_common_ones_without_order() -> None:
    samples = [
        Sample("a.json", (("search", {"q": "x"}), ("book", {}), ("search", {"q": "y"}))),
        Sample("b.json", (("book", {}), ("search", {"q": "z"}))),
    ]
    inferred = infer(samples)
    assert (inferred.tool, inferred.strict_order) == ("multi_tool_call", False)
    assert [call.name for call in inferred.calls] == ["search", "book"]


def test_merge_refuses_to_change_a_hand_written_value(monkeypatch: pytest.MonkeyPatch) -> None:
    inferred = infer([Sample("a.json", (("search", {"q": "x"}),))])
    monkeypatch.setattr(merge_module, "dump", lambda doc: HAND_WRITTEN.replace("^F-", "^G-"))
    with pytest.raises(PackError, match="merging would change how a hand-written value reads back"):
        merge(HAND_WRITTEN, inferred, [("a", "a.json")], shown="c.yaml")


def test_merge_puts_a_call_where_the_recordings_make_it_under_strict_order(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path, 3)
    contract = root / "packs/trips/contracts/trip.yaml"
    contract.write_text(HAND_WRITTEN.replace("call\n", "call\ntool_order: strict\n", 1))
    assert infer_cli(root, 3, "trip.yaml", "--merge") == 0
    text = contract.read_text(encoding="utf-8")
    assert text.index("- name: search") < text.index("- name: book   # the booking")
    assert [c["status"] for c in run_packs(root, tmp_path)["cases"]] == ["passed"] * 3


def test_merge_refuses_a_call_with_no_one_place_under_strict_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo(tmp_path, 2)
    reordered = {"response": {"success": True, "tool_calls": calls(1)[::-1]}}
    (root / "packs/trips/golden/trip-01.json").write_text(json.dumps(reordered))
    contract = root / "packs/trips/contracts/trip.yaml"
    hand_written = HAND_WRITTEN.replace("name: book", "name: lookup")
    contract.write_text(hand_written.replace("call\n", "call\ntool_order: strict\n", 1))
    assert infer_cli(root, 2, "trip.yaml", "--merge") == 2
    assert capsys.readouterr().err == (
        "replaygate: packs/trips/contracts/trip.yaml:3: tool_order is strict, but the "
        "recordings make their calls in different orders: there is no one place to add a "
        "call (add it by hand)\n"
    )
    assert contract.read_text(encoding="utf-8") == hand_written.replace(
        "call\n", "call\ntool_order: strict\n", 1
    )


def test_a_contract_pack_yaml_does_not_list_gets_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo(tmp_path, 1)
    (root / "packs/trips/pack.yaml").write_text('pack_id: "trips"\ncontracts: [other.yaml]\n')
    (root / "packs/trips/contracts/other.yaml").write_text(HAND_WRITTEN)
    assert infer_cli(root, 1) == 0
    assert capsys.readouterr().err.startswith(
        "replaygate: note: pack.yaml `contracts` does not list 'trip.yaml': add it, or `run` "
        "will not read it\n"
    )


def test_merge_makes_a_taken_case_id_unique(tmp_path: Path) -> None:
    root = make_repo(tmp_path, 2)
    contract = root / "packs/trips/contracts/trip.yaml"
    contract.write_text(HAND_WRITTEN.replace("id: first", "id: trip-01"), encoding="utf-8")
    assert infer_cli(root, 2, "trip.yaml", "--merge") == 0
    text = contract.read_text(encoding="utf-8")
    assert re.findall(r"- id: (\S+)\n    input_ref: (\S+)", text) == [
        ("trip-01", "trip-00.json"),
        ("trip-01-2", "trip-01.json"),
    ]


def test_merge_fills_a_list_left_empty(tmp_path: Path) -> None:
    root = make_repo(tmp_path, 2)
    contract = root / "packs/trips/contracts/trip.yaml"
    written = HAND_WRITTEN.split("expected_tool_calls:")[0].replace("multi_tool_call", "search")
    empty = written + "expected_tool_calls:   # to do\n"
    contract.write_text(empty, encoding="utf-8")
    assert infer_cli(root, 2, "trip.yaml", "--merge") == 0
    text = contract.read_text(encoding="utf-8")
    assert "expected_tool_calls:   # to do\n  - name: search\n" in text
    assert [c["status"] for c in run_packs(root, tmp_path)["cases"]] == ["passed"] * 2


@pytest.mark.parametrize(
    "text",
    [
        "?0",
        "?",
        "a,b",
        "[x]",
        "{x}",
        "#x",
        "yes",
        "0o17",
        "",
        "x:y",
        "a: b",
        "- a",
        "&a",
        "*a",
        "!t",
        "=",
        "? a",
        "a #b",
        "x:",
        " a",
        "a ",
    ],
)
def test_a_written_value_reads_back_the_same_in_a_flow_list_and_as_a_key(text: str) -> None:
    from replaygate.inference.write import dump, value_node
    from replaygate.loading.yaml_reader import parse_yaml

    doc = value_node({"v": [text], text: {text: text}})
    assert parse_yaml(dump(doc), shown="c.yaml") == {"v": [text], text: {text: text}}


def test_infer_writes_no_contract_through_a_link_out_of_the_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A committed `contracts -> /elsewhere`: `run` would not read there, infer writes nothing."""
    root = make_repo(tmp_path / "repo", 2)
    (root / ".git").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    contracts = root / "packs/trips/contracts"
    contracts.rmdir()
    contracts.symlink_to(outside, target_is_directory=True)
    assert infer_cli(root, 2, "new.yaml") == 2
    err = capsys.readouterr().err
    assert "packs/trips/contracts/new.yaml" in err and "leaves the repository" in err, err
    assert list(outside.iterdir()) == []


def test_infer_merges_nothing_from_a_contract_linked_out_of_the_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--merge` into a contract that links outside would copy that file into the repository."""
    root = make_repo(tmp_path / "repo", 2)
    (root / ".git").mkdir()
    secret = tmp_path / "secret.yaml"
    secret.write_text(HAND_WRITTEN + "# a private comment\n", encoding="utf-8")
    contract = root / "packs/trips/contracts/trip.yaml"
    contract.symlink_to(secret)
    assert infer_cli(root, 2, "trip.yaml", "--merge") == 2
    err = capsys.readouterr().err
    assert "leaves the repository" in err and "private" not in err, err
    assert contract.is_symlink() and secret.read_text(encoding="utf-8").endswith("comment\n")


def test_a_redacted_value_is_never_learned_as_an_expected_value() -> None:
    from replaygate.inference.learn import REDACTED
    from replaygate.providers.redact import REDACTED as WRITTEN

    assert REDACTED == WRITTEN
    samples = [
        Sample(
            f"{i}.json",
            (
                (
                    "login",
                    {
                        "token": "[redacted]",
                        "auth": "Bearer [redacted]",
                        "user": "ann",
                        "keys": ["[redacted]", "[redacted]"],
                    },
                ),
            ),
        )
        for i in range(4)
    ]
    (call,) = infer(samples).calls
    assert {rule.path: rule.operators for rule in call.rules} == {
        "$.token": {"exists": True, "type": "string"},
        "$.auth": {"exists": True, "type": "string"},
        "$.user": {"exists": True, "type": "string", "one_of": ["ann"]},
        "$.keys": {  # redaction keeps an array's length: only its strings are stand-ins
            "exists": True,
            "type": "array",
            "length_gte": 2,
            "length_lte": 2,
            "each": {"type": "string"},
        },
    }
