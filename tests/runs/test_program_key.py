"""The key a run keeps its exported training step under (modular_ppo.runs.program_key):
runs that differ only in their seed, name or how they report share it; anything the step is
traced from (a PPO setting baked into the program, the body's MJCF) gives another."""

import dataclasses

from tiny_body import TINY_ACTUATORS, tiny_xml

from modular_ppo.body import BodyGraph
from modular_ppo.ppo import EvalConfig
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.program_key import program_key

CONFIG = TrainRunConfig(body="tiny", backend="cpu")


def _bodies(actuators: str = TINY_ACTUATORS) -> dict[str, BodyGraph]:
    return {"tiny": BodyGraph.from_mjcf(tiny_xml(actuators=actuators), name="tiny")}


def test_runs_that_differ_in_seed_length_or_reporting_share_the_key():
    key = program_key(CONFIG, _bodies())
    elsewhere = dataclasses.replace(
        CONFIG, seed=7, run_name="other", video=False, eval_every_steps=1000,
        checkpoint_every_steps=1000, eval=EvalConfig(n_envs=3))
    assert program_key(elsewhere, _bodies()) == key


def test_what_the_step_is_traced_from_changes_the_key():
    key = program_key(CONFIG, _bodies())
    gamma = dataclasses.replace(CONFIG, ppo=dataclasses.replace(CONFIG.ppo, gamma=0.9))
    assert program_key(gamma, _bodies()) != key  # a constant of the program, not a shape
    stronger = TINY_ACTUATORS.replace('gear="10"', 'gear="20"')
    assert program_key(CONFIG, _bodies(stronger)) != key  # the same shapes, other physics
    assert program_key(dataclasses.replace(CONFIG, backend="mjx"), _bodies()) != key
