"""Morphology features against values worked out by hand from the bodies' MJCF."""

from __future__ import annotations

import math

import numpy as np
import pytest

from modular_ppo.body import (
    MORPHOLOGY_NAMES,
    MORPHOLOGY_WIDTH,
    BodyGraph,
    load_body,
    morphology_features,
)
from modular_ppo.body.morphology import GEAR_SCALE, JOINT_SLOTS


def entries(features: np.ndarray, prefix: str = "") -> dict[str, float]:
    """name -> value, for the entries whose name starts with `prefix` (prefix removed)."""
    return {n.removeprefix(prefix): float(v) for n, v in zip(MORPHOLOGY_NAMES, features)
            if n.startswith(prefix)}


def approx(expected: dict[str, float], got: dict[str, float]) -> None:
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=1e-5), name


def test_hopper_thigh_from_its_mjcf():
    """bodies/hopper-modular.xml: <body name="thigh" pos="0 0 -0.2"> under the torso, with
    <joint name="thigh_joint" axis="0 -1 0" range="-2.61799 0"/> and a capsule of radius
    0.05 and half-length 0.225 centered 0.225 below it (density 1000); <motor
    joint="thigh_joint" gear="200"/>, ctrlrange -1 1; below it the leg and the foot."""
    thigh = morphology_features(load_body("hopper-modular"))["thigh"]
    volume = math.pi * 0.05**2 * 0.45 + 4 / 3 * math.pi * 0.05**3
    approx({
        "hops_to_root": math.log1p(1), "body_depth": math.log1p(1),
        "relative_hops": 1 / 3,  # the foot is 3 hops from the torso
        "children": math.log1p(1), "subtree": math.log1p(3), "height": math.log1p(2),
        "bodies": math.log1p(1), "joints": math.log1p(1), "actuators": math.log1p(1),
        "position_x": 0.0, "position_y": 0.0, "position_z": -0.2,
        "mass": math.log1p(1000 * volume),
        "limb_length": 0.45, "limb_radius": 0.05, "reach": 0.225 + 0.225 + 0.05,
    }, entries(thigh))
    approx({
        "present": 1, "free": 0, "ball": 0, "slide": 0, "hinge": 1,
        "axis_x": 0, "axis_y": -1, "axis_z": 0,
        "limited": 1, "range_low": -2.61799, "range_high": 0,
        "gear": 200 / GEAR_SCALE, "ctrl_low": -1, "ctrl_high": 1,
    }, entries(thigh, "joint_0/"))
    assert not any(entries(thigh, "joint_1/").values())  # one joint: the other slots are zero
    # The torso's own joints (rootx, rootz, rooty) place the body; they are not its joints.
    torso = entries(morphology_features(load_body("hopper-modular"))["torso"])
    assert torso["joints"] == 0 and torso["hops_to_root"] == 0


def test_centipede_tree_positions_and_joints():
    """centipede-6: torsos 0.6 m apart along -x, torso i at i hops and i bodies deep; leg i
    one hop further. Hips turn about z within +-30 deg, ankles about -x (left) / +x (right)
    within 30..70 deg; torso i > 0 yaws about z (+-40 deg) and pitches about y (+-20 deg);
    every motor has gear 150."""
    features = morphology_features(load_body("centipede-6"))
    torso_2, leg_2 = entries(features["torso_2"]), entries(features["leg_2_left"])
    approx({"hops_to_root": math.log1p(2), "body_depth": math.log1p(2),
            "relative_hops": 2 / 3, "children": math.log1p(2), "subtree": math.log1p(3),
            "height": math.log1p(1), "position_x": -1.2, "position_y": 0.0}, torso_2)
    approx({"hops_to_root": math.log1p(3), "body_depth": math.log1p(3),
            "relative_hops": 1.0, "children": 0.0, "subtree": math.log1p(1), "height": 0.0,
            "bodies": math.log1p(3), "joints": math.log1p(2), "position_x": -1.2}, leg_2)
    yaw, pitch = (entries(features["torso_2"], f"joint_{k}/") for k in (0, 1))
    approx({"axis_z": 1, "range_low": -math.radians(40), "range_high": math.radians(40),
            "gear": 1.5}, yaw)
    approx({"axis_y": 1, "range_low": -math.radians(20), "range_high": math.radians(20)}, pitch)
    for side, x in (("left", -1.0), ("right", 1.0)):
        hip, ankle = (entries(features[f"leg_1_{side}"], f"joint_{k}/") for k in (0, 1))
        approx({"axis_z": 1, "range_low": -math.radians(30), "range_high": math.radians(30)},
               hip)
        approx({"axis_x": x, "axis_z": 0, "range_low": math.radians(30),
                "range_high": math.radians(70), "gear": 1.5}, ankle)


