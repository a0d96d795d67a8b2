"""The training settings as typed Dagster config (the ``training`` resource): every field of ``TrainConfig``
shows in the launchpad, unset ones take the model's defaults, the CLI's flags round-trip through the resource,
and a bad value is refused naming its field."""

from __future__ import annotations

import argparse

import dagster as dg
import pytest
import yaml
from pydantic import ValidationError

from assets.cli.build import check_train_params, train_params
from assets.training import TrainingSettings, TrainParams, training_settings
from training.config import TrainConfig, load_train_config


def _params_fields() -> dict:
    return TrainingSettings.to_config_schema().as_field().config_type.fields["params"].config_type.fields


def test_every_field_of_the_train_config_is_a_typed_config_field_left_unset_by_default():
    fields = _params_fields()
    assert set(fields) == set(TrainConfig.model_fields) | {"config_file"}
    assert "Int" in fields["grpo_steps"].config_type.key and not fields["grpo_steps"].is_required
    assert set(fields["reward"].config_type.inner_type.fields) == set(
        TrainConfig.model_fields["reward"].annotation.model_fields
    )
    assert {k for k, v in TrainParams().model_dump().items() if v is not None} == set()
    assert training_settings().train_config() == TrainConfig(), "nothing set: the tiny defaults"


def test_a_run_config_reaches_the_asset_with_the_models_defaults_for_the_rest():
    @dg.asset
    def seen(training: TrainingSettings) -> dict:
        return training.train_config().model_dump()

    r = dg.materialize(
        [seen],
        resources={"training": TrainingSettings.configure_at_launch()},
        run_config={
            "resources": {
                "training": {
                    "config": {
                        "params": {
                            "model": "Qwen/Qwen3-4B-Instruct-2507",
                            "grpo_steps": 3,
                            "grpo_args": {"logging_steps": 1},
                        }
                    }
                }
            }
        },
    )
    cfg = r.output_for_node("seen")
    assert cfg["grpo_steps"] == 3 and cfg["grpo_args"]["logging_steps"] == 1
    # unset fields take the hub model's defaults (not the tiny ones), dicts merged key by key
    assert (
        cfg["sft_steps"] == 0
        and cfg["num_generations"] == 16
        and cfg["lr"] == 1e-6
        and cfg["grpo_args"]["bf16"] is True
    )


def _args(**kw) -> argparse.Namespace:
    return argparse.Namespace(**{"grpo_steps": None, "train_config": None, **kw})


def test_the_cli_s_training_settings_round_trip_through_the_resource(tmp_path):
    f = tmp_path / "train.yaml"
    f.write_text(yaml.safe_dump({"model": "Qwen/Qwen3-8B", "grpo_steps": 9, "eval_limit": 4}))
    assert training_settings(True, train_params(_args())).train_config() == TrainConfig()
    assert training_settings(True, train_params(_args(grpo_steps=5))).train_config() == load_train_config(
        None, {"grpo_steps": 5}
    )
    got = training_settings(True, train_params(_args(grpo_steps=5, train_config=str(f)))).train_config()
    assert got == load_train_config(f, {"grpo_steps": 5})
    assert (got.grpo_steps, got.eval_limit, got.lr, got.sft_steps) == (5, 4, 5e-8, 0), "the flag wins over the file"


def test_a_bad_value_is_refused_naming_the_field(tmp_path):
    with pytest.raises(ValidationError, match="grpo_steps"):
        TrainParams(grpo_steps="many")
    with pytest.raises(ValueError, match="num_generations"):
        training_settings(True, {"num_generations": 1}).train_config()
    bad = tmp_path / "train.yaml"
    bad.write_text("lr: fast\n")
    with pytest.raises(SystemExit) as exc:
        check_train_params(train_params(_args(train_config=str(bad))))
    assert "invalid training configuration" in str(exc.value) and "train.yaml: lr" in str(exc.value)
