"""The error-budget rule, in one place: the query stage's dry runs, the simulator's recovery
demonstrations and replay validation all ask these functions rather than re-deriving the rule.

A conversation may fail at most ``max_error_rate`` (``replay.max_error_rate``, 30% by default) of
the calls it executes. An empty result is not a failure; a corrected wrong attempt is.
"""

from __future__ import annotations


def error_rate(calls: int, fails: int) -> float:
    """The share of ``calls`` that failed (0 when nothing was called).

    >>> error_rate(4, 1)
    0.25
    >>> error_rate(0, 0)
    0.0
    """
    return fails / max(1, calls)


def over_budget(calls: int, fails: int, max_error_rate: float) -> bool:
    """Whether ``fails`` out of ``calls`` breaks the error budget (a rate equal to it is within).

    >>> over_budget(10, 3, 0.30), over_budget(10, 4, 0.30)
    (False, True)
    """
    return error_rate(calls, fails) > max_error_rate


def recovery_room(calls: int, fails: int, max_error_rate: float) -> int:
    """How many extra failing calls (corrected wrong attempts) ``calls`` with ``fails`` failures can
    take and stay within the budget: the largest k with ``(fails + k) / (calls + k) <= max_error_rate``.

    >>> recovery_room(10, 0, 0.30), recovery_room(10, 3, 0.30)
    (4, 0)
    """
    if max_error_rate >= 1.0:
        return calls
    return max(0, int((max_error_rate * calls - fails) / (1.0 - max_error_rate) + 1e-9))
