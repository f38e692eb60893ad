"""ai-tester scenarios as contracts, and their recorded runs as golden cases."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from replaygate.assertions.trace_compile import (
    NotEvaluated,
    TraceAssertion,
    compile_trace_assertion,
)
from replaygate.assertions.values import suggestion
from replaygate.core.errors import PackError
from replaygate.core.model import Problem
from replaygate.loading import files, yaml_reader
from replaygate.loading.contract import Contract, GoldenCase, trace_only_contract
from replaygate.loading.files import shown_path
from replaygate.loading.fixtures import CaseInput
from replaygate.loading.formats.aitester_trace import Run
from replaygate.loading.packs import contract_path, validate

# Rust ai-tester assertions that read the sandbox's files or run commands: not in a trace.
SANDBOX_TYPES = frozenset(
    {
        "file_read", "file_contains", "file_not_contains", "file_equals", "file_exists",
        "file_not_exists", "json_valid", "json_path_equals", "command_succeeds",
        "command_output_contains",
    }
)  # fmt: skip


class ScenarioModel(BaseModel):
    """The keys of an ai-tester scenario (TypeScript 0.4 and Rust 1.x); unknown keys refused."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)
    scenario: str = Field(min_length=1)
    description: str | None = None
    skill: str | None = None
    system_prompt: str | None = None
    system_prompt_file: str | None = None
    argument: str | None = None
    user_prompt: str | None = None
    user_prompts: list[str] | None = None
    max_turns: int | None = Field(default=None, gt=0)
    token_budget: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    token_budget_dash: float | None = Field(
        default=None, gt=0, allow_inf_nan=False, alias="token-budget"
    )
    runner: dict[str, Any] | None = None
    fixtures: dict[str, Any] | None = None
    user_responses: list[dict[str, Any]] | None = None
    assertions: list[dict[str, Any]] = []
    mcp_servers: Any = None


def _line(raw: Any, key: str, default: int = 1) -> int:
    return int(getattr(raw, "key_lines", {}).get(key, default))


def _assertions(raw: Any, file: str) -> tuple[tuple[TraceAssertion, ...], tuple[NotEvaluated, ...]]:
    items = raw.get("assertions") or []
    lines = getattr(items, "item_lines", [])
    compiled: list[TraceAssertion] = []
    skipped: list[NotEvaluated] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        line = lines[index] if index < len(lines) else 1
        kind = item.get("type") if isinstance(item, Mapping) else None
        if kind in SANDBOX_TYPES:
            ident = item.get("id")
            if not isinstance(ident, str) or not ident:
                where = f"assertions[{index}].id"
                raise PackError(file, line, f"{where}: expected a non-empty string, got {ident!r}")
            _unique(ident, seen, file, line)
            reason = "reads the sandbox's files or runs a command; a trace does not record them"
            skipped.append(NotEvaluated(ident, str(kind), reason, file, line))
            continue
        found = compile_trace_assertion(item, locator=f"assertions[{index}]", file=file, line=line)
        _unique(found.id, seen, file, line)
        compiled.append(found)
    return tuple(compiled), tuple(skipped)


def _unique(ident: str, seen: dict[str, int], file: str, line: int) -> None:
    if ident in seen:
        message = f"duplicate assertion id '{ident}' (first at line {seen[ident]})"
        raise PackError(file, line, message)
    seen[ident] = line


def _implicit(
    model: ScenarioModel, raw: Any, file: str, budget: float | None
) -> list[TraceAssertion]:
    """What ai-tester checks on every run without being asked, plus the max_turns overrun."""
    top = _line(raw, "scenario")
    found = [
        TraceAssertion(
            "no_unanswered_questions", "no_unanswered_questions", {}, 1.0,
            "no_unanswered_questions", file, _line(raw, "user_responses", top),
        )
    ]  # fmt: skip
    limit = model.token_budget or model.token_budget_dash or budget
    if limit is not None:
        line = _line(raw, "token_budget", _line(raw, "token-budget", top))
        found.append(TraceAssertion("token_budget", "token_budget", {"max": limit}, 1.0,
                                    "token_budget", file, line))  # fmt: skip
    if model.max_turns is not None:
        found.append(TraceAssertion("max_turns", "max_turns", {"max": model.max_turns}, 1.0,
                                    "max_turns", file, _line(raw, "max_turns")))  # fmt: skip
    return found


