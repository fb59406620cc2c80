"""Limb-removed variants: the module and everything below it go, with their joints,
actuators and rest-pose entries; the rest of the body is unchanged."""

import numpy as np
import pytest

from modular_ppo.body import BodyGraphError, load_body
from modular_ppo.body.describe import variants_table
from modular_ppo.body.variants import DEFAULT_VARIANTS


def test_removing_a_limb_removes_its_subtree_and_nothing_else():
    base = load_body("walker2d-modular")
    variant = load_body("walker2d-modular-without-leg_left")
    assert variant.name == "walker2d-modular-without-leg_left"
    assert variant.module_names == ("torso", "thigh", "leg", "foot", "thigh_left")
    assert variant.model.nu == base.model.nu - 2  # leg_left and foot_left had one motor each
    assert variant.model.nq == base.model.nq - 2
    for module in variant.module_names:
        assert variant.modules[module].joints == base.modules[module].joints
        assert variant.modules[module].actuators == base.modules[module].actuators


def test_the_rest_pose_loses_exactly_the_removed_joints_entries():
    base = load_body("humanoid-modular")
    variant = load_body("humanoid-modular-without-left_arm-without-right_arm")
    kept = [base.model.joint(j).qposadr[0] for j in range(base.model.njnt)
            if base.model.joint(j).name not in
            {*base.modules["left_arm"].joints, *base.modules["right_arm"].joints}]
    kept_qpos = np.concatenate([
        base.init_qpos[a:a + (7 if a == 0 else 1)] for a in kept
    ])
    np.testing.assert_array_equal(variant.init_qpos, kept_qpos)


def test_variants_are_listed_and_load():
    rows = {row[0]: row for row in variants_table()}
    for name in DEFAULT_VARIANTS:
        body = load_body(name)
        assert rows[name] == (name, len(body.modules), body.model.nu, body.model.nv)


@pytest.mark.parametrize("name, message", [
    ("walker2d-modular-without-hand", "has no module 'hand'. Its modules: torso, thigh"),
    ("walker2d-modular-without-torso", "is the root module"),
    ("walker2d-modular-without-thigh-without-thigh_left", "leaves no module with actuators"),
    # Of the walker's limbs only the feet collide with the floor: without both it sinks
    # onto its torso, unhealthy from the start (Walker2d-v5's healthy height).
    ("walker2d-modular-without-foot-without-foot_left",
     "every limb of 'walker2d-modular' that can touch the floor \\(modules foot, foot_left"),
    ("walker2d-modular-without-leg_left-without-foot", "would sink onto its torso"),
])
def test_bad_variants_say_what_to_write(name, message):
    with pytest.raises(BodyGraphError, match=message):
        load_body(name)
