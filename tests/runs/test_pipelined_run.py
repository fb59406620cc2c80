"""`--backend cpu-pipelined` as a run: the CPU backend's envs, trained by the pipelined step
(tests/ppo/test_ppo_pipelined.py checks what that step computes); config.json records the
backend, and what it cannot do is refused naming the fix."""

from __future__ import annotations

import dataclasses
import json

import pytest
from rich.console import Console
from tiny_body import tiny_run_config

from modular_ppo.env.cpu_simulator import CpuPhysics
from modular_ppo.runs import RunConfigError, read_metrics, run_training
from modular_ppo.runs.resolve import resolve_train_config
from modular_ppo.runs.seed_runs import run_seed_training


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return tiny_run_config(tmp_path_factory, backend="cpu-pipelined", checkpoint_every_steps=32)


def test_the_run_trains_on_the_cpu_backends_envs_and_records_its_backend(config):
    resolved = resolve_train_config(config)
    assert resolved.config.backend == "cpu-pipelined" and resolved.config.env_backend == "cpu"
    assert all(isinstance(env.physics, CpuPhysics) for env in resolved.envs.values())
    run_dir = run_training(config, Console(quiet=True))
    assert json.loads((run_dir / "config.json").read_text())["config"]["backend"] == (
        "cpu-pipelined")
    rows = [row for row in read_metrics(run_dir) if "throughput/env_steps_per_s" in row]
    assert [row["step"] for row in rows] == [16, 32, 48]
    assert all(row["episode/count"] >= 0 and row["grad_norm"] > 0 for row in rows)


def test_seeds_train_in_one_pipelined_program_each_in_its_own_run_dir(config):
    """`--seeds 0 1` on the pipelined backend (what each seed computes:
    tests/ppo/test_ppo_pipelined.py): a run dir per seed recording the backend, the same
    steps, and the seeds' own trainings (their gradient norms differ)."""
    dirs = run_seed_training(dataclasses.replace(config, run_name="seeds"), [0, 1],
                             Console(quiet=True))
    assert [d.name for d in dirs] == ["seeds-seed0", "seeds-seed1"]
    grad_norms = []
    for run_dir in dirs:
        assert json.loads((run_dir / "config.json").read_text())["config"]["backend"] == (
            "cpu-pipelined")
        rows = [row for row in read_metrics(run_dir) if "throughput/env_steps_per_s" in row]
        assert [row["step"] for row in rows] == [16, 32, 48]
        grad_norms.append([row["grad_norm"] for row in rows])
    assert grad_norms[0] != grad_norms[1]


def test_what_it_cannot_do_is_refused(config):
    with pytest.raises(RunConfigError, match="--backend cpu-pipelined with --distributed"):
        dataclasses.replace(config, distributed=dataclasses.replace(
            config.distributed, coordinator_address="localhost:1234", num_processes=2, process_id=0))
    with pytest.raises(RunConfigError, match="--device-share 0.5 with --backend mjx.*Add "
                                             "--backend cpu-pipelined"):
        dataclasses.replace(config, backend="mjx", device_share=0.5)
