"""benchmarks/physics_settings.py on a tiny size: a contacts row, then one row per variant
with the pairs MJX tests, the C rate and the deviation from the declared setting."""

from __future__ import annotations

import json

import pytest

import physics_settings
from modular_ppo.body import load_body

TINY = ["--seconds", "0.05", "--contact-steps", "30", "--deviation-steps", "5"]


def _rows(tmp_path, *args):
    out = tmp_path / "rows.jsonl"
    physics_settings.main([*args, *TINY, "--out", str(out)])
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_rows_of_the_declared_setting_and_a_variant(tmp_path):
    rows = _rows(tmp_path, "--bodies", "walker2d-modular", "--skip-mjx", "--variants",
                 "declared", "without-exclusions", "exclude-untouched", "iterations=2")
    contacts, declared, without, iterations = rows
    assert contacts["row"] == "contacts" and len(contacts["collision_pairs"]) == 3
    assert contacts["excluded_by_file"] == ["floor/torso_geom"]
    assert set(contacts["touched"]) == {"task/uniform", "task/held", "free/uniform", "free/held"}
    # The file already excludes the one untouched pair: no "exclude-untouched" row.
    assert [r["variant"] for r in rows[1:]] == ["declared", "without-exclusions", "iterations=2"]
    assert declared["collision_pairs"] == 2 and without["collision_pairs"] == 3
    assert declared["excluded_touched_in_task"] == [] and "deviation" not in declared
    assert declared["xml_round_trip_deviation"]["max_abs_qpos"] == 0.0
    assert without["deviation"]["max_abs_qpos"] == 0.0  # the exclusion is exact
    assert iterations["iterations"] == 2 and iterations["deviation"]["steps"] == 5
    assert all(r["cpu_env_steps_per_s"] > 0 and "mjx_env_steps_per_s" not in r for r in rows[1:])
    assert all(r["device"] and r["date"] and "load_1min" in r for r in rows)


def test_an_untouched_pair_becomes_an_exclusion_variant():
    body = load_body("halfcheetah-modular")
    contacts = {"exclusions": [["world", "torso"]], "excluded_by_file": []}
    variant = physics_settings.variant_body(body, "exclude-untouched", contacts)
    assert variant.model.nexclude == 1 and body.model.nexclude == 0
    assert physics_settings.variant_body(body, "without-exclusions", contacts) is None


def test_a_spent_budget_skips_the_remaining_cases(tmp_path):
    rows = _rows(tmp_path, "--bodies", "hopper-modular", "--skip-mjx", "--budget-s", "0",
                 "--variants", "declared")
    assert rows == []


@pytest.mark.benchmark
def test_the_mjx_rate_is_measured(tmp_path):
    rows = _rows(tmp_path, "--bodies", "hopper-modular", "--envs", "2", "--variants", "declared")
    assert rows[1]["mjx_env_steps_per_s"] > 0 and rows[1]["mjx_finite"]
