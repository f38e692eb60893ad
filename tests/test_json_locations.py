"""A JSON value's path as `$.a[0]`, and the line of its key (or where an item starts)."""

from __future__ import annotations

import pytest

from replaygate.loading.json_reader import json_path, line_of_key

TEXT = """{
"a": 1,
"cases": [
{"x": "a, b: [c]", "status": "ok"},
{"status": [1,
2], "k\\"ey": {}}
],
"b": {"c": {}}
}"""


@pytest.mark.parametrize(
    ("path", "shown", "line"),
    [
        ((), "$", 1),
        (("a",), "$.a", 2),
        (("cases",), "$.cases", 3),
        (("cases", 0), "$.cases[0]", 4),
        (("cases", 0, "status"), "$.cases[0].status", 4),
        (("cases", 1, "status"), "$.cases[1].status", 5),
        (("cases", 1, "status", 1), "$.cases[1].status[1]", 6),
        (("cases", 1, 'k"ey'), '$.cases[1].k"ey', 6),
        (("b", "c"), "$.b.c", 8),
        (("cases", 2), "$.cases[2]", None),
        (("zz",), "$.zz", None),
    ],
)
def test_path_and_line(path: tuple[str | int, ...], shown: str, line: int | None) -> None:
    assert json_path(path) == shown
    assert line_of_key(TEXT, path) == line
