"""Tests for loading.yaml_reader: lines kept, surprises recorded, hostile YAML and JSON refused."""

from __future__ import annotations

import contextlib
import datetime
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import strategies as st

from replaygate.core.errors import PackError
from replaygate.loading import yaml_reader
from replaygate.loading.files import MAX_DEPTH
from replaygate.loading.json_reader import load_json, parse_json
from replaygate.loading.yaml_reader import (
    YamlMap,
    YamlSeq,
    describe_surprise,
    line_of,
    load_yaml,
    parse_yaml,
    surprise_at,
    value_at,
    walk_maps,
)
from sizes import sized

CONTRACT = """\
# a contract
tool: multi_tool_call
expect_tools:
  - search
  - create_ticket
expected_tool_calls:
  - name: search
    argument_invariants:
      - path: $.query
        contains: timeout
  - {name: create_ticket, argument_invariants: [{path: $.severity, equals: P1}]}
golden_cases:
  - id: ok
    input_ref: ok.json
    expect_ok: true
"""


def yaml_error(text: str) -> str:
    with pytest.raises(PackError) as caught:
        parse_yaml(text, shown="c.yaml")
    assert "\n" not in str(caught.value)
    return str(caught.value)


def json_error(text: str) -> str:
    with pytest.raises(PackError) as caught:
        parse_json(text, shown="f.json")
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_values_match_pyyaml() -> None:
    data = parse_yaml(CONTRACT, shown="c.yaml")
    assert data == yaml.load(CONTRACT, Loader=yaml.CSafeLoader)
    assert type(data) is YamlMap
    assert type(data["expect_tools"]) is YamlSeq


def test_lines_of_nested_maps_and_lists() -> None:
    data = parse_yaml(CONTRACT, shown="c.yaml")
    assert data.line == 2
    assert data.key_lines == {
        "tool": 2,
        "expect_tools": 3,
        "expected_tool_calls": 6,
        "golden_cases": 12,
    }
    assert data["expect_tools"].line == 4
    assert data["expect_tools"].item_lines == [4, 5]
    calls = data["expected_tool_calls"]
    assert calls.item_lines == [7, 11]
    assert calls[0].key_lines == {"name": 7, "argument_invariants": 8}
    assert calls[0]["argument_invariants"][0].key_lines == {"path": 9, "contains": 10}
    assert calls[1].line == 11


def test_line_of_follows_keys_and_indexes() -> None:
    data = parse_yaml(CONTRACT, shown="c.yaml")
    assert line_of(data, ()) == 2
    assert line_of(data, ("tool",)) == 2
    assert line_of(data, ("expect_tools", 1)) == 5
    assert line_of(data, ("expected_tool_calls", 0, "argument_invariants", 0, "contains")) == 10
    assert line_of(data, ("golden_cases", 0, "expect_ok")) == 15
    assert line_of(data, ("golden_cases", 0, "missing_field")) == 13
    assert line_of(data, ("golden_cases", 7)) == 12
    assert line_of(data, ("expected_tool_calls", "ToolCall", 1, "name")) == 11
    assert line_of({"plain": 1}, ("plain",)) is None


def test_value_at_follows_the_same_path() -> None:
    data = parse_yaml(CONTRACT, shown="c.yaml")
    assert value_at(data, ("expect_tools", 1)) == "create_ticket"
    assert value_at(data, ("expected_tool_calls", "ToolCall", 1, "name")) == "create_ticket"
    assert value_at(data, ("golden_cases", 0, "missing")) == data["golden_cases"][0]
    assert value_at(data, ()) is data


def test_walk_maps_yields_every_mapping_in_document_order() -> None:
    data = parse_yaml(CONTRACT, shown="c.yaml")
    lines = [node.line for node in walk_maps(data)]
    assert lines == [2, 7, 9, 11, 11, 13]
    assert list(walk_maps(parse_yaml("[1, [2]]", shown="c.yaml"))) == []


