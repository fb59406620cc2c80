"""Rollout throughput of `--backend cpu-pipelined` beside the jitted rollouts, in one process.

    python benchmarks/pipelined_rollout.py --n-envs 4096 8192 --out DIR

For each engine and each env count, ant-modular's rollout of `--length` steps with the
CLI's default network (`NetworkConfig()`): "cpu-pipelined" (`collect_pipelined`: the host's
C simulator and the device overlapped), "cpu" (the jitted `collect_rollout` with the C
simulator as a host call) and "mjx" (the jitted `collect_rollout` on MJX). Each rollout
continues from the last one's states; the first call (compile) is timed apart, then
`--repeats` calls: env-steps/s of the median call. No PPO update: the update is the same
for every engine. Writes DIR/pipelined_rollout.json and prints each row as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from modular_ppo.headless import prepare_process

prepare_process()  # an entry point: MUJOCO_GL and MJX's quiet import before anything imports MuJoCo

import jax  # noqa: E402
from flax import nnx  # noqa: E402

from modular_ppo.body import load_body  # noqa: E402
from modular_ppo.env import EnvConfig, make_env  # noqa: E402
from modular_ppo.networks import NetworkConfig, make_network  # noqa: E402
from modular_ppo.ppo.pipelined_rollout import collect_pipelined  # noqa: E402
from modular_ppo.ppo.rollout import collect_rollout  # noqa: E402

BODY = "ant-modular"
ENGINES = ("cpu-pipelined", "cpu", "mjx")


def measure(engine: str, n_envs: int, length: int, repeats: int) -> dict:
    """One engine's row: compile (first call) seconds and env-steps/s of the median call."""
    body = load_body(BODY)
    env = make_env(body, EnvConfig(), "mjx" if engine == "mjx" else "cpu")
    network = make_network(body, env.obs_sizes, NetworkConfig(), rngs=nnx.Rngs(0))
    graphdef, network_state = nnx.split(network)
    carry = (network_state,
             jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.key(0), n_envs)),
             network.initialize_state(n_envs))
    collect = (collect_pipelined if engine == "cpu-pipelined"
               else jax.jit(collect_rollout, static_argnums=(0, 1, 5)))
    seconds = []
    for _ in range(repeats + 1):
        started = time.perf_counter()
        network_state, env_state, recurrent, rollout = collect(env, graphdef, *carry, length)
        jax.block_until_ready(rollout)
        seconds.append(time.perf_counter() - started)
        carry = (network_state, env_state, recurrent)
    return dict(engine=engine, n_envs=n_envs, length=length, first_call_s=seconds[0],
                call_s=statistics.median(seconds[1:]),
                steps_per_s=n_envs * length / statistics.median(seconds[1:]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-envs", type=int, nargs="+", default=[4096, 8192])
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--length", type=int, default=16, help="steps per rollout")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls after the first")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/pipelined"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    record = dict(device=jax.devices()[0].device_kind, platform=jax.default_backend(),
                  host_cores=len(os.sched_getaffinity(0)), load_before=os.getloadavg(),
                  rows=[])
    for engine in args.engines:  # engine by engine: a run cut short keeps the first's rows
        for n_envs in args.n_envs:
            row = measure(engine, n_envs, args.length, args.repeats)
            record["rows"].append(dict(row, load=os.getloadavg()[0]))
            print(json.dumps(row), flush=True)
            (args.out / "pipelined_rollout.json").write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
