"""The task a body file states: read from its `modular_ppo:` annotations, checked once."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from modular_ppo.body import BodyGraph, BodyGraphError, TaskSpec, load_body

ROOT = Path(__file__).resolve().parents[2]

BODY = """
<mujoco model="walker">
  <custom>{custom}</custom>
  <worldbody>
    <body name="torso" pos="0 0 1">
      <joint name="rootx" type="slide" axis="1 0 0"/>
      <joint name="rootz" type="slide" axis="0 0 1"/>
      <joint name="rooty" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.05"/>
      <body name="leg" pos="0.2 0 0">
        <joint name="knee" type="hinge" axis="0 1 0" range="-90 90"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="knee" ctrlrange="-1 1" gear="10"/></actuator>
</mujoco>
"""


def _body(custom: str) -> BodyGraph:
    return BodyGraph.from_mjcf(BODY.format(custom=custom))


def test_a_file_states_its_whole_task():
    task = _body("""
        <text name="modular_ppo:task_reference" data="my walker, v1"/>
        <numeric name="modular_ppo:forward_reward_weight" data="2"/>
        <text name="modular_ppo:velocity_source" data="leg"/>
        <numeric name="modular_ppo:healthy_reward" data="3"/>
        <text name="modular_ppo:healthy_reward_on" data="every_step"/>
        <numeric name="modular_ppo:ctrl_cost_weight" data="0.01"/>
        <text name="modular_ppo:ctrl_cost_on" data="ctrl"/>
        <numeric name="modular_ppo:contact_cost_weight" data="1e-3"/>
        <numeric name="modular_ppo:contact_force_range" data="-2 2"/>
        <numeric name="modular_ppo:contact_cost_range" data="-inf 10"/>
        <numeric name="modular_ppo:terminate_when_unhealthy" data="0"/>
        <numeric name="modular_ppo:healthy_z" data="0.5 inf"/>
        <numeric name="modular_ppo:healthy_angle" data="-1 1"/>
        <numeric name="modular_ppo:healthy_state" data="-50 50"/>
        <text name="modular_ppo:healthy_bounds" data="inclusive"/>
        <numeric name="modular_ppo:reset_noise_scale" data="0.02"/>
        <text name="modular_ppo:reset_qvel_noise" data="uniform"/>
        <numeric name="modular_ppo:frame_skip" data="3"/>""").task
    assert task == TaskSpec(
        task_reference="my walker, v1", forward_reward_weight=2.0, velocity_source="leg",
        healthy_reward=3.0, healthy_reward_on="every_step", ctrl_cost_weight=0.01,
        ctrl_cost_on="ctrl", contact_cost_weight=1e-3, contact_force_range=(-2.0, 2.0),
        contact_cost_range=(-math.inf, 10.0), terminate_when_unhealthy=False,
        healthy_z=(0.5, math.inf), healthy_angle=(-1.0, 1.0), healthy_state=(-50.0, 50.0),
        healthy_bounds="inclusive", reset_noise_scale=0.02, reset_qvel_noise="uniform",
        frame_skip=3,
    )


def test_silence_takes_the_defaults_and_no_alive_bonus_without_a_healthy_range():
    assert _body("").task == TaskSpec(healthy_reward=0.0)
    falls = _body('<numeric name="modular_ppo:healthy_z" data="0.5 2"/>').task
    assert falls.healthy_reward == 1.0 and falls.can_fall


def test_the_task_survives_the_rebuilt_xml():
    """Checkpoints and workers rebuild bodies from `BodyGraph.xml`; MuJoCo writes an
    infinite numeric entry as 0, which must not lose the hopper's healthy height."""
    for name in ("hopper-modular", "humanoid-modular", "swimmer-4", "centipede-4"):
        body = load_body(name)
        assert BodyGraph.from_mjcf(body.xml).task == body.task, name


