"""The reference day of the built-in worlds, defined once (issue 39).

``REFERENCE_DAY`` is the day every built-in world's "today" is: each server's ``TODAY`` / ``NOW`` /
``DAY0``, the times its seed data is stamped with and the dates its tool descriptions name are derived
from it. The pipeline's ``QueryConfig.reference_date`` defaults to it, so the requests it writes
("next Friday", "in two days") are dated in the same week as the worlds they are replayed on.

This module imports nothing, so reading it (``pipeline.core.config`` does) costs no mcp import: it
lives beside :mod:`servers.names` rather than under :mod:`servers.kit`, whose package imports mcp.
"""

REFERENCE_DAY = "2026-03-02"  # a Monday

__all__ = ["REFERENCE_DAY"]
