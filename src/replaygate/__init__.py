"""replaygate: check recorded LLM tool calls against YAML contracts.

The package's face: its version, and ``check_response`` for in-app checks (docs/observe.md),
imported only when it is asked for, so that importing any part of replaygate stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replaygate.check import check_response

__version__ = "0.1.0"
__all__ = ["__version__", "check_response"]


def __getattr__(name: str) -> Any:
    if name == "check_response":
        from replaygate.check import check_response

        return check_response
    raise AttributeError(f"module 'replaygate' has no attribute {name!r}")