FAMILIES = {
    "centipede": ("centipede-4", "centipede-6", "centipede-10"),
    "swimmer": ("swimmer-3", "swimmer-6"),
    "walker2d": ("walker2d-modular", "walker2d-modular-without-foot_left",
                 "walker2d-modular-without-thigh_left"),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_features_have_one_width_across_a_family(family):
    for name in FAMILIES[family]:
        features = morphology_features(load_body(name))
        assert list(features) == list(load_body(name).module_names)
        for module, vector in features.items():
            assert vector.shape == (MORPHOLOGY_WIDTH,) and vector.dtype == np.float32, module
            assert np.all(np.isfinite(vector)), (name, module)


def test_the_same_limb_has_the_same_features_in_every_body_of_its_family():
    """Scales are constants, not a body's totals: only relative_hops sees the body's size."""
    small, large = (morphology_features(load_body(n)) for n in ("centipede-4", "centipede-10"))

    def differ(module: str) -> list[str]:
        return [MORPHOLOGY_NAMES[i] for i in np.flatnonzero(small[module] != large[module])]

    assert differ("leg_0_left") == differ("leg_1_right") == ["relative_hops"]
    # torso_1 is the last segment of centipede-4, but has three more behind it in centipede-10
    assert differ("torso_1") == ["relative_hops", "children", "subtree", "height"]
    walker = morphology_features(load_body("walker2d-modular"))
    one_foot = morphology_features(load_body("walker2d-modular-without-foot_left"))
    for module in ("thigh", "leg", "foot"):  # the right leg, untouched by the removal
        np.testing.assert_array_equal(walker[module], one_foot[module])
    assert walker["leg_left"][MORPHOLOGY_NAMES.index("children")] == math.log1p(1)
    assert one_foot["leg_left"][MORPHOLOGY_NAMES.index("children")] == 0.0


ROTATED = """
<mujoco>
  <worldbody>
    <body name="base" pos="1 2 0.5" euler="0 0 {yaw}">
      <freejoint/>
      <geom type="box" size=".2 .1 .05"/>
      <body name="arm" pos=".2 .1 0">
        <joint name="swing" axis="1 0 0" range="-45 45"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".04"/>
        <body name="tip" pos=".3 0 0">
          <joint name="slide" type="slide" axis="0 1 0" range="0 .1"/>
          <joint name="spin" axis="0 0 1"/>
          <geom type="sphere" size=".05"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="swing" gear="50" ctrlrange="-2 2"/>
    <motor joint="slide" gear="-10"/>
  </actuator>
</mujoco>
"""


def test_geometry_is_read_in_the_root_frame():
    """A body turned and moved in the world has the same features: axes and positions are
    expressed in the root body's frame at rest."""
    straight, turned = (
        morphology_features(BodyGraph.from_mjcf(ROTATED.format(yaw=yaw),
                                                partition={"base": ["base"], "arm": ["arm"]}))
        for yaw in (0, 90)
    )
    for module in ("base", "arm"):
        np.testing.assert_allclose(turned[module], straight[module], atol=1e-6)
    arm = straight["arm"]
    approx({"position_x": 0.2, "position_y": 0.1, "position_z": 0.0,
            "limb_length": 0.3, "limb_radius": 0.05, "joints": math.log1p(3),
            "bodies": math.log1p(2), "actuators": math.log1p(2)}, entries(arm))
    approx({"axis_x": 1, "range_low": -math.pi / 4, "range_high": math.pi / 4,
            "gear": 50 / GEAR_SCALE, "ctrl_low": -2, "ctrl_high": 2}, entries(arm, "joint_0/"))
    # A motor without ctrlrange maps actions onto [-1, 1]; a negative gear keeps its sign.
    approx({"slide": 1, "axis_y": 1, "range_low": 0, "range_high": 0.1, "gear": -0.1,
            "ctrl_low": -1, "ctrl_high": 1}, entries(arm, "joint_1/"))
    approx({"hinge": 1, "axis_z": 1, "limited": 0, "range_low": 0, "range_high": 0,
            "gear": 0, "ctrl_low": 0, "ctrl_high": 0}, entries(arm, "joint_2/"))


def test_joints_beyond_the_slots_are_counted(gadget_xml):
    """One module owning all six joints of the gadget (conftest.py) below its free root:
    the first JOINT_SLOTS, in MuJoCo id order, fill the slots; all six are counted. Its
    ball joint has no axis, and a tendon or site actuator drives no joint directly."""
    whole = BodyGraph.from_mjcf(gadget_xml, partition={"all": ["base"]})
    features = morphology_features(whole)["all"]
    assert entries(features)["joints"] == pytest.approx(math.log1p(6))
    assert entries(features)["actuators"] == pytest.approx(math.log1p(7))
    assert all(entries(features, f"joint_{k}/")["present"] == 1 for k in range(JOINT_SLOTS))
    head = entries(features, "joint_0/")  # head_ball, driven by head_motor (gear 1)
    approx({"ball": 1, "axis_x": 0, "axis_y": 0, "axis_z": 0, "gear": 1 / GEAR_SCALE}, head)
    assert np.all(np.isfinite(features))
