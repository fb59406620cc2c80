"""JaxMARL-style IPPO and MAPPO through any JaxMARL environment with Box spaces (e.g. JaxMARLEnv).

After JaxMARL's IPPO baseline for MABrax (baselines/IPPO/ippo_ff_mabrax.py and its config
ippo_ff_mabrax.yaml, PureJaxRL's PPO): one actor-critic whose parameters every agent
shares, a Gaussian policy with a state-independent log-std, tanh MLPs of 64 x 2, GAE and
the clipped PPO loss per agent, every agent trained on the team reward (MABrax gives each
agent the team reward; here `rewards["__all__"]`). Agents with observations or actions of
different sizes are homogenized as JaxMARL's "max" option does: observations zero-padded
to the largest and prefixed with the agent's one-hot index, actions cut from the largest.
Actions are clipped to [-1, 1] before the env.

MAPPO (`CENTRALIZED_CRITIC=True`, after JaxMARL's MAPPO baselines and Yu et al. 2022): the
same actor, and a critic that reads the agent-specific global state: every agent's
homogenized observation concatenated, followed by the agent's one-hot index.

    state, curve = train_ippo(env, ippo_config(TOTAL_TIMESTEPS=...), jax.random.PRNGKey(0))

`curve` rows: env steps so far, the mean team return of the episodes that ended in that
update (NaN when none did), and the update's mean PPO loss over its minibatches.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import optax


IPPO_FF_MABRAX = {
    "LR": 1e-3, "NUM_ENVS": 64, "NUM_STEPS": 300, "TOTAL_TIMESTEPS": 10_000_000,
    "UPDATE_EPOCHS": 4, "NUM_MINIBATCHES": 4, "GAMMA": 0.99, "GAE_LAMBDA": 0.95,
    "CLIP_EPS": 0.2, "ENT_COEF": 2e-6, "VF_COEF": 4.5, "MAX_GRAD_NORM": 0.5, "ANNEAL_LR": True,
}
"""JaxMARL's baselines/IPPO/config/ippo_ff_mabrax.yaml, the settings its IPPO trains MABrax
with, under its own keys (SEED, ENV_NAME, the device and W&B keys are the caller's);
TOTAL_TIMESTEPS counts env steps, each of which moves every agent."""

HARNESS = {"HIDDEN": 64, "CENTRALIZED_CRITIC": False}
"""This harness's own settings: the MLPs' width (JaxMARL's MABrax actor-critic: 64) and the
MAPPO critic (`CENTRALIZED_CRITIC`, module docstring)."""


def ippo_config(**overrides: object) -> dict:
    """`IPPO_FF_MABRAX` and `HARNESS` with `overrides` (their keys): the config dict
    `train_ippo` reads, as JaxMARL's `make_train(config)` does. ValueError naming the keys
    for any other key."""
    config = {**IPPO_FF_MABRAX, **HARNESS}
    unknown = sorted(set(overrides) - set(config))
    if unknown:
        raise ValueError(f"ippo_config: no setting {', '.join(unknown)}; the settings are "
                         f"{', '.join(config)}.")
    return {**config, **overrides}


def n_updates(config: dict) -> int:
    """PPO updates of a run: TOTAL_TIMESTEPS over NUM_ENVS x NUM_STEPS, at least one."""
    return max(1, int(config["TOTAL_TIMESTEPS"]) // (config["NUM_ENVS"] * config["NUM_STEPS"]))


def _dense(key, n_in, n_out, scale):
    return {"w": jax.nn.initializers.orthogonal(scale)(key, (n_in, n_out)), "b": jnp.zeros(n_out)}


def _mlp(params, x):
    for layer in params[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def init_params(key, obs_size: int, critic_size: int, action_size: int, hidden: int) -> dict:
    keys = jax.random.split(key, 6)
    root2 = math.sqrt(2.0)
    return {
        "actor": [_dense(keys[0], obs_size, hidden, root2), _dense(keys[1], hidden, hidden, root2),
                  _dense(keys[2], hidden, action_size, 0.01)],
        "critic": [_dense(keys[3], critic_size, hidden, root2),
                   _dense(keys[4], hidden, hidden, root2), _dense(keys[5], hidden, 1, 1.0)],
        "log_std": jnp.zeros(action_size),
    }


def policy(params, obs, critic_obs):
    """(mean, log_std, value) for homogenized observations and the critic's inputs."""
    return (_mlp(params["actor"], obs), params["log_std"],
            _mlp(params["critic"], critic_obs)[..., 0])


def _log_prob(mean, log_std, action):
    return jnp.sum(-0.5 * ((action - mean) / jnp.exp(log_std)) ** 2 - log_std
                   - 0.5 * jnp.log(2 * jnp.pi), axis=-1)


class Homogenizer:
    """Agent-keyed observations / actions <-> one [..., n_agents, size] array."""

    def __init__(self, env):
        self.agents = list(env.agents)
        self.obs_sizes = [env.observation_space(a).shape[0] for a in self.agents]
        self.action_sizes = [env.action_space(a).shape[0] for a in self.agents]
        same = len(set(self.obs_sizes)) == 1
        self.obs_size = max(self.obs_sizes) + (0 if same else len(self.agents))
        self.action_size = max(self.action_sizes)
        self._one_hot = None if same else jnp.eye(len(self.agents))

    def obs(self, obs: dict) -> jax.Array:
        rows = []
        for i, agent in enumerate(self.agents):
            x = obs[agent]
            x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, max(self.obs_sizes) - x.shape[-1])])
            if self._one_hot is not None:
                one_hot = jnp.broadcast_to(self._one_hot[i], (*x.shape[:-1], len(self.agents)))
                x = jnp.concatenate([one_hot, x], -1)
            rows.append(x)
        return jnp.stack(rows, axis=-2)

    def critic_size(self, centralized: bool) -> int:
        """Width of `critic_obs`: one agent's observation, or every agent's and its index."""
        n_agents = len(self.agents)
        return n_agents * self.obs_size + n_agents if centralized else self.obs_size

    def critic_obs(self, obs: jax.Array, centralized: bool) -> jax.Array:
        """The critic's input per agent: the agent's own observation (IPPO), or every agent's
        observation and the agent's one-hot index (MAPPO)."""
        if not centralized:
            return obs
        n_agents = len(self.agents)
        world = obs.reshape(*obs.shape[:-2], 1, -1)
        world = jnp.broadcast_to(world, (*obs.shape[:-2], n_agents, world.shape[-1]))
        one_hot = jnp.broadcast_to(jnp.eye(n_agents), (*obs.shape[:-2], n_agents, n_agents))
        return jnp.concatenate([world, one_hot], -1)

    def actions(self, actions: jax.Array) -> dict:
        return {a: jnp.clip(actions[..., i, :n], -1.0, 1.0)
                for i, (a, n) in enumerate(zip(self.agents, self.action_sizes))}


