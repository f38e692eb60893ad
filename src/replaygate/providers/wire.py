"""The providers replaygate can call: one row each (path, headers, request, response, key)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from replaygate.providers import anthropic, openai_chat, openai_responses
from replaygate.providers.names import ProviderName
from replaygate.providers.prompt import Prompt


@dataclass(frozen=True, slots=True)
class Wire:
    path: str
    base_url: str | None  # None: --base-url is required
    key_env: str | None  # None: --api-key-env names it (optional)
    headers: Callable[[str], dict[str, str]]
    build: Callable[[Prompt], dict[str, Any]]
    parse: Callable[[Any], dict[str, Any]]
    left_out: frozenset[str] = frozenset()  # advisory settings this API no longer takes
    api_version: str | None = None  # the version header sent, stored in recordings

    def not_sent(self, prompt: Prompt) -> list[str]:
        """The fixture's settings this provider is not sent (said once, in `record`'s table)."""
        return sorted(key for key in prompt.settings if key in self.left_out)


WIRES: dict[ProviderName, Wire] = {
    ProviderName.OPENAI: Wire(
        openai_chat.PATH,
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        openai_chat.headers,
        openai_chat.build,
        openai_chat.parse,
    ),
    ProviderName.OPENAI_RESPONSES: Wire(
        openai_responses.PATH,
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        openai_responses.headers,
        openai_responses.build,
        openai_responses.parse,
    ),
    ProviderName.ANTHROPIC: Wire(
        anthropic.PATH,
        "https://api.anthropic.com",
        "ANTHROPIC_API_KEY",
        anthropic.headers,
        anthropic.build,
        anthropic.parse,
        anthropic.LEFT_OUT,
        anthropic.API_VERSION,
    ),
    ProviderName.OPENAI_COMPATIBLE: Wire(
        openai_chat.PATH,
        None,
        None,
        openai_chat.headers,
        lambda prompt: openai_chat.build(prompt, compatible=True),
        openai_chat.parse,
    ),
}
