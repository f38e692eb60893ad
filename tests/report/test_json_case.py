"""A case's JSON text, written without its object, against the encoder's text of its object."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import strategies as st

from hostile_results import cases, results
from replaygate.core.model import CaseResult, RunResult, Status
from replaygate.report import json as json_report
from replaygate.report.json import render_json
from replaygate.report.json_case import ENCODER, case_object, case_text
from sizes import sized


def encoded(case: CaseResult) -> str | None:
    """What the encoder writes for the case's object; None where it refuses it."""
    try:
        return ENCODER.encode(case_object(case))
    except (TypeError, ValueError):
        return None


@sized(300, case=st.sampled_from(["a", "p/x.yaml", "\ud800]]>"]).flatmap(lambda n: cases(n, n)))
def test_a_case_is_written_as_the_encoder_writes_its_object(case: CaseResult) -> None:
    """Or refused where the encoder refuses it (nan, a float key), so the fallback writes it."""
    expected = encoded(case)
    if expected is None:
        with pytest.raises((TypeError, ValueError)):
            case_text(case)
    else:
        assert case_text(case) == expected


# Values the model's annotations do not allow but Python does: each must come out as the
# encoder writes it, never as the annotation's type would be written.
ODD = [
    {"expect_ok": 1},
    {"known": 0},
    {"observed_ok": 1.0},
    {"line": True},
    {"order": 2.5},
    {"duration_s": 3},
    {"duration_s": math.inf},
    {"score": math.nan},
    {"score": 1},
    {"case_id": 7},
    {"reason": b"x"},
    {"classification": ("a",)},
]


@pytest.mark.parametrize("fields", ODD, ids=lambda fields: next(iter(fields)))
def test_a_value_of_another_type_is_left_to_the_encoder(
    make_case: Any, fields: dict[str, Any]
) -> None:
    case = replace(make_case(Status.FAILED), **fields)
    with pytest.raises((TypeError, ValueError)):
        case_text(case)
    written = json_report._case(case)
    assert written == (encoded(case) or json_report._dump(case_object(case)))


# Values the encoder's path cannot write at all (a plain str has no ``.value``, None is not
# iterable): the writer must refuse them too, never write a record the old path could not.
UNWRITABLE = [{"status": "passed"}, {"assertions": None}, {"failures": None}]


@pytest.mark.parametrize("fields", UNWRITABLE, ids=lambda fields: next(iter(fields)))
def test_a_value_the_encoder_path_cannot_write_is_not_written(
    make_case: Any, fields: dict[str, Any]
) -> None:
    case = replace(make_case(Status.PASSED), **fields)
    with pytest.raises((TypeError, ValueError)):
        case_text(case)
    with pytest.raises((TypeError, AttributeError)):
        case_object(case)


def written_from_objects(result: RunResult) -> str:
    """The document with every case written by the encoder from its object."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_report, "_case", lambda c: json_report._dump(case_object(c)))
        return render_json(result)


@sized(150, result=results())
def test_the_document_is_the_one_written_from_objects(result: RunResult) -> None:
    assert render_json(result) == written_from_objects(result)
