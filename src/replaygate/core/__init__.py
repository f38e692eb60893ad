"""The vocabulary every layer shares: errors and exit codes, result data, fingerprints."""