@pytest.mark.parametrize(
    ("custom", "fragments"),
    [
        ('<numeric name="modular_ppo:ctrl_cost_weight" data="0.1 0.2"/>',
         ['<numeric name="modular_ppo:ctrl_cost_weight"', "one finite number >= 0", "Fix its data"]),
        ('<numeric name="modular_ppo:healthy_reward" data="-1"/>',
         ['modular_ppo:healthy_reward', "one finite number >= 0"]),
        ('<numeric name="modular_ppo:forward_reward_weight" data="nan"/>',
         ['modular_ppo:forward_reward_weight', "finite"]),
        ('<numeric name="modular_ppo:reset_noise_scale" data="inf"/>',
         ['modular_ppo:reset_noise_scale', "finite"]),
        ('<numeric name="modular_ppo:healthy_z" data="1"/>',
         ['modular_ppo:healthy_z', "two values 'min max'"]),
        ('<numeric name="modular_ppo:healthy_state" data="5 -5"/>',
         ['modular_ppo:healthy_state', "min < max"]),
        ('<numeric name="modular_ppo:terminate_when_unhealthy" data="2"/>',
         ['terminate_when_unhealthy', "1 (end episodes", "or 0"]),
        ('<numeric name="modular_ppo:frame_skip" data="2.5"/>',
         ['modular_ppo:frame_skip', "one positive integer"]),
        ('<numeric name="modular_ppo:ctrl_cost_wieght" data="0.1"/>',
         ['unknown key "ctrl_cost_wieght"', "Did you mean modular_ppo:ctrl_cost_weight?",
          "Known keys:", "Rename or remove"]),
        ('<text name="modular_ppo:velocity_source" data="tail"/>',
         ['"tail" names no body', '"root", "com"', "torso, leg"]),
        ('<text name="modular_ppo:ctrl_cost_on" data="torque"/>',
         ['modular_ppo:ctrl_cost_on', '"action" or "ctrl"']),
        ('<text name="modular_ppo:healthy_reward" data="1"/>',
         ['<text name="modular_ppo:healthy_reward">', "is a number", "<numeric"]),
        ('<numeric name="modular_ppo:healthy_bounds" data="1"/>',
         ['modular_ppo:healthy_bounds', "is a word", "<text"]),
        ('<numeric name="modular_ppo:frame_skip" data="1e30"/>',
         ['data="1e+30"', "one positive integer, at most 1000"]),
        ('<numeric name="modular_ppo:frame_skip" data="nan"/>',
         ['data="nan"', "one positive integer"]),
        ('<numeric name="modular_ppo:ctrl_cost_weight" data="1e308"/>',
         ['data="1e+308"', "<= 1e+06"]),
        ('<numeric name="modular_ppo:reset_noise_scale" data="50"/>',
         ['modular_ppo:reset_noise_scale', "<= 10"]),
        ('<numeric name="modular_ppo:healthy_z" data="nan 1"/>',
         ['data="nan 1"', "two values 'min max'"]),
        ('<numeric name="modular_ppo:contact_force_range" data="-inf -1e300"/>',
         ['data="-inf -1e+300"', "finite ones within ±1e+06"]),
        ('<numeric name="modular_ppo:terminate_when_unhealthy" data="inf"/>',
         ['terminate_when_unhealthy', "or 0"]),
        ('<numeric name="init_qpos" data="0 0 0 nan"/>',
         ['<numeric name="init_qpos" data="0 0 0 nan">', "finite values"]),
        ('<text name="modular_ppo:ppo_preset" data="gamma=nan"/>',
         ['modular_ppo:ppo_preset', '"gamma=nan" is not a finite number']),
        ('<numeric name="modular_ppo:healthy_angle" data="-1 1"/>', []),
    ],
)
def test_bad_annotations_name_file_element_and_fix(custom, fragments):
    if not fragments:  # the root has exactly one hinge: a valid healthy_angle
        assert _body(custom).task.healthy_angle == (-1.0, 1.0)
        return
    with pytest.raises(BodyGraphError) as error:
        _body(custom)
    message = str(error.value)
    assert message.startswith("<xml string>: ")
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_a_number_mujoco_cannot_read_is_refused_with_the_element_and_line():
    with pytest.raises(BodyGraphError, match="bad format in attribute 'data'; Element "
                                             "'numeric', line 3. Fix the XML at that line"):
        _body('<numeric name="modular_ppo:healthy_reward" data="one"/>')


def test_cli_refuses_a_bad_task_annotation_and_writes_nothing(tmp_path):
    xml = tmp_path / "bad.xml"
    xml.write_text(BODY.format(custom='<numeric name="modular_ppo:healthy_reward" data="-1"/>'))
    runs = tmp_path / "runs"
    result = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "train", "--body", str(xml), "--runs-root",
         str(runs)], capture_output=True, text=True, timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output
    assert str(xml) in output and "modular_ppo:healthy_reward" in output
    assert not runs.exists() or not any(runs.rglob("*"))


def test_a_file_names_its_ppo_preset():
    body = _body('<text name="modular_ppo:ppo_preset" data="gamma=0.99; n_epochs = 8"/>')
    assert body.ppo_preset == {"gamma": "0.99", "n_epochs": "8"}
    assert load_body("halfcheetah-modular").ppo_preset == {
        "gamma": "0.99", "n_epochs": "10", "n_minibatches": "16"}
    assert load_body("ant-modular").ppo_preset == {}
    with pytest.raises(BodyGraphError, match='"gamma" is not "field=value"'):
        _body('<text name="modular_ppo:ppo_preset" data="gamma"/>')
    both = _body('<text name="modular_ppo:ppo_preset" data="gamma=0.99"/>'
                 '<text name="modular_ppo:ppo_preset_accelerator" data="n_envs=2048"/>')
    assert (both.ppo_preset, both.ppo_preset_accelerator) == ({"gamma": "0.99"}, {"n_envs": "2048"})
    assert body.ppo_preset_accelerator == {}
    with pytest.raises(BodyGraphError, match='ppo_preset_accelerator" data="n_envs=2048; '
                                             'n_envs=1024">: "n_envs" is set twice'):
        _body('<text name="modular_ppo:ppo_preset_accelerator" data="n_envs=2048; n_envs=1024"/>')
