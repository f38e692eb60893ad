"""Token usage as providers and recorders write it, in every spelling we know."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from replaygate.assertions.trace import Usage
from replaygate.loading.normalize import FixtureShapeError

# Each count's spellings: OpenAI, Anthropic, ai-tester, the AI SDK, Bedrock, Gemini.
_USAGE_KEYS = {
    "input": ("input_tokens", "prompt_tokens", "inputTokens", "promptTokens", "promptTokenCount"),
    "output": (
        "output_tokens", "completion_tokens", "outputTokens", "completionTokens",
        "candidatesTokenCount",
    ),
    "cache_creation": (
        "cache_creation_input_tokens", "cacheCreationInputTokens", "cacheWriteInputTokens",
    ),
    "cache_read": ("cache_read_input_tokens", "cacheReadInputTokens"),
    "reported": ("total_tokens", "totalTokens", "totalTokenCount"),
}  # fmt: skip
_SPELLINGS = ", ".join(name for names in _USAGE_KEYS.values() for name in names)


def usage(raw: Any, where: str) -> Usage | None:
    """A `usage` object read; FixtureShapeError for a bad count or one without any key we know."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise FixtureShapeError(f"{where}: expected an object of token counts")
    if raw and not any(name in raw for names in _USAGE_KEYS.values() for name in names):
        found = ", ".join(sorted(map(str, raw)))
        raise FixtureShapeError(f"{where}: no token count we know in {found} (use {_SPELLINGS})")
    counts = {field: _tokens(raw, names, where) for field, names in _USAGE_KEYS.items()}
    return Usage(**counts)


def _tokens(raw: Mapping[str, Any], names: Sequence[str], where: str) -> int:
    for name in names:
        value = raw.get(name)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise FixtureShapeError(f"{where}.{name}: expected a token count, got {value!r}")
        return value
    return 0
