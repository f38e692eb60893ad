"""The baseline file: its format, its errors, and what it does to a result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packbuilder import make_pack
from replaygate.cli import main
from replaygate.core.errors import PackError
from replaygate.core.model import Status
from replaygate.results.baseline import (
    apply_baseline,
    baseline_entries,
    load_baseline,
    load_entries,
    render_baseline,
)
from sample_results import case, failed, result


def test_apply_marks_only_failed_cases_with_accepted_fingerprints() -> None:
    run = result(failed("a"), failed("b"), case("e", Status.ERROR), case("ok"))
    fingerprints = frozenset({run.cases[0].fingerprint or "", run.cases[2].fingerprint or ""})
    marked = apply_baseline(run, fingerprints)
    assert [c.known for c in marked.cases] == [True, False, False, False]
    assert marked.totals.known == 1
    assert marked.problems == run.problems and marked.packs == run.packs


def test_render_is_sorted_deterministic_and_round_trips(tmp_path: Path) -> None:
    run = result(failed("b"), failed("a"), failed("a"), case("e", Status.ERROR), case("ok"))
    text = render_baseline(baseline_entries(run))
    document = json.loads(text)
    fingerprints = [entry["fingerprint"] for entry in document["fingerprints"]]
    assert fingerprints == sorted({run.cases[0].fingerprint, run.cases[1].fingerprint})
    assert document["fingerprints"][0].keys() == {
        "fingerprint",
        "pack",
        "contract",
        "case_id",
        "classification",
    }
    reversed_run = result(*reversed(run.cases))
    assert render_baseline(baseline_entries(reversed_run)) == text
    path = tmp_path / "baseline.json"
    path.write_text(text)
    assert load_baseline(path) == frozenset(fingerprints)


def test_justifications_of_an_existing_file_are_kept(tmp_path: Path) -> None:
    run = result(failed("a"))
    fingerprint = run.cases[0].fingerprint or ""
    path = tmp_path / "baseline.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "comment": "accepted debt",
                "fingerprints": [
                    {"fingerprint": fingerprint, "justification": "vendor bug #12"},
                    {"fingerprint": "0123456789ab", "justification": "gone now"},
                ],
            }
        )
    )
    entries = baseline_entries(run, load_entries(path))
    assert entries == [
        {
            "fingerprint": fingerprint,
            "pack": "demo",
            "case_id": "a",
            "contract": "contracts/triage.yaml",
            "classification": "schema_violation",
            "justification": "vendor bug #12",
        }
    ]


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("{\n  nope", 2, "invalid JSON: Expecting property name enclosed in double quotes"),
        ("[]", None, "expected an object with 'version' and 'fingerprints'"),
        ('{"version": 2, "fingerprints": []}', None, "'version' must be 1, got 2"),
        ('{"version": 1}', None, "'fingerprints' must be a list of objects"),
        ('{"version": 1, "fingerprints": [], "extra": 1}', None, "unknown key 'extra'"),
        (
            '{"version": 1, "fingerprints": ["0123456789ab"]}',
            None,
            "fingerprints[0]: expected an object with a 'fingerprint'",
        ),
        (
            '{"version": 1, "fingerprints": [{"fingerprint": "XYZ"}]}',
            None,
            "fingerprints[0]: 'fingerprint' must be 12 hex digits, got 'XYZ'",
        ),
        (
            '{"version": 1, "fingerprints": [{"fingerprint": "0123456789ab", "why": "x"}]}',
            None,
            "fingerprints[0]: unknown key 'why'",
        ),
        (
            '{"version": 1, "fingerprints": [{"fingerprint": "0123456789ab", "pack": 3}]}',
            None,
            "fingerprints[0]: every value must be a string",
        ),
        ('{"version": NaN, "fingerprints": []}', 1, "NaN is not valid JSON"),
        ('{"version": 1,\n"version": 1, "fingerprints": []}', 2, "duplicate key 'version'"),
    ],
)
def test_bad_files_are_one_line_errors(
    tmp_path: Path, content: str, line: int | None, message: str
) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(content)
    with pytest.raises(PackError) as caught:
        load_baseline(path)
    assert (caught.value.file, caught.value.line) == (str(path), line)
    assert caught.value.message.startswith(message)
    assert "\n" not in str(caught.value)


def test_a_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(PackError, match=r"absent\.json: file not found"):
        load_baseline(tmp_path / "absent.json")


@pytest.mark.parametrize("target", ["/dev/zero", "/proc/self/status"])
def test_a_baseline_that_is_a_device_or_system_file_is_refused_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    make_pack(tmp_path)
    link = tmp_path / "baseline.json"
    link.symlink_to(target)
    assert (
        main(["run", "--root", str(tmp_path), str(tmp_path / "packs"), "--baseline", str(link)])
        == 2
    )
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith(f"replaygate: {link}: ")
    assert "internal error" not in err
