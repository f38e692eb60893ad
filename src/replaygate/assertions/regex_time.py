"""Which regex searches need no time bound, and the CPU budget a case's timed searches share.

A search's time bound (``timeout=``) reads the process's CPU clock, a system call that costs
more than searching a short id. A pattern whose repeats each repeat one character (no repeated
group, backreference, lookaround or conditional) backtracks a bounded number of times: from
each of the n+1 starts in a text of n characters, each choice of how many characters every
repeat takes and of an alternative at every ``|`` is one path of at most L + n steps (L the
pattern's elements, counted repeats expanded). Where that product stays under STEPS, the search
ends long before the bound would (a step is nanoseconds), so it runs without one.

The structure is read with Python's ``re`` parser. A pattern it cannot read, or that the regex
module could read differently (a literal ``{``: ``{e<=1}`` is fuzzy matching there), keeps its
time bound.

A timed search is bounded twice: by its own bound, and by what is left of its case's budget
(CASE_BUDGET_S of CPU time for every timed search of one case together: contract `regex`, a
tool schema's `pattern`, `args_match`), so that a pattern just under the bound, searched in
thousands of values, cannot hold the run for hours. A search past the budget raises
BudgetSpent, a TimeoutError every caller already turns into an errored case.
"""

from __future__ import annotations

import functools
import math
import re
import time
import warnings
from contextvars import ContextVar
from re import _constants as sre  # type: ignore[attr-defined]  # no public regex parser
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import regex

from replaygate.assertions.regex_size import expanded_size

CASE_BUDGET_S = 2.0  # CPU seconds for all the timed searches of one case
STEPS = 1_000_000  # at most a few tens of milliseconds, against a bound of 250 ms
_ONE_CHARACTER = {sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN}
_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT}
_BRACE = ord("{")


class _Shape:
    """How many ways a pattern's repeats and alternatives can be taken."""

    def __init__(self) -> None:
        self.repeats: list[tuple[int, int]] = []  # (min, max) of each repeat
        self.alternatives = 1  # the product of the alternatives' counts


@functools.lru_cache(maxsize=1024)
def untimed_up_to(pattern: str) -> int:
    """The longest text ``pattern`` may be searched in without a time bound; -1 for none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = sre_parse.parse(pattern)
        size = expanded_size(pattern)
    except (re.error, OverflowError, RecursionError, ValueError):
        return -1
    shape = _Shape()
    # "[:": the regex module reads a POSIX class ([[:alpha:]]) where re reads a class and a
    # literal; whatever the difference costs, such a pattern keeps its bound
    if "[:" in pattern or parsed.state.flags & re.VERBOSE or not _read(parsed, shape):
        return -1
    return _longest(size, shape)


def _read(items: Any, shape: _Shape) -> bool:
    """Whether every element is one the bound covers; notes its repeats and alternatives."""
    for op, arg in items:
        if op in _REPEATS:
            low, high, body = arg
            if len(body) != 1 or not _one_character(*body[0]):
                return False
            shape.repeats.append((low, high))
        elif op is sre.SUBPATTERN:
            _, add_flags, del_flags, body = arg
            if (add_flags | del_flags) & re.VERBOSE or not _read(body, shape):
                return False
        elif op is sre.BRANCH:
            shape.alternatives *= len(arg[1])
            if not all(_read(branch, shape) for branch in arg[1]):
                return False
        elif op is not sre.AT and not _one_character(op, arg):
            return False
    return True


def _one_character(op: Any, arg: Any) -> bool:
    if op is sre.IN:
        return not any(item == (sre.LITERAL, _BRACE) for item in arg)
    return op in _ONE_CHARACTER and arg != _BRACE


def _steps(n: int, size: int, shape: _Shape) -> int:
    choices = math.prod(max(1, min(high, n) - low + 1) for low, high in shape.repeats)
    return (n + 1) * (size + n) * choices * shape.alternatives


def _longest(size: int, shape: _Shape) -> int:
    """The largest n whose steps stay under STEPS (they grow with n), or -1."""
    if _steps(0, size, shape) > STEPS:
        return -1
    low, high = 0, STEPS  # n + 1 starts alone pass STEPS there
    while low < high:
        middle = (low + high + 1) // 2
        if _steps(middle, size, shape) <= STEPS:
            low = middle
        else:
            high = middle - 1
    return low


class BudgetSpent(TimeoutError):
    """The timed searches of one case used up its CPU budget."""

    def __init__(self, budget_s: float) -> None:
        super().__init__(f"the case's regex CPU budget of {budget_s:g} s is spent")


class _Budget:
    def __init__(self, seconds: float) -> None:
        self.given = self.left = seconds


# the case being judged on this thread (record judges cases on threads) and what it has left
_BUDGET: ContextVar[_Budget | None] = ContextVar("regex_budget", default=None)


class CaseBudget:
    """The timed searches inside share ``seconds`` (CASE_BUDGET_S when None) of CPU time.

    A class rather than a generator: every case enters one, and this costs a fifth as much.
    """

    __slots__ = ("_seconds", "_token")

    def __init__(self, seconds: float | None = None) -> None:
        self._seconds = CASE_BUDGET_S if seconds is None else seconds

    def __enter__(self) -> None:
        self._token = _BUDGET.set(_Budget(self._seconds))

    def __exit__(self, *exc: object) -> None:
        _BUDGET.reset(self._token)


def timed_search(pattern: regex.Pattern[str], text: str, bound: float) -> regex.Match[str] | None:
    """``pattern.search(text)`` within ``bound`` and what is left of the case's budget;
    TimeoutError past the bound, BudgetSpent past the budget."""
    budget = _BUDGET.get()
    if budget is None:
        return pattern.search(text, timeout=bound)
    if budget.left <= 0:
        raise BudgetSpent(budget.given)
    started = time.thread_time()
    try:
        return pattern.search(text, timeout=min(bound, budget.left))
    except TimeoutError:
        if budget.left < bound:  # the budget's end, not the search's own bound
            budget.left = 0.0
            raise BudgetSpent(budget.given) from None
        raise
    finally:
        budget.left -= time.thread_time() - started
