"""pipeline.language.lexicon imports inflect without typeguard's instrumentation, and inflect's words are unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, typeguard
real = typeguard.typechecked
import pipeline.language.lexicon as lexicon
import inflect
code = inflect.engine.plural.__code__
print(json.dumps({
    "instrumented": any("typeguard" in name for name in code.co_names),
    "typechecked_restored": typeguard.typechecked is real,
    "words": [lexicon._INFLECT.plural("box"), lexicon._INFLECT.singular_noun("invoices"), lexicon._INFLECT.a("hour"),
              lexicon._INFLECT.plural("person")],
}))
"""


def _probe() -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_inflect_is_imported_without_typeguard_instrumentation_and_typeguard_is_left_as_it_was():
    # a fresh process: this test process may have imported inflect another way first
    got = _probe()
    assert got["instrumented"] is False, (
        "inflect's methods were recompiled by typeguard (seconds of every process's start)"
    )
    assert got["typechecked_restored"] is True, "typeguard.typechecked was left patched for every later import"


def test_inflect_gives_the_same_words_unchecked():
    assert _probe()["words"] == ["boxes", "invoice", "an hour", "people"]
