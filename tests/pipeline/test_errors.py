"""Configuration errors read as one line per problem: where it is, what is wrong, what was given."""

from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError

from pipeline.core.config import BuildConfig
from pipeline.core.errors import validation_problems, yaml_problem
from pipeline.core.servers_file import ConfigFileError, load_servers_file


def test_each_pydantic_problem_is_one_line_with_its_field_path():
    with pytest.raises(ValidationError) as exc:
        BuildConfig.model_validate({"examples": 0, "probe": {"bogus": 1}, "simulate": {"recovery_rate": 2}})
    lines = validation_problems(exc.value)
    assert lines == [
        "examples: input should be greater than or equal to 1 (got 0)",
        "probe.bogus: unknown key (a typo? it is not a parameter here)",
        "simulate.recovery_rate: input should be less than or equal to 1 (got 2)",
    ]
    assert all("https://" not in line and "\n" not in line for line in lines)


def test_a_yaml_error_is_one_line_with_line_and_column():
    with pytest.raises(yaml.YAMLError) as exc:
        yaml.safe_load("examples: [1,\n  servers: x\n")
    text = yaml_problem(exc.value)
    assert "\n" not in text and text.startswith("line 3, column 1: expected ',' or ']'")


def test_a_servers_file_with_bad_yaml_names_the_line(tmp_path):
    bad = tmp_path / "servers.yaml"
    bad.write_text("servers:\n  - name: a\n   kind: stdio\n")
    with pytest.raises(ConfigFileError) as exc:
        load_servers_file(bad)
    assert str(exc.value).count("\n") == 0 and "line 3, column" in str(exc.value)
