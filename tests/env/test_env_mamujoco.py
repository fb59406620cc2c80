"""EnvConfig(observation="mamujoco") against gymnasium_robotics' MaMuJoCo env, on the same states.

Each (body, partition) MaMuJoCo v1 defines runs random actions on the CPU backend. Every
state's qpos, qvel, ctrl and solver warm start go into gymnasium_robotics'
`MultiAgentMujocoEnv` (on Gymnasium's own v5 model), MuJoCo computes the derived quantities
there (mj_forward + mj_rnePostConstraint), and each agent's `_get_obs` must equal the
observation of the module that drives the same actuators.

What differs between the models, and how each part is checked:
- The bodies share joints, actuators, masses and inertias with Gymnasium's, so qpos, qvel,
  cinert, cvel and qfrc_actuator are computed by MuJoCo on Gymnasium's model and compared.
- Contacts differ: this project's ant and humanoid collide with the floor only through
  their feet and solve contacts with one Newton iteration (MJX speed), Gymnasium's collide
  every geom and converge (Newton 100 / PGS 50 iterations); on the same state their cfrc_ext
  differ by up to ~80% of the largest force. On Gymnasium's model the
  reference is handed this project's cfrc_ext (a derived quantity put into both), which
  checks how the observation reads it (bodies, order, once per body, Ant's clip); and on
  this project's own MJCF (Gymnasium's env class with `xml_file`) MuJoCo computes cfrc_ext
  itself and the whole observation must match again.
- MJX states (`mjx.put_data` of a MuJoCo state) go through the same observation code; they
  are checked with other k and without global categories (MaMuJoCo's `agent_obsk`,
  `global_categories`).
"""

from __future__ import annotations

import functools

import gymnasium
import jax
import mujoco
import numpy as np
import pytest
from gymnasium_robotics.envs.multiagent_mujoco.mujoco_multi import MultiAgentMujocoEnv
from gymnasium_robotics.envs.multiagent_mujoco.obsk import get_parts_and_edges

from modular_ppo.body import load_body
from modular_ppo.body.library import BODIES_DIR
from modular_ppo.env import EnvConfig, EnvError, make_env
from modular_ppo.env.mamujoco_graphs import SCENARIOS
from modular_ppo.env.observations import Observer, observation_reads_contact_forces

PAIRS = [
    ("ant-modular", "4x2"),
    ("ant-modular", "2x4"),
    ("ant-modular", "2x4d"),
    ("halfcheetah-modular", "6x1"),
    ("halfcheetah-modular", "2x3"),
    ("hopper-modular", "3x1"),
    ("walker2d-modular", "2x3"),
    ("humanoid-modular", "9|8"),
]
N_STEPS = 60
WITH_CONTACT_FORCES = ("Ant", "Humanoid")


def _config(name: str, **changes) -> EnvConfig:
    """MaMuJoCo's observations; the env computes contact forces where they read them."""
    return EnvConfig(observation="mamujoco", **changes)


def _reference(name: str, partition: str, own_model: bool = False, **kwargs):
    """gymnasium_robotics' env for the pair, on Gymnasium's model or this project's MJCF."""
    scenario = SCENARIOS[name].name
    xml = {"xml_file": str(BODIES_DIR / f"{name}.xml")} if own_model else {}
    gym_env = gymnasium.make(f"{scenario}-v5", **xml)
    return MultiAgentMujocoEnv(scenario, partition, gym_env=gym_env, **kwargs)


@functools.cache
def _rollout(name: str, partition: str, reset_noise_scale: float | None = None):
    """The body, its observation layout and every state of N_STEPS random actions on the
    CPU backend (host copies)."""
    body = load_body(name, partition)
    env = make_env(body, _config(name, reset_noise_scale=reset_noise_scale), "cpu")
    step = jax.jit(env.step)
    state = jax.jit(env.reset)(jax.random.PRNGKey(0))
    rng = np.random.default_rng(0)
    states = [state]
    for _ in range(N_STEPS):
        action = {m: rng.uniform(-1, 1, k).astype(np.float32) for m, k in env.action_sizes.items()}
        state = step(state, action)
        states.append(state)
    return body, env.obs_layout, jax.device_get(states)


def _modules_of_agents(body, reference) -> dict[str, str]:
    """Module -> the agent that drives the same actuators."""
    by_actuators = {
        frozenset(body.modules[m].actuator_ids.tolist()): m for m in body.actuated_modules
    }
    return {
        by_actuators[frozenset(node.act_ids for node in nodes)]: agent
        for agent, nodes in zip(reference.possible_agents, reference.agent_action_partitions)
    }


