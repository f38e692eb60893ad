"""A small factory of results for the renderer tests, hostile strings included."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from engine_results import engine_cases, engine_failure
from replaygate.core.model import (
    CaseResult,
    Failure,
    PackSummary,
    Problem,
    RunResult,
    Status,
)

# Text a fixture or a pack could carry, aimed at every output format at once.
HOSTILE = (
    "a|b\n| --- |\r\n<script>alert(1)</script> ]]> </testcase> &amp; "
    "[x](javascript:alert(1)) ![i](http://e/i.png) **bold** _em_ ~~s~~ `code` ``` $x^2$ "
    "@everyone @org/team #123 ::error::pwned ##[error]x \x00 \x07 \x1b[31mred\x1b[0m "
    "\x9b31m \u202eevil\u202c \ud800 \udfff \ufffe \\"
)


def failure(**fields: Any) -> Failure:
    """The engine's wrong_tool failure, on line 14 of the demo contract, fields overridden."""
    placed = {"file": "packs/demo/contracts/weather.yaml", "line": 14}
    return replace(engine_failure("wrong_tool"), **(placed | fields))


_KIND = {
    Status.PASSED: "passed",
    Status.FAILED: "wrong_tool",
    Status.ERROR: "error",
    Status.SKIPPED: "skipped",
}


def case(status: Status = Status.PASSED, **fields: Any) -> CaseResult:
    """The engine's case of that status, renamed into the demo pack, fields overridden."""
    values: dict[str, Any] = {
        "pack": "demo",
        "pack_dir": "packs/demo",
        "contract": "weather.yaml",
        "contract_file": "packs/demo/contracts/weather.yaml",
        "case_id": "sunny",
        "fingerprint": "0123456789ab" if status is Status.FAILED else None,
        "failures": (failure(),) if status is Status.FAILED else (),
        "file": "packs/demo/contracts/weather.yaml",
        "line": 30,
        "reason": None,
        "order": 0,
    }
    return replace(engine_cases()[_KIND[status]], **(values | fields))


def run(*cases: CaseResult, **fields: Any) -> RunResult:
    values: dict[str, Any] = {
        "cases": cases,
        "problems": (),
        "packs": (PackSummary("demo", "Demo pack", "packs/demo", 1),),
        "duration_s": 0.04,
        "meta": {},
    }
    return RunResult(**(values | fields))


def hostile_run() -> RunResult:
    """Every field a renderer shows carries HOSTILE text."""
    bad_failure = failure(
        classification=HOSTILE,
        message=HOSTILE,
        locator=HOSTILE,
        file="packs/x/" + HOSTILE,
        path="$." + HOSTILE,
        operator=HOSTILE,
        expected={HOSTILE: [HOSTILE, 1.5, None]},
        actual=HOSTILE,
    )
    hostile = {
        "pack": HOSTILE,
        "contract": HOSTILE + ".yaml",
        "contract_file": "packs/" + HOSTILE,
        "case_id": HOSTILE,
        "file": "packs/" + HOSTILE,
        "inputs": ("packs/" + HOSTILE, "packs/" + HOSTILE),
        "run_id": HOSTILE,
    }
    return run(
        case(Status.PASSED, **hostile),
        case(Status.FAILED, **hostile, classification=HOSTILE, failures=(bad_failure,)),
        case(Status.FAILED, **hostile, known=True, reason=HOSTILE),
        case(Status.ERROR, **hostile, reason=HOSTILE, classification=HOSTILE),
        case(Status.SKIPPED, **hostile, reason=HOSTILE),
        problems=(Problem("packs/" + HOSTILE, 3, HOSTILE),),
        packs=(PackSummary(HOSTILE, HOSTILE, "packs/" + HOSTILE, 2),),
    )


NR_REASON = "nr-allowlist: model_nondeterminism (team-ml): flaky"


def mixed_run() -> RunResult:
    """Two packs, every status, a known failure, a problem and a shard."""
    other = {"pack": "other", "pack_dir": "packs/other", "contract": "sub/order.yaml"}
    other["contract_file"] = other["file"] = "packs/other/contracts/sub/order.yaml"
    return run(
        case(Status.PASSED),
        case(Status.PASSED, case_id="cloudy", duration_s=0.0),
        case(Status.FAILED, case_id="rainy", line=40),
        case(Status.FAILED, case_id="old", known=True, fingerprint="fedcba987654"),
        case(Status.ERROR, case_id="broken", reason="fixture is not valid JSON"),
        case(Status.SKIPPED, case_id="live", reason="provider_modes excludes 'recorded'"),
        case(Status.SKIPPED, **other, case_id="nr", reason=NR_REASON),
        case(Status.SKIPPED, **other, case_id="live2", reason="provider_modes excludes 'recorded'"),
        problems=(Problem("packs/bad/pack.yaml", 3, "unknown key 'nmae' (did you mean 'name'?)"),),
        packs=(
            PackSummary("demo", "Demo pack", "packs/demo", 1),
            PackSummary("other", "Other pack", "packs/other", 1),
        ),
        meta={"shard": {"index": 1, "count": 2}},
    )


def many_failures(count: int, *, alike: bool = False) -> RunResult:
    """``count`` failed cases, with non-ASCII text so byte and character counts differ.

    Each fails on its own contract line unless ``alike``: then all fail the same way.
    """
    template = case(Status.FAILED)
    cases = tuple(
        replace(
            template,
            case_id=f"case-{index}-ünïcødé-🚀",
            line=index + 1,
            failures=template.failures if alike else (failure(line=index + 1),),
            fingerprint=f"{index:012x}",
        )
        for index in range(count)
    )
    return run(*cases)


@pytest.fixture
def make_failure() -> Callable[..., Failure]:
    """Build a Failure: a wrong_tool default, any field overridden by keyword."""
    return failure


@pytest.fixture
def make_case() -> Callable[..., CaseResult]:
    """Build a CaseResult of a status: consistent defaults, any field overridden by keyword."""
    return case


@pytest.fixture
def make_run() -> Callable[..., RunResult]:
    """Build a RunResult of the cases given (one pack, 0.04 s) with fields overridden."""
    return run


@pytest.fixture
def make_many() -> Callable[..., RunResult]:
    return many_failures


@pytest.fixture
def hostile_text() -> str:
    return HOSTILE


@pytest.fixture
def hostile() -> RunResult:
    return hostile_run()


@pytest.fixture
def mixed() -> RunResult:
    return mixed_run()
