"""`replaygate.check_response`: one provider response judged in the app, as recorded mode would.

No network and no file written; a contract file is read and compiled once and kept while it is
unchanged (its size and modification time), so a check costs the judging alone.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaygate.capture.fixture_request import NotARequest, fixture_request
from replaygate.core.errors import ReplayGateError
from replaygate.core.model import Failure, Status
from replaygate.engine.collector import CaseContext
from replaygate.engine.judge import evaluate_case
from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.files import is_repository_root
from replaygate.loading.fixtures import CaseInput
from replaygate.loading.normalize import FixtureShapeError, normalize_request, normalize_response
from replaygate.loading.pack import load_contract
from replaygate.loading.targets import PACK_FILE
from replaygate.providers import anthropic, openai_chat, openai_responses
from replaygate.providers.names import ProviderName
from replaygate.providers.response import MalformedResponse

CASE_ID = "check_response"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """``ok`` when the response satisfies the contract; else each failure with its message,
    classification and contract line (``file``, ``line``)."""

    ok: bool
    failures: tuple[Failure, ...]


_contracts: dict[str, tuple[tuple[int, int], Contract]] = {}
_lock = threading.Lock()


def _contract(path: Path) -> Contract:
    """The compiled contract, read again only when the file has changed (the absolute path
    is the key: resolving symlinks on every call would cost a quarter of a check)."""
    key = os.path.abspath(path)
    try:
        stat = os.stat(key)
    except OSError as exc:
        raise ReplayGateError(f"{path}: cannot read the contract: {exc.strerror}") from None
    stamp = (stat.st_size, stat.st_mtime_ns)
    with _lock:
        known = _contracts.get(key)
    if known is not None and known[0] == stamp:
        return known[1]
    resolved = Path(key).resolve()
    pack_dir = next((d for d in resolved.parents if (d / PACK_FILE).is_file()), resolved.parent)
    root = next((d for d in resolved.parents if is_repository_root(d)), pack_dir)
    contract = load_contract(resolved, pack_dir, root)
    with _lock:
        _contracts[key] = (stamp, contract)
    return contract


def _plain(response: Any) -> Any:
    """An SDK response object as its JSON (both official SDKs' objects are pydantic models)."""
    dump = getattr(response, "model_dump", None)
    return dump(mode="json") if callable(dump) else response


def _provider(body: Mapping[str, Any]) -> ProviderName | None:
    """Which wire format the body is in; None: the flat response (docs/recordings.md)."""
    if "choices" in body:
        return ProviderName.OPENAI
    if body.get("object") == "response" or isinstance(body.get("output"), list):
        return ProviderName.OPENAI_RESPONSES
    if body.get("type") == "message" or isinstance(body.get("content"), list):
        return ProviderName.ANTHROPIC
    if "tool_calls" in body or "success" in body:
        return None
    raise ReplayGateError("response: not a Chat Completions, Responses or Messages response")


_PARSE = {
    ProviderName.OPENAI: openai_chat.parse,
    ProviderName.OPENAI_RESPONSES: openai_responses.parse,
    ProviderName.ANTHROPIC: anthropic.parse,
}


def _request(request: Any, provider: ProviderName | None) -> dict[str, Any]:
    """The request as a fixture holds it: the app's own (with ``model``) converted."""
    if request is None:
        return {}
    if provider is not None and isinstance(request, Mapping) and "model" in request:
        try:
            return fixture_request(provider, request)[1]
        except NotARequest as exc:
            raise ReplayGateError(f"request: {exc}") from None
    return dict(request)


def _case(contract: Contract) -> GoldenCase:
    line = contract.lines.get("tool", 1)
    return GoldenCase(CASE_ID, "", True, None, None, line, line)


def check_response(
    response: Any, contract: str | os.PathLike[str], *, request: Any = None
) -> CheckResult:
    """``response`` (a provider's JSON as a dict, or an ``openai``/``anthropic`` SDK response
    object) judged against the contract file: its expected tool calls, invariants and, when
    ``request`` (the request sent, with its tools) is given, the tools' schemas and the
    input invariants. Raises ReplayGateError for a contract or response it cannot read."""
    compiled = _contract(Path(contract))
    body = _plain(response)
    if not isinstance(body, Mapping):
        raise ReplayGateError(f"response: expected an object, got {type(body).__name__}")
    provider = _provider(body)
    try:
        flat = _PARSE[provider](body) if provider is not None else dict(body)
        document, calls = normalize_response(flat)
        fixture_request_ = _request(request, provider)
        request_document, schemas = normalize_request(fixture_request_)
    except (MalformedResponse, FixtureShapeError) as exc:
        raise ReplayGateError(f"response: {exc}") from None
    source = CaseInput(request_document, schemas, document, calls, looked_in="")
    context = CaseContext("", "", compiled, _case(compiled), os.environ)
    result = evaluate_case(context, source)
    return CheckResult(result.status is Status.PASSED, result.failures)
