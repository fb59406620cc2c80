"""The ways a state leaves a task's healthy ranges (`env.tasks.unhealthy_causes`), checked on
states posed by hand with MuJoCo's own kinematics, and the healthy check built from them."""

import math

import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from modular_ppo.body import load_body
from modular_ppo.env.tasks import healthy_check, unhealthy_causes


def posed(body, **qpos):
    """MjData of `body` at its rest pose with the named joints' qpos set, forward kinematics
    done (xpos is what the root body's height is read from)."""
    data = mujoco.MjData(body.model)
    data.qpos[:] = body.model.qpos0
    for joint, value in qpos.items():
        data.qpos[body.model.joint(joint).qposadr[0]] = value
    mujoco.mj_forward(body.model, data)
    return data


def flagged(causes):
    return {name for name, value in causes.items() if bool(value)}


@pytest.fixture(scope="module")
def ant():
    return load_body("ant-modular")


@pytest.fixture(scope="module")
def hopper():
    return load_body("hopper-modular")


def test_the_ant_falls_below_and_jumps_above_its_height_range(ant):
    causes = unhealthy_causes(ant, ant.task)
    assert set(causes(posed(ant))) == {"healthy_z below", "healthy_z above"}
    data = posed(ant)
    assert flagged(causes(data)) == set()
    for z, expected in ((0.1, {"healthy_z below"}), (1.5, {"healthy_z above"}),
                        (0.2, set()), (1.0, set())):  # the ant's bounds are inclusive
        data.qpos[2] = z
        mujoco.mj_forward(ant.model, data)
        assert math.isclose(data.xpos[ant.root_body_id, 2], z)
        assert flagged(causes(data)) == expected, z


def test_the_hopper_tips_over_either_way_and_its_joint_state_runs_away(hopper):
    causes = unhealthy_causes(hopper, hopper.task)
    assert set(causes(posed(hopper))) == {"healthy_z below", "healthy_z above",
                                          "healthy_angle below", "healthy_angle above",
                                          "healthy_state"}
    assert flagged(causes(posed(hopper))) == set()
    assert flagged(causes(posed(hopper, rooty=0.5))) == {"healthy_angle above"}
    assert flagged(causes(posed(hopper, rooty=-0.2))) == {"healthy_angle below"}  # strict
    assert flagged(causes(posed(hopper, rootz=-0.9))) == {"healthy_z below"}
    data = posed(hopper)
    data.qvel[3] = 150.0
    assert flagged(causes(data)) == {"healthy_state"}
    data.qpos[hopper.model.joint("rootx").qposadr[0]] = 1e6  # the root's translation is free
    data.qvel[3] = 0.0
    assert flagged(causes(data)) == set()


def test_healthy_is_no_cause_nan_included(hopper):
    """The healthy check is the absence of every cause, on random states around the ranges'
    edges and on NaN (unhealthy, "below")."""
    causes, healthy = unhealthy_causes(hopper, hopper.task), healthy_check(hopper, hopper.task)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(40):
        data = posed(hopper, rootz=rng.normal(0, 0.5), rooty=rng.normal(0, 0.2))
        data.qvel[:] = rng.normal(0, 60, size=data.qvel.shape)
        assert bool(healthy(data)) == (not flagged(causes(data)))
        seen.add(bool(healthy(data)))
    assert seen == {True, False}
    data = posed(hopper)
    data.qpos[hopper.model.joint("rooty").qposadr[0]] = np.nan
    assert flagged(causes(data)) == {"healthy_angle below", "healthy_state"}  # in both
    assert not bool(healthy(data))
    assert bool(jnp.all(healthy(posed(hopper))))