def _optimizer(config: dict) -> optax.GradientTransformation:
    """Adam (eps 1e-5) after global-norm clipping, its rate annealed linearly to 0 over every
    minibatch step when `config["ANNEAL_LR"]`."""
    schedule = (optax.linear_schedule(config["LR"], 0.0, n_updates(config) * config["UPDATE_EPOCHS"]
                                      * config["NUM_MINIBATCHES"]) if config["ANNEAL_LR"] else config["LR"])
    return optax.chain(optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
                       optax.adam(schedule, eps=1e-5))


def _env_step(env, shape: Homogenizer, config: dict, carry, key):
    """One step of every env under the sampled policy: the new carry (params, obs, env state,
    running team return) and the step's transition, `finished` holding the return of each
    episode that ended here (NaN elsewhere)."""
    params, obs, env_state, running = carry
    n_agents = len(shape.agents)
    action_key, step_key = jax.random.split(key)
    x = shape.obs(obs)
    critic_x = shape.critic_obs(x, config["CENTRALIZED_CRITIC"])
    mean, log_std, value = policy(params, x, critic_x)
    action = mean + jnp.exp(log_std) * jax.random.normal(action_key, mean.shape)
    log_prob = _log_prob(mean, log_std, action)
    obs, env_state, rewards, dones, _ = jax.vmap(env.step)(
        jax.random.split(step_key, config["NUM_ENVS"]), env_state, shape.actions(action))
    team, done = rewards["__all__"], dones["__all__"]
    running = running + team
    finished = jnp.where(done, running, jnp.nan)
    running = jnp.where(done, 0.0, running)
    step = dict(obs=x, critic_obs=critic_x, action=action, log_prob=log_prob, value=value,
                reward=jnp.repeat(team[:, None], n_agents, 1),
                done=jnp.repeat(done[:, None], n_agents, 1).astype(jnp.float32),
                finished=finished)
    return (params, obs, env_state, running), step


def _gae(config: dict, batch: dict, last_value: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(advantages, value targets) of a [n_steps, ...] batch by generalized advantage
    estimation, bootstrapped from `last_value` and cut at dones."""
    def backward(carry, step):
        advantage, next_value = carry
        delta = step["reward"] + config["GAMMA"] * next_value * (1 - step["done"]) - step["value"]
        advantage = delta + config["GAMMA"] * config["GAE_LAMBDA"] * (1 - step["done"]) * advantage
        return (advantage, step["value"]), advantage

    _, advantages = jax.lax.scan(backward, (jnp.zeros_like(last_value), last_value),
                                 batch, reverse=True)
    return advantages, advantages + batch["value"]


def _loss(config: dict, params: dict, minibatch: dict) -> jax.Array:
    """The clipped PPO loss of a minibatch: actor (advantages normalized within the minibatch)
    + vf_coef * clipped value loss - ent_coef * the Gaussian's entropy."""
    mean, log_std, value = policy(params, minibatch["obs"], minibatch["critic_obs"])
    log_prob = _log_prob(mean, log_std, minibatch["action"])
    ratio = jnp.exp(log_prob - minibatch["log_prob"])
    adv = minibatch["advantage"]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    actor = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - config["CLIP_EPS"],
                                               1 + config["CLIP_EPS"]) * adv).mean()
    clipped = minibatch["value"] + jnp.clip(value - minibatch["value"], -config["CLIP_EPS"],
                                            config["CLIP_EPS"])
    critic = 0.5 * jnp.maximum((value - minibatch["target"]) ** 2,
                               (clipped - minibatch["target"]) ** 2).mean()
    entropy = jnp.sum(log_std + 0.5 * jnp.log(2 * jnp.pi * jnp.e))
    return actor + config["VF_COEF"] * critic - config["ENT_COEF"] * entropy


