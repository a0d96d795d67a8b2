"""Evaluation suites a policy is scored on, the same for every policy and every corpus version:

* ``heldout``: a frozen held-out suite (:mod:`training.suites.heldout`): a corpus version's eval split frozen
  once, pinned by hash, played live on our servers and scored with the programmatic reward;
* ``bfcl-multi-turn``: BFCL v4's multi-turn categories (:mod:`training.suites.bfcl`), played live in BFCL's own
  environment classes and scored by BFCL's own checker, from the ``bfcl-eval`` package.

:func:`training.suites.run.evaluate_policy` plays the suites and writes one results table;
:mod:`training.suites.results` reads it back (summaries, paired comparisons, one item's story).
"""

SUITES = ("heldout", "bfcl-multi-turn")


def check_suites(names: list[str]) -> list[str]:
    """The suite names, each checked (``ValueError`` naming an unknown one and the known ones)."""
    bad = [n for n in names if n not in SUITES]
    if bad:
        raise ValueError(f"unknown suite(s) {', '.join(map(repr, bad))}; the suites are {', '.join(SUITES)}")
    if not names:
        raise ValueError(f"no suite named; the suites are {', '.join(SUITES)}")
    return names
