"""Actions: module keys reach exactly their actuators; bad actions fail loudly or are flagged."""

import jax
import mujoco
import numpy as np
import pytest

from modular_ppo.body import BodyGraph
from modular_ppo.env import ActionError, make_env
from modular_ppo.env.actions import ActionMap

ANT = "ant-modular"

RANGES_MJCF = """
<mujoco>
  <worldbody>
    <body name="base">
      <joint name="slide" type="slide" axis="1 0 0"/>
      <geom type="sphere" size="0.1"/>
      <body name="arm" pos="0.3 0 0">
        <joint name="a" type="hinge"/><joint name="b" type="hinge" axis="0 1 0"/>
        <geom type="sphere" size="0.05"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="b" ctrlrange="0 2"/>
    <motor joint="slide" ctrlrange="-3 -1"/>
    <motor joint="a" ctrllimited="false"/>
  </actuator>
</mujoco>
"""


def _actuators_of_joints(model: mujoco.MjModel, joints: list[str]) -> list[int]:
    ids = {model.joint(j).id for j in joints}
    return [a for a in range(model.nu) if model.actuator_trnid[a, 0] in ids]


def test_one_module_moves_only_its_own_joints(body, runner):
    ant, run = body(ANT), runner(ANT)
    actions = run.zero_actions()
    actions["front_left"][:, 0] = [0.7, -0.4]
    states = run(actions=actions, seed=5).states
    model = ant.model
    hip, ankle = _actuators_of_joints(model, ["hip_1"]), _actuators_of_joints(model, ["ankle_1"])
    ctrl = states.data.ctrl[:, 0]
    np.testing.assert_allclose(ctrl[:, hip + ankle], [[0.7, -0.4]] * len(ctrl), atol=1e-6)
    others = [a for a in range(model.nu) if a not in hip + ankle]
    np.testing.assert_array_equal(ctrl[:, others], 0.0)

    # Joint-space actuator forces: gear 150 x ctrl at hip_1 and ankle_1, zero elsewhere.
    force = states.data.qfrc_actuator[:, 0]
    dofs = [model.joint("hip_1").dofadr[0], model.joint("ankle_1").dofadr[0]]
    np.testing.assert_allclose(force[:, dofs], [[105.0, -60.0]] * len(force), rtol=1e-5)
    np.testing.assert_array_equal(np.delete(force, dofs, axis=1), 0.0)


def test_actions_map_affinely_onto_each_ctrlrange():
    action_map = ActionMap(BodyGraph.from_mjcf(RANGES_MJCF))
    assert action_map.sizes == {"base": 1, "arm": 2}
    # base owns "slide" (actuator 1); arm owns "b" and "a" (actuators 0, 2, in id order).
    ctrl = action_map.to_ctrl({"base": np.array([0.5]), "arm": np.array([-2.0, -1.0])})
    # b: [0, 2] at -2 clipped to -1 -> 0; slide: [-3, -1] at 0.5 -> -1.5; a: no range -> -1.
    np.testing.assert_allclose(ctrl, [0.0, -1.5, -1.0])
    np.testing.assert_allclose(action_map.from_ctrl(ctrl), [-1.0, 0.5, -1.0])


@pytest.fixture(scope="module")
def ant_env_and_state(body):
    """The ant env and the shapes of one env's state (traced, not compiled)."""
    env = make_env(body(ANT))
    return env, jax.eval_shape(env.reset, jax.random.PRNGKey(0))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda a: {k: v for k, v in a.items() if k != "back_left"},
         "missing actuated module\\(s\\) \\['back_left'\\]"),
        (lambda a: {**a, "tail": np.zeros(1)}, "unknown actuated module\\(s\\) \\['tail'\\]"),
        (lambda a: {**a, "front_left": np.zeros(3)}, "shape \\(3,\\).*give shape \\(2,\\)"),
        (lambda a: {**a, "front_left": np.zeros((4, 2))}, "vmap over a batch"),
        (lambda a: list(a.values()), "must be a dict keyed by actuated module"),
    ],
    ids=["missing key", "unknown key", "wrong size", "batched", "not a dict"],
)
def test_wrong_action_keys_or_shapes_raise_at_trace_time(change, message, ant_env_and_state):
    env, state = ant_env_and_state
    good = {m: np.zeros(k, np.float32) for m, k in env.action_sizes.items()}
    with pytest.raises(ActionError, match=message):
        jax.eval_shape(env.step, state, change(good))


def test_non_finite_actions_act_as_zero_and_are_flagged(body, runner):
    ant, run = body(ANT), runner(ANT)
    actions = run.random_actions(seed=7)
    actions["front_left"][:, 0] = [np.nan, 0.5]
    actions["back_right"][:, 0] = [np.inf, -np.inf]
    states = run(actions=actions, seed=7).states
    np.testing.assert_array_equal(states.metrics["invalid_action"][:, :2], [[1.0, 0.0]] * 2)
    model = ant.model
    hip_1, ankle_1, hip_4, ankle_4 = (
        _actuators_of_joints(model, [joint]) for joint in ("hip_1", "ankle_1", "hip_4", "ankle_4")
    )
    ctrl = states.data.ctrl[:, 0]
    np.testing.assert_array_equal(ctrl[:, hip_1 + hip_4 + ankle_4], 0.0)
    np.testing.assert_allclose(ctrl[:, ankle_1], 0.5)
    for module, reward in states.reward.items():
        assert np.all(np.isfinite(reward)), module
    # front_left's control cost counts its NaN entry as 0: 0.5 * 0.5^2; back_right pays 0.
    team_share = states.reward["torso"][:, 0]
    np.testing.assert_allclose(states.reward["front_left"][:, 0] - team_share, -0.125, rtol=1e-5)
    np.testing.assert_allclose(states.reward["back_right"][:, 0] - team_share, 0.0, atol=1e-6)
