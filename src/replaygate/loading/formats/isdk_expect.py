"""@isdk expectations (`output`, `expect`) translated into replaygate assertion mappings.

Each expectation becomes a nested assertion mapping (the shape `compile_assertion` takes),
stamped with the fixture line it came from, so failures point into the fixture file.
@isdk's operators map onto ours in one table; its two rule bugs are not repeated: a string
is a regex only when it is a JavaScript regex literal, and an object always needs all its
keys, inside an OR as anywhere else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from replaygate.core.errors import PackError
from replaygate.loading.yaml_reader import YamlMap

# Keys that carry scoring and labels, not expectations.
METADATA = frozenset(
    {"$meta", "$score", "$critical", "$title", "$description", "$dimension", "$strategy",
     "$threshold"}
)  # fmt: skip
# /pattern/flags with nothing unescaped that would end the literal early (ECMAScript
# RegularExpressionLiteral): "/api/v1/users" is a path, not the regex /api/ with flags v1/users.
_REGEX_LITERAL = re.compile(r"/((?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])+)/([dgimsuvy]*)")
_JS_FLAGS = {"i": "i", "m": "m", "s": "s"}  # the others (g, y, d, u, v) change no verdict here
_SCHEMA_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array"})
_LODASH_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")


class Translator:
    """Turns one case's expectations into assertion mappings; PackError on what it cannot read."""

    def __init__(self, file: str, *, strict: frozenset[str], heuristic_schema: bool) -> None:
        self.file = file
        self.strict = strict  # "object" and/or "array"
        self.heuristic_schema = heuristic_schema
        # the mappings made of critical expectations (by id: they are kept by the compiled
        # assertions), for isdk_scoring to find their nested assertions
        self.critical: set[int] = set()

    def expectation(self, value: Any, line: int) -> YamlMap:
        """The nested assertion mapping (path ``$``) an expected value stands for."""
        made = self._made(value, getattr(value, "line", None) or line)
        if is_critical(value):
            self.critical.add(id(made))
        return made

    def _made(self, value: Any, line: int) -> YamlMap:
        if isinstance(value, Mapping):
            return self._mapping(value, line)
        if isinstance(value, list):
            return self._positional(value, line)
        if isinstance(value, str):
            return self._string(value, line)
        return node(line, equals=value)  # numbers, booleans, null: strict equality

    def located(self, path: str, expectation: YamlMap) -> YamlMap:
        """``expectation`` checked at ``path``, critical when it is."""
        made = _at(path, expectation)
        if id(expectation) in self.critical:
            self.critical.add(id(made))
        return made

    def refuse(self, line: int, message: str) -> PackError:
        return PackError(self.file, line, message)

    def _mapping(self, value: Mapping[str, Any], line: int) -> YamlMap:
        lines = getattr(value, "key_lines", {})
        keys = [key for key in value if key not in METADATA]
        operators = [key for key in keys if isinstance(key, str) and key.startswith("$")]
        if operators and len(operators) != len(keys):
            raise self.refuse(line, "an object mixes @isdk operators with fields")
        if operators:
            parts = [self._operator(op, value[op], lines.get(op, line)) for op in operators]
            return parts[0] if len(parts) == 1 else node(line, all_of=parts)
        if self.heuristic_schema and value.get("type") in _SCHEMA_TYPES:
            message = "an object with a JSON type in 'type' is a JSON Schema for @isdk, which "
            raise self.refuse(line, message + "replaygate does not run; use disableHeuristicSchema")
        return self._fields(value, keys, lines, line)

    def _fields(
        self, value: Mapping[str, Any], keys: list[Any], lines: Mapping[Any, int], line: int
    ) -> YamlMap:
        checks = [node(line, type="object")]
        for key in keys:
            key_line = lines.get(key, line)
            expected = self.expectation(value[key], key_line)
            checks.append(self.located(self._path(key, key_line), expected))
        if "object" in self.strict:  # every key present and no other: as many keys as listed
            if any("." in key or "[" in key for key in keys):
                raise self.refuse(line, "strict object matching needs plain keys, not paths")
            checks.append(node(line, length_lte=len(keys)))
        return node(line, all_of=checks)

    def _positional(self, value: list[Any], line: int) -> YamlMap:
        lines = getattr(value, "item_lines", [])
        checks = [node(line, type="array")]
        for index, item in enumerate(value):
            item_line = lines[index] if index < len(lines) else line
            checks.append(self.located(f"$[{index}]", self.expectation(item, item_line)))
        if "array" in self.strict:
            checks.append(node(line, length_lte=len(value)))
        return node(line, all_of=checks)

    def _string(self, value: str, line: int) -> YamlMap:
        if "{{" in value:
            raise self.refuse(line, "templates ({{...}}) are not supported: write the value")
        literal = _REGEX_LITERAL.fullmatch(value)
        if literal is None:  # @isdk compares trimmed text by substring
            return node(line, type="string", contains=value.strip())
        pattern, flags = literal.groups()
        inline = "".join(sorted({_JS_FLAGS[f] for f in flags if f in _JS_FLAGS}))
        return node(line, regex=f"(?{inline}){pattern}" if inline else pattern)

    def _path(self, key: Any, line: int) -> str:
        """A lodash path key (`a.b[0]`) as a JSONPath relative to the object."""
        if not isinstance(key, str) or not key:
            raise self.refuse(line, f"an object key must be a non-empty string, got {key!r}")
        if _REGEX_LITERAL.fullmatch(key):
            raise self.refuse(line, f"regex keys ({key}) are not supported")
        steps = list(_LODASH_STEP.finditer(key))
        if "".join(m.group(0) for m in steps).lstrip(".") != key or key.startswith("."):
            raise self.refuse(line, f"{key!r} is not a path replaygate can read")
        path = "$"
        for step in steps:
            name, index = step.groups()
            path += f"[{index}]" if index is not None else _member(name, line, self)
        return path

    def _operator(self, name: str, value: Any, line: int) -> YamlMap:
        handler = _OPERATORS.get(name)
        if handler is None:
            raise self.refuse(line, f"@isdk operator {name} is not supported (docs/isdk.md)")
        return handler(self, value, line)

    def items(self, name: str, value: Any, line: int) -> list[YamlMap]:
        if not isinstance(value, list) or not value:
            raise self.refuse(line, f"{name} takes a non-empty list")
        lines = getattr(value, "item_lines", [])
        return [
            self.expectation(v, lines[i] if i < len(lines) else line) for i, v in enumerate(value)
        ]


