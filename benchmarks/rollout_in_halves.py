"""Issue 15, point 2: a rollout whose two halves of environments take turns, each half's
simulator step running (an asynchronous host call) while the network acts for the other
half, against the rollout as it is (every environment steps at once). Both rollouts are
compiled in one process and timed in alternating rounds from the same state: wall and
process CPU ms per rollout of n_envs x 32 steps.

    python benchmarks/rollout_in_halves.py --arch separate graph attention
    taskset -c 0 python benchmarks/rollout_in_halves.py --arch separate
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np
from flax import nnx

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.networks import NetworkConfig, make_network
from modular_ppo.ppo import PPOConfig, collect_rollout, new_training_state


def measure(body_name: str, arch: str, n_envs: int, rounds: int) -> dict[str, np.ndarray]:
    config = PPOConfig(n_envs=n_envs)
    body = load_body(body_name)
    env = make_env(body, EnvConfig(), "cpu")
    network = make_network(body, env.obs_sizes, NetworkConfig(arch=arch), rngs=nnx.Rngs(0))
    (group,), state = new_training_state([(env, network)], config, seed=0)
    own = state.groups[group.name]
    rollouts = {}
    for name, in_halves in (("at once", False), ("in halves", True)):
        rollouts[name] = jax.jit(lambda s, h=in_halves: collect_rollout(
            env, group.graphdef, s.network_state(), own.env_state, own.recurrent,
            config.rollout_length, in_halves=h)[3]).lower(state).compile()
        jax.block_until_ready(rollouts[name](state))
    times = {name: [] for name in rollouts}
    for _ in range(rounds):
        for name, rollout in rollouts.items():
            wall, cpu = time.perf_counter(), time.process_time()
            jax.block_until_ready(rollout(state))
            times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    return {name: 1e3 * np.array(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--body", default="ant-modular")
    parser.add_argument("--arch", nargs="+", default=["separate"])
    parser.add_argument("--n-envs", type=int, nargs="+", default=[64])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print("| body | network | envs | rollout | wall ms (median) | CPU ms (median) |")
    print("|---|---|---|---|---|---|")
    for arch in args.arch:
        for n_envs in args.n_envs:
            for name, t in measure(args.body, arch, n_envs, args.rounds).items():
                print(f"| {args.body} | {arch} | {n_envs} | {name} | "
                      f"{np.median(t[:, 0]):.1f} | {np.median(t[:, 1]):.1f} |", flush=True)


if __name__ == "__main__":
    main()