def test_duplicate_keys_are_refused() -> None:
    text = "tool: a\nexpect_tools: []\ntool: b\n"
    assert yaml_error(text) == "c.yaml:3: duplicate key 'tool' (first at line 1)"
    nested = "a:\n  - x: 1\n    y: 2\n    x: 3\n"
    assert yaml_error(nested) == "c.yaml:4: duplicate key 'x' (first at line 2)"


def test_keys_equal_in_python_are_duplicates() -> None:
    assert yaml_error("1: a\n1.0: b\n") == "c.yaml:2: duplicate key 1.0 (first at line 1)"


def test_aliases_are_refused_where_they_are_used() -> None:
    text = "a: &anchor [1, 2]\nb: 1\nc: *anchor\n"
    assert yaml_error(text) == "c.yaml:3: YAML aliases (*name) are not supported"
    assert yaml_error("- &x 1\n- *x\n") == "c.yaml:2: YAML aliases (*name) are not supported"


def test_recursive_alias_is_refused() -> None:
    assert yaml_error("&a [*a]\n") == "c.yaml:1: YAML aliases (*name) are not supported"


def test_unused_anchor_is_harmless() -> None:
    assert parse_yaml("a: &x 1\n", shown="c.yaml") == {"a": 1}


def test_merge_keys_are_refused() -> None:
    text = "base: {a: 1}\nother:\n  <<: {a: 2}\n"
    assert yaml_error(text) == "c.yaml:3: YAML merge keys (<<) are not supported"


def test_billion_laughs_is_refused_before_it_expands() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n in range(1, 10):
        prev, name = chr(ord("a") + n - 1), chr(ord("a") + n)
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    assert yaml_error("\n".join(lines)) == "c.yaml:2: YAML aliases (*name) are not supported"


def nested_yaml(depth: int) -> str:
    return "".join("  " * level + "k:\n" for level in range(depth)) + "  " * depth + "v\n"


def test_nesting_up_to_the_limit_loads() -> None:
    data = parse_yaml(nested_yaml(MAX_DEPTH), shown="c.yaml")
    for _ in range(MAX_DEPTH):
        data = data["k"]
    assert data == "v"


def test_nesting_beyond_the_limit_is_refused_with_its_line() -> None:
    assert yaml_error(nested_yaml(MAX_DEPTH + 1)) == "c.yaml:65: nesting is deeper than 64 levels"


@pytest.mark.parametrize("bomb", ["[" * 1_000_000 + "]" * 1_000_000, "- " * 1_000_000 + "x"])
def test_depth_bombs_do_not_crash(bomb: str) -> None:
    # libyaml's own node composer recurses in C and segfaults on these
    assert yaml_error(bomb) == "c.yaml:1: nesting is deeper than 64 levels"


def test_a_second_document_is_refused() -> None:
    text = "a: 1\n---\nb: 2\n"
    expected = "c.yaml:2: a second YAML document starts here; a file holds only one"
    assert yaml_error(text) == expected
    assert parse_yaml("---\na: 1\n...\n", shown="c.yaml") == {"a": 1}


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_an_empty_file_is_refused(text: str) -> None:
    assert yaml_error(text) == "c.yaml: file is empty"


def test_a_lone_document_marker_is_null() -> None:
    assert parse_yaml("---\n", shown="c.yaml") is None


def test_syntax_errors_are_one_line() -> None:
    assert yaml_error("a: [1, 2\nb: 3\n") == (
        "c.yaml:2: did not find expected ',' or ']' (while parsing a flow sequence at line 1)"
    )
    assert yaml_error("a: b: c\n") == "c.yaml:1: mapping values are not allowed in this context"
    assert yaml_error("a:\n  b: `x`\n").startswith("c.yaml:2: found character that cannot start")


