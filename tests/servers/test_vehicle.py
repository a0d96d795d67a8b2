"""Regression: a refused climate change leaves the vehicle untouched."""

from pipeline.env import Environment


def test_refused_defrost_without_climate_changes_nothing():
    with Environment("vehicle") as env, env.session(0) as s:
        before = s.state_hash()
        r = s.call(
            "set_climate", {"vehicle_id": "VEH-001", "climate_on": False, "defrost": True, "temperature_c": 18.5}
        )
        assert not r.ok and r.error_code == "invalid_argument" and "defrost" in r.error
        assert s.state_hash() == before
