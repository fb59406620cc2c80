"""What N seeds in one program cost against one seed (`modular_ppo.ppo.seeds`).

    taskset -c 1 python benchmarks/seeds.py --body ant-modular --seeds 5 --envs-per-seed 64
    python benchmarks/seeds.py --backend mjx --seeds 5 --envs-per-seed 64 --calls 3
    python benchmarks/seeds.py --backend cpu-pipelined --device-share 0.4 --seeds 5 \
        --envs-per-seed 4096 --calls 3       # an accelerator with host cores to spare

Runs, each in a process of its own (no compile cache carried over): one seed with
seeds x envs-per-seed environments (the same total env count), and N seeds with
envs-per-seed each in one program. Prints one JSON line per run (compile seconds, wall and
CPU; env-steps/s over every seed, per wall and per CPU second, from the median of
`--calls` timed calls after the first) and the ratios N seeds / one seed. On
`cpu-pipelined` the one seed is the pipelined step of one training state (as a run of
`--seed` trains), the N seeds its seeded form. CLI defaults
otherwise (`default_ppo_config`, the default network). The machine's load average is
printed with each run: other processes share the cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time


def measure(body: str, backend: str, n_seeds: int, n_envs: int, calls: int,
            device_share: float = 0.0) -> dict:
    """Compile seconds and env-steps/s (all seeds) of `n_seeds` x `n_envs` environments."""
    import jax
    from flax import nnx

    from modular_ppo.body import load_body
    from modular_ppo.env import EnvConfig, make_env
    from modular_ppo.networks import NetworkConfig, make_network
    from modular_ppo.ppo import default_ppo_config, new_training_state
    from modular_ppo.ppo.pipelined_step import pipelined_train_step
    from modular_ppo.ppo.seeds import new_seed_states, train_step_seeds

    graph = load_body(body)
    pipelined = backend == "cpu-pipelined"
    env = make_env(graph, EnvConfig(), "cpu" if pipelined else backend)
    config = dataclasses.replace(default_ppo_config(), n_envs=n_envs)

    def bodies(seed):
        return [(env, make_network(graph, env.obs_sizes, NetworkConfig(), rngs=nnx.Rngs(seed)))]

    if pipelined and n_seeds == 1:
        groups, states = new_training_state(bodies(0), config, 0)
    else:
        groups, states = new_seed_states(bodies, config, list(range(n_seeds)))
    started, cpu_started = time.perf_counter(), time.process_time()
    if pipelined:
        step = pipelined_train_step(groups, config, states, device_share, seeded=n_seeds > 1)
    else:
        step = train_step_seeds.lower(groups, config, states).compile()
    compile_s, compile_cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
    states, metrics = step(states)
    jax.block_until_ready(metrics)
    seconds, cpu_seconds = [], []
    for _ in range(calls):
        started, cpu_started = time.perf_counter(), time.process_time()
        states, metrics = step(states)
        jax.block_until_ready(metrics)
        seconds.append(time.perf_counter() - started)
        cpu_seconds.append(time.process_time() - cpu_started)
    steps = n_seeds * config.iterations_per_call * config.steps_per_iteration
    return {"body": body, "backend": backend, "device_share": device_share,
            "seeds": n_seeds, "envs_per_seed": n_envs,
            "compile_s": round(compile_s, 2), "compile_cpu_s": round(compile_cpu_s, 2),
            "env_steps_per_s": round(steps / statistics.median(seconds)),
            "env_steps_per_cpu_s": round(steps / statistics.median(cpu_seconds)),
            "calls_s": [round(s, 3) for s in seconds], "load": os.getloadavg()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body", default="ant-modular")
    parser.add_argument("--backend", default="cpu", choices=["cpu", "mjx", "cpu-pipelined"])
    parser.add_argument("--device-share", type=float, default=0.0,
                        help="cpu-pipelined: the share of the envs on MJX")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--envs-per-seed", type=int, default=64)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--run", nargs=2, type=int, metavar=("SEEDS", "ENVS"),
                        help=argparse.SUPPRESS)  # one measurement, in this process
    args = parser.parse_args()
    if args.run:
        print(json.dumps(measure(args.body, args.backend, *args.run, args.calls,
                                 args.device_share)), flush=True)
        return
    results = []
    for n_seeds, n_envs in ((1, args.seeds * args.envs_per_seed), (args.seeds, args.envs_per_seed)):
        out = subprocess.run(
            [sys.executable, __file__, "--body", args.body, "--backend", args.backend,
             "--device-share", str(args.device_share), "--calls", str(args.calls),
             "--run", str(n_seeds), str(n_envs)],
            check=True, capture_output=True, text=True).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), flush=True)
    one, many = results
    print(f"{args.seeds} seeds / one seed at {args.seeds * args.envs_per_seed} envs in all: "
          f"env-steps/s {many['env_steps_per_s'] / one['env_steps_per_s']:.3f}, per CPU-second "
          f"{many['env_steps_per_cpu_s'] / one['env_steps_per_cpu_s']:.3f}, "
          f"compile {many['compile_s']:.1f} s vs {one['compile_s']:.1f} s (CPU seconds "
          f"{many['compile_cpu_s']:.1f} vs {one['compile_cpu_s']:.1f})")


if __name__ == "__main__":
    main()