def test_control_characters_are_refused() -> None:
    assert yaml_error("a: 1\nb: \x1b\n") == "c.yaml:2: control characters are not allowed (U+001B)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !!python/object:os.system x\n", "c.yaml:1: YAML tag '!!python/object:os.system' is"),
        ("a: !custom x\n", "c.yaml:1: YAML tag '!custom' is not supported"),
        ("a: !!set {x: 1}\n", "c.yaml:1: YAML tag '!!set' is not supported"),
        ("a: !!omap [x: 1]\n", "c.yaml:1: YAML tag '!!omap' is not supported"),
        ("a: !!map x\n", "c.yaml:1: YAML tag '!!map' is not supported"),
    ],
)
def test_unsupported_tags_are_refused(text: str, message: str) -> None:
    assert yaml_error(text).startswith(message)


def test_standard_explicit_tags_work() -> None:
    text = "a: !!str 3.10\nb: !!int '12'\nc: !!binary aGk=\nd: !!map {x: 1}\n"
    data = parse_yaml(text, shown="c.yaml")
    assert data == {"a": "3.10", "b": 12, "c": b"hi", "d": {"x": 1}}
    assert data.surprises == {}


def test_non_scalar_keys_are_refused() -> None:
    message = "c.yaml:2: a mapping key must be a plain value, not a mapping or a list"
    assert yaml_error("a: 1\n? [x, y]\n: 2\n") == message
    assert yaml_error("{a: 1, {b: 2}: 3}\n") == message.replace(":2:", ":1:")


def test_non_string_scalar_keys_are_kept() -> None:
    data = parse_yaml("1: a\nnull: b\n", shown="c.yaml")
    assert data == {1: "a", None: "b"}
    assert data.key_lines == {1: 1, None: 2}


def test_values_that_cannot_be_built_are_refused() -> None:
    assert yaml_error("when: 2024-13-45\n") == (
        "c.yaml:1: '2024-13-45' is not a valid date (month must be in 1..12)"
    )
    message = yaml_error("n: " + "7" * 5000 + "\n")
    assert message.startswith("c.yaml:1: '7777777777777777777777777777777777777777...'")
    assert "is not a valid integer (Exceeds the limit (4300 digits)" in message
    assert "set_int_max_str_digits" not in message


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("no", False),
        ("yes", True),
        ("on", True),
        ("Off", False),
        ("NO", False),
        ("3.10", 3.1),
        ("1.50", 1.5),
        ("1.", 1.0),
        ("1.0e+3", 1000.0),
        ("1_000.5", 1000.5),
        ("012", 10),
        ("0x1f", 31),
        ("0b101", 5),
        ("1_000", 1000),
        ("1:30", 90),
        ("2024-01-31", datetime.date(2024, 1, 31)),
    ],
)
def test_surprises_are_recorded(text: str, value: Any) -> None:
    data = parse_yaml(f"version: {text}\nlist: [a, {text}]\n", shown="c.yaml")
    assert data["version"] == value
    assert type(data["version"]) is type(value)
    assert data.surprises == {"version": text}
    assert data["list"].surprises == {1: text}
    assert surprise_at(data, ("version",)) == text
    assert surprise_at(data, ("list", 1)) == text
    assert surprise_at(data, ("list", 0)) is None


@pytest.mark.parametrize(
    "text",
    ["true", "False", "1.0", "0.5", "2.5", ".5", "-0.25", "1.5e+20", "42", "-7", ".inf", "0"],
)
def test_unsurprising_scalars_are_not_recorded(text: str) -> None:
    assert parse_yaml(f"v: {text}\n", shown="c.yaml").surprises == {}


@pytest.mark.parametrize("text", ["y", "n", "1e3", "0o12", "1.2.3", "'no'", '"3.10"'])
def test_texts_that_stay_strings(text: str) -> None:
    data = parse_yaml(f"v: {text}\n", shown="c.yaml")
    assert data["v"] == text.strip("'\"")
    assert data.surprises == {}


