"""benchmarks/throughput.py's comparison with MuJoCo's own rollout: the case with a JAX
policy in the loop runs and steps every env, and the report's target line divides the
training figure by it."""

import cases
import pytest
import report


def test_mujoco_with_a_policy_in_the_loop_runs():
    figures = cases.mujoco_batch(8, "policy", repeats=2, round_s=0.01)
    assert figures["n_envs"] == 8 and figures["steps_per_s"] > 0
    assert figures["steps_per_cpu_s"] > 0 and figures["first_iteration_s"] > 0
    with pytest.raises(ValueError, match="'random' or 'policy'"):
        cases.mujoco_batch(8, "zero")


def test_the_target_line_divides_training_by_mujoco_with_a_policy():
    native = {"case": "mujoco-batch/64/policy", "n_envs": 64, "steps_per_s": 40_000.0,
              "steps_per_cpu_s": 20_000.0}
    train = {"case": "train/cpu/default", "n_envs": 64, "steps_per_s": 14_000.0,
             "steps_per_cpu_s": 9_000.0, "raw_steps_per_s": 20_000.0,
             "raw_steps_per_cpu_s": 12_000.0, "compile_s": 9.0, "compile_cpu_s": 13.0,
             "first_iteration_s": 12.0, "call_s": 0.14, "rollout_s": 0.09, "raw_s": 0.09,
             "call_cpu_s": 0.24, "rollout_cpu_s": 0.15, "raw_cpu_s": 0.15}
    lines = report._targets({r["case"]: r for r in (native, train)})
    (line,) = [line for line in lines if "mujoco-batch/64/policy" in line]
    assert "= **0.35** (target >= 0.8): **missed**; per CPU-second 0.45" in line
    assert report._describe("mujoco-batch/64/policy").endswith("policy controls")
    assert report._describe("mujoco-batch/64").endswith("random controls")
    (row,) = [row for row in report._cpu_profile([train]) if row.startswith("| train")]
    assert row == "| train/cpu/default | 0.240 | 0.150 | 0.150 | 0.090 |"
