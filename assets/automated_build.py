"""The build the automation runs: the one a team chose, set once, not the defaults.

``PROVE_AUTOMATION`` (in the instance's environment, e.g. beside ``DAGSTER_HOME`` where ``dagster dev`` or the
daemon runs) names a YAML file; its paths are relative to the file::

    build: build.yaml          # a build file, as prove build --config reads it
    servers_file: servers.yaml # servers registered in a file, as prove build --servers-file
    servers: [banking, crm, calendar]
    examples: 40
    data_dir: data
    train: false               # whether the policy is trained after each new corpus the automation makes

Every field is optional. Without the variable, the automation runs the defaults (every built-in server, 200
examples, training on) under ``$PROVE_DATA_DIR``. The file sets the ``settings`` and ``training`` resources'
defaults, so the launchpads of both jobs show that build typed, and the schedule and the sensors launch their runs
with exactly it (in each run's config, which the run records keep).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from assets.executors import execution_config, steps_elsewhere
from pipeline.core.build_file import load_build_config
from pipeline.core.config import BuildConfig
from pipeline.core.errors import validation_problems, yaml_problem

AUTOMATION_ENV = "PROVE_AUTOMATION"


class AutomationFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    build: str | None = None
    servers_file: str | None = None
    servers: list[str] | None = None
    examples: int | None = None
    data_dir: str | None = None
    train: bool = True


@dataclass(frozen=True)
class AutomatedBuild:
    config: BuildConfig
    train: bool
    source: str  # the automation file, or "defaults"

    def run_config(self, train: bool | None = None) -> dict[str, Any]:
        """The config a run of this build carries (the launchpad shows the same, typed): the resources' (the build
        settings, the training settings, the stage store's folder under the storage root) and, when the build's
        deployment runs steps elsewhere (Celery workers), the executor's: a worker takes them all from the run."""
        out: dict[str, Any] = {
            "resources": {
                "settings": {"config": {"build": self.config.model_dump(mode="json")}},
                "training": {"config": {"train": self.train if train is None else train}},
                "io_manager": {"config": {"base_dir": str(self.config.data_path / "stages")}},
            }
        }
        if steps_elsewhere(self.config):
            out["execution"] = {"config": execution_config(self.config)}
        return out


def automated_build(path: str | Path | None = None) -> AutomatedBuild:
    """The build named by ``path`` or ``$PROVE_AUTOMATION``; the defaults without either. A bad file is a
    ``ValueError`` that names it and the problem."""
    where = path or os.environ.get(AUTOMATION_ENV)
    default_data = os.environ.get("PROVE_DATA_DIR", "data")
    if not where:
        return AutomatedBuild(BuildConfig(data_dir=default_data), True, "defaults")
    p = Path(where).resolve()
    try:
        raw = yaml.safe_load(p.read_text()) or {}
    except OSError as exc:
        raise ValueError(f"{AUTOMATION_ENV}: cannot read {p}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ValueError(f"{AUTOMATION_ENV}: {p} is not valid YAML: {yaml_problem(exc)}") from exc
    try:
        f = AutomationFile.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(f"{AUTOMATION_ENV}: {p}:\n" + "\n".join(f"  {x}" for x in validation_problems(exc))) from exc

    def here(x: str | None) -> str | None:
        return str((p.parent / x).resolve()) if x else None

    cfg = load_build_config(
        here(f.build),
        examples=f.examples,
        servers_file=here(f.servers_file),
        servers=f.servers,
        data_dir=here(f.data_dir),
        default_data_dir=default_data,  # neither file says where: $PROVE_DATA_DIR
    )
    return AutomatedBuild(cfg, f.train, str(p))