def test_surprise_at_ignores_plain_values_and_missing_paths() -> None:
    data = parse_yaml("a: {b: no}\nc: [1]\n", shown="c.yaml")
    assert surprise_at(data, ("a", "b")) == "no"
    assert surprise_at(data, ("a",)) is None
    assert surprise_at(data, ("a", "b", "bool")) == "no"
    assert surprise_at(data, ("c", 0)) is None
    assert surprise_at(data, ("zzz",)) is None
    assert surprise_at({"a": False}, ("a",)) is None


def test_describe_surprise() -> None:
    assert describe_surprise("no", False) == (
        "`no` is read as false by YAML; quote it ('no') if you mean the text"
    )
    assert describe_surprise("3.10", 3.1) == (
        "`3.10` is read as the number 3.1; quote it ('3.10') to keep it as text"
    )
    assert describe_surprise("1:30", 90) == (
        "`1:30` is read as the number 90; quote it ('1:30') to keep it as text"
    )
    assert describe_surprise("2024-01-31", datetime.date(2024, 1, 31)) == (
        "`2024-01-31` is read as a date; quote it ('2024-01-31') to keep it as text"
    )
    moment = datetime.datetime(2024, 1, 31, 10, 0)
    assert describe_surprise("2024-01-31 10:00:00", moment).startswith(
        "`2024-01-31 10:00:00` is read as a date and time;"
    )


def test_load_yaml_reads_through_files(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"\xef\xbb\xbftool: x\n")
    assert load_yaml(path, shown="packs/c.yaml") == {"tool": "x"}
    path.write_bytes(b"tool: x\nname: \xc3\n")
    with pytest.raises(PackError) as caught:
        load_yaml(path, shown="packs/c.yaml")
    assert str(caught.value) == "packs/c.yaml:2: not valid UTF-8 (byte 0xc3 at column 7)"


def test_load_yaml_refuses_a_huge_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("a: 1\n" + "#" * (3 * 1024 * 1024))
    with pytest.raises(PackError) as caught:
        load_yaml(path, shown="c.yaml")
    assert caught.value.message.startswith("file is too large")


def test_json_loads_plain_values() -> None:
    value = parse_json('{"a": [1, 2.5, "x", null, true], "b": {}}', shown="f.json")
    assert value == {"a": [1, 2.5, "x", None, True], "b": {}}
    assert type(value) is dict


def test_json_allows_lone_surrogates() -> None:
    assert parse_json('{"s": "\\ud800"}', shown="f.json") == {"s": "\ud800"}


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_refuses_non_finite_numbers(constant: str) -> None:
    text = f'{{\n  "note": "NaN and Infinity in strings are fine",\n  "x": [1,\n {constant}]\n}}'
    message = f"f.json:4: {constant} is not valid JSON; write a number, a string or null"
    assert json_error(text) == message


def test_json_refuses_duplicate_keys_with_their_line() -> None:
    text = '{\n  "a": "x\\" : [",\n  "b": {"c": 1},\n  "a": 2\n}'
    assert json_error(text) == "f.json:4: duplicate key 'a'"


def test_json_reports_the_first_duplicate_in_the_file() -> None:
    text = '{"a": 1,\n "a": 2,\n "n": {"c": 1, "c": 2}}'
    assert json_error(text) == "f.json:2: duplicate key 'a'"


def test_json_duplicate_keys_compare_decoded() -> None:
    assert json_error('{"a": 1,\n"\\u0061": 2}') == "f.json:2: duplicate key 'a'"


def test_json_same_key_in_sibling_objects_is_fine() -> None:
    assert parse_json('[{"a": 1}, {"a": 2}]', shown="f.json") == [{"a": 1}, {"a": 2}]


def nested_json(depth: int) -> str:
    return '{"k":\n' * depth + "1" + "}" * depth


