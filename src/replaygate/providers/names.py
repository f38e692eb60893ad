"""The providers' names: light to import, for the command line's options and help."""

from __future__ import annotations

from enum import StrEnum


class ProviderName(StrEnum):
    OPENAI = "openai"
    OPENAI_RESPONSES = "openai-responses"
    ANTHROPIC = "anthropic"
    OPENAI_COMPATIBLE = "openai-compatible"
