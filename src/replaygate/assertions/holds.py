"""Whether an assertion holds, decided without building its mismatches.

The call matcher asks this of every expected call against every actual call of its name, and
nearly every answer is yes; a no is explained by ``evaluate_assertion``, which a test compares
with this on generated assertions and values.
"""

from __future__ import annotations

from typing import Any

from replaygate.assertions.assertion import Assertion, evaluate_assertion
from replaygate.assertions.jsonpath import PathTooBroad
from replaygate.assertions.mismatch import Env
from replaygate.assertions.operators import OPERATORS, CheckError, Operator, Sees


def holds(assertion: Assertion, document: Any, env: Env) -> bool:
    """``not evaluate_assertion(assertion, document, env)``, sooner."""
    try:
        matches = assertion.path.find(document)
    except PathTooBroad:
        return False  # each check is an "error" mismatch
    if not matches:  # optional, exists: false, a not: the full evaluation knows the rules
        return not evaluate_assertion(assertion, document, env)
    collection = assertion.path.is_collection
    for check in assertion.checks:
        op = OPERATORS[check.operator]
        if op.sees is Sees.MATCHES or (op.sees is Sees.COLLECTION and collection):
            if not _passes(op, matches, check.prepared, env):
                return False
        else:
            for value in matches:
                if not _passes(op, value, check.prepared, env):
                    return False
    return True


def _passes(op: Operator, actual: Any, prepared: Any, env: Env) -> bool:
    """What the operator's check says: None passes, a message fails, and so does any
    mismatch of a composite's nested assertions."""
    try:
        outcome = op.check(actual, prepared, env)
    except CheckError:
        return False  # an "error" mismatch
    return outcome is None or (isinstance(outcome, list) and not outcome)