def is_critical(value: Any) -> bool:
    """Whether an expectation is marked critical: `$critical: true`, `$meta: {critical:
    true}` or `$score: {critical: true}`."""
    score = metadata(value, "score")
    return metadata(value, "critical") is True or (
        isinstance(score, Mapping) and score.get("critical") is True
    )


def metadata(value: Any, name: str) -> Any:
    """`$meta: {name}`, else `$name`, of an expectation (None when it has neither)."""
    if not isinstance(value, Mapping):
        return None
    meta = value.get("$meta")
    if isinstance(meta, Mapping) and name in meta:
        return meta[name]
    return value.get(f"${name}")


def node(line: int, **operators: Any) -> YamlMap:
    """An assertion mapping whose every key sits on ``line``."""
    mapping = YamlMap(line)
    for key, value in operators.items():
        mapping[key] = value
        mapping.key_lines[key] = line
    return mapping


def _at(path: str, expectation: YamlMap) -> YamlMap:
    """``expectation`` checked at ``path`` (relative to the value it is nested in)."""
    located = node(expectation.line, path=path)
    for key, value in expectation.items():
        located[key] = value
        located.key_lines[key] = expectation.key_lines.get(key, expectation.line)
    return located


def _member(name: str, line: int, translator: Translator) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name) and name not in ("where", "wherenot"):
        return f".{name}"
    if "'" in name or "\\" in name:
        raise translator.refuse(line, f"the key {name!r} cannot be written as a path")
    return f"['{name}']"


def _number(translator: Translator, name: str, value: Any, line: int) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise translator.refuse(line, f"{name} takes a number, got {value!r}")
    return value


def _nth(index: int) -> Callable[[Translator, Any, int], YamlMap]:
    def handler(t: Translator, value: Any, line: int) -> YamlMap:
        return node(
            line, type="array", all_of=[t.located(f"$[{index}]", t.expectation(value, line))]
        )

    return handler


def _nth_index(t: Translator, value: Any, line: int) -> YamlMap:
    if not isinstance(value, Mapping) or not isinstance(value.get("$index"), int):
        raise t.refuse(line, "$nth takes a mapping with an integer $index")
    rest = YamlMap(line)
    rest.update({k: v for k, v in value.items() if k != "$index"})
    rest.key_lines.update(getattr(value, "key_lines", {}))
    return _nth(value["$index"])(t, rest, line)


_OPERATORS: dict[str, Callable[[Translator, Any, int], YamlMap]] = {
    "$contains": lambda t, v, line: _contains(t.expectation(v, line), line),
    "$all": lambda t, v, line: node(
        line, all_of=[node(line, contains_item=x) for x in t.items("$all", v, line)]
    ),
    "$sequence": lambda t, v, line: node(line, sequence=t.items("$sequence", v, line)),
    "$each": lambda t, v, line: node(line, each=t.expectation(v, line)),
    "$and": lambda t, v, line: node(line, all_of=t.items("$and", v, line)),
    "$or": lambda t, v, line: node(line, any_of=t.items("$or", v, line)),
    "$not": lambda t, v, line: node(line, **{"not": t.expectation(v, line)}),
    "$expect": lambda t, v, line: t.expectation(v, line),
    "$exists": lambda t, v, line: node(line, exists=_exists(t, v, line)),
    "$eq": lambda t, v, line: node(line, equals=v),
    "$ne": lambda t, v, line: node(line, **{"not": node(line, equals=v)}),
    "$in": lambda t, v, line: node(line, one_of=v),
    "$nin": lambda t, v, line: node(line, **{"not": node(line, one_of=v)}),
    "$gte": lambda t, v, line: node(line, gte=_number(t, "$gte", v, line)),
    "$lte": lambda t, v, line: node(line, lte=_number(t, "$lte", v, line)),
    "$gt": lambda t, v, line: node(
        line, gte=_number(t, "$gt", v, line), **{"not": node(line, equals=v)}
    ),
    "$lt": lambda t, v, line: node(
        line, lte=_number(t, "$lt", v, line), **{"not": node(line, equals=v)}
    ),
    "$first": _nth(0),
    "$last": _nth(-1),
    "$nth": _nth_index,
}


def _contains(inner: YamlMap, line: int) -> YamlMap:
    """@isdk's $contains: an array needs an item that matches, any other value must match."""
    whole = node(line, **{"not": node(line, type="array")}, all_of=[inner])
    return node(line, any_of=[whole, node(line, type="array", contains_item=inner)])


def _exists(t: Translator, value: Any, line: int) -> bool:
    if isinstance(value, Mapping) and isinstance(value.get("$value"), bool):
        return bool(value["$value"])  # strict key presence: JSON has no undefined values
    if not isinstance(value, bool):
        raise t.refuse(line, f"$exists takes true or false, got {value!r}")
    return value
