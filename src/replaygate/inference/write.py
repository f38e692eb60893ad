"""Inferred contracts as YAML: a new file, or additions merged into a hand-written one.

ruamel.yaml's round trip keeps the user's comments, key order and formatting; every value
written is checked to read back the same under replaygate's own (YAML 1.1) reader.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from replaygate.inference.learn import Inferred, Rule, tier
from replaygate.loading import yaml_reader

GoldenCase = tuple[str, str]  # id, input_ref

_TIER_WORDS = {
    "low": "fewer than 5 samples: it may not represent typical behaviour",
    "medium": "5 to 9 samples: worth reviewing",
    "high": "10 or more samples",
}


class _Float(float):
    """A float written so that YAML 1.1 reads it as one (1.0e-05, never 1e-05)."""


def _float_text(representer: RoundTripRepresenter, value: _Float) -> Any:
    text = repr(float(value))
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    if e and exponent[0] not in "+-":
        exponent = "+" + exponent
    return representer.represent_scalar("tag:yaml.org,2002:float", mantissa + e + exponent)


def yaml_io() -> YAML:
    yaml = YAML()
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    yaml.preserve_quotes = True
    yaml.representer.add_representer(_Float, _float_text)
    return yaml


def value_node(value: Any) -> Any:
    """``value`` ready to write: strings YAML 1.1 would misread are quoted, lists flow."""
    if isinstance(value, str):
        return value if yaml_reader.reads_as_text(value) else DoubleQuotedScalarString(value)
    if isinstance(value, float):
        return _Float(value)
    if isinstance(value, Mapping):
        return _flow(CommentedMap((value_node(k), value_node(item)) for k, item in value.items()))
    if isinstance(value, list):
        return _flow(CommentedSeq(value_node(item) for item in value))
    return value


def new_list() -> CommentedSeq:
    return CommentedSeq()


def _flow(node: Any) -> Any:
    node.fa.set_flow_style()
    return node


def assertion_node(rule: Rule) -> CommentedMap:
    node = CommentedMap(path=value_node(rule.path))
    for name, value in rule.operators.items():
        node[name] = value_node(value)
    samples = f"{rule.samples} sample{'' if rule.samples == 1 else 's'}"
    node.yaml_add_eol_comment(f"confidence: {tier(rule.samples)} ({samples})", "path")
    return node


def call_node(name: str, rules: Sequence[Rule]) -> CommentedMap:
    node = CommentedMap(name=value_node(name))
    if rules:
        node["argument_invariants"] = CommentedSeq(assertion_node(rule) for rule in rules)
    return node


def case_node(case: GoldenCase) -> CommentedMap:
    return CommentedMap(id=value_node(case[0]), input_ref=value_node(case[1]), expect_ok=True)


def render(inferred: Inferred, cases: Sequence[GoldenCase]) -> str:
    """A new contract: the header names the tier, each assertion its own."""
    doc = CommentedMap(tool=value_node(inferred.tool))
    count = inferred.samples
    level = tier(count)
    doc.yaml_set_start_comment(
        f"Inferred by `replaygate infer` from {count} recording{'' if count == 1 else 's'}: "
        f"confidence {level} ({_TIER_WORDS[level]}).\n"
        "Every assertion holds on each recording; review them before relying on this contract."
    )
    if inferred.strict_order:
        doc["tool_order"] = "strict"
        doc.yaml_add_eol_comment(f"the same tools in the same order in all {count}", "tool_order")
    doc["expected_tool_calls"] = CommentedSeq(call_node(c.name, c.rules) for c in inferred.calls)
    doc["golden_cases"] = CommentedSeq(case_node(case) for case in cases)
    return dump(doc)


def dump(doc: Any) -> str:
    out = io.StringIO()
    yaml_io().dump(doc, out)
    return out.getvalue()
