"""The build configuration as typed Dagster config: every stage's section shows in the launchpad with its
defaults, a run config reaches the stages as a validated ``BuildConfig``, and a bad value names its field."""

from __future__ import annotations

import dagster as dg
import pytest
from pydantic import ValidationError

from assets.resources import BuildParams, ProveSettings, settings_for
from pipeline.core.config import BuildConfig, ChainConfig, ServerConfig


def _build_fields() -> dict:
    return ProveSettings.to_config_schema().as_field().config_type.fields["build"].config_type.fields


def test_every_field_and_stage_section_of_the_build_config_is_a_typed_config_field():
    fields = _build_fields()
    assert set(fields) == set(BuildConfig.model_fields)
    assert set(fields["chains"].config_type.fields) == set(ChainConfig.model_fields)
    assert fields["examples"].config_type.given_name is None and "Int" in fields["examples"].config_type.key
    assert fields["chains"].config_type.fields["per_server"].default_value == ChainConfig().per_server
    # a choice of the model (Literal) is an enum of the same values
    assert {
        v.config_value for v in fields["query"].config_type.fields["backend"].config_type.inner_type.enum_values
    } == {"template", "llm"}


def test_a_run_config_reaches_the_assets_as_a_validated_build_config_with_defaults_for_the_rest():
    @dg.asset
    def seen(settings: ProveSettings) -> dict:
        return settings.build_config().model_dump()

    r = dg.materialize(
        [seen],
        resources={"settings": ProveSettings.configure_at_launch()},
        run_config={
            "resources": {
                "settings": {
                    "config": {
                        "build": {
                            "examples": 9,
                            "servers": ["banking"],
                            "chains": {"per_server": 3},
                            "query": {"backend": "llm"},
                        }
                    }
                }
            }
        },
    )
    cfg = r.output_for_node("seen")
    assert (cfg["examples"], cfg["servers"], cfg["chains"]["per_server"], cfg["query"]["backend"]) == (
        9,
        ["banking"],
        3,
        "llm",
    )
    assert cfg["seed"] == BuildConfig().seed and cfg["chains"]["max_len"] == ChainConfig().max_len


def test_the_cli_s_build_config_round_trips_through_the_resource():
    cfg = BuildConfig(
        examples=12,
        servers=["notes"],
        data_dir="/tmp/x",
        chains=ChainConfig(per_server=4),
        server_configs=[
            ServerConfig(name="notes", kind="stdio", command="python", args=["n.py"], env={"K": "${TOKEN}"})
        ],
        unavailable_servers={"crm": "the per-server run failed"},
    )
    assert settings_for(cfg).build_config() == cfg


def test_a_bad_value_is_refused_by_the_build_config_naming_the_field():
    with pytest.raises(ValidationError, match="examples"):
        ProveSettings(build=BuildParams(examples=0)).build_config()
    with pytest.raises(ValidationError, match="max_len"):
        ProveSettings(build=BuildParams(chains={"min_len": 4, "max_len": 2})).build_config()
