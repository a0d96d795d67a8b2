"""The one programmatic reward (PAPER.md section 3): :mod:`score` and scoring a JSONL file (:mod:`jsonl`)."""
