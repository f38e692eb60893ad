"""@isdk test-runner fixtures (`<pack>/isdk/*.fixture.yaml`) and the results they are judged on.

A fixture file is YAML front matter (defaults for every case) and a list of cases. The
executor results live beside it in `<name>.results.json`: a JSON array, one
`{output, messages}` per case in order (null: not recorded). Each case becomes a one-case
contract whose assertions point into the fixture file, so every report treats it like a
golden case.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from replaygate.assertions.assertion import Assertion, compile_assertion
from replaygate.assertions.values import suggestion
from replaygate.core.errors import PackError
from replaygate.core.model import Problem
from replaygate.loading import files, json_reader, yaml_reader
from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.fixtures import CaseInput
from replaygate.loading.formats.isdk_expect import METADATA, Translator, node
from replaygate.loading.formats.isdk_scoring import Unit, scoring
from replaygate.loading.yaml_reader import YamlMap

FIXTURE_SUFFIX = ".fixture.yaml"
RESULTS_SUFFIX = ".results.json"
_FRONT = re.compile(r"\A---[ \t]*\n(.*?)^---[ \t]*$\n?", re.DOTALL | re.MULTILINE)
# Keys that change how @isdk runs a case, which replaying a result cannot honour.
_UNSUPPORTED = {
    "outputSchema": "outputSchema (JSON Schema of the output) is not supported",
    "operators": "custom operators are not supported: they are JavaScript",
    "unassignedWeight": "unassignedWeight is not supported: unweighted parts share what is left, "
    "or 0.1",
}
# AITestFixture's keys (and the front matter's script/scripts); run-time ones are ignored.
_CASE_KEYS = (
    "title", "input", "output", "outputSchema", "script", "scripts", "tools", "toolTester",
    "expect", "strict", "checkSchema", "disableHeuristicSchema", "operators",
    "allowOperatorOverride", "scoring", "maxScore", "passScore", "unassignedWeight", "only",
    "skip", "not",
)  # fmt: skip
_EXPECT_KEYS = ("output", "messages", "tools")
_TOOL_CALLS = "$[*].tools[*]"  # every tool call of every message, in order

Shown = Callable[[Path], tuple[str, str]]  # a file -> (shown from the root, path in the pack)


def load_fixtures(
    folder: Path, root: Path, shown: Shown, problems: list[Problem]
) -> list[tuple[Path, Contract]]:
    """One contract per case of every fixture file, with the file; a file that cannot be read
    is a problem."""
    return load_files(sorted(folder.glob("*" + FIXTURE_SUFFIX)), root, shown, problems)


def load_files(
    paths: list[Path], root: Path, shown: Shown, problems: list[Problem]
) -> list[tuple[Path, Contract]]:
    """One contract per case of each fixture file (named on the command line, or found in a
    pack's folder), with the file; a file that cannot be read is a problem."""
    contracts: list[tuple[Path, Contract]] = []
    for path in paths:
        try:
            found = _fixture_file(path, *shown(path), shown, root)
            contracts += [(path, contract) for contract in found]
        except PackError as exc:
            problems.extend(Problem(e.file, e.line, e.message) for e in exc.each())
    return contracts


def _contained(path: Path, root: Path, shown: Shown) -> None:
    """Refuse a file of the folder that a symlink takes out of it, or into ``.git``, unread."""
    within = f"the directory {shown(path.parent)[0]}"
    what, file = "@isdk file", shown(path)[0]
    files.resolve_inside(path.parent, path.name, root=root, what=what, within=within, file=file,
                         line=None)  # fmt: skip


def _fixture_file(
    path: Path, file: str, in_pack: str, shown: Shown, root: Path
) -> Iterator[Contract]:
    _contained(path, root, shown)
    text = files.read_text(path, shown=file, max_bytes=files.MAX_YAML_BYTES)
    front, cases = _split(text, file)
    results_path = path.with_name(path.name[: -len(FIXTURE_SUFFIX)] + RESULTS_SUFFIX)
    results, results_file = _results(results_path, shown, len(cases), root)
    merged = [_merge(front, case, file) for case in cases]
    only = any(case.get("only") is True for case in merged)
    for index, (case, case_id) in enumerate(zip(merged, _ids(merged), strict=True)):
        where = f"{results_file} (entry {index + 1})"
        loaded = _case_input(results[index] if index < len(results) else None, where)
        if isinstance(loaded, CaseInput):  # the files judged: the results only when they hold it
            loaded = replace(loaded, inputs=(file, results_file)[: 1 + (index < len(results))])
        skip = "skip: true" if case.get("skip") is True else None
        skip = skip or (
            "another case has only: true" if only and case.get("only") is not True else None
        )
        yield _contract(case, case_id, file, in_pack, loaded, skip)


def _split(text: str, file: str) -> tuple[Mapping[str, Any], list[Any]]:
    """Front matter and cases, each parsed with the lines they have in the file."""
    match = _FRONT.match(text)
    front: Any = {}
    body = text
    if match:
        front = (
            yaml_reader.parse_yaml("\n" + match.group(1), shown=file)
            if match.group(1).strip()
            else {}
        )
        body = "\n" * text.count("\n", 0, match.end()) + text[match.end() :]
    if not isinstance(front, Mapping):
        raise PackError(file, 2, "the front matter must be a mapping of defaults")
    if not body.strip():
        raise PackError(file, None, "no cases: the file needs a list of cases")
    cases = yaml_reader.parse_yaml(body, shown=file)
    cases = [cases] if isinstance(cases, Mapping) else cases
    if not isinstance(cases, list) or not all(isinstance(case, Mapping) for case in cases):
        raise PackError(file, None, "the cases must be a list of mappings")
    return front, cases


def _merge(front: Mapping[str, Any], case: Mapping[str, Any], file: str) -> YamlMap:
    """A case with the front matter's defaults under it; each key keeps its own line."""
    merged = YamlMap(getattr(case, "line", 1))
    for source in (front, case):
        for key, value in source.items():
            merged[key] = value
            merged.key_lines[key] = getattr(source, "key_lines", {}).get(key, merged.line)
    for key in merged:
        if key not in _CASE_KEYS:
            hint = suggestion(key, _CASE_KEYS)
            message = f"unknown key {key!r}{hint}; template variables are not supported"
            raise PackError(file, merged.key_lines[key], message)
    for key, message in _UNSUPPORTED.items():
        if key in merged and not (key == "outputSchema" and merged.get("checkSchema") is False):
            raise PackError(file, merged.key_lines[key], message)
    return merged


def _ids(cases: list[YamlMap]) -> list[str]:
    ids: list[str] = []
    for index, case in enumerate(cases):
        title = case.get("title")
        base = title if isinstance(title, str) and title.strip() else f"case {index + 1}"
        case_id, number = base, 2
        while case_id in ids:
            case_id, number = f"{base} #{number}", number + 1
        ids.append(case_id)
    return ids


def _results(path: Path, shown: Shown, cases: int, root: Path) -> tuple[list[Any], str]:
    file = shown(path)[0]
    if not os.path.lexists(path):
        return [], file
    _contained(path, root, shown)
    results = json_reader.load_json(path, shown=file)
    if not isinstance(results, list):
        raise PackError(file, None, "the results must be a JSON array, one entry a case")
    if len(results) > cases:
        raise PackError(file, None, f"{len(results)} results for {cases} cases")
    return results, file


def _case_input(entry: Any, where: str) -> CaseInput | str:
    if entry is None:
        return CaseInput({}, {}, None, (), where)
    if not isinstance(entry, Mapping):
        return f"{where}: an executor result must be an object with output and messages"
    unknown = sorted(str(key) for key in entry if key not in ("output", "messages"))
    if unknown:
        return f"{where}: unknown key {unknown[0]!r} (an executor result holds output and messages)"
    messages = entry.get("messages", [])
    if not isinstance(messages, list) or not all(isinstance(m, Mapping) for m in messages):
        return f"{where}: messages must be a list of objects"
    document = {
        "success": True,
        **{k: _trimmed(entry[k]) for k in ("output", "messages") if k in entry},
    }
    return CaseInput({}, {}, document, (), where)


def _trimmed(value: Any) -> Any:
    """@isdk trims every string it compares; trimming them all up front is the same."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return [_trimmed(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _trimmed(item) for key, item in value.items()}
    return value


def _contract(
    case: YamlMap, case_id: str, file: str, in_pack: str, loaded: CaseInput | str, skip: str | None
) -> Contract:
    translator = Translator(
        file,
        strict=_strict(case, file),
        heuristic_schema=case.get("disableHeuristicSchema") is not True,
    )
    units = list(_units(case, translator, file))
    if not units:
        raise PackError(
            file, case.line, f"case '{case_id}' has nothing to check: no output or expect"
        )
    invert = case.get("not") is True
    golden = GoldenCase(case_id, in_pack, not invert, None, None, case.line, case.line, skip)
    return Contract(
        path=in_pack, file=file, tool="", expected_calls=(), expected_names=frozenset(),
        allowed_misses=0, strict_order=False, strict_match=False,
        output_invariants=tuple(unit.assertion for unit in units), input_invariants=(),
        golden_cases=(golden,), allowed_errors=frozenset(), lines={},
        scoring=scoring(case, units, file, translator.critical), case_inputs={case_id: loaded},
    )  # fmt: skip


def _strict(case: YamlMap, file: str) -> frozenset[str]:
    value = case.get("strict", False)
    modes = {"object", "array"} if value is True else set() if value is False else value
    modes = {modes} if isinstance(modes, str) else modes
    if not isinstance(modes, set | list) or not set(modes) <= {"object", "array"}:
        message = "strict must be true, false, 'object', 'array' or a list of them"
        raise PackError(file, case.key_lines.get("strict", case.line), message)
    return frozenset(modes)


def _units(case: YamlMap, translator: Translator, file: str) -> Iterator[Unit]:
    """The scored parts of a case: its top-level output, and each key of expect."""
    if "output" in case:
        yield _unit("output", "$.output", case["output"], case.key_lines["output"], translator)
    expect = case.get("expect")
    if expect is None:
        return
    line = case.key_lines.get("expect", case.line)
    if not isinstance(expect, Mapping):
        raise PackError(file, line, "expect must be a mapping of output, messages and tools")
    for key in expect:
        key_line = getattr(expect, "key_lines", {}).get(key, line)
        if key not in _EXPECT_KEYS:
            raise PackError(
                file, key_line, f"expect.{key} is not supported (output, messages, tools)"
            )
        if key == "tools":
            yield _tools_unit(expect[key], key_line, translator)
        else:
            yield _unit(f"expect.{key}", f"$.{key}", expect[key], key_line, translator)


def _unit(locator: str, path: str, value: Any, line: int, translator: Translator) -> Unit:
    return Unit(
        _compile(locator, path, translator.expectation(value, line), translator.file), value
    )


def _tools_unit(value: Any, line: int, translator: Translator) -> Unit:
    """`expect.tools`: every tool call of the trace, whatever message holds it."""
    ordered = isinstance(value, Mapping) and "$sequence" in value
    if not isinstance(value, list | Mapping) or (
        isinstance(value, Mapping) and set(value) - METADATA not in ({"$all"}, {"$sequence"})
    ):
        raise translator.refuse(line, "expect.tools takes a list, $all or $sequence")
    listed = value if isinstance(value, list) else value.get("$sequence" if ordered else "$all")
    calls = translator.items("expect.tools", listed, line)
    if ordered:
        check = node(line, all_of=[node(line, path=_TOOL_CALLS, sequence=calls)])
    else:
        check = node(line, all_of=[node(c.line, path=_TOOL_CALLS, contains_item=c) for c in calls])
    return Unit(_compile("expect.tools", "$.messages", check, translator.file), value)


def _compile(locator: str, path: str, expectation: YamlMap, file: str) -> Assertion:
    raw = node(expectation.line, path=path)
    for key, value in expectation.items():
        raw[key] = value
        raw.key_lines[key] = expectation.key_lines.get(key, expectation.line)
    return compile_assertion(
        raw, locator=locator, file=file, line=raw.line, key_lines=raw.key_lines
    )