def load_scenario(path: Path, pack_dir: Path, root: Path, budget: float | None) -> Contract:
    """A scenario as a contract with no golden cases yet (the runs are added later)."""
    shown = shown_path(path, root)
    raw = yaml_reader.load_yaml(path, shown=shown)
    if not isinstance(raw, Mapping):
        raise PackError(shown, 1, "an ai-tester scenario must be a mapping (scenario, assertions)")
    refuse_surprising_args(raw, shown)
    _known_keys(raw, shown)
    model: ScenarioModel = validate(ScenarioModel, raw, shown)
    compiled, skipped = _assertions(raw, shown)
    return trace_only_contract(
        contract_path(path, pack_dir, root),
        shown,
        model.scenario,
        raw,
        trace_assertions=(*compiled, *_implicit(model, raw, shown, budget)),
        not_evaluated=skipped,
    )


def _known_keys(raw: Mapping[str, Any], shown: str) -> None:
    names = [field.alias or name for name, field in ScenarioModel.model_fields.items()]
    for key in raw:
        if key not in names:
            hint = suggestion(key, names)
            raise PackError(shown, _line(raw, str(key)), f"unknown key {key!r}{hint}")


def refuse_surprising_args(raw: Any, shown: str) -> None:
    """ai-tester reads YAML 1.2, where `yes` is text: refuse what YAML 1.1 reads otherwise."""
    for node in yaml_reader.walk_maps(raw):
        args = node.get("args_match")
        for key in args if isinstance(args, Mapping) else ():
            text = yaml_reader.surprise_at(args, (key,))
            if text is not None:
                line = yaml_reader.line_of(args, (key,))
                value = yaml_reader.value_at(args, (key,))
                raise PackError(shown, line, yaml_reader.describe_surprise(text, value))


def case_for(scenario: Contract, case_id: str, shown: str) -> GoldenCase:
    line = scenario.lines.get("scenario", 1)
    return GoldenCase(case_id, shown, True, None, None, line, line)


def case_input(run: Run, shown: str) -> CaseInput | str:
    if run.errors:
        return f"{shown}: the run recorded errors, so it has nothing to judge: {run.errors[0]}"
    # tool inputs are JSON objects by the trace's schema: nothing for the call checks to see
    document = {"success": True, "tool_calls": [], "content": run.trace.final_output}
    return CaseInput(
        {},
        {},
        document,
        (),
        shown,
        trace=run.trace,
        recorded=run.recorded,
        inputs=(shown,),
        run_id=run.run_id,
    )


def scenario_index(paths: Iterable[Path], root: Path, problems: list[Problem]) -> dict[str, Path]:
    """Scenario ids to files; a file that does not read, or a second file of one id, is a
    problem (ai-tester skips files whose names start with `_`, and so do we)."""
    found: dict[str, Path] = {}
    for path in paths:
        shown = shown_path(path, root)
        try:
            raw = (
                yaml_reader.load_yaml(path, shown=shown) if not path.name.startswith("_") else None
            )
        except PackError as exc:
            problems.append(Problem(exc.file, exc.line, exc.message))
            continue
        name = raw.get("scenario") if isinstance(raw, Mapping) else None
        if isinstance(name, str) and name in found:
            first = shown_path(found[name], root)
            problems.append(Problem(shown, None, f"scenario {name!r} is also in {first}"))
        elif isinstance(name, str):
            found[name] = path
    return found


def recorded_scenario(run: Run, root: Path, shown: str) -> Path | None:
    """The scenario file the trace names, when it resolves inside the repository."""
    recorded = run.scenario_path
    if not recorded:
        return None
    relative = recorded
    if Path(recorded).is_absolute():
        inside = shown_path(Path(recorded), root)
        if Path(inside).is_absolute():
            return None  # recorded on another machine
        relative = inside
    try:
        path = files.resolve_inside(
            root, relative, root=root, what="scenario.path", file=shown, line=None
        )
    except PackError:
        return None
    return path if path.is_file() else None


def unique_ids(names: Sequence[str]) -> list[str]:
    """Scenario names as case ids; a second run of one scenario gets ``#2``."""
    counts: dict[str, int] = {}
    ids = []
    for name in names:
        counts[name] = counts.get(name, 0) + 1
        ids.append(name if counts[name] == 1 else f"{name}#{counts[name]}")
    return ids
