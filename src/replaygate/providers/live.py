"""Live mode: each case's input made from a fresh provider answer, nothing written."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from replaygate.core.errors import PackError
from replaygate.engine.judge import excluded_by_modes
from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.fixtures import CaseInput, case_model
from replaygate.loading.normalize import FixtureShapeError, normalize_request, normalize_response
from replaygate.loading.packs import Pack
from replaygate.loading.selection import Selected
from replaygate.providers.client import Provider
from replaygate.providers.prompt import UnsupportedRequest, prompt_of
from replaygate.providers.recorder import NO_MODEL, fixture_of, hand_written
from replaygate.providers.transport import BadPolicy, policy_of

Key = tuple[str, str, str]  # pack_id, contract path, case id


def live_input(item: Selected, provider: Provider, model: str | None) -> CaseInput | str:
    """The case's request sent now, its answer normalised; or why that cannot be done."""
    excluded = excluded_by_modes(item.case.provider_modes, provider.name)
    if excluded:  # the judge skips it: spend no request on it
        return CaseInput({}, {}, None, (), "", skip=excluded)
    try:
        fixture, shown = fixture_of(item)
        request, schemas = normalize_request(fixture.get("request"))
        if hand_written(item, fixture):
            skip = "negative case with a hand-written response (not sent live)"
            return CaseInput(request, schemas, None, (), shown, skip=skip)
        model = model or case_model(item.pack, fixture)
        if not model:
            return f"{item.contract.file}: case {item.case.id!r}: {NO_MODEL}"
        prompt = prompt_of(fixture.get("request"), model)
        answer = provider.call(prompt, policy_of(item.contract))
        document, calls = normalize_response(answer.response)
    except PackError as exc:
        return str(exc)
    except (FixtureShapeError, UnsupportedRequest, BadPolicy) as exc:
        return f"{item.contract.file}: case {item.case.id!r}: {exc}"
    return CaseInput(request, schemas, document, calls, f"{provider.name} (live)")


def fetch_all(
    selected: Sequence[Selected],
    provider: Provider,
    model: str | None,
    jobs: int,
    progress: Callable[[], None],
    stop: threading.Event | None = None,
) -> Callable[[Pack, Contract, GoldenCase], CaseInput | str]:
    """Every selected case's live input, fetched on ``jobs`` threads; a lookup for the runner.
    Once ``stop`` is set (Ctrl-C, SIGTERM) no new request starts."""

    def one(item: Selected) -> tuple[Key, CaseInput | str]:
        if stop is not None and stop.is_set():
            return _key(item), f"{item.contract.file}: case {item.case.id!r}: not started"
        found = live_input(item, provider, model)
        progress()
        return _key(item), found

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        fetched = dict(pool.map(one, selected))

    def source(pack: Pack, contract: Contract, case: GoldenCase) -> CaseInput | str:
        return fetched[(pack.pack_id, contract.path, case.id)]

    return source


def _key(item: Selected) -> Key:
    return item.pack.pack_id, item.contract.path, item.case.id
