"""`mamujoco_env` / `make` against gymnasium_robotics' MaMuJoCo on replayed states.

For every scenario / agent_conf served, our env runs random actions (a new episode after
each end); before each step, its state is written into gymnasium_robotics'
`MultiAgentMujocoEnv` (Gymnasium's v5 env underneath): qpos, qvel, act, warm start, time,
ctrl, and the positions Gymnasium's reward reads before the step (the torso's xpos; for
the Humanoid's center of mass every xipos set to our subtree_com[0], which it averages
back). Both then step with the same actions; observations, global state, rewards,
terminations and the ctrl the actions map to must agree. Our state is float32 (the
reference's float64 rounded): agreement to 1e-5 relative and absolute.
"""

from __future__ import annotations

import functools

import jax
import mujoco
import numpy as np
import pytest
from gymnasium_robotics.envs.multiagent_mujoco.mujoco_multi import MultiAgentMujocoEnv

from modular_ppo.env import EnvConfig
from modular_ppo.interop import AgentActionError, InteropError
from modular_ppo.interop.mamujoco import MAMUJOCO_IDS, make, mamujoco_env

N_STEPS = 40
TOLERANCE = 1e-5


@functools.cache
def _pair(env_id: str, agent_obsk: int = 1):
    ours = make(env_id, agent_obsk=agent_obsk)
    reference = MultiAgentMujocoEnv(*MAMUJOCO_IDS[env_id], agent_obsk=agent_obsk)
    reference.reset(seed=0)
    return ours, reference


def _replay_into(reference, data) -> None:
    """Write our state (a host copy of CpuData) into the reference's MuJoCo data."""
    _replay_into_gymnasium(reference.single_agent_env.unwrapped, data)


def _replay_into_gymnasium(gym_env, data) -> None:
    mj = gym_env.data
    mj.qpos[:], mj.qvel[:], mj.act[:] = data.qpos, data.qvel, data.act
    mj.qacc_warmstart[:], mj.ctrl[:], mj.time = data.qacc_warmstart, data.ctrl, float(data.time)
    mj.xpos[:] = data.xpos
    mj.xipos[:] = data.subtree_com[0]


def _close(ours, theirs, what):
    np.testing.assert_allclose(ours, theirs, rtol=TOLERANCE, atol=TOLERANCE, err_msg=what)


@pytest.mark.parametrize(
    ("env_id", "agent_obsk"),
    [(env_id, 1) for env_id in MAMUJOCO_IDS]
    + [("MaMuJoCo-Ant-4x2-v0", 0), ("MaMuJoCo-Walker2d-2x3-v0", 2)],
)
def test_steps_equal_gymnasium_robotics_on_replayed_states(env_id, agent_obsk):
    ours, reference = _pair(env_id, agent_obsk)
    assert ours.possible_agents == reference.possible_agents
    for agent in ours.possible_agents:
        assert ours.action_space(agent) == reference.action_space(agent)
        assert ours.observation_space(agent).shape == reference.observation_space(agent).shape
        assert ours.observation_space(agent).dtype == np.float64
    assert ours.state_space.shape == reference.single_agent_env.observation_space.shape
    rng = np.random.default_rng(0)
    observations, _ = ours.reset(seed=0)
    ends = 0
    for step in range(N_STEPS):
        data = jax.device_get(ours._state.data)
        _replay_into(reference, data)
        actions = {a: rng.uniform(ours.action_space(a).low, ours.action_space(a).high)
                   .astype(np.float32) for a in ours.agents}
        obs, rewards, terminations, truncations, _ = ours.step(actions)
        ref_obs, ref_rewards, ref_terminations, ref_truncations, _ = reference.step(actions)
        where = f"{env_id} step {step}"
        mj = reference.single_agent_env.unwrapped.data
        _close(np.asarray(ours._state.data.ctrl), mj.ctrl, f"{where}: ctrl")
        _close(ours.global_action(actions), reference.map_local_actions_to_global_action(actions),
               f"{where}: global action")
        for agent in reference.possible_agents:
            assert obs[agent].dtype == np.float64
            _close(obs[agent], ref_obs[agent], f"{where}: {agent} observation")
            _close(rewards[agent], ref_rewards[agent], f"{where}: {agent} reward")
            assert terminations[agent] == ref_terminations[agent], where
            assert truncations[agent] == ref_truncations[agent] is False, where
        _close(ours.state(), reference.state(), f"{where}: state")
        if not ours.agents:
            ends += 1
            ours.reset()
    if env_id.startswith("MaMuJoCo-Hopper"):
        assert ends, "random actions should end some hopper episodes"


