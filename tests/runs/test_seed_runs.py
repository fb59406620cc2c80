"""`run_seed_training`: one run dir per seed, each as `run_training` writes that seed's run
(config.json with its seed, metrics, checkpoints, eval.json), with the same figures as that
seed trained alone (rtol 1e-4 / atol 1e-5: the seeds' programs are batched, see
tests/ppo/test_ppo_seeds.py)."""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import numpy as np
import pytest
from rich.console import Console
from tiny_body import tiny_run_config

from modular_ppo.runs import RunConfigError, TrainRunConfig, read_metrics, run_training
from modular_ppo.ppo.seeds import stack
from modular_ppo.runs.errors import TrainingFailed
from modular_ppo.runs.seed_runs import _SeedRuns, build_seed_runs, run_seed_training


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return tiny_run_config(tmp_path_factory)


def test_each_seed_keeps_the_run_dir_of_that_seed_trained_alone(config):
    dirs = run_seed_training(dataclasses.replace(config, run_name="together"), [1, 4],
                             Console(quiet=True))
    assert [d.name for d in dirs] == ["together-seed1", "together-seed4"]
    alone = run_training(dataclasses.replace(config, seed=4, run_name="alone"),
                         Console(quiet=True))
    ours = dirs[1]
    assert json.loads((ours / "config.json").read_text())["config"]["seed"] == 4
    assert sorted(p.name for p in (ours / "checkpoints").iterdir()) == sorted(
        p.name for p in (alone / "checkpoints").iterdir())
    rows, reference = read_metrics(ours), read_metrics(alone)
    assert [row["step"] for row in rows] == [row["step"] for row in reference]
    for row, expected in zip(rows, reference):
        keys = {k for k in expected if not k.startswith(("time/", "throughput/"))}
        assert keys == {k for k in row if not k.startswith(("time/", "throughput/"))}
        for key in keys:
            np.testing.assert_allclose(row[key], expected[key], rtol=1e-4, atol=1e-5,
                                       err_msg=f"step {row['step']} {key}")
    final = json.loads((ours / "eval.json").read_text())
    expected = json.loads((alone / "eval.json").read_text())
    assert final["eval/team_return"] == pytest.approx(expected["eval/team_return"],
                                                      rel=1e-4, abs=1e-5)
    losses = [[row["losses/total"] for row in read_metrics(d) if "losses/total" in row]
              for d in dirs]
    assert losses[0] != losses[1]  # seeds 1 and 4 trained apart


def test_seeds_refuse_what_they_cannot_do(config, tmp_path):
    with pytest.raises(RunConfigError, match="distinct seeds"):
        run_seed_training(config, [3, 3], Console(quiet=True))
    with pytest.raises(RunConfigError, match="--resume"):
        run_seed_training(dataclasses.replace(config, resume=tmp_path), [0, 1],
                          Console(quiet=True))


def test_the_command_line_trains_the_seeds_in_one_program(config, tmp_path):
    """`cli.py train --seeds 2 3`: one run dir per seed, each config.json with its seed."""
    from modular_ppo import cli

    code = cli.main(["train", "--body", config.body, "--backend", "cpu", "--seeds", "2", "3",
                     "--ppo.n-envs", "4", "--ppo.n-minibatches", "2", "--ppo.rollout-length",
                     "4", "--ppo.n-epochs", "1", "--ppo.total-steps", "16", "--eval.n-envs",
                     "2", "--eval.episode-length", "4", "--no-video", "--runs-root",
                     str(tmp_path), "--run-name", "cli"])
    assert code == 0
    dirs = sorted(tmp_path.glob("*/cli-seed*"))
    assert [d.name for d in dirs] == ["cli-seed2", "cli-seed3"]
    configs = [json.loads((d / "config.json").read_text())["config"] for d in dirs]
    assert [c["seed"] for c in configs] == [2, 3]
    assert all(c["seeds"] == [] for c in configs)  # a resume of one dir continues that seed
    assert all(read_metrics(d)[-1]["step"] == 16 for d in dirs)


def test_a_seed_with_non_finite_values_stops_the_seeds_and_keeps_its_failure(config, tmp_path):
    """The seeds' bookkeeping is run_training's (runs/run_book.py): the seed that flags a
    non-finite value gets failure.json and names the error; the others log on."""
    runs = build_seed_runs(dataclasses.replace(config, runs_root=tmp_path, eval_every_steps=0),
                           [2, 5])
    seed_runs = _SeedRuns(runs, [2, 5], Console(quiet=True))
    seed_runs.stop = SimpleNamespace(requested=False, signum=None)
    fine = {"throughput/env_steps_per_s": 1.0, "episode/team_return": 0.0,
            "nonfinite/any": False, "nonfinite/rollout": False}
    try:
        stop = seed_runs.on_iteration(stack([run.state for run in runs]),
                                      [fine, {**fine, "nonfinite/any": True,
                                              "nonfinite/rollout": True}])
    finally:
        seed_runs.close()
    assert stop is True
    assert isinstance(seed_runs.stopped, TrainingFailed)
    assert str(seed_runs.stopped).startswith("seed 5: ")
    good, bad = seed_runs.dirs
    assert json.loads((bad / "failure.json").read_text())["flags"] == ["rollout"]
    assert not (good / "failure.json").exists()
    assert [row["nonfinite/any"] for row in read_metrics(good)] == [0.0]
    assert [row["nonfinite/any"] for row in read_metrics(bad)] == [1.0]


def test_the_progress_line_gives_each_seeds_return_on_each_body(tmp_path):
    """With several bodies the training metrics name each body's return
    ("episode/team_return/<body>"): the line reads them, body by body, for every seed."""
    from tiny_body import tiny_xml

    from modular_ppo.networks import NetworkConfig
    from modular_ppo.ppo import PPOConfig

    paths = []
    for name in ("left", "right"):
        paths.append(tmp_path / f"{name}.xml")
        paths[-1].write_text(tiny_xml(name))
    config = TrainRunConfig(body=",".join(map(str, paths)), backend="cpu",
                            network=NetworkConfig(arch="shared"), ppo=PPOConfig(n_envs=4, n_minibatches=2, rollout_length=4),
                            eval_every_steps=0, video=False, runs_root=tmp_path / "runs")
    runs = build_seed_runs(config, [0, 1])
    console = Console(record=True, width=200)
    seed_runs = _SeedRuns(runs, [0, 1], console)
    seed_runs.stop = SimpleNamespace(requested=False, signum=None)
    metrics = [{"throughput/env_steps_per_s": 10.0, "nonfinite/any": False,
                "episode/team_return/left": 1.5 + i, "episode/team_return/right": -2.0 - i}
               for i in range(2)]
    try:
        seed_runs.on_iteration(stack([run.state for run in runs]), metrics)
    finally:
        seed_runs.close()
    assert "team return per seed (left/right) 1.5/-2.0, 2.5/-3.0; 10 env-steps/s" in (
        console.export_text())
