"""Option values read as the action reads the same inputs: counts, --jobs, seconds."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

Value = TypeVar("Value", int, float)


def count(text: str) -> int:
    from replaygate.core.numerals import whole_number

    return argument(whole_number, text)


def job_count(text: str) -> int:
    """``--jobs``: a whole number of at least 1."""
    from replaygate.core.numerals import whole_number

    try:
        jobs = whole_number(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return jobs


def seconds_value(text: str) -> float:
    from replaygate.github.env import seconds

    return argument(seconds, text)


def argument(parse: Callable[[str], Value], text: str) -> Value:
    """An option's value read by the action's parser of the same input (github/env.py)."""
    try:
        return parse(text)
    except ValueError as problem:
        raise argparse.ArgumentTypeError(f"{problem}, got {text!r}") from None
