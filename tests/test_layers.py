"""The package's layers: a module imports only from its own layer or a lower one, and no
modules import each other, however far round.

Data flows one way (files -> loaded models -> evaluation -> results -> reports -> GitHub), and
so do imports. docs/architecture.md describes each layer; this test is its enforcement.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Lowest first. A module belongs to the longest prefix that names it.
LAYERS: tuple[tuple[str, ...], ...] = (
    # the shared vocabulary: the error type, result data and its fingerprints
    ("replaygate.core",),
    ("replaygate.parallel",),  # the one way to use more than one process: plumbing, no judging
    ("replaygate.assertions",),  # the assertion language: values, JSONPath, the operator table
    # files -> validated, compiled packs, contracts and case inputs; other tools' files (formats)
    ("replaygate.loading", "replaygate.loading.formats"),
    ("replaygate.engine",),  # one golden case judged; the runner
    ("replaygate.inference",),  # contracts learned from recordings (`infer`)
    # the results cache: looked up before contracts load, stored after cases are judged
    ("replaygate.cache",),
    ("replaygate.results",),  # baseline, shards, merge: results combined and filtered
    ("replaygate.report",),  # renderers: text, JSON, JUnit, markdown
    ("replaygate.providers",),  # providers on the wire, redaction, the recording store
    # the observe proxy and the Python hook, on one recording core; check_response
    ("replaygate.capture", "replaygate.check"),
    ("replaygate.github",),  # the action's channels: annotations, summary, outputs, API
    ("replaygate.options",),  # what the commands share: options, loading named, reports out
    ("replaygate.commands",),  # one module per CLI command
    ("replaygate.cli",),  # the thin main
    # the package's face: its version (which every layer may read), check_response lazily
    ("replaygate",),
)
RELATIVE = "<relative>"


def layer_of(module: str) -> int:
    best, best_len = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or (
                module.startswith(prefix + ".") and prefix != "replaygate"
            )
            if matches and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and the architecture doc")
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(source: str) -> list[tuple[int, str]]:
    """Every replaygate module ``source`` imports, deferred imports inside functions included,
    and ``importlib.import_module`` of a literal name (or of an f-string's literal start)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            found.append((node.lineno, RELATIVE))
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "replaygate":
                found += [(node.lineno, f"replaygate.{alias.name}") for alias in node.names]
            elif node.module.startswith("replaygate."):
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("replaygate")]
        elif isinstance(node, ast.Call) and _imported_by_name(node):
            found.append((node.lineno, _imported_by_name(node)))
    return found


def _imported_by_name(call: ast.Call) -> str:
    """The module an ``import_module`` call names, as far as its text says; "" if none."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name != "import_module" or not call.args:
        return ""
    arg = call.args[0]
    if isinstance(arg, ast.JoinedStr) and arg.values:
        arg = arg.values[0]  # f"replaygate.commands.{name}": the layer of its literal start
    text = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""
    return text.rstrip(".") if text.startswith("replaygate") else ""


def violations(importer: str, source: str) -> list[str]:
    own = layer_of(importer)
    found = []
    for line, target in imports(source):
        if target == RELATIVE:
            found.append(f"{importer}:{line} imports relatively: name the module in full")
            continue
        if target == "replaygate.__version__" or target == "replaygate.__init__":
            continue
        if layer_of(target) > own:
            found.append(f"{importer}:{line} imports {target}, a higher layer")
        sibling_command = (
            importer.startswith("replaygate.commands.")
            and target.startswith("replaygate.commands.")
            and target != importer
        )
        if sibling_command:
            found.append(f"{importer}:{line} imports another command's module {target}")
    return found


MODULES = sorted(SRC.rglob("*.py"))


def test_every_module_is_in_a_layer() -> None:
    for path in MODULES:
        layer_of(module_name(path))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_import_crosses_a_layer_upwards(path: Path) -> None:
    assert violations(module_name(path), path.read_text(encoding="utf-8")) == []


def test_the_check_sees_an_upward_import() -> None:
    """The rule itself can fail: an engine module importing a reporter is caught."""
    source = "def f():\n    from replaygate.report.text import render_text\n"
    assert violations("replaygate.engine.probe", source) == [
        "replaygate.engine.probe:2 imports replaygate.report.text, a higher layer"
    ]


def test_the_check_sees_a_command_importing_another() -> None:
    source = (
        "from replaygate.commands.merge import main\n"
        "from replaygate.options.reports import finish\n"
    )
    assert violations("replaygate.commands.baseline", source) == [
        "replaygate.commands.baseline:1 imports another command's module replaygate.commands.merge"
    ]


def test_the_check_sees_relative_and_import_module_imports() -> None:
    source = (
        "import importlib\n"
        "def f():\n"
        "    from ..report.text import render_text\n"
        "    importlib.import_module('replaygate.report.text')\n"
        "    importlib.import_module(f'replaygate.github.{name}')\n"
    )
    assert violations("replaygate.engine.probe", source) == [
        "replaygate.engine.probe:3 imports relatively: name the module in full",
        "replaygate.engine.probe:4 imports replaygate.report.text, a higher layer",
        "replaygate.engine.probe:5 imports replaygate.github, a higher layer",
    ]


def imported_modules(source: str, known: set[str]) -> set[str]:
    """The package's modules ``source`` imports (deferred and TYPE_CHECKING imports too):
    ``from replaygate.loading import files`` names the module ``replaygate.loading.files``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.Call) and _imported_by_name(node):
            found.add(_imported_by_name(node))
    # the package itself is imported by every module of it, whatever the import says
    return (found - {"replaygate"}) & known


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of two or more modules that import each other, however far round (the
    strongly connected components of the import graph, found without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None and target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                work.append((target, iter(sorted(graph.get(target, ())))))
            elif target is not None:
                if target in stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = stack[stack.index(node) :]
                    del stack[stack.index(node) :]
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def test_no_modules_import_each_other() -> None:
    known = {module_name(path) for path in MODULES}
    graph = {
        module_name(path): imported_modules(path.read_text(encoding="utf-8"), known)
        - {module_name(path)}
        for path in MODULES
    }
    assert loops(graph) == []


def test_the_check_sees_a_loop_however_far_round() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    assert loops(graph) == [["a", "b", "c"], ["d", "e"]]
    known = {"replaygate.loading", "replaygate.loading.files", "replaygate.engine.judge"}
    source = (
        "from replaygate.loading import files\n"
        "if TYPE_CHECKING:\n    from replaygate.engine.judge import evaluate_case\n"
    )
    assert imported_modules(source, known) == known


MAX_LINES = 400  # a module longer than this does more than one job: split it


def test_no_module_is_longer_than_it_should_be() -> None:
    long = {
        module_name(path): lines
        for path in MODULES
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}