def test_json_nesting_up_to_the_limit_loads() -> None:
    assert parse_json(nested_json(MAX_DEPTH), shown="f.json")["k"]["k"]["k"]
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, shown="f.json")


def test_json_nesting_beyond_the_limit_is_refused() -> None:
    assert json_error(nested_json(MAX_DEPTH + 1)) == "f.json:65: nesting is deeper than 64 levels"
    text = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    assert json_error(text) == "f.json:1: nesting is deeper than 64 levels"


def test_json_depth_bomb_does_not_crash() -> None:
    text = "[" * 100_000 + "]" * 100_000
    assert json_error(text) == "f.json:1: nesting is deeper than 64 levels"


def test_json_brackets_in_strings_do_not_count() -> None:
    text = json.dumps({"s": "[[[[{{{{" * 100, "t": "]]]]"})
    assert parse_json(text, shown="f.json")["t"] == "]]]]"


def test_json_syntax_errors() -> None:
    assert json_error('{\n  "a": 1\n  "b": 2\n}') == (
        "f.json:3: invalid JSON: Expecting ',' delimiter (column 3)"
    )
    assert json_error("[1, 2]\n[3]") == "f.json:2: invalid JSON: Extra data (column 1)"
    assert json_error("  \n") == "f.json: file is empty"


def test_json_huge_integer_is_refused() -> None:
    text = '{"ok": 1.5,\n "n": ' + "9" * 5000 + "}"
    assert json_error(text) == "f.json:2: invalid JSON: a number has more than 4300 digits"


def test_load_json_reads_through_files(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert load_json(path, shown="golden/f.json") == {"a": 1}
    path.write_bytes(b'{"a":\n"\xff"}')
    with pytest.raises(PackError) as caught:
        load_json(path, shown="golden/f.json")
    assert str(caught.value) == "golden/f.json:2: not valid UTF-8 (byte 0xff at column 2)"


@pytest.mark.parametrize("text", ["a:\n\tb: 1\n", "a:\n  b: 1\n\t  c: 2\n"])
def test_a_tab_in_indentation_says_yaml_does_not_allow_tabs(text: str) -> None:
    line = text.count("\n", 0, text.index("\t")) + 1
    assert yaml_error(text) == (
        f"c.yaml:{line}: YAML does not allow tabs for indentation; indent this line with spaces"
    )


_PLAIN_SCALARS = st.one_of(
    st.integers().map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["5.0e-12", "1e3", "1.5E+3", ".5", "-.5", "1_000", "0x1F", "017", "0o17",
                     "1:30", "190:20:30.15", ".inf", "-.Inf", ".NaN", "+12", "~", "null", "Null",
                     "NULL", "", "<<", "=", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
                     "2001-12-14 21:59:43.10 -5", "Yes", "NO", "on", "Off", "y", "n", "true",
                     "False", "TRUE", "nULL", "tRUE", "0b101", "1.", "1e", "abc"]),
    st.sampled_from(["yes", "no", "on", "off", "true", "false", "null"]),
    st.sampled_from(["yes", "no", "on", "off", "true", "false", "null"]).map(str.upper),
    st.text(alphabet="0123456789.:-+_eExXoObnul~ ytT", max_size=12).map(str.strip),
)  # fmt: skip


def _shape(value: Any) -> Any:
    """What the reader gives, types, lines and surprises included, as comparable data."""
    if isinstance(value, YamlMap):
        items = {key: _shape(item) for key, item in value.items()}
        return ("map", value.line, value.key_lines, value.surprises, items)
    if isinstance(value, YamlSeq):
        items = [_shape(item) for item in value]
        return ("seq", value.line, value.item_lines, value.surprises, items)
    return (type(value).__name__, repr(value))  # repr: NaN equals NaN


