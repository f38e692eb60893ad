"""Two sizes for differential runs: small in the README's command, full under `-m differential`."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

# Examples per property in the README's run: every run still tries varied input, and the
# differential job (`python -m pytest -m differential`, run by .ci/run) tries the full count.
FAST = 50


def sizes(full: int, fast: int = FAST) -> list[Any]:
    """Parameters for a test's size: ``[fast]`` always runs, ``[full]`` is marked differential."""
    return [
        pytest.param(min(fast, full), id="fast"),
        pytest.param(full, id="full", marks=pytest.mark.differential),
    ]


def run_sized(
    test: Callable[..., None],
    examples: int,
    *strategies: Any,
    suppress: Sequence[HealthCheck] = (),
    fixed: bool | None = None,
    **named: Any,
) -> Callable[..., Any]:
    """``test`` under ``@given(*strategies, **named)`` with ``examples`` examples: ``fixed``
    (by default, for a fast size) the same ones every time, as the README's run wants (a few
    dozen random ones could miss what a test counts on by chance), else fresh ones."""
    checked = given(*strategies, **named)(test)
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=suppress,
        derandomize=examples <= FAST if fixed is None else fixed,
    )(checked)


def sized(
    full: int,
    *strategies: Any,
    fast: int = FAST,
    suppress: Sequence[HealthCheck] = (),
    **named: Any,
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``@given(*strategies, **named)`` as two tests, ``[fast]`` and ``[full]`` (see sizes);
    the test's other arguments (fixtures, parameters from marks above this one) pass through."""

    def decorate(test: Callable[..., None]) -> Callable[..., None]:
        small = min(fast, full)
        runs = {
            n: run_sized(test, n, *strategies, suppress=suppress, **named) for n in (small, full)
        }

        def run(*, examples: int, **arguments: Any) -> None:
            runs[examples](**arguments)

        # pytest reads a test's arguments from its signature: hypothesis's, plus the size
        shown = inspect.signature(runs[full])
        size = inspect.Parameter("examples", inspect.Parameter.KEYWORD_ONLY, annotation=int)
        run.__signature__ = shown.replace(parameters=[*shown.parameters.values(), size])
        run.__name__, run.__qualname__, run.__doc__ = test.__name__, test.__qualname__, test.__doc__
        run.__module__ = test.__module__
        return pytest.mark.parametrize("examples", sizes(full, fast))(run)

    return decorate
