"""`cli.py train` on two centipedes with one shared network, then eval on a third body it
never saw, analyze, and the refusals."""

import json

import pytest
from flax import nnx
from multibody_setup import PPO
from output_checks import assert_video_shows_the_body, video_frames

from modular_ppo import cli
from modular_ppo.body import load_body
from modular_ppo.networks import NetworkConfig, make_network
from modular_ppo.ppo import BodyGroupError, new_training_state
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.errors import RunConfigError


BODIES = ("centipede-4", "centipede-6")
TINY = [
    "--body", ",".join(BODIES), "--arch", "shared",
    "--policy-hidden-sizes", "8", "--value-hidden-sizes", "8",
    "--ppo.n-envs", "4", "--ppo.n-minibatches", "1", "--ppo.rollout-length", "8",
    "--ppo.n-epochs", "1", "--ppo.total-steps", "64", "--env.episode-length", "6",
    "--eval.n-envs", "2", "--eval.episode-length", "6", "--eval-every-steps", "0",
    "--checkpoint-every-steps", "32", "--video-length", "4",
]


@pytest.fixture(scope="module")
def run_dir(cli_train):
    return cli_train(TINY, "centipede-4+centipede-6", "mixed")


def test_train_on_two_bodies_logs_every_body_and_module(run_dir):
    record = json.loads((run_dir / "config.json").read_text())
    assert record["bodies"] == list(BODIES)
    assert record["body_envs"] == {"centipede-4": 2, "centipede-6": 2}
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    train_rows = [r for r in rows if "losses/total" in r]
    assert [r["step"] for r in train_rows] == [32, 64]
    for body in BODIES:
        modules = record["obs_sizes"][body]
        assert len(modules) == {"centipede-4": 6, "centipede-6": 9}[body]
        for module in modules:
            assert f"{body}/{module}" in record["modules"]
            assert all(f"losses/critic/{body}/{module}" in r for r in train_rows)
        # Episodes of 6 steps end within each 8-step rollout, in both bodies.
        assert all(f"episode/team_return/{body}" in r for r in train_rows)
    final = json.loads((run_dir / "eval.json").read_text())
    assert {f"eval/team_return/{body}" for body in BODIES} <= set(final)
    assert sorted(int(p.name) for p in (run_dir / "checkpoints").iterdir()) == [32, 64]


def test_train_on_two_bodies_writes_a_video_of_each(run_dir):
    for body in BODIES:
        frames = video_frames(run_dir / "videos" / f"{body}.mp4")
        assert len(frames) == 5  # the first state and 4 steps (--video-length 4)
        graph = load_body(body)
        # The camera looks at the right side: the torsos and right legs show.
        assert_video_shows_the_body(frames, graph, min_modules=2 * len(graph.module_names) // 3)


def test_eval_zero_shot_on_an_unseen_body_and_analyze(run_dir, tmp_path, capsys):
    assert cli.main(["eval", "--run", str(run_dir), "--body", "centipede-8", "--episodes", "2",
                     "--warmup-steps", "64"]) == 0
    out = capsys.readouterr().out
    assert "centipede-8" in out and "zero-shot" in out and "return/leg_3_left" in out

    assert cli.main(["analyze", str(run_dir), "--png", str(tmp_path / "a.png")]) == 0
    out = capsys.readouterr().out
    assert "per body" in out and "centipede-4" in out and "centipede-6" in out


def test_eval_on_a_body_beyond_the_networks_sizes_says_what_to_train(run_dir, capsys):
    # The run's network fits up to 2 x 9 modules; centipede-20 has 30.
    assert cli.main(["eval", "--run", str(run_dir), "--body", "centipede-20"]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert ("cannot act on body 'centipede-20': that run's network was built with "
            "--max-modules 18, but body 'centipede-20' has 30 modules. Train a run with "
            "--max-modules 30 or more") in out


def test_separate_refuses_several_bodies(capsys):
    with pytest.raises(RunConfigError, match="--arch shared, graph or attention"):
        TrainRunConfig(body="centipede-4,centipede-6", network=NetworkConfig(arch="separate"))
    assert cli.main(["train", "--body", "centipede-4,centipede-6", "--arch", "separate"]) == 2
    printed = capsys.readouterr()  # tyro reports errors of the config itself on stderr
    assert "one network cannot serve several bodies" in " ".join(
        (printed.out + printed.err).replace("│", " ").split())


def test_networks_with_different_parameters_cannot_share_a_run(envs):
    networks = {name: make_network(env.body, env.obs_sizes, NetworkConfig(arch="separate"),
                                   rngs=nnx.Rngs(0)) for name, env in envs.items()}
    with pytest.raises(BodyGroupError, match="different parameters"):
        new_training_state([(envs[n], networks[n]) for n in envs], PPO, 0,
                           body_envs={n: 2 for n in envs})