@pytest.mark.parametrize("env_id", ["MaMuJoCo-Humanoid-9|8-v0", "MaMuJoCo-Walker2d-2x3-v0"])
def test_reset_is_gymnasiums_start_pose_and_noise(env_id):
    """Starts lie within Gymnasium's noise of its initial pose, and observe as the
    reference does on the same start (its set_state)."""
    ours, reference = _pair(env_id)
    gym_env = reference.single_agent_env.unwrapped
    scale = gym_env._reset_noise_scale
    starts = []
    for seed in range(5):
        observations, _ = ours.reset(seed=seed)
        data = jax.device_get(ours._state.data)
        starts.append(data.qpos)
        assert np.all(np.abs(data.qpos - gym_env.init_qpos) <= scale + 1e-6)
        mujoco.mj_resetData(gym_env.model, gym_env.data)  # as Gymnasium's reset does
        gym_env.set_state(np.asarray(data.qpos, np.float64), np.asarray(data.qvel, np.float64))
        reference_obs = reference._get_obs()
        for agent, o in observations.items():
            _close(o, reference_obs[agent], f"{env_id} reset {seed}: {agent}")
        _close(ours.state(), reference.state(), f"{env_id} reset {seed}: state")
    assert np.ptp(np.stack(starts), axis=0).max() > scale / 2, "the noise should vary by seed"


def test_episodes_are_truncated_at_gymnasiums_1000_steps():
    """The length is Gymnasium's TimeLimit; how truncation reaches the agents is the
    parallel env's (tests/interop/test_interop_pettingzoo.py)."""
    for env_id in MAMUJOCO_IDS:
        ours, reference = _pair(env_id)
        assert ours.env.episode_length == reference.single_agent_env.spec.max_episode_steps == 1000


def test_actions_follow_mamujocos_order_within_an_agent():
    """Ant 2x4's agent_1 acts on hip3, ankle3, hip4, ankle4: actuators 6, 7, 0, 1."""
    ours, _ = _pair("MaMuJoCo-Ant-2x4-v0")
    actions = {"agent_0": np.array([0.1, 0.2, 0.3, 0.4], np.float32),
               "agent_1": np.array([0.5, 0.6, 0.7, 0.8], np.float32)}
    np.testing.assert_allclose(ours.global_action(actions),
                               [0.7, 0.8, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6], rtol=1e-6)


def test_unknown_ids_and_settings_are_refused_with_the_choices():
    with pytest.raises(InteropError, match="registered: MaMuJoCo-Ant-2x4-v0"):
        make("MaMuJoCo-Ant-3x3-v0")
    with pytest.raises(InteropError, match="Ant defines '2x4', '2x4d', '4x2'"):
        mamujoco_env("Ant", "8x1")
    with pytest.raises(InteropError, match="scenarios served here are Ant, HalfCheetah"):
        mamujoco_env("Swimmer", "2x1")
    with pytest.raises(InteropError, match="agent_obsk=None"):
        mamujoco_env("Hopper", "3x1", agent_obsk=None)


def test_the_gymnasium_view_is_gymnasiums_v5_env_on_replayed_states():
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make("modular_ppo/Hopper-v5").unwrapped
    check_env(env, skip_render_check=True)
    reference = gymnasium.make("Hopper-v5").unwrapped
    reference.reset(seed=0)
    observation, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    for step in range(10):
        _replay_into_gymnasium(reference, jax.device_get(env.parallel._state.data))
        action = rng.uniform(-1, 1, 3).astype(np.float32)
        observation, reward, terminated, truncated, _ = env.step(action)
        ref_observation, ref_reward, ref_terminated, _, _ = reference.step(action)
        _close(observation, ref_observation, f"step {step}: observation")
        _close(reward, ref_reward, f"step {step}: reward")
        assert terminated == ref_terminated and not truncated
        if terminated:
            env.reset()
    for bad, message in (({"thigh": 1.0}, "action of type dict is not an array of numbers"),
                         (np.zeros(4), r"action has shape \(4,\); give shape \(3,\)"),
                         (np.full(3, np.nan), "non-finite entries")):
        with pytest.raises(AgentActionError, match=message):
            env.step(bad)


def test_pettingzoos_parallel_api_test_passes():
    from pettingzoo.test import parallel_api_test

    ours, _ = _pair("MaMuJoCo-Hopper-3x1-v0")
    parallel_api_test(ours, num_cycles=30)


def test_root_joint_sources_read_qpos_and_are_refused_where_the_root_has_no_such_joint():
    """Gymnasium's task sources "root_joint" (velocity_source, height_source) on a body
    whose root slides along x only: the velocity reads the slide; the height has no joint."""
    from tiny_body import tiny_xml

    from modular_ppo.body import BodyGraph
    from modular_ppo.env import EnvError, make_task
    from modular_ppo.env.tasks import Transition

    velocity = tiny_xml(custom='<custom><text name="modular_ppo:velocity_source" '
                               'data="root_joint"/></custom>')
    body = BodyGraph.from_mjcf(velocity)
    task = make_task(body, EnvConfig())
    before = mujoco.MjData(body.model)
    after = mujoco.MjData(body.model)
    after.qpos[0] = 0.3
    assert float(task.progress(Transition(before, after, {}, 0.1))) == pytest.approx(3.0)
    height = tiny_xml(custom='<custom><text name="modular_ppo:height_source" data="root_joint"/>'
                             '<numeric name="modular_ppo:healthy_z" data="0 1"/></custom>')
    with pytest.raises(EnvError, match="height_source \"root_joint\" reads the root's z joint "
                                       "coordinate.*no slide joint along z. Use \"root_body\""):
        make_task(BodyGraph.from_mjcf(height), EnvConfig())
