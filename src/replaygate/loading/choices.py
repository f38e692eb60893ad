"""The documented sets a contract's enumerated values are checked against at load, each
refusal with the nearest value: a misspelt value would otherwise skip or forgive silently."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

from replaygate.assertions.values import suggestion
from replaygate.core.model import Classification
from replaygate.loading.files import excerpt

# `provider_modes`: recorded mode, any live run, or one provider's name (the providers'
# `ProviderName`; tests/test_pack_loading.py holds the two equal, the layers keep them apart).
PROVIDER_MODES = (
    "recorded", "live", "openai", "openai-responses", "anthropic", "openai-compatible",
)  # fmt: skip
# `retries.retry_on` (the transport's `RetryOn`).
RETRY_ON = ("429", "5xx", "timeout")
# The codes a live call's error gets (the providers' `ErrorKind`), and our classifications.
LIVE_ERROR_CODES = (
    "rate_limit", "quota_exceeded", "timeout", "auth_error", "invalid_request", "provider_error",
)  # fmt: skip
ERROR_CODES = (*LIVE_ERROR_CODES, *(c.value for c in Classification))
# How close an unknown code must be to a known one to be taken for its misspelling.
CODE_CUTOFF = 0.8


def member(choices: Sequence[str], what: str) -> Callable[[str], str]:
    """A check that a value is one of ``choices`` (``what`` names them: "a provider mode")."""

    def check(value: str) -> str:
        if value in choices:
            return value
        known = ", ".join(choices)
        hint = suggestion(value, choices)
        raise ValueError(f"'{excerpt(value)}' is not {what} (known: {known}){hint}")

    return check


def error_code(value: str) -> str:
    """A check that an error code (`expected_error`, `allowed_errors`) is not the misspelling
    of a known one. A recorded provider's own code, like no known one, stays accepted."""
    if value in ERROR_CODES:
        return value
    close = difflib.get_close_matches(value, ERROR_CODES, n=1, cutoff=CODE_CUTOFF)
    if not close:
        return value
    raise ValueError(
        f"'{excerpt(value)}' is not an error code replaygate knows, and is close to one: "
        f"did you mean {close[0]!r}? (a recorded provider's own code, unlike any known one, "
        "is accepted as written)"
    )
