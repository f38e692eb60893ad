"""replaygate: check recorded LLM tool calls against YAML contracts."""

__version__ = "0.1.0"
