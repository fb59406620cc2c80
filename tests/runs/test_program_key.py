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


def test_the_cores_a_run_may_use_change_the_key(monkeypatch):
    """The C simulator's host calls are named with its thread count, one per usable core: a
    step exported on two cores, loaded by a run pinned to one, called a simulator that run
    never registered (LookupError from host_call at the first iteration)."""
    from modular_ppo.env.cpu_simulator import simulator_key
    from modular_ppo.runs import program_key as module

    bodies = _bodies()
    keys = {}
    for cores in (1, 2):
        monkeypatch.setattr(module, "usable_cores", lambda cores=cores: cores)
        monkeypatch.setattr("modular_ppo.env.cpu_simulator.usable_cores", lambda c=cores: c)
        keys[cores] = program_key(CONFIG, bodies)
        assert simulator_key(bodies["tiny"].model, 5, 0, False).endswith(f":threads{cores}")
    assert keys[1] != keys[2]
