"""The SMP / AMORPHEUS bodies: every file loads (and goes to MJX), bodies are told apart by
file, the benchmark sets name loadable bodies, the per-file tasks step as SMP's `step`
(transcribed below from its environments/<file>.py), and a set trains."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest

from modular_ppo import cli
from modular_ppo.body import BODY_SETS, load_body
from modular_ppo.body.smp import smp_names
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.env.physics import put_model
from modular_ppo.interop import episodic
from modular_ppo.runs.config import family


def test_every_file_loads_as_a_body_named_after_its_file():
    names = smp_names()
    assert len(names) == 43
    for name in names:
        body = load_body(name)
        assert body.name == name and body.model.nu >= 1
        # SMP's per-limb agents: the torso and one module per body with a motor
        motor_bodies = body.model.jnt_bodyid[body.model.actuator_trnid[:, 0]]
        assert len(body.module_names) == 1 + len(set(motor_bodies))
        put_model(body)


def test_sets_name_loadable_bodies_and_held_out_bodies_are_not_trained_on():
    names = set(smp_names())
    for name, members in BODY_SETS.items():
        assert members and set(members) <= names, name
    assert len(BODY_SETS["smp-walker++"]) == 12 and len(BODY_SETS["smp-cheetah++"]) == 15
    for held_out in (n for n in BODY_SETS if n.endswith(":held-out")):
        training = BODY_SETS[held_out.removesuffix(":held-out")]
        assert not set(BODY_SETS[held_out]) & set(training)
        family = held_out.split("-")[1].split(":")[0].rstrip("s")
        smp_family = {"walker": "smp-walker++", "cheetah": "smp-cheetah++",
                      "humanoid": "smp-humanoid++"}[family]
        assert set(BODY_SETS[held_out]) | set(training) <= set(BODY_SETS[smp_family])


def _walker_done(low, high):
    return lambda q, s: not (low < q[1] < high and -1.0 < q[2] < 1.0)


def _hopper_done(low, angle):
    return lambda q, s: not ((np.abs(s[2:]) < 100).all() and q[1] > low and abs(q[2]) < angle)


SMP_STEPS = {  # body -> (alive bonus, control cost weight, done(qpos, state_vector))
    "smp-walker_4_flipped": (1.0, 1e-3, _walker_done(0.8 - 0.136, 2.0 - 0.136)),
    "smp-hopper_4": (1.0, 1e-3, _hopper_done(0.6, 1.0)),
    "smp-humanoid_2d_7_left_leg": (1.0, 1e-3, _walker_done(0.4, 2.1)),
    "smp-cheetah_2_front": (0.0, 0.1, lambda q, s: False),
    "smp-nervenet_hopper": (1.0, 1e-3, _hopper_done(0.7, 0.2)),
    "smp-walker_2_main": (1.0, 1e-3, _walker_done(0.8 - 0.26, 2.0 - 0.26)),
}


@pytest.mark.parametrize("name", list(SMP_STEPS))
def test_rewards_and_terminations_are_smps_step(name):
    alive, ctrl_weight, done_of = SMP_STEPS[name]
    env = episodic(make_env(load_body(name), EnvConfig(), "cpu", 1))
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    rng = np.random.default_rng(0)
    state, ends = reset(jax.random.PRNGKey(0)), 0
    for t in range(250):
        action = {m: rng.uniform(-1, 1, n).astype(np.float32) for m, n in env.action_sizes.items()}
        before = np.asarray(state.data.qpos)
        state = step(state, action)
        qpos, qvel = np.asarray(state.data.qpos), np.asarray(state.data.qvel)
        ctrl = np.asarray(state.data.ctrl)
        reward = (qpos[0] - before[0]) / env.dt + alive - ctrl_weight * np.square(ctrl).sum()
        team = sum(float(r) for r in state.reward.values())
        np.testing.assert_allclose(team, reward, rtol=1e-4, atol=1e-4, err_msg=f"{name} step {t}")
        done = done_of(qpos, np.concatenate([qpos, qvel]))
        assert bool(state.done) == done, f"{name} step {t}"
        if done:
            ends += 1
            state = reset(jax.random.PRNGKey(t + 1))
    if alive:
        assert ends, f"{name}: random actions should end some episodes"


def test_set_names_expand_where_body_names_are_read():
    assert family("amorpheus-hoppers") == BODY_SETS["amorpheus-hoppers"]
    assert family("amorpheus-walkers:held-out", "--held-out") == (
        "smp-walker_3_main", "smp-walker_6_main")
    assert family("smp-walker_2_main") == ("smp-walker_2_main",)


def test_bodies_of_two_families_train_with_a_held_out_body(tmp_path):
    bodies = ("smp-walker_2_main", "smp-hopper_3")
    code = cli.main([
        "train", "--body", ",".join(bodies), "--held-out", "smp-walker_3_main",
        "--arch", "shared", "--policy-hidden-sizes", "8", "--value-hidden-sizes", "8",
        "--ppo.n-envs", "4", "--ppo.n-minibatches", "1", "--ppo.rollout-length", "8",
        "--ppo.n-epochs", "1", "--ppo.total-steps", "32", "--env.episode-length", "6",
        "--eval.n-envs", "2", "--eval.episode-length", "6", "--eval-every-steps", "0",
        "--runs-root", str(tmp_path), "--run-name", "tiny", "--no-video",
    ])
    assert code == 0
    (run,) = tmp_path.glob("*/tiny")
    assert json.loads((run / "config.json").read_text())["bodies"] == list(bodies)
    final = json.loads((run / "eval.json").read_text())
    for body in (*bodies, "smp-walker_3_main"):
        assert np.isfinite(final[f"eval/team_return/{body}"]), body