def _reference_obs(reference, data, cfrc_ext=None) -> dict[str, np.ndarray]:
    """The reference's observations of the state `data` holds (qpos, qvel, ctrl, warm
    start); cfrc_ext replaced by the given one, if any."""
    gym_env = reference.single_agent_env.unwrapped
    model, mj = gym_env.model, gym_env.data
    mj.qpos[:], mj.qvel[:], mj.ctrl[:] = data.qpos, data.qvel, data.ctrl
    mj.qacc_warmstart[:] = data.qacc_warmstart
    mujoco.mj_forward(model, mj)
    mujoco.mj_rnePostConstraint(model, mj)
    if cfrc_ext is not None:
        mj.cfrc_ext[:] = cfrc_ext
    return reference._get_obs()


def _assert_equal_observations(body, layout, obs, reference_obs, agents, contact_tolerance):
    """Every entry to 1e-5 (float32 against float64), contact forces to `contact_tolerance`."""
    for module, agent in agents.items():
        contact = np.concatenate([[b.feature == "cfrc_ext"] * b.size for b in layout[module]])
        for part, tolerance in ((~contact, 1e-5), (contact, contact_tolerance)):
            np.testing.assert_allclose(
                obs[module][part], reference_obs[agent][part], rtol=tolerance, atol=tolerance,
                err_msg=f"{body.name}: {module} vs {agent}",
            )
    # the torso, no agent of MaMuJoCo's, observes the global categories every agent ends with
    (torso,) = [m for m in body.module_names if m not in agents]
    tail = reference_obs[next(iter(agents.values()))][-obs[torso].size:]
    np.testing.assert_allclose(obs[torso], tail, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("name", "partition"), PAIRS, ids=lambda v: str(v))
def test_observations_equal_gymnasium_robotics_on_the_same_states(name, partition):
    body, layout, states = _rollout(name, partition)
    if name == "hopper-modular":
        # starts with velocities up to 12, past MaMuJoCo's clip of the hopper's at 10 (each
        # such episode ends at its first step: the next state is a fresh start again)
        states = states + _rollout(name, partition, reset_noise_scale=12.0)[2]
    reference = _reference(name, partition)
    agents = _modules_of_agents(body, reference)
    for state in states:
        obs = {m: np.asarray(o) for m, o in state.obs.items()}
        reference_obs = _reference_obs(reference, state.data, state.data.cfrc_ext)
        _assert_equal_observations(body, layout, obs, reference_obs, agents, 1e-5)
    assert {m: o.size for m, o in obs.items() if m in agents} == {
        m: reference.observation_space(a).shape[0] for m, a in agents.items()
    }
    qvel = np.stack([s.data.qvel for s in states])
    if name == "hopper-modular":
        assert np.abs(qvel).max() > 10
    if SCENARIOS[name].name in WITH_CONTACT_FORCES:  # the Ant clips forces to +-1
        assert np.abs(np.stack([s.data.cfrc_ext for s in states])).max() > 1


@pytest.mark.parametrize(
    ("name", "partition"), [("ant-modular", "4x2"), ("humanoid-modular", "9|8")]
)
def test_contact_forces_equal_gymnasium_robotics_on_this_projects_model(name, partition):
    """The reference recomputes cfrc_ext from the state rounded to float32, where the
    simulator had computed it in float64: the contact solver's output moves by up to ~0.2%
    (humanoid), so contact forces are compared to 1%, everything else to 1e-5."""
    body, layout, states = _rollout(name, partition)
    reference = _reference(name, partition, own_model=True)
    agents = _modules_of_agents(body, reference)
    touching = 0
    for state in states:
        obs = {m: np.asarray(o) for m, o in state.obs.items()}
        reference_obs = _reference_obs(reference, state.data)
        _assert_equal_observations(body, layout, obs, reference_obs, agents, 1e-2)
        touching += bool(np.any(reference.single_agent_env.unwrapped.data.cfrc_ext))
    assert touching >= len(states) // 4, "the states should have contacts"


