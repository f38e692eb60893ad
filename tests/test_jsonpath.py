"""JSONPath compilation and finding: the walker, jsonpath-ng, their agreement, and the limits."""

from __future__ import annotations

import re
import subprocess
import sys
import tracemalloc
from typing import Any

import pytest
from hypothesis import strategies as st
from jsonpath_ng.ext import parse as reference_parse

from replaygate.assertions import jsonpath, jsonpath_walk
from replaygate.assertions.jsonpath import MAX_MATCHES, PathTooBroad, compile_path
from replaygate.assertions.values import EmbeddedJson, unwrap
from sizes import sized

DOC: dict[str, Any] = {
    "a": [1, 2, {"b": "xyz"}],
    "s": "hello",
    "t": True,
    "n": None,
    "d": {"0": "zero", "": "empty", "x-y": 1, "it's": 2, 'say "hi"': 3, "null": 4, "a b": 5},
    "calls": [{"name": "search", "k": 1}, {"name": "book", "k": 2}, {"name": "search", "k": 3}],
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$", [DOC]),
        ("$.s", ["hello"]),
        ("$.n", [None]),  # present with null is a match
        ("$.a[0]", [1]),
        ("$.a[-1].b", ["xyz"]),
        ("$.a[-3]", [1]),
        ("$.a[-4]", []),
        ("$.a[3]", []),
        ("$['a'][1]", [2]),
        ('$["a"][1]', [2]),
        ("$.d['0']", ["zero"]),
        ("$.d['']", ["empty"]),
        ("$.d.x-y", [1]),
        ('$.d["it\'s"]', [2]),
        ("$.d['say \"hi\"']", [3]),
        ("$.d.null", [4]),
        ("$.d['a b']", [5]),
        ("$.missing", []),
        ("$.s[0]", []),  # strings are never traversed
        ("$.s.length", []),
        ("$.t[0]", []),  # nor booleans
        ("$.n.x", []),
        ("$.a.b", []),  # a name on an array
        ("$.d[0]", []),  # an index on an object
        ("$.a[0][0]", []),
    ],
)
def test_simple_paths_find(text: str, expected: list[Any]) -> None:
    path = compile_path(text)
    assert path.find(DOC) == expected
    assert not path.is_collection


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$.a[*]", [1, 2, {"b": "xyz"}]),
        ("$.calls[*].name", ["search", "book", "search"]),
        ("$.a[0:2]", [1, 2]),
        ("$.a[0,2]", [1, {"b": "xyz"}]),
        ("$['s','t']", ["hello", True]),
        ("$..b", ["xyz"]),
        ("$.calls[?(@.k >= 2)].name", ["book", "search"]),
        ("$.calls[?(@.name == 'book')].k", [2]),
        ("$.calls[?(@.name == 'nobody')]", []),
        ("$.s[*]", []),
    ],
)
def test_collection_paths_find(text: str, expected: list[Any]) -> None:
    path = compile_path(text)
    assert path.is_collection  # whatever the number of matches
    assert path.find(DOC) == expected


@pytest.mark.parametrize(
    "text", ["$. s", "$['s']", "$[ 'a' ][ 0 ]", "$['it\\'s']", "$.a[01]", "$.(s)"]
)
def test_simple_paths_jsonpath_ng_reads_are_walked(text: str) -> None:
    """Paths the walker's own reader leaves to jsonpath-ng are still simple, walked paths."""
    path = compile_path(text)
    assert not path.is_collection
    assert path.steps is not None


def test_compile_is_cached() -> None:
    assert compile_path("$.calls[*].name") is compile_path("$.calls[*].name")
    assert compile_path("$.a[0]") is compile_path("$.a[0]")


