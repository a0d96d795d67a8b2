"""``$DAGSTER_HOME`` made ready for this project: the one place ``prove build`` and ``prove ui`` prepare it.

Light on purpose (no Dagster import): ``prove ui`` prepares the home before it starts ``dg dev``.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def prepare_home(data_dir: str | Path) -> Path:
    """``$DAGSTER_HOME`` (set to the data dir's ``dagster_home`` when unset), made, with a copy of the repository's
    dagster.yaml when it has none."""
    os.environ.setdefault("DAGSTER_HOME", str(Path(data_dir).resolve() / "dagster_home"))
    home = Path(os.environ["DAGSTER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    yaml_src = ROOT / "dagster.yaml"
    if yaml_src.exists() and not (home / "dagster.yaml").exists():
        (home / "dagster.yaml").write_text(yaml_src.read_text())
    return home
