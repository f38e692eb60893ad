"""Every JSON the tool reads goes through one strict reader: NaN and Infinity refused alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from replaygate.core.errors import PackError
from replaygate.loading.json_reader import load_json
from replaygate.loading.normalize import normalize_response
from replaygate.report.json import read_results
from replaygate.results.baseline import load_baseline


def _fixture(path: Path) -> object:
    return load_json(path, shown=str(path))


def _results(path: Path) -> object:
    return read_results(str(path))


READERS: dict[str, Callable[[Path], object]] = {
    "fixture or recording": _fixture,
    "baseline": load_baseline,
    "merge or baseline input": _results,
}


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_file_reader_refuses_the_constants_with_their_line(
    tmp_path: Path, reader: str, constant: str
) -> None:
    path = tmp_path / "input.json"
    path.write_text('{\n"version": 1,\n"x": ' + constant + "}\n")
    with pytest.raises(PackError) as caught:
        READERS[reader](path)
    assert (
        str(caught.value)
        == f"{path}:3: {constant} is not valid JSON; write a number, a string or null"
    )


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_tool_call_arguments_refuse_the_constants_too(constant: str) -> None:
    response = {
        "success": True,
        "tool_calls": [{"name": "t", "arguments": '{"x": ' + constant + "}"}],
    }
    _, (call,) = normalize_response(response)
    assert call.malformed == f"arguments are not valid JSON: {constant} is not valid JSON"
