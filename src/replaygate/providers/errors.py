"""Provider errors: the classes contracts' `allowed_errors` name, and the provider's message."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Mapping
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from urllib3.exceptions import NameResolutionError


class ErrorKind(StrEnum):
    """The classifications provider errors get, as contracts' `allowed_errors` name them."""

    RATE_LIMIT = "rate_limit"
    QUOTA = "quota_exceeded"
    TIMEOUT = "timeout"
    AUTH_ERROR = "auth_error"
    INVALID_REQUEST = "invalid_request"
    PROVIDER_ERROR = "provider_error"


# Out of credit, not too fast: OpenAI's 429 `insufficient_quota`, Anthropic's
# `billing_error`. No wait makes them pass, so they are never retried, and a contract that
# allows `rate_limit` does not let them through as skipped cases.
_QUOTA = frozenset({"insufficient_quota", "billing_error"})


def error_kind(status: int, body: Any = None) -> ErrorKind:
    """The class of an error reply, from its status and (for quota) its JSON body."""
    if status == 402 or _out_of_quota(body):
        return ErrorKind.QUOTA
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if status in (401, 403):
        return ErrorKind.AUTH_ERROR
    if status >= 500:  # 529: Anthropic's "overloaded"
        return ErrorKind.PROVIDER_ERROR
    return ErrorKind.INVALID_REQUEST


def _out_of_quota(body: Any) -> bool:
    error = body.get("error") if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        return False
    return error.get("code") in _QUOTA or error.get("type") in _QUOTA


def reply_json(content: bytes) -> Any:
    """An error reply's body as JSON, or None when it is not JSON."""
    try:
        return json.loads(content)
    except ValueError:
        return None


def provider_message(body: Any, text: str) -> str:
    """The provider's own words: OpenAI's and Anthropic's ``error.message``, and the shapes
    OpenAI-compatible servers use (Ollama's ``error`` text, vLLM's top-level ``message``,
    FastAPI's ``detail``); the body as JSON when none of them, the text when not JSON."""
    if not isinstance(body, Mapping):
        return text.strip() if body is None else json.dumps(body, ensure_ascii=False)
    error = body.get("error")
    for candidate in (
        error.get("message") if isinstance(error, Mapping) else error,
        body.get("message"),
        _detail(body.get("detail")),
    ):
        if isinstance(candidate, str) and candidate:
            return candidate
    # whole and unescaped: it is redacted before it is cut (Provider._failed)
    return json.dumps(body, ensure_ascii=False)


def _detail(detail: Any) -> str | None:
    """FastAPI's ``detail``: text, or validation errors ``[{loc, msg}]``."""
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):
        messages = [item.get("msg") for item in detail if isinstance(item, Mapping)]
        texts = [message for message in messages if isinstance(message, str)]
        return "; ".join(texts) or None
    return None


def host_port(base_url: str) -> str:
    """``host:port`` of a base URL (the scheme's port when it names none)."""
    parts = urlsplit(base_url)
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port out of range: the request failed on it already
        return host
    return f"{host}:{port}"


def unreachable(exc: BaseException, base_url: str) -> str:
    """Why no connection to the provider was made, naming where it was sought."""
    host = urlsplit(base_url).hostname or "?"
    return f"cannot reach the provider at {host_port(base_url)}: {_why(exc, host)}"


def _why(exc: BaseException, host: str) -> str:
    """The cause under the wrappers (requests, urllib3): refused, unresolved, TLS, reset."""
    causes = list(_causes(exc))
    for cause in causes:
        if isinstance(cause, (NameResolutionError, socket.gaierror)):
            return f"the name {host} does not resolve"
        if isinstance(cause, ssl.SSLError):
            return f"TLS failed: {cause.reason or cause}"
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, ConnectionResetError):
            return "connection reset"
        if isinstance(cause, TimeoutError):
            return "timed out"
    return f"the connection failed ({type(causes[-1]).__name__})"


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps: its cause, context, urllib3's ``reason``, exceptions among
    its arguments, breadth first, each once."""
    found: list[BaseException] = []
    queue: list[Any] = [exc]
    while queue and len(found) < 20:
        item = queue.pop(0)
        if not isinstance(item, BaseException) or any(item is seen for seen in found):
            continue
        found.append(item)
        queue += [item.__cause__, item.__context__, getattr(item, "reason", None), *item.args]
    return found