@pytest.mark.parametrize(
    ("name", "partition", "hops", "global_features"),
    [("humanoid-modular", "9|8", 2, True), ("ant-modular", "2x4", 0, False),
     ("walker2d-modular", "2x3", 3, True)],
)
def test_mjx_states_with_other_hops_and_without_globals(
    name, partition, hops, global_features, mujoco_state, to_mjx
):
    body = load_body(name, partition)
    observer = Observer(body, _config(name, neighbor_hops=hops, global_features=global_features))
    reference = _reference(name, partition, own_model=True, agent_obsk=hops,
                           global_categories=None if global_features else ())
    agents = _modules_of_agents(body, reference)
    for seed in range(3):
        data = mujoco_state(body, seed)
        obs = {m: np.asarray(o) for m, o in observer(to_mjx(body, data)).items()}
        reference_obs = _reference_obs(reference, data)
        for module, agent in agents.items():
            np.testing.assert_allclose(obs[module], reference_obs[agent], rtol=2e-5, atol=2e-5)
    torso = observer.layout[body.root_module]  # no agent: the global categories either way
    assert torso and all(block.source == "global" for block in torso)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_graph_tables_are_gymnasium_robotics_obsk(name):
    scenario = SCENARIOS[name]
    for partition, agents in scenario.partitions.items():
        parts, edges, global_nodes = get_parts_and_edges(scenario.name, partition)
        assert [tuple(n.label for n in part) for part in parts] == list(agents)
        for node in (n for part in parts for n in part):
            ours = scenario.node(node.label)
            assert (ours.qpos, ours.qvel, ours.actuator, ours.bodies) == (
                (node.qpos_ids,), (node.qvel_ids,), node.act_ids, tuple(node.bodies)
            )
        assert {frozenset(n.label for n in e.nodes) for e in edges} == {
            frozenset(e) for e in scenario.edges
        }
        assert [n.label for n in global_nodes] == [n.label for n in scenario.global_nodes]
    reference = _reference(name, next(iter(scenario.partitions)))
    assert [tuple(c) for c in reference.local_categories] == list(scenario.local_categories)


@pytest.mark.parametrize(
    ("name", "partition", "message"),
    [
        ("ant-modular", "2x4d-original", "partition '2x4d-original' is none of the partitions "
         "MaMuJoCo's Ant defines.*2x4 .*2x4d .*4x2 "),
        ("ant-modular", "8x1", "partition '8x1' is none.*--partition '2x4'"),
        ("walker2d-modular", None, "'walker2d-modular' with partition 'torso=torso; thigh=thigh;"
         ".*Walker2d defines.*2x3 \\(foot_joint leg_joint thigh_joint \\| "),
        ("centipede-4", None, "no observations for body 'centipede-4' \\(partition 'torso_0="
         ".*ant-modular \\(MaMuJoCo's Ant: 2x4, 2x4d, 4x2\\).*humanoid-modular"),
    ],
)
def test_a_body_or_partition_mamujoco_does_not_define_is_refused(name, partition, message):
    with pytest.raises(EnvError, match=message):
        Observer(load_body(name, partition), EnvConfig(observation="mamujoco", contact_forces=True))


def test_contact_forces_are_computed_exactly_where_the_categories_read_them():
    ant, hopper = load_body("ant-modular"), load_body("hopper-modular")
    assert observation_reads_contact_forces(ant, EnvConfig(observation="mamujoco"))
    assert not observation_reads_contact_forces(hopper, EnvConfig(observation="mamujoco"))
    with pytest.raises(EnvError, match="Hopper observations include no contact forces"):
        Observer(hopper, EnvConfig(observation="mamujoco", contact_forces=True))
    with pytest.raises(EnvError, match="previous_action, body_features and body_frame"):
        EnvConfig(observation="mamujoco", previous_action=True)
    with pytest.raises(EnvError, match="body_frame=\"root\""):
        EnvConfig(observation="mamujoco", body_frame="parent")
    with pytest.raises(EnvError, match="observation = 'mujoco'"):
        EnvConfig(observation="mujoco")


def test_the_cli_refuses_an_undefined_partition_with_exit_code_2(tmp_path, capsys):
    from modular_ppo import cli

    code = cli.main(["train", "--body", "walker2d-modular", "--env.observation", "mamujoco",
                     "--runs-root", str(tmp_path), "--no-video"])
    assert code == 2
    out = " ".join(capsys.readouterr().out.split())
    assert "body 'walker2d-modular' with partition 'torso=torso;" in out
    assert "MaMuJoCo's Walker2d defines (agents by joint): 2x3" in out
    assert not any(tmp_path.iterdir())
