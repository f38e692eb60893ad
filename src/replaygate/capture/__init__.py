"""Capture from the running app: the `observe` proxy and the Python hook, on one recording core.

``http_client`` and ``async_http_client`` (docs/observe.md) import their HTTP library only
when called.
"""

from replaygate.capture.hook import async_http_client, http_client

__all__ = ["async_http_client", "http_client"]
