"""Where a mixed-body iteration's extra time goes (issue 16): process CPU ms per iteration of
each body's rollout and of the update, mixed against each body alone with the same network;
then each body's env stepped alone at 32 and 64 envs (zero actions), and MuJoCo's batch with
one thread against the default.

    taskset -c 1 python benchmarks/mixed_body_profile.py                # centipede-4,centipede-6
    taskset -c 1 python benchmarks/mixed_body_profile.py --bodies centipede-4,centipede-8
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.env.cpu_simulator import STATE_FIELDS, ThreadedSimulator
from modular_ppo.networks import NetworkConfig
from modular_ppo.ppo import collect_rollout, default_ppo_config, train_step
from modular_ppo.runs.build import build_run
from modular_ppo.runs.config import TrainRunConfig


def cpu_ms(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.process_time()
        call()
        times.append(time.process_time() - started)
    return statistics.median(times) * 1e3


def iteration_profile(body: str, network: NetworkConfig) -> NetworkConfig:
    """Prints CPU ms of train_step and of each body's collect_rollout; returns the network
    config the run resolved (max sizes), for the single-body runs to share."""
    config = TrainRunConfig(body=body, network=network, ppo=dataclasses.replace(
        default_ppo_config("cpu"), total_steps=10**6))
    run = build_run(config)
    ppo = run.config.ppo
    step = train_step.lower(run.groups, ppo, run.state).compile()
    holder = {"state": jax.block_until_ready(step(run.state)[0])}
    rollouts = {
        g.name: jax.jit(lambda s, g=g: collect_rollout(
            g.env, g.graphdef, s.network_state(g.name), s.groups[g.name].env_state,
            s.groups[g.name].recurrent, ppo.rollout_length)[3]).lower(holder["state"]).compile()
        for g in run.groups
    }

    def iterate():
        holder["state"] = jax.block_until_ready(step(holder["state"])[0])

    total = cpu_ms(iterate, 15)
    rollout = {name: cpu_ms(lambda r=r: jax.block_until_ready(r(holder["state"])), 15)
               for name, r in rollouts.items()}
    print(f"| {body} | " + " + ".join(f"{v:.0f}" for v in rollout.values())
          + f" | {total - sum(rollout.values()):.0f} | {total:.0f} |", flush=True)
    return run.config.network


def env_stepping(name: str, n_envs: int) -> float:
    env = make_env(load_body(name), EnvConfig(), "cpu")
    zero = {m: jnp.zeros((n_envs, k)) for m, k in env.action_sizes.items()}

    @jax.jit
    def run(state):
        return jax.lax.scan(lambda s, _: (jax.vmap(env.step)(s, zero), None), state,
                            length=32)[0]

    holder = {"state": jax.block_until_ready(
        run(jax.vmap(env.reset)(jax.random.split(jax.random.key(0), n_envs))))}

    def call():
        holder["state"] = jax.block_until_ready(run(holder["state"]))

    return cpu_ms(call, 20)


def mujoco_step_ms(name: str, n_envs: int, nthread: int) -> float:
    body = load_body(name)
    simulator = ThreadedSimulator(body.model, body.frame_skip, nthread)
    fields = simulator.start(np.tile(body.init_qpos, (n_envs, 1)), np.zeros((n_envs, body.model.nv)))
    holder = {"state": list(fields[:len(STATE_FIELDS)])}

    def call():
        holder["state"] = list(simulator.step(*holder["state"])[:len(STATE_FIELDS)])

    return cpu_ms(call, 200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", default="centipede-4,centipede-6")
    args = parser.parse_args()
    bodies = args.bodies.split(",")
    print("| CPU ms per iteration | rollout(s) | update | total |\n|---|---|---|---|")
    padded = iteration_profile(args.bodies, NetworkConfig(arch="shared"))
    for body in bodies:
        iteration_profile(body, padded)
    print("\n| env, zero actions | CPU ms per 32 steps, 32 envs | 64 envs |\n|---|---|---|")
    for body in bodies:
        print(f"| {body} | {env_stepping(body, 32):.1f} | {env_stepping(body, 64):.1f} |",
              flush=True)
    print("\n| MuJoCo batch step, CPU ms per call | nthread | 32 envs | 64 envs |\n|---|---|---|---|")
    for nthread in (2, 1):
        print(f"| {bodies[0]} | {nthread} | {mujoco_step_ms(bodies[0], 32, nthread):.2f} | "
              f"{mujoco_step_ms(bodies[0], 64, nthread):.2f} |", flush=True)


if __name__ == "__main__":
    main()