def _epochs(config: dict, optimizer, params: dict, opt_state, flat: dict,
            key: jax.Array):
    """`update_epochs` passes over the flattened batch, each in `n_minibatches` shuffled
    minibatches with one optimizer step each: ((params, opt_state), losses [epochs, minibatches])."""
    size = flat["obs"].shape[0]

    def epoch(carry, key):
        params, opt_state = carry
        order = jax.random.permutation(key, size).reshape(config["NUM_MINIBATCHES"], -1)

        def minibatch(carry, idx):
            params, opt_state = carry
            value, grads = jax.value_and_grad(functools.partial(_loss, config))(
                params, jax.tree.map(lambda x: x[idx], flat))
            updates, opt_state = optimizer.update(grads, opt_state)
            return (optax.apply_updates(params, updates), opt_state), value

        return jax.lax.scan(minibatch, (params, opt_state), order)

    return jax.lax.scan(epoch, (params, opt_state),
                        jax.random.split(key, config["UPDATE_EPOCHS"]))


def _update(env, shape: Homogenizer, config: dict, optimizer, carry, key):
    """One PPO update: an `n_steps` rollout of every env, GAE, then the epochs of minibatch
    steps. Returns the new carry and (mean return of the episodes that ended, mean loss)."""
    params, opt_state, obs, env_state, running = carry
    rollout_key, shuffle_key = jax.random.split(key)
    (params, obs, env_state, running), batch = jax.lax.scan(
        functools.partial(_env_step, env, shape, config), (params, obs, env_state, running),
        jax.random.split(rollout_key, config["NUM_STEPS"]))
    last_x = shape.obs(obs)
    last_critic_x = shape.critic_obs(last_x, config["CENTRALIZED_CRITIC"])
    _, _, last_value = policy(params, last_x, last_critic_x)
    finished = batch.pop("finished")
    batch["advantage"], batch["target"] = _gae(config, batch, last_value)
    flat = jax.tree.map(lambda x: x.reshape(-1, *x.shape[3:]), batch)
    (params, opt_state), losses = _epochs(config, optimizer, params, opt_state, flat,
                                          shuffle_key)
    return (params, opt_state, obs, env_state, running), (jnp.nanmean(finished),
                                                          losses.mean())


def train_ippo(env, config: dict, key: jax.Array) -> tuple[dict, list[dict[str, float]]]:
    """Train IPPO (or MAPPO) on `env`; returns the parameters and the learning curve."""
    shape = Homogenizer(env)
    optimizer = _optimizer(config)
    key, init_key, reset_key = jax.random.split(key, 3)
    params = init_params(init_key, shape.obs_size, shape.critic_size(config["CENTRALIZED_CRITIC"]),
                         shape.action_size, config["HIDDEN"])
    opt_state = optimizer.init(params)
    obs, env_state = jax.vmap(env.reset)(jax.random.split(reset_key, config["NUM_ENVS"]))
    running = jnp.zeros(config["NUM_ENVS"])
    step_fn = jax.jit(lambda carry, key: _update(env, shape, config, optimizer, carry, key))
    carry = (params, opt_state, obs, env_state, running)
    curve = []
    for i, update_key in enumerate(jax.random.split(key, n_updates(config))):
        carry, (mean_return, mean_loss) = step_fn(carry, update_key)
        curve.append({"steps": (i + 1) * config["NUM_ENVS"] * config["NUM_STEPS"],
                      "team_return": float(mean_return), "loss": float(mean_loss)})
    return carry[0], curve


def evaluate(env, params, key: jax.Array, n_envs: int, n_steps: int) -> float:
    """Mean team return of the first episode of `n_envs` envs under the policy's mean action
    (episodes longer than `n_steps` counted up to there)."""
    shape = Homogenizer(env)

    def rollout(key):
        obs, state = env.reset(key)

        def step(carry, key):
            obs, state, alive, total = carry
            mean = _mlp(params["actor"], shape.obs(obs))
            obs, state, rewards, dones, _ = env.step(key, state, shape.actions(mean))
            total = total + alive * rewards["__all__"]
            return (obs, state, alive * (1.0 - dones["__all__"]), total), None

        carry = (obs, state, jnp.ones(()), jnp.zeros(()))
        return jax.lax.scan(step, carry, jax.random.split(key, n_steps))[0][3]

    return float(np.mean(jax.jit(jax.vmap(rollout))(jax.random.split(key, n_envs))))