def _node_shape(node: yaml.Node, build: Any) -> Any:
    """The same, from PyYAML's own node graph: its values, and lines from its nodes' marks."""
    if isinstance(node, yaml.ScalarNode):
        value = build(node)
        return (type(value).__name__, repr(value))
    if isinstance(node, yaml.MappingNode):
        pairs = [(build(key), key.start_mark.line + 1, item) for key, item in node.value]
    else:
        pairs = [(index, item.start_mark.line + 1, item) for index, item in enumerate(node.value)]
    lines = {key: line for key, line, _ in pairs}
    surprises = {key: item.value for key, _, item in pairs if _node_surprise(item, build)}
    items = {key: _node_shape(item, build) for key, _, item in pairs}
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        return ("map", line, lines, surprises, items)
    return ("seq", line, list(lines.values()), surprises, list(items.values()))


def _node_surprise(node: yaml.Node, build: Any) -> bool:
    """A plain scalar that YAML reads as something other than its text."""
    plain = isinstance(node, yaml.ScalarNode) and not node.style  # libyaml: "", PyYAML: None
    return plain and yaml_reader._surprising(node.value, build(node))


def _pyyaml_shape(text: str) -> Any:
    """libyaml and PyYAML's reading of ``text`` as _shape gives it; YAMLError if refused."""
    constructor = yaml.constructor.SafeConstructor()

    def build(node: yaml.Node) -> Any:
        if node.tag == "tag:yaml.org,2002:value":  # `=`: safe_load's mappings take it as text
            return node.value
        return constructor.construct_object(node, deep=True)

    return _node_shape(yaml.compose(text, Loader=yaml.CSafeLoader), build)


def _assert_reads_as_pyyaml(text: str) -> None:
    """Twice (the second time from what the reader remembers), as PyYAML reads ``text``."""
    try:
        expected = _pyyaml_shape(text)
    except yaml.YAMLError:
        with pytest.raises(PackError):
            parse_yaml(text, shown="c.yaml")
        return
    for _ in range(2):
        try:
            read = parse_yaml(text, shown="c.yaml")
        except PackError as exc:  # refused on purpose: PyYAML would merge or accept it
            assert "merge keys" in exc.message or "not a valid" in exc.message, exc.message
            continue
        assert _shape(read) == expected
        with contextlib.suppress(yaml.YAMLError):  # safe_load refuses `=` as a value; we read it
            assert _values(read) == _values(yaml.load(text, Loader=yaml.CSafeLoader))


def _values(value: Any) -> Any:
    """Values alone, with their types, as safe_load gives them (NaN equal to NaN)."""
    if isinstance(value, dict):
        return {key: _values(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_values(item) for item in value]
    return (type(value).__name__, repr(value))


@sized(500, _PLAIN_SCALARS)
def test_plain_scalars_read_as_pyyaml_reads_them(text: str) -> None:
    """Values, surprises and lines as PyYAML's own node graph has them, also for a text the
    reader has remembered; as a value, an item in a block and a flow list, and a key."""
    _assert_reads_as_pyyaml(f"v: {text}\nitems:\n  - {text}\nflow: [a, {text}]\n{text}: k\n")


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12))
_DOCUMENT_VALUES = st.recursive(
    _SCALARS | _PLAIN_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4)
    ),
    max_leaves=30,
)


@sized(
    300,
    _DOCUMENT_VALUES,
    st.sampled_from([True, False, None]),
    st.lists(_PLAIN_SCALARS, max_size=6),
)
def test_documents_read_as_pyyaml_reads_them(
    value: Any, flow: bool | None, plain: list[str]
) -> None:
    """Random documents in every style, with plain scalars written as they come: what the
    reader builds matches PyYAML's values and its nodes' lines."""
    dumped = yaml.safe_dump(value, default_flow_style=flow, allow_unicode=True, width=60)
    text = "data:\n" + "".join(f"  {row}\n" for row in dumped.splitlines())
    text += "raw:\n" + "".join(f"  - {item}\n" for item in plain)
    _assert_reads_as_pyyaml(text + f"flow: [{', '.join(plain)}]\n")
