"""Loading packs: every broken input is one located problem, and the other packs still load."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from packbuilder import CONTRACT, contract, fixture, golden_case, make_pack
from replaygate.core.model import Status
from replaygate.engine.runner import run_packs
from replaygate.loading.pack import load_packs

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def load(root: Path) -> tuple[list[str], list[str]]:
    loaded = load_packs(["packs"], cwd=root, root=None, now=NOW)
    return [p.pack_id for p in loaded.packs], [str(p) for p in loaded.problems]


def problems_for(tmp_path: Path, contract: str) -> list[str]:
    make_pack(tmp_path, contract=contract)
    return load(tmp_path)[1]


def test_a_good_pack_loads(tmp_path: Path) -> None:
    make_pack(tmp_path)
    assert load(tmp_path) == (["p"], [])


@pytest.mark.parametrize(
    ("contract", "problem"),
    [
        (
            CONTRACT.replace("expected_tool_calls:", "expected_tool_call:"),
            "packs/p/contracts/c.yaml:2: unknown key 'expected_tool_call' "
            "(did you mean 'expected_tool_calls'?)",
        ),
        (
            CONTRACT.replace("expect_ok: true", "expect_ok: 'yes'"),
            "packs/p/contracts/c.yaml:10: golden_cases[0].expect_ok: "
            "expected true or false, got 'yes'",
        ),
        (
            CONTRACT.replace("equals: Bern", "equal: Bern"),
            "packs/p/contracts/c.yaml:6: unknown operator 'equal' (did you mean 'equals'?)",
        ),
        (CONTRACT.replace("equals: Bern", "regex: '(unclosed'"), "packs/p/contracts/c.yaml:6:"),
        (CONTRACT.replace("equals: Bern", "type: str"), "packs/p/contracts/c.yaml:6:"),
        (
            CONTRACT + "golden_cases: []\n",
            "packs/p/contracts/c.yaml:11: duplicate key 'golden_cases'",
        ),
        (CONTRACT + "x: &a [1]\ny: *a\n", "packs/p/contracts/c.yaml:12:"),
        (
            CONTRACT.replace("tool: get_weather", "tool: multi_tool_call\ntool_order: sometimes"),
            "packs/p/contracts/c.yaml:2: tool_order: must be one of any, strict, got 'sometimes'",
        ),
        ("tool: [", "packs/p/contracts/c.yaml:"),
        (
            CONTRACT.replace("tool: get_weather", "tool: get_weather\non: push"),
            "packs/p/contracts/c.yaml:2: a key is read as true by YAML",
        ),
        (
            CONTRACT.replace("golden_cases:", "~: 1\ngolden_cases:"),
            "packs/p/contracts/c.yaml:7: a key is read as null by YAML (`~` and `null` are null "
            "there); quote it",
        ),
        (
            CONTRACT.replace("equals: Bern", "equals: Bern\n        null: 1"),
            "packs/p/contracts/c.yaml:7: a key is read as null by YAML",
        ),
        (
            CONTRACT.replace("equals: Bern", "equals: Bern\n        1: 1"),
            "packs/p/contracts/c.yaml:7: keys must be strings, got the number 1; quote it",
        ),
        (
            CONTRACT.replace("equals: Bern", "equals: Bern\n        on: 1"),
            "packs/p/contracts/c.yaml:7: a key is read as true by YAML",
        ),
        (
            CONTRACT.replace("    expect_ok: true", "    expect_ok: true\n    3.5: 1"),
            "packs/p/contracts/c.yaml:11: keys must be strings, got the number 3.5; quote it",
        ),
        (
            CONTRACT.replace("equals: Bern", "equals: 2024-01-01"),
            "packs/p/contracts/c.yaml:6: equals: the contract's `2024-01-01` was read as a date; "
            "quote it",
        ),
        ("- just\n- a list\n", "packs/p/contracts/c.yaml:1: a contract must be a mapping"),
        (
            CONTRACT.replace("  - id: ok", "  - id: ok\n    expected_error: wrong_tool"),
            "expected_error is set but expect_ok is true",
        ),
    ],
)
def test_contract_problems_are_one_located_line(
    tmp_path: Path, contract: str, problem: str
) -> None:
    found = problems_for(tmp_path, contract)
    assert len(found) == 1, found
    assert found[0].startswith(problem) or problem in found[0], found[0]
    assert "\n" not in found[0]


def test_version_as_number_names_the_value_to_quote(tmp_path: Path) -> None:
    make_pack(tmp_path, pack_yaml="pack_id: p\nversion: 3.10\n")
    (problem,) = load(tmp_path)[1]
    assert problem.startswith("packs/p/pack.yaml:2: version: expected a string, got 3.1")
    assert "'3.10'" in problem


def test_a_broken_contract_does_not_stop_the_others(tmp_path: Path) -> None:
    make_pack(tmp_path, contracts={"a.yaml": CONTRACT, "b.yaml": "tool: [\n"})
    make_pack(tmp_path, "q")
    loaded = load_packs(["packs"], cwd=tmp_path, root=None, now=NOW)
    assert [p.pack_id for p in loaded.packs] == ["p", "q"]
    assert [c.path for c in loaded.packs[0].contracts] == ["contracts/a.yaml"]
    assert len(loaded.problems) == 1


def test_duplicate_pack_ids_are_a_problem(tmp_path: Path) -> None:
    make_pack(tmp_path, "p")
    make_pack(tmp_path, "q", pack_yaml="pack_id: p\n")
    ids, problems = load(tmp_path)
    assert ids == ["p"] and "pack_id 'p' is already used by packs/p" in problems[0]


def test_paths_resolve_against_the_repository_root(tmp_path: Path) -> None:
    pack = make_pack(
        tmp_path,
        pack_yaml=(
            "pack_id: p\npaths:\n  contracts_dir: packs/p/contracts\n  golden_dir: packs/p/golden\n"
        ),
    )
    assert load(tmp_path) == (["p"], [])
    (pack / "pack.yaml").write_text("pack_id: p\npaths:\n  contracts_dir: ../../../etc\n")
    (problem,) = load(tmp_path)[1]
    assert problem.startswith(
        "packs/p/pack.yaml:3: paths.contracts_dir '../../../etc' leaves the repository; "
        f"paths resolve against the repository root {tmp_path.resolve()} "
        "(the nearest folder above the pack holding .git; --root sets it)"
    )


def test_contract_list_entry_may_not_leave_the_contracts_dir(tmp_path: Path) -> None:
    make_pack(tmp_path, pack_yaml="pack_id: p\ncontracts:\n  - ../pack.yaml\n")
    leaves, unlisted = load(tmp_path)[1]
    assert leaves.startswith("packs/p/pack.yaml:3: contract '../pack.yaml' leaves")
    assert unlisted.startswith("packs/p/pack.yaml:2: contracts/c.yaml is in contracts/ but")


def test_no_pack_found_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "packs").mkdir()
    assert load(tmp_path) == ([], ["packs: no pack.yaml found"])


def _allowlist(pack: Path, expiry: str) -> None:
    entry = {
        "contract_path": "contracts/c.yaml",
        "reason_code": "model_nondeterminism",
        "owner": "team-ml",
        "expiry_date": expiry,
        "rationale": "creative",
    }
    (pack / "nr-allowlist.json").write_text(json.dumps({"version": "1.0", "entries": [entry]}))


def test_allowlisted_failure_is_skipped_with_the_reason(tmp_path: Path) -> None:
    pack = make_pack(
        tmp_path,
        fixtures={"ok.json": fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])},
    )
    _allowlist(pack, "2027-01-01T00:00:00Z")
    loaded = load_packs(["packs"], cwd=tmp_path, root=None, now=NOW)
    (case,) = run_packs(loaded, {}).cases
    assert case.status is Status.SKIPPED
    assert case.reason == "nr-allowlist: model_nondeterminism (team-ml): creative"


def test_expired_allowlist_entry_is_a_warning_with_its_line_and_no_longer_applies(
    tmp_path: Path,
) -> None:
    pack = make_pack(
        tmp_path,
        fixtures={"ok.json": fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])},
    )
    _allowlist(pack, "2026-06-01T00:00:00Z")
    (pack / "nr-allowlist.json").write_text(
        json.dumps(json.loads((pack / "nr-allowlist.json").read_text()), indent=2)
    )
    loaded = load_packs(["packs"], cwd=tmp_path, root=None, now=NOW)
    assert loaded.problems == ()
    assert [str(w) for w in loaded.warnings] == [
        "packs/p/nr-allowlist.json:8: entry 0 (contracts/c.yaml, owner team-ml) "
        "expired on 2026-06-01T00:00:00Z: it no longer applies, so the contract's cases "
        "are judged normally; renew or remove it"
    ]
    (case,) = run_packs(loaded, {}).cases
    assert case.status is Status.FAILED  # judged, not skipped by the expired entry


def test_allowlist_entry_missing_a_field(tmp_path: Path) -> None:
    pack = make_pack(tmp_path)
    (pack / "nr-allowlist.json").write_text(
        '{"version": "1.0", "entries": [{"contract_path": "contracts/c.yaml"}]}'
    )
    problems = load(tmp_path)[1]
    assert problems == [
        f"packs/p/nr-allowlist.json: entries[0].{key}: required key is missing"
        for key in ("reason_code", "owner", "expiry_date", "rationale")
    ]


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        ("missing.json", "packs/p/golden/missing.json"),
        (
            "../../../../etc/passwd",
            "input_ref '../../../../etc/passwd' leaves the golden directory",
        ),
        ("bad.json", "packs/p/golden/bad.json:1: invalid JSON"),
        ("nan.json", "NaN"),
        ("list.json", "a fixture must be a JSON object"),
        ("inf.json", "packs/p/golden/inf.json:1: the number 1e999 is out of range"),
    ],
)
def test_case_input_problems_error_the_case(tmp_path: Path, ref: str, reason: str) -> None:
    make_pack(
        tmp_path,
        contract=CONTRACT.replace("ok.json", ref),
        fixtures={
            "bad.json": "{",
            "nan.json": '{"response": NaN}',
            "list.json": "[]",
            "inf.json": '{"response": {"x": 1e999}}',
        },
    )
    loaded = load_packs(["packs"], cwd=tmp_path, root=None, now=NOW)
    (case,) = run_packs(loaded, {}).cases
    assert case.status is Status.ERROR
    assert case.reason is not None and reason in case.reason, case.reason


@pytest.mark.posix
def test_input_ref_through_a_symlink_to_git_is_refused(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, contract=CONTRACT.replace("ok.json", "link.json"))
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (pack / "golden" / "link.json").symlink_to(tmp_path / ".git" / "config")
    loaded = load_packs(["packs"], cwd=tmp_path, root=None, now=NOW)
    (case,) = run_packs(loaded, {}).cases
    assert case.status is Status.ERROR and "leaves the golden directory" in (case.reason or "")


def test_allowlist_entry_for_a_missing_contract_is_a_problem(tmp_path: Path) -> None:
    pack = make_pack(tmp_path)
    _allowlist(pack, "2027-01-01T00:00:00Z")
    (pack / "contracts" / "c.yaml").rename(pack / "contracts" / "d.yaml")
    assert load(tmp_path)[1] == [
        "packs/p/nr-allowlist.json:1: entry 0 (contracts/c.yaml, owner team-ml): "
        "no such contract in the pack"
    ]


@pytest.mark.posix
def test_a_globbed_contract_symlinked_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    pack = make_pack(repo)
    (tmp_path / "outside.yaml").write_text("tool: [ghp_SECRET]\n")
    (pack / "contracts" / "evil.yaml").symlink_to(tmp_path / "outside.yaml")
    (pack / "contracts" / "zero.yaml").symlink_to("/dev/zero")
    ids, problems = load(repo)
    assert ids == ["p"]
    assert problems == [
        "packs/p/pack.yaml: contract 'evil.yaml' leaves the contracts directory "
        "packs/p/contracts through a symlink",
        "packs/p/pack.yaml: contract 'zero.yaml' leaves the contracts directory "
        "packs/p/contracts through a symlink",
    ]
    assert not any("SECRET" in problem for problem in problems)


def test_contracts_outside_the_pack_are_named_from_the_repository_root(tmp_path: Path) -> None:
    fingerprints = []
    for checkout in ("one", "two"):
        repo = tmp_path / checkout
        make_pack(repo, pack_yaml="pack_id: p\npaths:\n  contracts_dir: shared/contracts\n")
        (repo / "shared").mkdir()
        (repo / "packs" / "p" / "contracts").rename(repo / "shared" / "contracts")
        broken = fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])
        (repo / "packs" / "p" / "golden" / "ok.json").write_text(json.dumps(broken))
        loaded = load_packs(["packs"], cwd=repo, root=None, now=NOW)
        (case,) = run_packs(loaded, {}).cases
        assert case.contract == "shared/contracts/c.yaml"
        fingerprints.append(case.fingerprint)
    assert fingerprints[0] == fingerprints[1]


def test_contract_listed_twice_is_a_problem(tmp_path: Path) -> None:
    make_pack(tmp_path, pack_yaml="pack_id: p\ncontracts:\n  - c.yaml\n  - ./c.yaml\n")
    assert load(tmp_path)[1] == ["packs/p/pack.yaml:4: contract './c.yaml' is listed twice"]


def test_allowlist_paths_are_normalised(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, fixtures={"ok.json": fixture([])})
    _allowlist(pack, "2027-01-01T00:00:00Z")
    text = (
        (pack / "nr-allowlist.json").read_text().replace("contracts/c.yaml", "./contracts/c.yaml")
    )
    (pack / "nr-allowlist.json").write_text(text)
    loaded = load_packs(["packs"], cwd=tmp_path, root=None, now=NOW)
    assert loaded.problems == ()
    (case,) = run_packs(loaded, {}).cases
    assert case.status is Status.SKIPPED


def load_all(root: Path, targets: tuple[str, ...] = ("packs",)) -> tuple[list[str], list[str]]:
    """The problems and the warnings of loading ``targets`` from ``root``."""
    loaded = load_packs(list(targets), cwd=root, root=None, now=NOW)
    return [str(p) for p in loaded.problems], [str(w) for w in loaded.warnings]


def test_a_contract_file_pack_yaml_does_not_list_is_a_problem_not_a_silent_skip(
    tmp_path: Path,
) -> None:
    make_pack(
        tmp_path,
        contracts={"c.yaml": CONTRACT, "deploy2.yml": CONTRACT},
        pack_yaml="pack_id: p\ncontracts:\n  - c.yaml\n",
    )
    assert load_all(tmp_path)[0] == [
        "packs/p/pack.yaml:2: contracts/deploy2.yml is in contracts/ but not listed in "
        "pack.yaml `contracts`; list it, or move it out"
    ]


def test_an_unlisted_contract_in_a_subfolder_or_with_an_upper_case_suffix_is_a_problem(
    tmp_path: Path,
) -> None:
    pack = make_pack(tmp_path, pack_yaml="pack_id: p\ncontracts:\n  - c.yaml\n")
    (pack / "contracts" / "sub").mkdir()
    (pack / "contracts" / "sub" / "d.yaml").write_text(CONTRACT)
    (pack / "contracts" / "E.YAML").write_text(CONTRACT)
    assert load_all(tmp_path)[0] == [
        f"packs/p/pack.yaml:2: contracts/{name} is in contracts/ but not listed in "
        "pack.yaml `contracts`; list it, or move it out"
        for name in ("E.YAML", "sub/d.yaml")
    ]


def test_without_a_contracts_list_a_contract_in_a_subfolder_is_a_problem(tmp_path: Path) -> None:
    pack = make_pack(tmp_path)
    (pack / "contracts" / "sub").mkdir()
    (pack / "contracts" / "sub" / "d.yml").write_text(CONTRACT)
    assert load_all(tmp_path)[0] == [
        "packs/p/pack.yaml: contracts/sub/d.yml is in contracts/ but not run: without a "
        "`contracts` list in pack.yaml only the .yaml and .yml files directly in it run; "
        "list the contracts, or move it out"
    ]


def test_without_a_contracts_list_yml_contracts_run_too(tmp_path: Path) -> None:
    make_pack(tmp_path, contracts={"a.yaml": CONTRACT, "b.yml": CONTRACT})
    (pack,) = load_packs(["packs"], cwd=tmp_path, root=None, now=NOW).packs
    assert [c.path for c in pack.contracts] == ["contracts/a.yaml", "contracts/b.yml"]


def test_a_fixture_no_case_names_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    make_pack(
        tmp_path,
        fixtures={"ok.json": fixture(), "old.json": fixture(), "negative/gone.json": fixture()},
    )
    assert load_all(tmp_path) == (
        [],
        [
            "packs/p/golden/negative/gone.json: no golden case names this fixture; "
            "add a case for it, or remove it",
            "packs/p/golden/old.json: no golden case names this fixture; "
            "add a case for it, or remove it",
        ],
    )


def test_a_missing_golden_directory_is_one_problem_on_pack_yaml(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, contract=contract(*(golden_case(f"c{i}") for i in range(50))))
    (pack / "golden").rename(pack / "goldne")
    problems, _ = load_all(tmp_path)
    assert problems == [
        "packs/p/pack.yaml: the golden directory packs/p/golden does not exist (fixtures are "
        "read from the pack's golden/ folder, or from paths.golden_dir); did you mean goldne/? "
        "rename it golden/, or set paths.golden_dir"
    ]


def test_a_path_that_exists_relative_to_the_pack_gets_the_spelling_that_works(
    tmp_path: Path,
) -> None:
    make_pack(tmp_path, pack_yaml="pack_id: p\npaths:\n  contracts_dir: contracts\n")
    assert load_all(tmp_path)[0] == [
        "packs/p/pack.yaml:3: paths.contracts_dir 'contracts' is not a directory: paths resolve "
        f"against the repository root {tmp_path.resolve()} (the nearest folder above the pack "
        "holding .git; --root sets it); relative to the pack it exists: write 'packs/p/contracts'"
    ]


@pytest.mark.parametrize(
    ("file", "text", "problem"),
    [
        (
            "pack.yaml",
            "pack_id: p\nschema_version: v0.2\n",
            "packs/p/pack.yaml:2: schema_version: 'v0.2' is not a version this replaygate "
            "knows (known: v0.1)",
        ),
        (
            "nr-allowlist.json",
            '{"version": "2.0", "entries": []}',
            "packs/p/nr-allowlist.json: version: '2.0' is not a version this replaygate knows "
            "(known: 1.0)",
        ),
    ],
)
def test_an_unknown_format_version_is_refused_naming_the_known_ones(
    tmp_path: Path, file: str, text: str, problem: str
) -> None:
    pack = make_pack(tmp_path)
    (pack / file).write_text(text)
    assert load_all(tmp_path)[0] == [problem]


def test_a_misspelt_required_key_shows_the_unknown_key_and_its_suggestion_alone(
    tmp_path: Path,
) -> None:
    found = problems_for(tmp_path, CONTRACT.replace("expect_ok: true", "expect_okk: true"))
    assert found == [
        "packs/p/contracts/c.yaml:10: unknown key 'expect_okk' (did you mean 'expect_ok'?)"
    ]


def test_every_problem_of_a_contract_is_listed_unknown_keys_first_never_and_n_more(
    tmp_path: Path,
) -> None:
    contract = CONTRACT.replace("tool: get_weather", "tool: get_weather\ntool_order: sometimes")
    contract = contract.replace("expect_ok: true", "expect_ok: 1\n    idd: x")
    found = problems_for(tmp_path, contract)
    assert found == [
        "packs/p/contracts/c.yaml:12: unknown key 'idd' (did you mean 'id'?)",
        "packs/p/contracts/c.yaml:2: tool_order: must be one of any, strict, got 'sometimes'",
        "packs/p/contracts/c.yaml:11: golden_cases[0].expect_ok: expected true or false, got 1",
    ]
    assert not any("more)" in problem for problem in found)


def test_a_pack_yaml_key_valid_elsewhere_says_where_it_belongs(tmp_path: Path) -> None:
    make_pack(tmp_path, pack_yaml="pack_id: p\ngolden_dir: packs/p/golden\n")
    assert load_all(tmp_path)[0] == [
        "packs/p/pack.yaml:2: `golden_dir` belongs under `paths:`, not here"
    ]


def test_a_key_valid_elsewhere_says_where_it_belongs(tmp_path: Path) -> None:
    contract = CONTRACT + "output_invariants:\n  - path: $.x\n    exists: true\n"
    assert problems_for(tmp_path, contract) == [
        "packs/p/contracts/c.yaml:11: `output_invariants` belongs under `assertions:`, not here"
    ]


@pytest.mark.parametrize(
    ("contract", "problem"),
    [
        ("tool: x\ngolden_cases: []\n", "golden_cases: needs at least one item, got none"),
        ("tool: x\ngolden_cases:\n", "golden_cases: expected a list, got an empty value"),
        (
            CONTRACT.replace("tool: get_weather", "tool: get_weather\ntool_order: 3"),
            "tool_order: must be one of any, strict, got 3",
        ),
        (
            CONTRACT.replace("tool: get_weather", "tool: get_weather\npass_threshold: 2"),
            "pass_threshold: must be at most 1.0, got 2",
        ),
        ("tool: ''\ngolden_cases: []\n", "tool: must not be empty"),
    ],
)
def test_messages_are_in_our_words_not_the_validation_librarys(
    tmp_path: Path, contract: str, problem: str
) -> None:
    found = problems_for(tmp_path, contract)
    assert any(problem in line for line in found), found
    for leak in ("Input should", "List should", "None", "after validation", "String should"):
        assert not any(leak in line for line in found), found


def test_a_float_written_in_exponent_form_loads_and_compares_as_a_number(tmp_path: Path) -> None:
    contract = CONTRACT.replace(
        "equals: Bern", "equals: Bern\n      - path: $.score\n        one_of: [5.0e-12, 1.0e-09]"
    )
    call = {"name": "get_weather", "arguments": {"city": "Bern", "score": 5e-12}}
    make_pack(tmp_path, contract=contract, fixtures={"ok.json": fixture([call])})
    loaded = load_packs(["packs"], cwd=tmp_path, root=None, now=NOW)
    assert loaded.problems == ()
    (case,) = run_packs(loaded, {}).cases
    assert case.status is Status.PASSED, case


def failure_message(tmp_path: Path, operator: str, actual: Any) -> str:
    contract = CONTRACT.replace("equals: Bern", operator)
    call = {"name": "get_weather", "arguments": {"city": actual}}
    make_pack(tmp_path, contract=contract, fixtures={"ok.json": fixture([call])})
    loaded = load_packs(["packs"], cwd=tmp_path, root=None, now=NOW)
    (case,) = run_packs(loaded, {}).cases
    assert case.status is Status.FAILED, case
    return case.failures[0].message


@pytest.mark.parametrize(
    ("operator", "actual", "message"),
    [
        (
            "equals: 3.10",
            "3.10",
            "'3.10' is not equal to 3.1; the contract's `3.10` was read as the number 3.1; "
            "quote it",
        ),
        (
            "one_of: [no, maybe]",
            "no",
            "'no' is not one of [False, 'maybe']; the contract's `no` was read as false; quote it",
        ),
        ("equals: 3.10", "4.2", "'4.2' is not equal to 3.1"),  # quoting would not help
        ("gte: 5.0e-12", "Bern", "'Bern' is not a number"),
    ],
)
def test_a_failure_says_how_yaml_read_the_value_when_quoting_it_would_pass(
    tmp_path: Path, operator: str, actual: str, message: str
) -> None:
    assert failure_message(tmp_path, operator, actual) == message


# --- rules a hand mutation of the code once survived ---------------------------------------


@pytest.mark.parametrize(
    ("now", "expired"),
    [
        (datetime(2026, 6, 1, tzinfo=UTC), True),  # at its very instant, the entry has expired
        (datetime(2026, 5, 31, 23, 59, 59, 999999, tzinfo=UTC), False),
    ],
)
def test_allowlist_expiry_is_exact_to_the_instant(
    tmp_path: Path, now: datetime, expired: bool
) -> None:
    _allowlist(make_pack(tmp_path), "2026-06-01T00:00:00Z")
    loaded = load_packs(["packs"], cwd=tmp_path, root=None, now=now)
    warnings = [str(w) for w in loaded.warnings]
    assert loaded.problems == ()
    assert len(warnings) == expired
    assert all("expired on 2026-06-01T00:00:00Z: it no longer applies" in w for w in warnings)


def test_a_non_iso_expiry_is_a_problem_naming_the_entry(tmp_path: Path) -> None:
    _allowlist(make_pack(tmp_path), "June 1st, 2026")
    assert load(tmp_path)[1] == [
        "packs/p/nr-allowlist.json:1: entry 0 (contracts/c.yaml, owner team-ml): "
        "expiry_date 'June 1st, 2026' is not an ISO 8601 date"
    ]


def test_a_duplicate_golden_case_id_is_located_on_the_second(tmp_path: Path) -> None:
    twice = CONTRACT + golden_case("ok")
    assert problems_for(tmp_path, twice) == [
        "packs/p/contracts/c.yaml:11: duplicate golden case id 'ok' (first at line 8)"
    ]


def test_multi_tool_call_without_expected_calls_is_refused(tmp_path: Path) -> None:
    no_calls = contract(golden_case("ok"), head="tool: multi_tool_call\n")
    (problem,) = problems_for(tmp_path, no_calls)
    assert problem.startswith("packs/p/contracts/c.yaml:1: ")
    assert problem.endswith(
        "tool: multi_tool_call needs expect_tools, expected_tool_calls or trace_assertions"
    )


@pytest.mark.parametrize("given", ["packs/p", "packs/p/pack.yaml"])
def test_a_pack_directory_or_its_pack_yaml_given_directly(tmp_path: Path, given: str) -> None:
    make_pack(tmp_path, "p")
    make_pack(tmp_path, "other")
    loaded = load_packs([given], cwd=tmp_path, root=None, now=NOW)
    assert ([p.pack_id for p in loaded.packs], loaded.problems) == (["p"], ())


def test_a_paths_entry_that_is_not_a_directory(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, pack_yaml="pack_id: p\npaths:\n  contracts_dir: packs/p/pack.yaml\n")
    assert pack.is_dir()
    assert load(tmp_path)[1] == [
        "packs/p/pack.yaml:3: paths.contracts_dir 'packs/p/pack.yaml' is not a directory: "
        f"paths resolve against the repository root {tmp_path.resolve()} (the nearest folder "
        "above the pack holding .git; --root sets it)"
    ]


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("Timeouts", " (did you mean 'timeouts'?)"),
        ("Golden_Cases", " (did you mean 'golden_cases'?)"),
        ("a[b", ""),
        ("[key]", ""),
        ("List[str]", ""),
    ],
)
def test_an_unknown_key_of_any_shape_is_a_located_problem(
    tmp_path: Path, key: str, hint: str
) -> None:
    found = problems_for(tmp_path, CONTRACT + f"{json.dumps(key)}: {{}}\n")
    assert found == [f"packs/p/contracts/c.yaml:11: unknown key '{key}'{hint}"]


def test_a_capitalised_unknown_key_in_pack_yaml_is_a_located_problem(tmp_path: Path) -> None:
    make_pack(tmp_path, pack_yaml="pack_id: p\nName: x\n")
    problem = "packs/p/pack.yaml:2: unknown key 'Name' (did you mean 'name'?)"
    assert load(tmp_path) == ([], [problem])


SECRET_YAML = "pack_id: p\nghp_SECRET_in_a_key: 1\n"
SECRET_JSON = '{"version": "1.0", "ghp_SECRET_in_a_key": 1}'


def _outside(tmp_path: Path, name: str, text: str) -> Path:
    target = tmp_path / "outside" / name
    target.parent.mkdir(exist_ok=True)
    target.write_text(text)
    return target


def test_a_pack_yaml_symlinked_out_of_the_repository_is_refused_unread(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    pack = make_pack(repo)
    (pack / "pack.yaml").unlink()
    (pack / "pack.yaml").symlink_to(_outside(tmp_path, "pack.yaml", SECRET_YAML))
    assert load(repo) == (
        [],
        [
            "packs/p/pack.yaml: pack file 'packs/p/pack.yaml' leaves the repository "
            "through a symlink"
        ],
    )


def test_a_pack_yaml_symlinked_into_git_is_refused_unread(tmp_path: Path) -> None:
    pack = make_pack(tmp_path)
    (tmp_path / ".git" / "config").write_text(SECRET_YAML)
    (pack / "pack.yaml").unlink()
    (pack / "pack.yaml").symlink_to(tmp_path / ".git" / "config")
    assert load(tmp_path) == (
        [],
        ["packs/p/pack.yaml: pack file 'packs/p/pack.yaml' points into a .git directory"],
    )


def test_a_pack_folder_symlinked_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    elsewhere = make_pack(tmp_path / "elsewhere", pack_yaml=SECRET_YAML)
    (repo / ".git").mkdir(parents=True)
    (repo / "packs").mkdir()
    (repo / "packs" / "p").symlink_to(elsewhere)
    loaded = load_packs(["packs/p"], cwd=repo, root=None, now=NOW)
    assert loaded.packs == ()
    assert [str(problem) for problem in loaded.problems] == [
        "packs/p/pack.yaml: pack file 'packs/p/pack.yaml' leaves the repository through a symlink"
    ]


@pytest.mark.parametrize("into_git", [False, True])
def test_an_allowlist_symlinked_out_of_reach_is_refused_unread(
    tmp_path: Path, into_git: bool
) -> None:
    repo = tmp_path / "repo"
    pack = make_pack(repo)
    target = repo / ".git" / "config" if into_git else _outside(tmp_path, "a.json", SECRET_JSON)
    target.write_text(SECRET_JSON)
    (pack / "nr-allowlist.json").symlink_to(target)
    ids, problems = load(repo)
    assert (ids, problems) == (
        ["p"],
        [
            "packs/p/nr-allowlist.json: NR allowlist 'nr-allowlist.json' leaves the pack "
            "directory packs/p through a symlink"
        ],
    )


def test_a_dangling_allowlist_symlink_is_reported(tmp_path: Path) -> None:
    pack = make_pack(tmp_path)
    (pack / "nr-allowlist.json").symlink_to(pack / "gone.json")
    assert load(tmp_path) == (["p"], ["packs/p/nr-allowlist.json: file not found"])


def test_a_long_unknown_key_is_quoted_as_a_short_excerpt(tmp_path: Path) -> None:
    key = "ghp_" + "S" * 500
    (problem,) = problems_for(tmp_path, CONTRACT + f"{key}: 1\n")
    assert problem == f"packs/p/contracts/c.yaml:11: unknown key '{key[:40]}...'"


def test_an_unknown_key_with_a_line_break_is_quoted_on_one_line(tmp_path: Path) -> None:
    (problem,) = problems_for(tmp_path, CONTRACT + '"a\\nb\\u202e": 1\n')
    assert problem == "packs/p/contracts/c.yaml:11: unknown key 'a\\nb\\u202e'"


def test_a_pack_with_no_contract_is_a_problem_naming_the_misnamed_folder(tmp_path: Path) -> None:
    pack = make_pack(tmp_path)
    (pack / "contracts").rename(pack / "contract")
    assert load_all(tmp_path)[0] == [
        "packs/p/pack.yaml: the pack has no contract: the contracts directory "
        "packs/p/contracts does not exist; did you mean contract/? rename it contracts/, "
        "or set paths.contracts_dir"
    ]


def test_a_pack_whose_contracts_list_is_empty_is_a_problem(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, pack_yaml="pack_id: p\ncontracts: []\n")
    (pack / "contracts" / "c.yaml").unlink()
    assert load_all(tmp_path)[0] == [
        "packs/p/pack.yaml:2: the pack has no contract: its `contracts` list is empty"
    ]


def test_a_contract_with_no_golden_case_is_a_problem(tmp_path: Path) -> None:
    contract = CONTRACT.split("golden_cases:")[0] + "golden_cases: []\n"
    assert problems_for(tmp_path, contract) == [
        "packs/p/contracts/c.yaml:7: golden_cases: needs at least one item, got none"
    ]


def _with_case(extra: str, top: str = "") -> str:
    return top + CONTRACT.rstrip("\n") + "\n" + extra


@pytest.mark.parametrize(
    ("contract", "problem"),
    [
        (
            _with_case('    provider_modes: ["recoded"]\n'),
            "packs/p/contracts/c.yaml:11: golden_cases[0].provider_modes[0]: 'recoded' is not a "
            "provider mode (known: recorded, live, openai, openai-responses, anthropic, "
            "openai-compatible) (did you mean 'recorded'?)",
        ),
        (
            _with_case("    expected_error: wrong_tol\n").replace(
                "expect_ok: true", "expect_ok: false"
            ),
            "packs/p/contracts/c.yaml:11: golden_cases[0].expected_error: 'wrong_tol' is not an "
            "error code replaygate knows, and is close to one: did you mean 'wrong_tool'? (a "
            "recorded provider's own code, unlike any known one, is accepted as written)",
        ),
        (
            _with_case("", "retries:\n  retry_on: ['429', '5xxx']\n"),
            "packs/p/contracts/c.yaml:2: retries.retry_on[1]: '5xxx' is not a retry condition "
            "(known: 429, 5xx, timeout) (did you mean '5xx'?)",
        ),
        (
            _with_case("", "allowed_errors: [rate_limt]\n"),
            "packs/p/contracts/c.yaml:1: allowed_errors[0]: 'rate_limt' is not an error code "
            "replaygate knows, and is close to one: did you mean 'rate_limit'? (a recorded "
            "provider's own code, unlike any known one, is accepted as written)",
        ),
        (
            _with_case("", "tool_order: strcit\n"),
            "packs/p/contracts/c.yaml:1: tool_order: must be one of any, strict, got 'strcit' "
            "(did you mean 'strict'?)",
        ),
    ],
)
def test_an_enumerated_value_outside_its_documented_set_is_a_problem_with_a_suggestion(
    tmp_path: Path, contract: str, problem: str
) -> None:
    assert problems_for(tmp_path, contract) == [problem]


def test_allowed_errors_accept_a_recorded_code_unlike_any_known_one(tmp_path: Path) -> None:
    assert problems_for(tmp_path, _with_case("", "allowed_errors: [overloaded_error]\n")) == []


def test_the_documented_sets_are_the_ones_the_providers_use() -> None:
    from replaygate.loading import choices
    from replaygate.providers.client import ErrorKind
    from replaygate.providers.names import ProviderName
    from replaygate.providers.transport import RetryOn

    assert ("recorded", "live", *ProviderName) == choices.PROVIDER_MODES
    assert tuple(RetryOn) == choices.RETRY_ON
    assert tuple(ErrorKind) == choices.LIVE_ERROR_CODES


EVERY_KIND_OF_MISTAKE = """\
tool: get_weather
tool_ordre: strict
expected_tool_calls:
  - name: get_weather
    argument_invariants:
      - path: $.city
        equal: Bern
      - path: $.city[
        equals: Bern
      - path: $.days
        gte: many
        regex: "("
assertions:
  output_invariants:
    - path: $.tool_calls
      lenght_gte: 1
golden_cases:
  - id: ok
    input_ref: ok.json
    expect_ok: true
  - id: ok
    input_ref: ok.json
    expect_ok: true
"""


def test_every_problem_of_a_contract_is_reported_not_the_first(tmp_path: Path) -> None:
    found = problems_for(tmp_path, EVERY_KIND_OF_MISTAKE)
    assert [problem.split(": ")[0] for problem in found] == [
        f"packs/p/contracts/c.yaml:{line}" for line in (2, 7, 8, 11, 12, 16, 21)
    ]
    assert found[0].endswith("unknown key 'tool_ordre' (did you mean 'tool_order'?)")
    assert "unknown operator 'equal'" in found[1]
    assert "duplicate golden case id 'ok'" in found[6]


def test_every_problem_of_a_valid_shaped_contract_is_reported(tmp_path: Path) -> None:
    contract = EVERY_KIND_OF_MISTAKE.replace("tool_ordre", "tool_order")
    found = problems_for(tmp_path, contract)
    assert [problem.split(": ")[0] for problem in found] == [
        f"packs/p/contracts/c.yaml:{line}" for line in (7, 8, 11, 12, 16, 21)
    ]


def test_a_response_path_naming_a_field_no_tool_call_has_is_a_problem(tmp_path: Path) -> None:
    contract = CONTRACT.replace(
        "golden_cases:",
        "assertions:\n  output_invariants:\n    - path: $.tool_calls[*].nmae\n"
        "      not: {contains: book_hotel}\ngolden_cases:",
    )
    assert problems_for(tmp_path, contract) == [
        "packs/p/contracts/c.yaml:9: $.tool_calls[*].nmae: a tool call has no field 'nmae' "
        "(did you mean 'name'?), so the path never matches; its fields are arguments, caller, "
        "id, input, name, type"
    ]


def _units_case(tmp_path: Path, schema_extra: dict[str, Any], path: str) -> Any:
    data = fixture()
    data["request"]["tools"][0]["parameters"]["properties"]["unit"] = {"type": "string"}
    data["request"]["tools"][0]["parameters"].update(schema_extra)
    contract = CONTRACT.replace("- path: $.city\n        equals: Bern", f"- path: {path}\n"
                                "        optional: true\n        equals: C")  # fmt: skip
    make_pack(tmp_path, contract=contract, fixtures={"ok.json": data})
    (case,) = run_packs(load_packs(["packs"], cwd=tmp_path, root=None, now=NOW), {}).cases
    return case


def test_an_argument_path_naming_a_property_the_tool_schema_does_not_declare_errors_the_case(
    tmp_path: Path,
) -> None:
    case = _units_case(tmp_path, {"additionalProperties": False}, "$.units")
    assert (case.status, case.reason) == (
        Status.ERROR,
        "line 5: $.units: tool 'get_weather' declares no argument 'units' "
        "(did you mean 'unit'?), so the path never matches; its arguments are city, unit",
    )


def test_an_argument_path_is_not_judged_where_the_schema_lets_other_properties_in(
    tmp_path: Path,
) -> None:
    opened = {"additionalProperties": False, "allOf": [{"type": "object"}]}
    for index, extra in enumerate(({}, {"additionalProperties": True}, opened)):
        case = _units_case(tmp_path / str(index), extra, "$.units")
        assert case.status is Status.PASSED, case.reason