def test_simple_and_wildcard_paths_do_not_import_jsonpath_ng() -> None:
    code = (
        "import sys; from replaygate.assertions.jsonpath import compile_path;"
        "assert compile_path(\"$.a['b'][-1]\").find({'a': {'b': [1, 2]}}) == [2];"
        "assert compile_path('$.a[*].b').find({'a': [{'b': 1}, {'b': 2}]}) == [1, 2];"
        "print('jsonpath_ng' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- EmbeddedJson: traversal descends, a path ending on it yields the raw JSON text ----------

ARGS = EmbeddedJson({"location": "SF", "days": [1, 2]}, '{"location": "SF", "days": [1, 2]}')
OTHER_ARGS = EmbeddedJson({"q": {"x": [1]}}, '{"q": {"x": [1]}}')
RESPONSE = {"tool_calls": [{"name": "weather", "arguments": ARGS}, {"arguments": OTHER_ARGS}]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$.tool_calls[0].arguments.location", ["SF"]),
        ("$.tool_calls[0].arguments.days[-1]", [2]),
        ("$.tool_calls[0].arguments", ['{"location": "SF", "days": [1, 2]}']),
        ("$.tool_calls[1].arguments.q.x[0]", [1]),
        ("$.tool_calls[1].arguments", ['{"q": {"x": [1]}}']),
        ("$.tool_calls[*].arguments", [ARGS.raw, OTHER_ARGS.raw]),
        ("$.tool_calls[*].arguments.location", ["SF"]),
        ("$..location", ["SF"]),
    ],
)
def test_embedded_json(text: str, expected: list[Any]) -> None:
    found = compile_path(text).find(RESPONSE)
    assert found == expected
    assert all(type(value) is not EmbeddedJson for value in found)


def test_embedded_json_as_root() -> None:
    assert compile_path("$").find(ARGS) == [ARGS.raw]
    assert compile_path("$.location").find(ARGS) == ["SF"]


# --- compile errors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a.b", "JSONPath 'a.b' must start with '$'"),
        ("", "JSONPath '' must start with '$'"),
        ("$." + "a" * 600, "JSONPath is 602 characters long, more than 512"),
        ("$.a[", "invalid JSONPath '$.a[': Parse error near the end of string!"),
        ("$.where", "invalid JSONPath '$.where': Parse error at 1:2 near token where (WHERE)"),
        ("$..a..b", "JSONPath '$..a..b' has 2 recursive descents ('..'), at most 1"),
        ("$..a[?(@..b)]", "JSONPath '$..a[?(@..b)]' has 2 recursive descents ('..'), at most 1"),
        ("$.a[0,0]", "JSONPath '$.a[0,0]' repeats a name or index in a union"),
        ("$['a','a']", "JSONPath \"$['a','a']\" repeats a name or index in a union"),
        ("$.a[?(@.b == $.c)]", "JSONPath '$.a[?(@.b == $.c)]': a filter may refer to '@' only"),
        ("$.a[?(@.b =~ 'x')]", "'=~' is not supported; use the regex operator"),
        ("$.a * 2", "JSONPath '$.a * 2': arithmetic is not supported"),
        ("$.a.`len`", "JSONPath '$.a.`len`': `len` is not supported"),
        ("$.a.`sub(/x/, y)`", "`sub` is not supported"),
        ("$.a[?(@.`sub(/(a|a)+$/, y)` == 'y')]", "`sub` is not supported"),
        ("$.a[/b]", "`sortedthis` is not supported"),
        ("$.a.`parent`", "`parent` is not supported"),
        ("$.`this`", "`this` is not supported"),
        ("$.a | $.b", "The `|` (union) operator is deprecated"),
        ("$.a[?(@.b == xyz)]", "An unquoted word as a comparison operand is deprecated"),
    ],
)
def test_compile_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        compile_path(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("$.a\x1b", "Unexpected character: \\x1b"),
        ("$.a\u2028b", "Unexpected character: \\u2028"),
        ("$.a\ud800", "Unexpected character: \\ud800"),
    ],
)
def test_compile_errors_escape_what_the_lexer_quotes(text: str, reason: str) -> None:
    with pytest.raises(ValueError) as info:
        compile_path(text)
    assert str(info.value).endswith(reason)
    assert str(info.value).isprintable()


