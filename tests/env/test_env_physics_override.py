"""EnvConfig.physics: a run's replacement for the body file's solver settings reaches the
simulator (the env's body is rebuilt with them); bad settings are an EnvError."""

from __future__ import annotations

import mujoco
import pytest

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, EnvError, make_env


def test_the_env_steps_the_body_with_the_runs_settings():
    hopper = load_body("hopper-modular")
    env = make_env(hopper, EnvConfig(physics="solver=CG iterations=3"), "cpu")
    assert env.body.model.opt.solver == mujoco.mjtSolver.mjSOL_CG
    assert env.body.model.opt.iterations == 3 and hopper.model.opt.iterations == 1
    assert make_env(hopper, EnvConfig(), "cpu").body is hopper


def test_bad_physics_settings_name_the_field():
    with pytest.raises(EnvError, match=r"EnvConfig.physics = 'solver=PGS'.*Newton"):
        EnvConfig(physics="solver=PGS")
