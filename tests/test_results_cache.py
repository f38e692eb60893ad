"""`run --cache DIR`: what a key covers, what is never cached, and that results never change."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from packbuilder import fixture, make_pack
from replaygate import cli
from replaygate.cache import codec as cache_codec
from replaygate.cache import keys as cache_keys
from replaygate.cache.store import CACHE_FILE, KEEP_RUNS, Store, Window, load_store
from replaygate.core.model import (
    AssertionOutcome,
    AssertionStatus,
    Capture,
    CaseResult,
    Failure,
    Problem,
    Status,
)
from replaygate.loading.identity import request_identity
from replaygate.loading.pack import load_pack
from replaygate.loading.roots import Root
from replaygate.providers.redact import Redactor
from replaygate.providers.store import recording_document, write_recording
from sample_results import case as sample_case
from sample_results import failure as sample_failure
from sample_results import result as sample_result

REPO = Path(__file__).resolve().parent.parent
CONTRACT = """\
tool: get_weather
expected_tool_calls:
  - name: get_weather
    argument_invariants:
      - path: $.city
        equals_env: CITY
golden_cases:
  - id: ok
    input_ref: ok.json
    expect_ok: true
  - id: other
    input_ref: other.json
    expect_ok: true
"""
RECORDING = {"response": {"success": True, "tool_calls": [{"name": "get_weather",
             "arguments": {"city": "Bern"}}]}}  # fmt: skip
TIMES = ("duration_s",)


def without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def run(
    capsys: pytest.CaptureFixture[str], *argv: str, cache: Path | None = None
) -> tuple[int, str, dict[str, int]]:
    """Exit code, stdout without the -v case lines' times, and the cache counts."""
    extra = ["--cache", str(cache), "-v"] if cache is not None else ["-v"]
    code = cli.main(["run", *argv, *extra])
    out = capsys.readouterr().out
    found = re.search(r"^cache: (\d+) reused, (\d+) judged anew, (\d+) not cacheable\n", out, re.M)
    counts: dict[str, int] = {}
    if found:
        counts = dict(zip(("hits", "misses", "uncached"), map(int, found.groups()), strict=True))
        out = out.replace(found.group(0), "")
    return code, re.sub(r" in [0-9.]+s$", "", out, flags=re.M), counts


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    fixtures = {"ok.json": fixture(), "other.json": fixture()}
    pack = make_pack(root, contract=CONTRACT, fixtures=fixtures)
    (pack / "recordings").mkdir()
    (pack / "recordings" / "other.recording.json").write_text(json.dumps(RECORDING))
    monkeypatch.setenv("CITY", "Bern")
    monkeypatch.chdir(tmp_path)
    return root


def test_a_warm_run_reuses_every_case_and_reports_the_same(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    code, plain, _ = run_plain(capsys, repo)
    cold = run(capsys, str(repo / "packs"), cache=cache)
    warm = run(capsys, str(repo / "packs"), cache=cache)
    assert cold[2] == {"hits": 0, "misses": 2, "uncached": 0}
    assert warm[2] == {"hits": 2, "misses": 0, "uncached": 0}
    assert code == cold[0] == warm[0] == 0
    assert plain == cold[1] == warm[1]


def run_plain(capsys: pytest.CaptureFixture[str], repo: Path) -> tuple[int, str, None]:
    code = cli.main(["run", str(repo / "packs"), "-v"])
    out = re.sub(r" in [0-9.]+s$", "", capsys.readouterr()[0], flags=re.M)
    return code, out, None


def flip_file(relative: str) -> Callable[[Path], None]:
    def flip(root: Path) -> None:
        path = root / "packs" / "p" / relative
        path.write_bytes(path.read_bytes() + b" ")

    return flip


def remove_recording(root: Path) -> None:
    (root / "packs/p/recordings/other.recording.json").unlink()


def add_recording(root: Path) -> None:
    (root / "packs/p/recordings/ok.recording.json").write_text(json.dumps(RECORDING))


def edit_contract(old: str, new: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / "packs/p/contracts/c.yaml"
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))

    return edit


