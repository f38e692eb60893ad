"""What a failure's fingerprint is keyed by: what its assertion says, never where it stands.

A failure's locator names an invariant by its index in its list
(``expected_tool_calls[1].argument_invariants[0]:equals``), which moves when an unrelated
assertion is inserted above it. Its key names the same check by its content: the tool of
its expected call, and the path, operator and expected value as written in the contract
(``expected_tool_calls[get_weather].argument_invariants[$.city equals "Bern"]:equals``).
Copies that say the same thing are told apart by their order (``#2``), so the key is
deterministic and distinct. The expected value is the contract's text (``${VAR}`` as
written), so no recorded value or environment goes in. See docs/fingerprints.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from replaygate.assertions.assertion import Assertion
from replaygate.loading.contract import Contract, ExpectedCall

# a top-level invariant or an expected call: "<list>[<index>]", then ":<operator>..." or the end
_INDEXED = re.compile(
    r"(?P<list>assertions\.(?:output|input)_invariants"
    r"|expected_tool_calls\[(?P<call>\d+)\]\.argument_invariants"
    r"|expected_tool_calls|expect_tools)"
    r"\[(?P<index>\d+)\](?P<rest>(?::(?P<operator>[a-z_]+))?.*)",
    re.DOTALL,
)


def failure_key(contract: Contract, locator: str) -> str:
    """The locator with each list index replaced by what the indexed element says.

    A locator of anything else (a tool schema, the recording, an @isdk part, a Connexity
    ``expected_tool_calls[0]:tool_called``, whose contract has no expected calls) is its own key.
    """
    match = _INDEXED.fullmatch(locator)
    if match is None:
        return locator
    name, index, rest = match["list"], int(match["index"]), match["rest"]
    if match["call"] is None and not name.startswith("assertions."):
        return f"{name}[{_call_key(contract.expected_calls, name, index)}]{rest}"
    owner, assertions = _invariants(contract, name, match["call"])
    if index >= len(assertions) or match["operator"] is None:
        return locator
    return f"{owner}[{_said(assertions, index, match['operator'])}]{rest}"


def _invariants(contract: Contract, name: str, call: str | None) -> tuple[str, Sequence[Assertion]]:
    """The list an invariant's index counts in, and that list's key."""
    if call is None:
        listed = contract.output_invariants if "output" in name else contract.input_invariants
        return name, listed
    calls = name.split("[")[0]
    expected = next((c for c in contract.expected_calls if c.locator == f"{calls}[{call}]"), None)
    if expected is None:
        return name, ()
    key = _call_key(contract.expected_calls, calls, int(call))
    return f"{calls}[{key}].argument_invariants", expected.invariants


def _index(call: ExpectedCall) -> int:
    return int(call.locator.rsplit("[", 1)[1].rstrip("]"))


def _call_key(calls: Sequence[ExpectedCall], owner: str, index: int) -> str:
    """An expected call by its tool's name; the n-th call of one tool, ``name#n``."""
    mine = [call for call in calls if call.locator.startswith(owner + "[")]
    named = next((call for call in mine if _index(call) == index), None)
    if named is None:
        return str(index)
    return _numbered(named.name, [call.name for call in mine if _index(call) <= index])


def _said(assertions: Sequence[Assertion], index: int, operator: str) -> str:
    """``<path> <operator> <expected>``, numbered among the earlier copies in its list."""
    said = [_check_text(assertion, operator) for assertion in assertions[: index + 1]]
    return _numbered(said[-1], said)


def _numbered(text: str, upto: Sequence[str]) -> str:
    """``text``, or ``text#n`` when it is the n-th (n > 1) of ``upto`` to say it."""
    count = upto.count(text)
    return text if count == 1 else f"{text}#{count}"


def _check_text(assertion: Assertion, operator: str) -> str:
    check = next((check for check in assertion.checks if check.operator == operator), None)
    expected = _canonical(check.expected) if check is not None else ""
    return f"{assertion.path.text} {operator} {expected}"


def _canonical(value: Any) -> str:
    """The value as compact JSON with sorted keys: the same text however YAML wrote it."""
    return json.dumps(_plain(value), sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return repr(value)  # nan and inf too, as text
    return str(value)  # a date, or another value YAML read