def test_paths_at_the_length_limit_compile() -> None:
    compile_path("$" + "[*]" * 170)  # 511 characters
    compile_path("$." + "a" * 510)


def test_deeply_nested_filters_within_the_limit_evaluate() -> None:
    inner = "@"
    for _ in range(84):
        inner = f"@[?({inner})]"
    text = "$" + inner[1:]
    doc: Any = 1
    for _ in range(100):
        doc = [doc]
    assert len(text) <= 512
    assert compile_path(text).find(doc)


def test_too_many_matches_raise_path_too_broad() -> None:
    assert len(compile_path("$.items[*]").find({"items": list(range(MAX_MATCHES))})) == MAX_MATCHES
    with pytest.raises(PathTooBroad, match=r"^path matched more than 10000 values$"):
        compile_path("$.items[*]").find({"items": list(range(MAX_MATCHES + 1))})
    with pytest.raises(PathTooBroad):
        compile_path("$..*").find({"items": [{"a": i} for i in range(MAX_MATCHES)]})


@pytest.mark.parametrize("text", ["$..*", "$.items[*]", "$.items[:]", "$.items[?(@ >= 0)]"])
def test_matching_stops_at_the_limit(text: str) -> None:
    """One broad path over a large fixture cannot build every match: it stops at the limit."""
    doc = {"items": [0] * 400_000}
    tracemalloc.start()
    try:
        with pytest.raises(PathTooBroad):
            compile_path(text).find(doc)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024  # building every match takes over 100 MiB here


# --- the walker agrees with jsonpath-ng on the simple subset ------------------------------

NAMES = ["a", "b", "x-y", "_1", "0", "-1", "", "a b", "it's", 'q"t', "é", "null", "true"]
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False)
    | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(NAMES), children, max_size=5)
    ),
    max_leaves=25,
)


def _segment(step: str | int, quote: str) -> str:
    if isinstance(step, int):
        return f"[{step}]"
    if quote == "." and _IDENT.fullmatch(step) and step not in ("true", "false", "null"):
        return f".{step}"
    if "'" not in step:
        return f"['{step}']"
    return f'["{step}"]' if '"' not in step else f"['{step.replace(chr(39), chr(92) + chr(39))}']"


def _existing_steps(doc: Any, draw: Any) -> list[str | int]:
    """Steps that mostly follow ``doc``, so that most paths match something."""
    out: list[str | int] = []
    node = doc
    while isinstance(node, dict | list) and node and draw(st.integers(0, 4)):
        if isinstance(node, dict):
            key = draw(st.sampled_from(sorted(node)))
            out.append(key)
            node = node[key]
        else:
            index = draw(st.integers(-len(node), len(node) - 1))
            out.append(index)
            node = node[index]
    return out


@st.composite
def doc_and_path(draw: Any) -> tuple[Any, str]:
    doc = draw(st.dictionaries(st.sampled_from(NAMES), json_values, min_size=1))
    path_steps = _existing_steps(doc, draw)
    path_steps += draw(st.lists(st.sampled_from(NAMES) | st.integers(-5, 5), max_size=1))
    quotes = draw(st.lists(st.sampled_from([".", "["]), min_size=len(path_steps)))
    return doc, "$" + "".join(map(_segment, path_steps, quotes))


@sized(500, case=doc_and_path())
def test_walker_agrees_with_jsonpath_ng(case: tuple[Any, str]) -> None:
    doc, text = case
    path = compile_path(text)
    assert path.steps is not None and not path.is_collection
    expected = [unwrap(datum.value) for datum in reference_parse(text).find(doc)]
    assert path.find(doc) == expected


# --- collection paths are matched lazily, in jsonpath-ng's order ---------------------------

