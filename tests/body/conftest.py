"""Shared inputs for the body-graph tests: a synthetic MJCF exercising every joint type and
transmission, and the humanoid of MuJoCo's own MJX tests (an MJCF written by others)."""

from pathlib import Path

import mujoco
import pytest

# A 3D gadget: free root with a site thruster, a jointless neck holding a ball-jointed head,
# a left arm with two hinges on one body and a slide below, a right arm driven only through
# a tendon, a passive tail, and two tendon actuators spanning both arms.
GADGET_XML = """
<mujoco model="gadget">
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body name="crate" pos="2 0 .1"><geom type="box" size=".1 .1 .1"/></body>
    <body name="ball" pos="-2 0 .1">
      <freejoint name="ball_free"/><geom type="sphere" size=".1"/>
    </body>
    <body name="base" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="box" size=".2 .2 .1"/>
      <site name="thruster" pos="0 0 .1"/>
      <body name="neck" pos="0 0 .2">
        <geom type="capsule" fromto="0 0 0 0 0 .2" size=".05"/>
        <body name="head" pos="0 0 .2">
          <joint name="head_ball" type="ball"/>
          <geom type="sphere" size=".1"/>
        </body>
      </body>
      <body name="arm_l" pos=".3 0 0">
        <joint name="shoulder_l_x" axis="1 0 0"/>
        <joint name="shoulder_l_y" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".04"/>
        <body name="slider_l" pos=".3 0 0">
          <joint name="extend_l" type="slide" axis="1 0 0" range="0 .2"/>
          <geom type="capsule" fromto="0 0 0 .2 0 0" size=".03"/>
          <site name="tip_l" pos=".2 0 0"/>
        </body>
      </body>
      <body name="arm_r" pos="-.3 0 0">
        <joint name="shoulder_r" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 -.3 0 0" size=".04"/>
        <site name="tip_r" pos="-.3 0 0"/>
      </body>
      <body name="tail" pos="0 -.3 0">
        <joint name="tail_passive" axis="0 0 1"/>
        <geom type="capsule" fromto="0 0 0 0 -.3 0" size=".03"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="shoulders">
      <joint joint="shoulder_l_y" coef="1"/><joint joint="shoulder_r" coef="-1"/>
    </fixed>
    <spatial name="reach"><site site="tip_l"/><site site="tip_r"/></spatial>
  </tendon>
  <actuator>
    <motor name="head_motor" joint="head_ball" gear="1 0 0 0 0 0"/>
    <motor name="shoulder_l_x" joint="shoulder_l_x"/>
    <motor name="shoulder_l_y" joint="shoulder_l_y"/>
    <position name="extend_l" joint="extend_l" kp="10"/>
    <motor name="thrust" site="thruster" gear="0 0 1 0 0 0"/>
    <motor name="couple" tendon="shoulders"/>
    <motor name="squeeze" tendon="reach"/>
  </actuator>
</mujoco>
"""


@pytest.fixture(scope="session")
def gadget_xml() -> str:
    return GADGET_XML


@pytest.fixture(scope="session")
def foreign_humanoid() -> Path:
    return Path(mujoco.__file__).parent / "mjx" / "test_data" / "humanoid" / "humanoid.xml"
