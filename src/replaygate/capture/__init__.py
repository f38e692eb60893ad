"""Capture from the running app: the `observe` proxy and the Python hook, on one recording core."""