OTHER = "  - id: other\n    input_ref: other.json\n    expect_ok: true\n"
THIRD = "  - id: third\n    input_ref: ok.json\n    expect_ok: true\n"
# each changes one input of the case "other" (or of every case): the run after it judges
# them again (hits, misses), and parses the contract again
CHANGES: dict[str, tuple[Callable[[Path], None], int, int]] = {
    "pack.yaml": (flip_file("pack.yaml"), 0, 2),
    "contract": (flip_file("contracts/c.yaml"), 0, 2),
    "fixture": (flip_file("golden/other.json"), 1, 1),
    "recording": (flip_file("recordings/other.recording.json"), 1, 1),
    "recording removed": (remove_recording, 1, 1),
    "recording added": (add_recording, 1, 1),
    "contract names another fixture": (edit_contract("ref: other.json", "ref: ok.json"), 0, 2),
    "case added": (edit_contract(OTHER, OTHER + THIRD), 0, 3),
    "case removed": (edit_contract(OTHER, ""), 0, 1),
    "case id renamed": (edit_contract("id: other", "id: another"), 0, 2),
}


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The contracts a cached run parses, as it parses them."""
    from replaygate.cache import contracts as cache_contracts

    found: list[str] = []

    def counted(path: Path, pack: Any) -> Any:
        found.append(path.name)
        return parse(path, pack)

    parse = cache_contracts.parse_contract
    monkeypatch.setattr(cache_contracts, "parse_contract", counted)
    return found


@pytest.mark.parametrize("change", CHANGES)
def test_a_changed_byte_in_any_input_is_a_miss(
    repo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: str,
    parsed: list[str],
) -> None:
    cache = tmp_path / "cache"
    run(capsys, str(repo / "packs"), cache=cache)
    assert run(capsys, str(repo / "packs"), cache=cache)[2]["hits"] == 2
    assert parsed == ["c.yaml"]  # the warm run did not parse it
    alter, hits, misses = CHANGES[change]
    alter(repo)
    expected = run_plain(capsys, repo)
    code, shown, counts = run(capsys, str(repo / "packs"), cache=cache)
    assert counts == {"hits": hits, "misses": misses, "uncached": 0}
    assert (code, shown) == expected[:2]
    assert parsed == ["c.yaml", "c.yaml"]
    again = run(capsys, str(repo / "packs"), cache=cache)
    assert again == (code, shown, {"hits": hits + misses, "misses": 0, "uncached": 0})
    assert parsed == ["c.yaml", "c.yaml"]


def test_a_recordings_folder_made_is_a_miss(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(repo / "packs/p/recordings")
    cache = tmp_path / "cache"
    run(capsys, str(repo / "packs"), cache=cache)
    assert run(capsys, str(repo / "packs"), cache=cache)[2]["hits"] == 2
    (repo / "packs/p/recordings").mkdir()
    assert run(capsys, str(repo / "packs"), cache=cache)[2]["hits"] == 2  # still no recording
    add_recording(repo)
    expected = run_plain(capsys, repo)[:2]
    code, shown, counts = run(capsys, str(repo / "packs"), cache=cache)
    assert (code, shown) == expected
    assert counts == {"hits": 1, "misses": 1, "uncached": 0}


@pytest.mark.parametrize(
    "setting",
    [
        {"env": ("CITY", "Zurich")},
        {"env": ("CITY", None)},
        {"argv": ["--model", "gpt-4o"]},
        {"argv": ["--root", "repo/packs"]},
        {"version": "9.9.9"},
    ],
    ids=["env changed", "env unset", "--model", "--root", "version"],
)
def test_a_changed_setting_is_a_miss(
    repo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    setting: dict[str, Any],
) -> None:
    cache = tmp_path / "cache"
    run(capsys, str(repo / "packs"), cache=cache)
    if "env" in setting:
        name, value = setting["env"]
        if value is None:
            monkeypatch.delenv(name)
        else:
            monkeypatch.setenv(name, value)
    if "version" in setting:
        monkeypatch.setattr("replaygate.cache.keys.__version__", setting["version"])
    argv = setting.get("argv", [])
    counts = run(capsys, *argv, str(repo / "packs"), cache=cache)[2]
    # an unset variable makes both cases errors: judged, and never stored
    assert counts["hits"] == 0
    assert run(capsys, *argv, str(repo / "packs"), cache=cache)[2]["hits"] == (
        0 if setting.get("env", ("", ""))[1] is None else 2
    )


def test_env_names_are_found_in_nested_assertions() -> None:
    from replaygate.loading.pack import load_contract

    contracts = REPO / "tests/cases/composites/packs"
    found = set()
    for path in contracts.rglob("*.yaml"):
        if path.parent.name == "contracts":
            pack = path.parent.parent
            found |= cache_keys.env_names(load_contract(path, pack, contracts.parent))
    text = " ".join(p.read_text() for p in contracts.rglob("*.yaml"))
    assert found == set(re.findall(r"equals_env: ([A-Z_]+)", text))


CORRUPT = {
    "not json": "{",
    "truncated": None,
    "wrong format": None,
    "extra top key": None,
    "entries a list": None,
    "other code": None,
    "extra key in a result": None,
    "a missing key": None,
    "a wrong type": None,
    "an unknown status": None,
    "a score not a number": None,
    "a bad window": None,
    "a bad key": None,
}


def corrupt(text: str, how: str) -> str:
    if CORRUPT[how] is not None:
        return str(CORRUPT[how])
    if how == "truncated":
        return text[: len(text) // 2]
    data = json.loads(text)
    if how in ("extra top key", "wrong format", "entries a list", "other code"):
        changed = {"extra top key": ("more", 1), "wrong format": ("cache_format", 0)}
        changed |= {"entries a list": ("entries", []), "other code": ("identity", "0" * 64)}
        key, value = changed[how]
        data[key] = value
        return json.dumps(data)
    if how == "a bad key":
        data["entries"] = {k.upper(): v for k, v in data["entries"].items()}
        return json.dumps(data)
    for entry in data["entries"].values():
        result = entry["result"]
        if how == "extra key in a result":
            result["extra"] = 1
        elif how == "a missing key":
            del result["case_id"]
        elif how == "a wrong type":
            result["line"] = str(result["line"])
        elif how == "an unknown status":
            result["status"] = "passed!"
        elif how == "a score not a number":
            result["score"] = math.nan  # written as NaN, which is no JSON
        else:
            entry["end"] = "tomorrow"
    return json.dumps(data)


@pytest.mark.parametrize("how", CORRUPT)
def test_an_entry_that_does_not_decode_exactly_is_ignored_and_rewritten(
    repo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    how: str,
) -> None:
    cache = tmp_path / "cache"
    expected = run(capsys, str(repo / "packs"), cache=cache)[:2]
    file = cache / CACHE_FILE
    file.write_text(corrupt(file.read_text(), how))
    code, shown, counts = run(capsys, str(repo / "packs"), cache=cache)
    assert (code, shown) == expected
    assert counts["hits"] == 0
    assert run(capsys, str(repo / "packs"), cache=cache)[2]["hits"] == 2


@pytest.mark.parametrize(
    "change",
    [lambda entry: entry["result"].update(line="27"), lambda entry: entry.update(end=10**12),
     lambda entry: entry.pop("generation"), lambda entry: entry.clear()],
    ids=["a wrong type", "a whole number as a bound", "a key missing", "empty"],
)  # fmt: skip
def test_an_entry_that_does_not_decode_is_a_miss_alone(
    repo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, Any]], object],
) -> None:
    cache = tmp_path / "cache"
    expected = run(capsys, str(repo / "packs"), cache=cache)[:2]
    file = cache / CACHE_FILE
    data = json.loads(file.read_text())
    bad, good = sorted(data["entries"])
    change(data["entries"][bad])
    file.write_text(json.dumps(data))
    assert run(capsys, str(repo / "packs"), cache=cache) == (
        *expected,
        {"hits": 1, "misses": 1, "uncached": 0},
    )
    written = json.loads(file.read_text())["entries"]
    assert (
        written.keys() == {bad, good} and written[good]["result"] == data["entries"][good]["result"]
    )
    assert run(capsys, str(repo / "packs"), cache=cache)[2]["hits"] == 2


def tamper_case(change: Callable[[dict[str, Any]], object]) -> Callable[[Any], object]:
    return lambda entry: [change(case) for case in entry["cases"] if case["id"] == "other"]


# a contract entry changed: each is a miss (the contract is parsed), never a crash
TAMPERED: dict[str, Callable[[Any], object]] = {
    "env not a list": lambda entry: entry.update(env="CITY"),
    "env a number": lambda entry: entry.update(env=[1]),
    "an env name dropped": lambda entry: entry.update(env=[]),
    "an env name added": lambda entry: entry["env"].append("HOME"),
    "cases not a list": lambda entry: entry.update(cases={}),
    "a case not a mapping": lambda entry: entry["cases"].append("third"),
    "a case with an extra key": tamper_case(lambda case: case.update(extra=1)),
    "a case without a key": tamper_case(lambda case: case.pop("line")),
    "a line as text": tamper_case(lambda case: case.update(line="9")),
    "a line as true": tamper_case(lambda case: case.update(line=True)),
    "modes not a list": tamper_case(lambda case: case.update(provider_modes="recorded")),
    "a case id twice": tamper_case(lambda case: case.update(id="ok")),
    "a case renamed": tamper_case(lambda case: case.update(id="another")),
    "another fixture named": tamper_case(lambda case: case.update(input_ref="ok.json")),
    "expect_ok flipped": tamper_case(lambda case: case.update(expect_ok=False)),
    "a case moved a line": tamper_case(lambda case: case.update(line=case["line"] + 1)),
    "an extra key": lambda entry: entry.update(more=1),
    "an entry a list": None,
}


@pytest.mark.parametrize("how", TAMPERED)
def test_a_contract_entry_changed_is_a_miss_and_the_contract_is_parsed(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str, parsed: list[str]
) -> None:
    cache = tmp_path / "cache"
    expected = run(capsys, str(repo / "packs"), cache=cache)[:2]
    file = cache / CACHE_FILE
    data = json.loads(file.read_text())
    ((key, entry),) = data["contracts"].items()
    change = TAMPERED[how]
    if change is None:
        data["contracts"][key] = list(entry)
    else:
        change(entry)
    file.write_text(json.dumps(data))
    assert run(capsys, str(repo / "packs"), cache=cache)[:2] == expected
    assert parsed == ["c.yaml", "c.yaml"]
    # the entry was written again: the next run does not parse the contract
    assert run(capsys, str(repo / "packs"), cache=cache) == (
        *expected,
        {"hits": 2, "misses": 0, "uncached": 0},
    )
    assert parsed == ["c.yaml", "c.yaml"]


def test_a_warm_run_of_one_case_reports_it_alone(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], parsed: list[str]
) -> None:
    cache = tmp_path / "cache"
    one = f"{repo}/packs/p/contracts/c.yaml::other"
    expected = snapshot([one], tmp_path)
    run(capsys, str(repo / "packs"), cache=cache)
    assert snapshot([one, "--cache", str(cache)], tmp_path) == expected
    (case,) = expected[1]["cases"]
    assert (case["case_id"], case["order"]) == ("other", 0)  # not its place in the contract
    assert parsed == ["c.yaml"]
    assert run(capsys, one, cache=cache)[2] == {"hits": 1, "misses": 0, "uncached": 0}


def test_a_pack_dropped_for_its_pack_id_lends_no_result(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], parsed: list[str]
) -> None:
    # the same pack_id, contract and case ids in another folder: that pack is refused, and
    # its cases (which fail) must not stand in for those of the pack that runs
    wrong = fixture([{"name": "get_weather", "arguments": {"city": "Zurich"}}])
    fixtures = {"ok.json": wrong, "other.json": wrong}
    make_pack(repo, "q", contract=CONTRACT, fixtures=fixtures, pack_yaml="pack_id: p\n")
    expected = snapshot(["--root", str(repo), str(repo / "packs")], tmp_path)
    assert expected[1]["totals"]["failed"] == 0 and expected[1]["problems"]
    cache = ["--cache", str(tmp_path / "cache")]
    for _ in range(2):
        assert snapshot(["--root", str(repo), str(repo / "packs"), *cache], tmp_path) == expected
    # the refused pack's cases are never judged, so never stored: its contract is parsed on
    # every run, the other one on the cold run only
    assert parsed == ["c.yaml"] * 3


def test_a_cache_inside_the_repository_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["run", str(repo / "packs"), "--cache", str(repo / "build" / "cache")])
    err = capsys.readouterr().err
    assert code == 4
    assert "inside the repository" in err and "Traceback" not in err
    assert not (repo / "build").exists()


def test_a_cache_in_the_git_repository_but_outside_root_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--root", str(repo / "packs"), str(repo / "packs")]
    assert cli.main([*argv, "--cache", str(repo / "cache")]) == 4
    assert cli.main([*argv, "--cache", ""]) == 4
    err = capsys.readouterr().err
    assert "inside the repository" in err and "give a folder" in err


def test_a_live_run_is_never_cached(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["run", str(repo / "packs"), "--cache", "x", "--provider", "openai"])
    assert code == 4
    assert "live runs are never cached" in capsys.readouterr().err


def link_fixture(root: Path) -> None:
    golden = root / "packs/p/golden"
    (golden / "elsewhere.json").write_text((golden / "ok.json").read_text())
    (golden / "ok.json").unlink()
    (golden / "ok.json").symlink_to("elsewhere.json")


def link_pack_folder(root: Path) -> None:
    shutil.move(root / "packs/p/golden", root / "real-golden")
    (root / "packs/p/golden").symlink_to(root / "real-golden")


def add_allowlist(root: Path) -> None:
    entry = {"contract": "c.yaml", "reason": "flaky", "expires": "2999-01-01"}
    (root / "packs/p/nr-allowlist.json").write_text(json.dumps({"entries": [entry]}))


@pytest.mark.posix  # symbolic links
@pytest.mark.parametrize("setup", [link_fixture, link_pack_folder, add_allowlist])
def test_packs_with_links_or_an_allowlist_are_never_cached(
    repo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    setup: Callable[[Path], None],
) -> None:
    setup(repo)
    cache = tmp_path / "cache"
    expected = run_plain(capsys, repo)[:2]
    for _ in range(2):
        code, shown, counts = run(capsys, str(repo / "packs"), cache=cache)
        assert counts == {"hits": 0, "misses": 0, "uncached": 2}
        assert (code, shown) == expected


def test_errored_cases_are_judged_every_time(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "packs/p/golden/other.json").write_text("{")
    cache = tmp_path / "cache"
    run(capsys, str(repo / "packs"), cache=cache)
    code, shown, counts = run(capsys, str(repo / "packs"), cache=cache)
    assert code == 1 and "error" in shown
    assert counts == {"hits": 1, "misses": 1, "uncached": 0}


def test_shards_share_a_cache(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    first = [run(capsys, "--shard", f"{k}/2", str(repo / "packs"), cache=cache) for k in (1, 2)]
    again = [run(capsys, "--shard", f"{k}/2", str(repo / "packs"), cache=cache) for k in (1, 2)]
    assert [r[2]["misses"] for r in first] == [1, 1]
    assert [r[2]["hits"] for r in again] == [1, 1]
    assert [r[:2] for r in first] == [r[:2] for r in again]


def snapshot(args: list[str], out: Path) -> tuple[int, Any, str]:
    code = cli.main(["run", *args, "--json", str(out / "r.json"), "--junit", str(out / "j.xml")])
    # a time of 0 puts the attribute elsewhere: canonical XML orders attributes
    text = re.sub(r'time="[0-9.]+"', "", (out / "j.xml").read_text()).split("\n", 1)[1]
    junit = ET.canonicalize(text)
    return code, without_times(json.loads((out / "r.json").read_text())), junit


SHIPPED = ["packs", *sorted(str(p.relative_to(REPO)) for p in REPO.glob("tests/cases/*/packs"))]


@pytest.mark.parametrize("packs", SHIPPED)
def test_shipped_packs_report_the_same_cold_and_warm(
    packs: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    args = ["--root", str(Path(packs).parent), packs]
    plain = snapshot(args, tmp_path)
    cache = ["--cache", str(tmp_path / "cache")]
    cold, warm = snapshot([*args, *cache], tmp_path), snapshot([*args, *cache], tmp_path)
    assert plain == cold == warm


def test_a_results_entry_decodes_to_the_result_it_encodes() -> None:
    spec = {f.name for f in fields(CaseResult)} - cache_codec.RUN_FIELDS
    assert set(cache_codec.Result.__struct_fields__) == spec  # a new result field is cached
    for case in sample_result().cases:
        data = json.loads(json.dumps(cache_codec.encode(case)))
        assert cache_codec.decode(data, order=case.order, duration_s=case.duration_s) == case


def rich_result() -> CaseResult:
    """A result with a value in every nested record; its score and a weight whole numbers."""
    outcome = AssertionOutcome(
        "a1", "tool_called", AssertionStatus.PASSED, 2, None, "p/c.yaml", 4,
        recorded=True, differs="why", captures=(Capture("city", "Bern", False),),
    )  # fmt: skip
    failed = sample_case("x", Status.FAILED, classification="wrong_tool")
    return replace(
        failed, failures=(sample_failure(),), notes=(Problem("r.json", 3, "old"),), score=1,
        assertions=(outcome,), order=0, duration_s=0.0,
    )  # fmt: skip


DELETE = object()
# (where, value): every kind of change a decoded entry must refuse, at every depth
TAMPERED_RESULTS: dict[str, tuple[str, Any]] = {
    "a whole number as text": ("line", "40"),
    "true as a whole number": ("line", True),
    "a fraction as a whole number": ("line", 40.0),
    "null as text": ("case_id", None),
    "a number as true or false": ("known", 0),
    "a status unknown": ("status", "passed!"),
    "a mapping as a list": ("failures", {}),
    "text as a list": ("notes", "old"),
    "NaN as a score": ("score", math.nan),
    "Infinity as a score": ("score", math.inf),
    "true as a score": ("score", True),
    "text as a score": ("score", "1"),
    "a key of the run": ("order", 3),
    "an extra key": ("extra", 1),
    "a key missing": ("fingerprint", DELETE),
    "a failure with an extra key": ("failures.0.extra", 1),
    "a failure without a key": ("failures.0.actual", DELETE),
    "a failure's line as text": ("failures.0.line", "12"),
    "a failure not a mapping": ("failures.0", []),
    "a note's line as a fraction": ("notes.0.line", 1.5),
    "a note without its message": ("notes.0.message", DELETE),
    "a weight as NaN": ("assertions.0.weight", math.nan),
    "a weight as null": ("assertions.0.weight", None),
    "an assertion's status unknown": ("assertions.0.status", "maybe"),
    "a capture's flag as text": ("assertions.0.captures.0.truncated", "no"),
    "a capture with an extra key": ("assertions.0.captures.0.more", ""),
    "a capture not a mapping": ("assertions.0.captures.0", "city"),
}


@pytest.mark.parametrize("how", TAMPERED_RESULTS)
def test_a_tampered_result_entry_does_not_decode(how: str) -> None:
    data = json.loads(json.dumps(cache_codec.encode(rich_result())))
    assert cache_codec.decode(data, order=0, duration_s=0.0) == rich_result()
    where, value = TAMPERED_RESULTS[how]
    *parents, last = where.split(".")
    place = data
    for step in parents:
        place = place[int(step)] if isinstance(place, list) else place[step]
    if value is DELETE:
        del place[last]
    elif isinstance(place, list):
        place[int(last)] = value
    else:
        place[last] = value
    data = json.loads(json.dumps(data))  # as json reads the file: NaN and Infinity included
    with pytest.raises(cache_codec.BadEntry):
        cache_codec.decode(data, order=0, duration_s=0.0)


def test_whole_numbers_decode_as_written() -> None:
    # the reports print 1 and 1.0 differently
    data = json.loads(json.dumps(cache_codec.encode(rich_result())))
    back = cache_codec.decode(data, order=0, duration_s=0.0)
    assert type(back.score) is int and type(back.assertions[0].weight) is int
    data["score"], data["assertions"][0]["weight"] = 1.0, 2.0
    back = cache_codec.decode(data, order=0, duration_s=0.0)
    assert type(back.score) is float and type(back.assertions[0].weight) is float


def test_a_contract_entry_decodes_to_the_cases_it_encodes() -> None:
    from replaygate.cache import contracts as cache_contracts
    from replaygate.loading.contract import GoldenCase

    assert set(cache_contracts._Case.__struct_fields__) == {f.name for f in fields(GoldenCase)}
    cases = (
        GoldenCase("a", "a.json", True, None, ("recorded", "openai"), 3, 5),
        GoldenCase("b", "n/b.json", False, "wrong_tool", None, 7, 9, skip="why"),
    )
    contract = cache_contracts.unparsed({"env": [], "cases": []}, "c.yaml", "p/c.yaml")
    assert contract is not None
    entry = cache_contracts.contract_entry(replace(contract, golden_cases=cases), {"B", "A"})
    assert entry is not None and entry["env"] == ["A", "B"]
    back = cache_contracts.unparsed(json.loads(json.dumps(entry)), "c.yaml", "p/c.yaml")
    assert back is not None
    assert (back.path, back.file, back.golden_cases) == ("c.yaml", "p/c.yaml", cases)
    assert back.env_names == ("A", "B")


def test_a_result_json_cannot_hold_exactly_is_not_stored() -> None:
    failed = (sample_failure(),)
    case = sample_case("x", Status.FAILED, classification="schema_violation", failures=failed)
    store = Store()
    failure = replace(case.failures[0], expected=("a", "tuple"))
    assert not store.put("a" * 64, replace(case, failures=(failure,)), Window())
    assert not store.put("b" * 64, replace(case, status=Status.ERROR), Window())
    assert store.put("c" * 64, case, Window())


def test_entries_unused_for_a_while_are_dropped(tmp_path: Path) -> None:
    case = sample_case("x")
    store = Store()
    store.put("a" * 64, case, Window())
    text = store.dump()
    for _ in range(KEEP_RUNS - 1):  # the run that wrote it is one of the KEEP_RUNS
        (tmp_path / CACHE_FILE).write_text(text)
        text = load_store(str(tmp_path), "").dump()
    assert "a" * 64 in text
    (tmp_path / CACHE_FILE).write_text(text)
    assert "a" * 64 not in load_store(str(tmp_path), "").dump()


DAY = cache_keys.DAY


def write_dated_recording(pack: Path, when: datetime) -> None:
    request = fixture()["request"]
    document = recording_document(
        identity=request_identity(request, "gpt-4o-mini"),
        provider="openai",
        model="gpt-4o-mini",
        response=RECORDING["response"],
        status=200,
        body={},
        now=when,
    )
    write_recording(pack / "recordings/other.recording.json", document, Redactor.build({}))


@pytest.mark.parametrize(
    ("age", "window"),
    [
        (0.5, (None, 91 * DAY - 1)),  # no warning until the age passes 90 days
        (95.5, (95 * DAY + 1, 96 * DAY - 1)),  # "recorded 95 days ago": that day only
    ],
)
def test_a_recordings_age_bounds_when_its_result_holds(
    repo: Path, age: float, window: tuple[float | None, float]
) -> None:
    made = datetime(2026, 1, 1, tzinfo=UTC)
    write_dated_recording(repo / "packs/p", made)
    pack, _, _ = load_pack(repo / "packs/p/pack.yaml", Root(repo, "test"), made)
    assert pack is not None
    case = pack.contracts[0].golden_cases[1]
    now = made.timestamp() + age * DAY
    found = cache_keys.age_window(pack, case, now, now)
    # what a run stores under: the same, through the keys that know the recordings folder
    assert cache_keys.Keys({}, None, "identity").window(pack, case, now, now) == found
    start, end = window
    expected_start = None if start is None else made.timestamp() + start
    assert found == Window(expected_start, made.timestamp() + end)
    # the age changed during the run: not stored
    later = made.timestamp() + 91.1 * DAY
    assert cache_keys.age_window(pack, case, made.timestamp() + 90.9 * DAY, later) is None


def test_a_pack_without_a_recordings_folder_stores_results_that_always_hold(repo: Path) -> None:
    shutil.rmtree(repo / "packs/p/recordings")
    pack, _, _ = load_pack(repo / "packs/p/pack.yaml", Root(repo, "test"), datetime.now(UTC))
    assert pack is not None
    case = pack.contracts[0].golden_cases[1]
    assert cache_keys.Keys({}, None, "identity").window(pack, case, 0.0, 1.0) == Window()


def test_an_old_recordings_warning_is_reused_the_same_day(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_dated_recording(repo / "packs/p", datetime.now(UTC) - timedelta(days=95, hours=1))
    expected = run_plain(capsys, repo)[:2]
    assert "recorded 95 days ago" in expected[1]
    cache = tmp_path / "cache"
    run(capsys, str(repo / "packs"), cache=cache)
    code, shown, counts = run(capsys, str(repo / "packs"), cache=cache)
    assert (code, shown) == expected and counts["hits"] == 2


@pytest.mark.posix  # symbolic links
def test_a_symlinked_root_above_the_repository_still_caches(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "via").symlink_to(repo)
    cache = tmp_path / "cache"
    run(capsys, str(tmp_path / "via" / "packs"), cache=cache)
    assert run(capsys, str(tmp_path / "via" / "packs"), cache=cache)[2]["hits"] == 2


def test_a_run_that_reuses_every_entry_leaves_the_file_alone(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    run(capsys, str(repo / "packs"), cache=cache)
    written = (cache / CACHE_FILE).read_text()
    run(capsys, str(repo / "packs"), cache=cache)
    assert (cache / CACHE_FILE).read_text() == written
    run(capsys, f"{repo}/packs/p/contracts/c.yaml::ok", cache=cache)  # "other" goes unused
    assert json.loads((cache / CACHE_FILE).read_text())["generation"] == 2


def test_every_operator_that_reads_the_environment_is_keyed() -> None:
    import dis

    from replaygate.assertions.operators import OPERATORS

    def reads_env(check: Any) -> bool:
        code = getattr(check, "__code__", None)
        return code is not None and any(
            i.opname.startswith("LOAD_FAST") and i.argval == "env"
            for i in dis.get_instructions(code)
        )

    # a composite hands env to its nested assertions, which the key walks into
    readers = {op.name for op in OPERATORS.values() if not op.nested and reads_env(op.check)}
    assert readers == cache_keys.ENV_OPERATORS


@pytest.mark.parametrize("ref", [".GIT/other.json", ".git/../other.json"])
def test_an_input_ref_through_a_git_folder_is_an_error_cold_and_warm(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], ref: str
) -> None:
    # the run refuses `.GIT` as it refuses `.git` (a case-insensitive file system), and a
    # `.git` folded away by `..`: the case errors; the cache must not stop the run over it
    contract = repo / "packs/p/contracts/c.yaml"
    contract.write_text(CONTRACT.replace("input_ref: other.json", f"input_ref: {ref}"))
    (repo / "packs/p/golden/.GIT").mkdir()
    shutil.copy(repo / "packs/p/golden/other.json", repo / "packs/p/golden/.GIT/other.json")
    expected = run_plain(capsys, repo)[:2]
    assert expected[0] == 1 and "points into a .git directory" in expected[1]
    cache = tmp_path / "cache"
    for _ in range(2):
        code, shown, counts = run(capsys, str(repo / "packs"), cache=cache)
        assert (code, shown) == expected
        assert counts["hits"] + counts["misses"] + counts["uncached"] == 2


@pytest.mark.posix  # POSIX paths
@pytest.mark.parametrize("folder", ["/r/p/golden", "/r/p/golden/negative", "/"])
@pytest.mark.parametrize(
    "name",
    ["c.json", ".git", ".GIT", "..", ".", "", ".hidden.json", "a/../b.json", "a\\b.json",
     "C:b.json", "../golden/c.json", "x/.git/c.json", "/etc/passwd"],
)  # fmt: skip
def test_a_plain_fixture_name_is_joined_as_the_full_check_would(folder: str, name: str) -> None:
    # the key's shortcut for a plain name must place and refuse every name as normalising does
    path = os.path.normpath(os.path.join(folder, name))
    inside = path.startswith(folder + "/") and not os.path.isabs(name)
    git = ".git" in path[len(folder) :].casefold().split("/")
    assert cache_keys._inside(folder, name) == (path if inside and not git else None)


# Libraries a run imports whose versions need no key of their own: pinned exactly by a keyed
# one (pydantic's core), holding no judgement (types, containers), or checking formats that
# neither a tool schema (formats are not asserted) nor a meta-schema uses, when installed.
NOT_JUDGING = {
    "replaygate", "setuptools", "pydantic-core", "typing-extensions", "typing-inspection",
    "annotated-types", "attrs", "rpds-py", "idna", "fqdn", "jsonpointer", "uri-template",
    "webcolors", "isoduration", "arrow", "python-dateutil", "six", "types-python-dateutil",
    "rfc3339-validator",
}  # fmt: skip
# jsonschema checks a schema's "uri" and "uri-reference" formats (the meta-schemas' $id,
# $ref) only when one of these is installed: its presence can turn a pass into an error
URI_FORMATS = {"rfc3987", "rfc3986-validator"}


def test_every_library_that_judges_a_case_is_keyed(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = f"""
import contextlib, io, json, sys
from importlib import metadata
from replaygate import cli
for packs in {SHIPPED!r}:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        root = str(__import__("pathlib").Path(packs).parent)
        cli.main(["run", "--root", root, packs, "--cache", {str(tmp_path)!r}])
