"""The non-finite guard end to end: one module's reward turns NaN mid-run, through the same
run machinery as the CLI (`run_training` with a wrapped env). The run stops naming that
module, writes failure.json, and keeps the last good checkpoint loadable."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from rich.console import Console

from modular_ppo.env.toy import TargetReachingEnv
from modular_ppo.errors import ModularPPOError
from modular_ppo.ppo import PPOConfig
from modular_ppo.runs.build import restore_run
from modular_ppo.runs.checkpoint import Checkpointer
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.errors import TrainingFailed
from modular_ppo.runs.train_run import run_training


class RewardTurnsNaN:
    """The wrapped env, except that from every env's `after`-th step on, `module`'s reward
    is NaN."""

    def __init__(self, env, module: str, after: int):
        self.env, self.module, self.after = env, module, after
        self.body, self.obs_sizes, self.action_sizes = env.body, env.obs_sizes, env.action_sizes
        self.episode_length, self.dt = env.episode_length, env.dt

    def reset(self, key):
        state = self.env.reset(key)
        return state.replace(info={**state.info, "clock": jnp.zeros((), jnp.int32)})

    def step(self, state, action):
        info = dict(state.info)
        clock = info.pop("clock") + 1
        state = self.env.step(state.replace(info=info), action)
        poisoned = jnp.where(clock >= self.after, jnp.nan, state.reward[self.module])
        return state.replace(reward={**state.reward, self.module: poisoned},
                             info={**state.info, "clock": clock})


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory):
    """Iterations of 4 envs x 4 steps, a checkpoint after each; 'left' turns NaN at the
    9th step of each env, in the third iteration (env steps 33 to 48)."""
    env = RewardTurnsNaN(TargetReachingEnv(), "left", after=9)
    config = TrainRunConfig(
        ppo=PPOConfig(n_envs=4, n_minibatches=2, rollout_length=4, n_epochs=1, total_steps=160),
        eval_every_steps=0, checkpoint_every_steps=16, video=False,
        runs_root=tmp_path_factory.mktemp("runs"), run_name="nan",
    )
    with pytest.raises(TrainingFailed) as failure:
        run_training(config, Console(quiet=True), env=env)
    return failure.value, env


def test_the_run_stops_naming_the_module(failed_run):
    error, _ = failed_run
    message = str(error)
    assert isinstance(error, ModularPPOError)  # so the CLI prints it alone and exits 2
    for fragment in ("at step 48", "first in module 'left' (actor loss, critic loss)",
                     "observations or rewards", "the last good checkpoint, step 32",
                     str(error.run_dir / "failure.json"), "Check the reward and observations "
                     "of 'left'", "--ppo.learning-rate"):
        assert fragment in message
    assert "'hub'" not in message and "'right'" not in message


def test_failure_json_records_where_and_when(failed_run):
    error, _ = failed_run
    record = json.loads((error.run_dir / "failure.json").read_text(),
                        parse_constant=lambda c: pytest.fail(f"failure.json holds bare {c}"))
    assert record["step"] == 48 and record["last_checkpoint"] == 32
    assert record["modules"] == ["left"] and record["error"] == str(error)
    assert {"actor/left", "critic/left", "rollout"} <= set(record["flags"])
    rows = [json.loads(line) for line in (error.run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [16, 32, 48]
    assert rows[-1]["nonfinite/critic/left"] == 1.0 and rows[1]["nonfinite/any"] == 0.0


def test_the_last_good_checkpoint_is_kept_and_loads(failed_run):
    error, env = failed_run
    checkpointer = Checkpointer(error.run_dir / "checkpoints", {})
    assert checkpointer.steps() == [16, 32]
    checkpointer.close()
    run, step = restore_run(error.run_dir, env=env)
    assert step == 32 and int(run.state.steps) == 32
    floats = [leaf for leaf in jax.tree.leaves(run.state)
              if jnp.issubdtype(leaf.dtype, jnp.floating)]
    assert floats and all(np.isfinite(np.asarray(leaf)).all() for leaf in floats)
