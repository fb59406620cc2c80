"""body/physics_options.py: a body rebuilt with other solver settings keeps its task,
partition and file; bad settings are refused naming the word and the fix."""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest

from modular_ppo.body import BodyGraph, BodyGraphError, load_body
from modular_ppo.body.physics_options import PhysicsOptions, parse_options, with_physics


def test_parsed_settings_replace_the_files_option():
    options = parse_options("solver=CG, iterations=4 ls_iterations=8 eulerdamp=enable")
    assert options == PhysicsOptions("CG", 4, 8, (("eulerdamp", False),))
    assert options.label() == "solver=CG iterations=4 ls_iterations=8 eulerdamp=enable"
    assert parse_options("declared") == parse_options("") == PhysicsOptions()
    hopper = load_body("hopper-modular")
    changed = with_physics(hopper, options)
    opt = changed.model.opt
    assert (opt.solver, opt.iterations, opt.ls_iterations) == (mujoco.mjtSolver.mjSOL_CG, 4, 8)
    assert not opt.disableflags & mujoco.mjtDisableBit.mjDSBL_EULERDAMP
    assert hopper.model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_EULERDAMP
    assert changed.task == hopper.task and changed.module_names == hopper.module_names
    assert changed.name == hopper.name and changed.source == hopper.source
    # The compiled model is copied, not rebuilt from its printed MJCF: the same to the bit.
    assert np.array_equal(changed.model.body_inertia, hopper.model.body_inertia)
    assert BodyGraph.from_mjcf(changed.xml).model.opt.iterations == 4  # kept in its MJCF
    assert with_physics(hopper, PhysicsOptions()) is hopper
    assert with_physics(hopper, parse_options("clampctrl=disable")).model.opt.disableflags & (
        mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL)


@pytest.mark.parametrize("text, named", [
    ("solver=PGS", "PGS"), ("iterations=0", "iterations = 0"), ("iterations=x", "iterations=x"),
    ("ls_iterations=1001", "ls_iterations = 1001"), ("gravity=disable", "gravity=disable"),
    ("eulerdamp=off", "eulerdamp=off"),
])
def test_bad_settings_are_refused_by_name(text, named):
    with pytest.raises(BodyGraphError, match=re.escape(named)) as error:
        parse_options(text)
    assert re.search(r"\b(Use|write|give)\b", str(error.value)), error.value  # says the fix