found = metadata.packages_distributions()
print(json.dumps(sorted({{d for m in list(sys.modules) for d in found.get(m.split(".")[0], [])}})))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True
    )
    imported = {name.lower().replace("_", "-") for name in json.loads(done.stdout)}
    assert "jsonschema" in imported  # the run reached the slow path that checks a schema
    keyed = set(cache_keys._DEPENDENCIES)
    assert imported - NOT_JUDGING <= keyed
    assert keyed >= URI_FORMATS


def test_a_cache_that_cannot_be_written_is_a_warning_and_the_run_reports(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    cache.write_text("a file where the folder should be")
    report = tmp_path / "results.json"
    code = cli.main(["run", str(repo / "packs"), "--cache", str(cache), "--json", str(report)])
    out = capsys.readouterr().out
    assert code == 0
    assert json.loads(report.read_text())["totals"]["passed"] == 2
    assert f"{cache / CACHE_FILE}: warning: the cache was not saved (" in out


def test_a_contract_the_parse_refuses_unread_is_not_read_whole_warm(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Too large, or not a regular file (a FIFO would block the read): refused as uncached,
    without the cache's look-up reading it first."""
    from replaygate.loading.files import MAX_YAML_BYTES

    contracts = next(repo.glob("packs/*/contracts"))
    (contracts / "big.yaml").write_bytes(b"#" * (MAX_YAML_BYTES + 1))
    fifo = hasattr(os, "mkfifo")
    if fifo:
        os.mkfifo(contracts / "pipe.yaml")
    read: list[str] = []
    real = Path.read_bytes

    def spy(self: Path) -> bytes:
        read.append(self.name)
        if self.name == "pipe.yaml":
            raise OSError("would block")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    plain = run(capsys, str(repo / "packs"))
    warm = run(capsys, str(repo / "packs"), cache=tmp_path / "cache")
    assert "big.yaml" not in read and "pipe.yaml" not in read
    assert plain[:2] == warm[:2]
    assert "file is too large" in warm[1]
    assert not fifo or "a FIFO" in warm[1]


def test_a_case_key_is_the_documented_digest_of_its_parts(repo: Path) -> None:
    """The key continues the contract's hash: it must equal the length-prefixed digest of
    all its parts written out, so two lists of parts can never give the same key."""
    pack, _, _ = load_pack(repo / "packs/p/pack.yaml", Root(repo, "test"), datetime.now(UTC))
    assert pack is not None
    contract = pack.contracts[0]
    keys = cache_keys.Keys({"CITY": "Bern"}, None, "identity")
    pack_key = keys.pack(pack)
    assert pack_key is not None
    text = (repo / contract.file).read_bytes()
    contract_key = cache_keys._env_key(
        pack_key, contract.path, contract.file, text, ["CITY"], {"CITY": "Bern"}
    )
    for case in contract.golden_cases:
        fixture_path = pack.golden_dir / case.input_ref
        recording = pack.recordings_dir / case.input_ref.replace(".json", ".recording.json")
        parts = [contract_key, case.id.encode(), repr(case).encode()]
        parts += [os.fsencode(fixture_path), fixture_path.read_bytes(), os.fsencode(recording)]
        if recording.exists():
            parts += [b"recording", recording.read_bytes()]
        else:
            parts += [b"no recording"]
        assert keys.case(pack, contract, case) == cache_keys._digest(parts).hex()


@pytest.mark.parametrize("where", ["score", "assertions.0.weight"])
def test_a_whole_number_past_a_floats_range_decodes_without_a_crash(where: str) -> None:
    data = json.loads(json.dumps(cache_codec.encode(rich_result())))
    place = data if where == "score" else data["assertions"][0]
    place[where.rsplit(".", 1)[-1]] = -(10**400)
    back = cache_codec.decode(data, order=0, duration_s=0.0)
    found = back.score if where == "score" else back.assertions[0].weight
    assert found == -(10**400)


def test_a_huge_score_in_the_cache_file_is_no_crash(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    expected = run(capsys, str(repo / "packs"), cache=cache)
    file = cache / CACHE_FILE
    huge = "1" + "0" * 400
    text = re.sub(r'"score": ?(null|[0-9.]+)', f'"score": {huge}', file.read_text())
    assert huge in text
    file.write_text(text)
    code, _, counts = run(capsys, str(repo / "packs"), cache=cache)
    assert code == expected[0] and counts["hits"] + counts["misses"] == 2


def test_an_unused_entry_of_any_shape_is_dropped_when_the_file_is_rewritten(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Entries of cases this run does not select are kept only when well shaped."""
    cache = tmp_path / "cache"
    run(capsys, str(repo / "packs"), cache=cache)
    file = cache / CACHE_FILE
    data = json.loads(file.read_text())
    odd = {"a" * 64: 5, "b" * 64: None, "c" * 64: [1], "d" * 64: {"result": 1}}
    # well shaped, under a key that is no digest
    odd |= {"G" * 64: next(iter(data["entries"].values())), "short": {}}
    data["entries"].update(odd)
    odd_contracts = {"e" * 64: 5, "f" * 64: {"env": [], "cases": []}}
    odd_contracts |= {"H" * 64: next(iter(data["contracts"].values()))}
    data["contracts"].update(odd_contracts)
    file.write_text(json.dumps(data))
    contract = next(repo.glob("packs/*/contracts/*.yaml"))
    selected = f"{contract}::ok"
    # a fixture changed: this run writes the file again, with the odd entries unread
    fixture_file = next(repo.glob("packs/*/golden/ok.json"))
    fixture_file.write_text(fixture_file.read_text() + "\n")
    code, _, counts = run(capsys, selected, cache=cache)
    assert code == 0 and counts["misses"] == 1
    written = json.loads(file.read_text())
    assert not odd.keys() & written["entries"].keys()
    assert not odd_contracts.keys() & written["contracts"].keys()
    assert len(written["contracts"]) == 1


RUN_HITS = """\
import sys
from replaygate import cli
code = cli.main(["run", sys.argv[1], "--cache", sys.argv[2], "-q"])
# what only judging (or storing) needs: the engine, the fixture reader, the assertion
# compiler and its regex module, importlib.metadata (the identity reads folder names)
heavy = ("replaygate.engine", "replaygate.loading.fixtures", "replaygate.loading.recording",
         "replaygate.assertions.assertion", "regex", "importlib.metadata")
print(sorted(m for m in sys.modules if m.startswith(heavy)))
raise SystemExit(code)
"""


def test_a_run_whose_every_case_hits_imports_no_engine(repo: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    argv = [sys.executable, "-c", RUN_HITS, str(repo / "packs"), str(tmp_path / "cache")]
    cold = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "replaygate.engine.judge" in cold.stdout.splitlines()[-1]
    assert "replaygate.loading.fixtures" in cold.stdout.splitlines()[-1]
    warm = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=tmp_path)
    assert warm.stdout.splitlines()[-1] == "[]"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("which", ["fixture", "recording"])
def test_a_fifo_fixture_or_recording_is_refused_cached_as_uncached(
    repo: Path, tmp_path: Path, which: str
) -> None:
    """The key is computed before the loader sees the file: its read must not wait for a
    writer. A subprocess, so a regression fails the test instead of hanging the suite."""
    import subprocess
    import sys

    pack = next(repo.glob("packs/*"))
    path = pack / ("golden/other.json" if which == "fixture" else "recordings/ok.recording.json")
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    script = "import sys; from replaygate import cli; raise SystemExit(cli.main(sys.argv[1:]))"
    base = [sys.executable, "-c", script, "run", str(repo / "packs")]

    def outcome(*extra: str) -> tuple[int, str]:
        done = subprocess.run(
            [*base, *extra], capture_output=True, text=True, timeout=120, cwd=tmp_path
        )
        return done.returncode, re.sub(r" in [0-9.]+s$", "", done.stdout, flags=re.M)

    plain = outcome()
    assert "FIFO" in plain[1]
    assert outcome("--cache", str(tmp_path / "cache")) == plain


# A warm run large enough to fork (the threshold lowered): another process computes the
# keys of the last contracts, the run's own decodes their results.
HELPED = 8


@pytest.fixture
def helped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[list[Any] | None]]:
    """A repository of HELPED contracts, and the other process's answers as the runs get
    them."""
    from replaygate import parallel
    from replaygate.cache import contracts as cache_contracts

    root = tmp_path / "repo"
    contracts = {f"c{n}.yaml": CONTRACT for n in range(HELPED)}
    fixtures = {"ok.json": fixture(), "other.json": fixture()}
    make_pack(root, contracts=contracts, fixtures=fixtures)
    monkeypatch.setenv("CITY", "Bern")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(parallel, "MIN_BYTES", 1)
    answers: list[list[Any] | None] = []
    known = cache_contracts.WarmContracts._known

    def spied(self: Any, found: list[Any]) -> Any:
        answers.append(found)
        return known(self, found)

    monkeypatch.setattr(cache_contracts.WarmContracts, "_known", spied)
    return root, answers


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forking is POSIX")
def test_a_helper_computes_the_keys_of_the_last_contracts_and_the_run_is_the_same(
    helped: tuple[Path, list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    parsed: list[str],
) -> None:  # fmt: skip
    root, answers = helped
    packs, cache = str(root / "packs"), tmp_path / "cache"
    expected = run_plain(capsys, root)
    parsed.clear()
    cold = run(capsys, packs, "--jobs", "2", cache=cache)
    assert answers == [[None] * len(answers[0])]  # an empty cache: nothing for it to find
    assert 0 < len(answers[0]) < HELPED
    warm = run(capsys, packs, "--jobs", "2", cache=cache)
    assert all(found is not None for found in answers[1])
    assert [len(keys) for _, keys in answers[1]] == [2] * len(answers[1])
    assert cold[:2] == warm[:2] == expected[:2]
    assert warm[2] == {"hits": 2 * HELPED, "misses": 0, "uncached": 0}
    assert len(parsed) == HELPED  # the cold run's only
    # a change in the helper's last contract: a miss there, its other case and the rest hit
    (root / "packs/p/golden/other.json").write_bytes(b'{"changed": 1}')
    (root / "packs/p/golden/ok.json").touch()
    expected = run_plain(capsys, root)
    changed = run(capsys, packs, "--jobs", "2", cache=cache)
    assert answers[2] == [None] * len(answers[2])
    assert changed[:2] == expected[:2]
    assert changed[2] == {"hits": HELPED, "misses": HELPED, "uncached": 0}


def swap_contracts(found: list[Any]) -> list[Any]:
    return [found[1], found[0], *found[2:]]


def swap_cases(found: list[Any]) -> list[Any]:
    return [(key, keys[::-1]) for key, keys in found]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forking is POSIX")
@pytest.mark.parametrize(
    "answer",
    [
        [("0" * 64, ["0" * 64] * 2)] * HELPED, [("0" * 64, [])] * HELPED,
        swap_contracts, swap_cases,  # keys in the cache, each another contract's or case's
    ],
)  # fmt: skip
def test_keys_that_name_nothing_or_another_case_cost_only_time(
    helped: tuple[Path, list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, answer: Any,
) -> None:  # fmt: skip
    from replaygate.cache import contracts as cache_contracts

    root, answers = helped
    packs, cache = str(root / "packs"), tmp_path / "cache"
    cold = run(capsys, packs, "--jobs", "2", cache=cache)
    warm = run(capsys, packs, "--jobs", "2", cache=cache)
    shared = len(answers[-1])
    known = cache_contracts.WarmContracts._known

    def nonsense(self: Any, found: list[Any]) -> Any:
        return known(self, answer(found) if callable(answer) else answer[:shared])

    monkeypatch.setattr(cache_contracts.WarmContracts, "_known", nonsense)
    assert run(capsys, packs, "--jobs", "2", cache=cache) == warm
    assert cold[:2] == warm[:2]


@pytest.mark.parametrize("swap", ["two cases", "two contracts"])
def test_a_result_stored_under_another_cases_key_is_a_miss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    swap: str,
) -> None:  # fmt: skip
    """A key covers what its result names: a result that names another case (a cache file
    edited, or a bug) is never reported as this one's."""
    root = tmp_path / "repo"
    other = CONTRACT.replace("equals_env: CITY", "equals: Bern")
    fixtures = {"ok.json": fixture(), "other.json": fixture()}
    make_pack(root, contracts={"a.yaml": CONTRACT, "b.yaml": other}, fixtures=fixtures)
    monkeypatch.setenv("CITY", "Bern")
    monkeypatch.chdir(tmp_path)
    packs, cache = str(root / "packs"), tmp_path / "cache"
    expected = run_plain(capsys, root)
    run(capsys, packs, cache=cache)
    file = cache / CACHE_FILE
    data = json.loads(file.read_text())
    entries = data["entries"]
    by_name = {(e["result"]["contract"], e["result"]["case_id"]): k for k, e in entries.items()}
    first = by_name[("contracts/a.yaml", "ok")]
    second = by_name[("contracts/a.yaml", "other")]
    if swap == "two contracts":
        second = by_name[("contracts/b.yaml", "ok")]
    entries[first], entries[second] = entries[second], entries[first]
    file.write_text(json.dumps(data))
    code, shown, counts = run(capsys, packs, cache=cache)
    assert (code, shown) == expected[:2]
    assert counts == {"hits": 2, "misses": 2, "uncached": 0}


def test_each_entry_struct_lists_its_types_fields_in_their_order() -> None:
    """A result is built from its entry positionally (a warm run builds thousands)."""
    pairs = [
        (cache_codec.Result, CaseResult),
        (cache_codec._Failure, Failure),
        (cache_codec._Problem, Problem),
        (cache_codec._Outcome, AssertionOutcome),
        (cache_codec._Capture, Capture),
    ]
    for struct, kind in pairs:
        names = tuple(f.name for f in fields(kind) if f.name not in cache_codec.RUN_FIELDS)
        assert struct.__struct_fields__ == names, kind
    assert [f.name for f in fields(CaseResult)][-1] == "order"
    assert [f.name for f in fields(CaseResult)].index("duration_s") == cache_codec._DURATION
    from replaygate.cache.contracts import _Case
    from replaygate.loading.contract import GoldenCase

    assert _Case.__struct_fields__ == tuple(f.name for f in fields(GoldenCase))  # derived


def test_a_record_derived_from_a_dataclass_keeps_its_types_and_refuses_what_is_missing() -> None:
    from dataclasses import dataclass

    import msgspec

    @dataclass
    class Kind:
        name: str
        count: int | None = None

    record = cache_codec.strict_record(Kind)
    assert msgspec.json.decode(b'{"name": "a", "count": 2}', type=record).count == 2
    for bad in (b'{"name": "a"}', b'{"name": 1, "count": 2}', b'{"name": "a", "count": 2, "x": 0}'):
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(bad, type=record)


def test_the_identity_finds_the_versions_importlib_metadata_finds() -> None:
    from importlib import metadata

    found = cache_keys.metadata_folders()
    for name in cache_keys._DEPENDENCIES:
        folder = found.get(cache_keys._normalised(name))
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            assert folder is None, name
            continue
        assert folder is not None and f"-{version}." in folder, (name, folder)


@pytest.mark.parametrize(
    "folder", ["jsonschema-99.0.dist-info", "rfc3987-1.3.8-py3.11.egg-info", "RFC3987.egg-info"]
)
def test_a_library_installed_upgraded_or_removed_changes_the_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    before = cache_keys.code_identity()
    (tmp_path / folder).mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))  # found first, as an import would
    assert cache_keys.code_identity() != before
    (tmp_path / folder).rmdir()
    assert cache_keys.code_identity() == before


def test_a_fixture_too_large_to_read_is_judged_cached_as_uncached(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run refuses a fixture over 16 MiB unread; its key must not read it whole either
    (a sparse file of any size costs nothing to make)."""
    fixture_file = next(repo.glob("packs/*/golden/other.json"))
    with fixture_file.open("r+b") as handle:
        handle.truncate(17 * 1024 * 1024)
    expected = run_plain(capsys, repo)
    assert "too large" in expected[1]
    cache = tmp_path / "cache"
    for hits in (0, 1):  # the other case: no key, judged every time
        code, shown, counts = run(capsys, str(repo / "packs"), cache=cache)
        assert (code, shown) == expected[:2]
        assert counts == {"hits": hits, "misses": 1 - hits, "uncached": 1}


def test_a_cached_run_loads_without_collecting_and_collects_again_after(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """What a warm run loads (contracts, thousands of results) lives to its end: the
    collector, which would only scan it, is off meanwhile, and on again after."""
    import gc

    from replaygate.cache import contracts as cache_contracts

    seen: list[bool] = []
    batch = cache_contracts.WarmContracts.batch

    def watched(self: Any, items: Any) -> Any:
        seen.append(gc.isenabled())
        return batch(self, items)

    monkeypatch.setattr(cache_contracts.WarmContracts, "batch", watched)
    assert gc.isenabled()
    assert run(capsys, str(repo / "packs"), cache=tmp_path / "cache")[0] == 0
    assert seen == [False]
    assert gc.isenabled()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forking is POSIX")
def test_without_a_helper_process_the_load_can_still_be_cancelled(
    helped: tuple[Path, list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A fork refused (a full process table) leaves the run's own process to load every
    contract, with Ctrl-C and SIGTERM taken as ever: none held while it loads."""
    import signal

    from replaygate.cache import contracts as cache_contracts

    root, _ = helped
    packs, cache = str(root / "packs"), tmp_path / "cache"
    run(capsys, packs, "--jobs", "1", cache=cache)
    expected = run(capsys, packs, "--jobs", "1", cache=cache)

    def refused() -> int:
        raise BlockingIOError("Resource temporarily unavailable")

    held: list[set[int]] = []
    load = cache_contracts.WarmContracts.__call__

    def watched(self: Any, path: Path, pack: Any) -> Any:
        held.append(set(signal.pthread_sigmask(signal.SIG_BLOCK, set())))
        return load(self, path, pack)

    monkeypatch.setattr(os, "fork", refused)
    monkeypatch.setattr(cache_contracts.WarmContracts, "__call__", watched)
    assert run(capsys, packs, "--jobs", "2", cache=cache) == expected
    assert held and held == [set()] * len(held)