LAZY_PATHS = [
    "$..*", "$..a", "$..b[0]", "$.*", "$[*]", "$.a[*]", "$.a[1:]", "$.a[::-1]", "$.a[0:2]",
    "$.a[0,1]", "$['a','b']", "$..[?(@.k > 1)]", "$.calls[?(@.name == 'search')].k",
    "$.*[*]", "$..a[*].b", "$.a[?(@ != 1)]", "$.d.*", "$..*[0]", "$.a[5:1]", "$.a[-2:]",
    "$.*[-1]", "$[*][-2]['a']", "$.a[*].b[*]",
    # filters, decided lazily: existence, negation, literals of every type, a query operand
    "$.*[?(@[*])]", "$[?(@[*][*])]", "$..[?(@.k == null)]", "$.*[?(!@.k)]", "$.*[?(@.k == true)]",
    "$.*[?(@.k == @.b)]", "$.*[?(@.k != @.b)]", "$.*[?(@.k != 1 && @.b)]", "$.*[?(@.k || @.b)]",
    "$.*[?(@.k <= 'm')]", "$.*[?(@[*] == 1)]", "$.*[?(@.k != 'x')]", "$[?(@[?(@ > 0)])]",
]  # fmt: skip


@sized(
    300,
    doc=st.dictionaries(st.sampled_from(NAMES), json_values, min_size=1),
    text=st.sampled_from(LAZY_PATHS),
)
def test_collection_matching_agrees_with_jsonpath_ng(doc: Any, text: str) -> None:
    expected = [unwrap(datum.value) for datum in reference_parse(text).find(doc)]
    assert compile_path(text).find(doc) == expected


@st.composite
def doc_and_wildcard_path(draw: Any) -> tuple[Any, str]:
    """A path of names, indexes and at least one wildcard (`[*]`, `.*`), walked without
    jsonpath-ng."""
    doc = draw(st.dictionaries(st.sampled_from(NAMES), json_values, min_size=1))
    steps = [*_existing_steps(doc, draw), *draw(st.lists(st.sampled_from(NAMES), max_size=1))]
    quotes = draw(st.lists(st.sampled_from([".", "["]), min_size=len(steps)))
    segments = list(map(_segment, steps, quotes))
    for _ in range(draw(st.integers(1, 3))):
        segments.insert(draw(st.integers(0, len(segments))), draw(st.sampled_from(["[*]", ".*"])))
    return doc, "$" + "".join(segments)


@sized(500, case=doc_and_wildcard_path())
def test_wildcard_paths_agree_with_jsonpath_ng(case: tuple[Any, str]) -> None:
    doc, text = case
    path = compile_path(text)
    assert path.is_collection and path.fanned is not None
    jsonpath._vet(text, jsonpath._parse(text))  # what compiled it before: it takes the path too
    expected = reference_parse(text).find(doc)
    assert path.find(doc) == [unwrap(datum.value) for datum in expected]
    assert path.located(doc) == [jsonpath._written(datum.full_path, "$") for datum in expected]


@pytest.mark.parametrize(
    "text",
    [
        "$[?(@[*][*] == 'x')]",
        "$[?(!@[*][?(@ == 'x')])]",
        "$[*][*][?(@ == 'x')]",
    ],
)
def test_a_filters_work_is_bounded_as_it_goes(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A filter over a large fixture (`$[?(@[*][*])]` took 45 s and 1.27 GB on 12 MB): its
    candidates and the values they look at are counted, here against a limit made small."""
    monkeypatch.setattr(jsonpath_walk, "MAX_FILTER_STEPS", 1000, raising=False)
    doc = [[["y"] * 10 for _ in range(10)] for _ in range(20)]  # 2,000 grandchildren
    with pytest.raises(PathTooBroad, match=r"^path not decided: its filters looked at more "):
        compile_path(text).find(doc)
    small = [[["y"] * 3 for _ in range(3)] for _ in range(3)]
    compile_path(text).find(small)  # within the limit: decided
