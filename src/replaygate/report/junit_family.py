"""The JUnit dialects, apart from their writer: the command line's options need only the names."""

from __future__ import annotations

from enum import StrEnum


class JunitFamily(StrEnum):
    """Which JUnit dialect to write, named as pytest's ``junit_family`` names them."""

    XUNIT2 = "xunit2"  # valid against Jenkins' junit-10.xsd
    XUNIT1 = "xunit1"  # adds testcase file and line, which PR annotators read
