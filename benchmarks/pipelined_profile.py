"""Where a half-step of `--backend cpu-pipelined` goes: its parts timed alone, the loop
timed with its host-side parts, and a `jax.profiler` trace of one rollout.

    python benchmarks/pipelined_profile.py --n-envs 4096 --out DIR [--trace] [--threads 0 12]

ant-modular, the CLI's default network, `--length` steps per rollout. For each thread
count of the host's simulator (0: one per core):
- parts alone, median of `--repeats` calls on one half's arrays (n / 2 envs): the C
  simulator's step (`host_step_s`) and fresh starts (`host_start_s`) as the jitted CPU
  backend calls them, the pipelined host step with both (`host_s`: `step_on_host`, one
  array in and one out); the copy of its request off the device (`d2h_s`) and of its
  result onto it (`h2d_s`); the device's part of a step with its inputs there
  (`device_s`: the env's step ended and the next begun) and what dispatching it costs
  the host (`dispatch_s`);
- the loop (`collect_pipelined`, median call): env-steps/s; per half-step its seconds
  (`half_step_s`), the physics thread's seconds in `step_on_host` (`loop_host_s`) and
  waiting for the device's inputs before it (`loop_host_wait_s`), the main thread's in
  dispatching the device's part (`loop_dispatch_s`); the share of the call the physics
  thread steps (`physics_busy`: 1 when the host's physics never waits).
With --trace, DIR/trace holds a `jax.profiler` trace of one rollout (TensorBoard's or
Perfetto's viewer). Writes DIR/pipelined_profile.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from modular_ppo.headless import prepare_process

prepare_process()  # an entry point: MUJOCO_GL and MJX's quiet import before anything imports MuJoCo

import jax  # noqa: E402
import numpy as np  # noqa: E402
from flax import nnx  # noqa: E402

from modular_ppo.body import load_body  # noqa: E402
from modular_ppo.env import EnvConfig, make_env  # noqa: E402
from modular_ppo.env.cpu_simulator import STATE_FIELDS, CpuPhysics  # noqa: E402
from modular_ppo.networks import NetworkConfig, make_network  # noqa: E402
from modular_ppo.ppo import pipelined_rollout as pipelined  # noqa: E402

BODY = "ant-modular"


def median_s(call: Callable[[], object], repeats: int) -> float:
    """Median seconds of `call()` over `repeats` calls after one untimed call."""
    call()
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def setup(n_envs: int, threads: int):
    body = load_body(BODY)
    env = make_env(body, EnvConfig(), "cpu", nthread=threads)
    network = make_network(body, env.obs_sizes, NetworkConfig(), rngs=nnx.Rngs(0))
    graphdef, network_state = nnx.split(network)
    env_state = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.key(0), n_envs))
    return env, graphdef, network_state, env_state, network.initialize_state(n_envs)


def parts_alone(env, graphdef, network_state, env_state, recurrent, repeats: int) -> dict:
    """The parts of one half-step, each timed alone on one half's arrays."""
    size = env_state.done.shape[0] // 2
    env_half, recurrent_half = pipelined._split(size, (env_state, recurrent))[0]
    steps = pipelined.device_steps(env, graphdef, jax.tree.structure(network_state))
    half = jax.block_until_ready(steps.act(jax.tree.leaves(network_state), env_half,
                                           recurrent_half))
    request = np.asarray(half.host_request)
    physics, simulator = env.physics, env.physics.simulator
    result = physics.step_on_host(request)
    state = [np.asarray(getattr(half.env_state.data, name)) for name in STATE_FIELDS[:-1]]
    ctrl, qpos = np.asarray(half.request.ctrl), np.asarray(half.request.start_qpos)
    qvel = np.asarray(half.request.start_qvel)

    def fresh_d2h():
        array = jax.block_until_ready(half.host_request + 0)
        started_at = time.perf_counter()
        np.asarray(array)
        return time.perf_counter() - started_at

    on_device = jax.block_until_ready(jax.device_put(result))
    advance = lambda: steps.advance(half, on_device)  # noqa: E731
    jax.block_until_ready(advance())
    dispatch = []
    for _ in range(repeats):
        started_at = time.perf_counter()
        out = advance()
        dispatch.append(time.perf_counter() - started_at)
        jax.block_until_ready(out)
    return dict(
        half_envs=size,
        host_step_s=median_s(lambda: simulator.step(*state, ctrl), repeats),
        host_start_s=median_s(lambda: simulator.start(qpos, qvel), repeats),
        host_s=median_s(lambda: physics.step_on_host(request), repeats),
        d2h_s=statistics.median(fresh_d2h() for _ in range(repeats)),
        h2d_s=median_s(lambda: jax.block_until_ready(jax.device_put(result)), repeats),
        device_s=median_s(lambda: jax.block_until_ready(advance()), repeats),
        dispatch_s=statistics.median(dispatch),
        request_bytes=request.nbytes, result_bytes=result.nbytes,
    )


class Timed:
    """A function wrapped to add its seconds to `total` at every call."""

    def __init__(self, function: Callable):
        self.function, self.total, self.calls = function, 0.0, 0

    def __call__(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.total += time.perf_counter() - started
            self.calls += 1


def loop(env, graphdef, network_state, env_state, recurrent, length: int, repeats: int,
         trace_dir: Path | None) -> dict:
    """The loop's median call, with its parts (module docstring)."""
    carry = (network_state, env_state, recurrent)
    seconds, parts = [], []
    physics, originals = env.physics, (pipelined._physics, pipelined.device_steps)
    try:
        for call in range(repeats + 1):
            timed = dict(host=Timed(CpuPhysics.step_on_host.__get__(physics)),
                         physics=Timed(originals[0]))
            physics.step_on_host, pipelined._physics = timed["host"], timed["physics"]

            def timed_steps(*args):
                steps = originals[1](*args)
                timed["advance"] = Timed(steps.advance)
                return dataclasses.replace(steps, advance=timed["advance"])

            pipelined.device_steps = timed_steps
            started = time.perf_counter()
            *carry, rollout = pipelined.collect_pipelined(env, graphdef, *carry, length)
            jax.block_until_ready(rollout)
            if call:
                seconds.append(time.perf_counter() - started)
                parts.append({name: part.total for name, part in timed.items()})
    finally:
        del physics.step_on_host
        pipelined._physics, pipelined.device_steps = originals
    if trace_dir is not None:
        with jax.profiler.trace(str(trace_dir), create_perfetto_trace=True):
            *carry, rollout = pipelined.collect_pipelined(env, graphdef, *carry, length)
            jax.block_until_ready(rollout)
    call_s, halves = statistics.median(seconds), 2 * length
    part_s = {name: statistics.median(p[name] for p in parts) / halves for name in parts[0]}
    return dict(steps_per_s=env_state.done.shape[0] * length / call_s,
                half_step_s=call_s / halves, loop_host_s=part_s["host"],
                loop_host_wait_s=part_s["physics"] - part_s["host"],
                loop_dispatch_s=part_s["advance"],
                physics_busy=part_s["host"] * halves / call_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-envs", type=int, default=4096)
    parser.add_argument("--length", type=int, default=16, help="steps per rollout")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, nargs="+", default=[0],
                        help="host simulator threads to try (0: one per core)")
    parser.add_argument("--trace", action="store_true", help="write a jax.profiler trace")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/pipelined"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    record = dict(device=jax.devices()[0].device_kind, platform=jax.default_backend(),
                  host_cores=len(os.sched_getaffinity(0)), load_before=os.getloadavg(),
                  n_envs=args.n_envs, length=args.length, rows=[])
    for index, threads in enumerate(args.threads):
        arrays = setup(args.n_envs, threads)
        trace = args.out / "trace" if args.trace and index == 0 else None
        row = dict(threads=threads, **parts_alone(*arrays, args.repeats),
                   **loop(*arrays, args.length, args.repeats, trace), load=os.getloadavg()[0])
        record["rows"].append(row)
        print(json.dumps(row), flush=True)
        (args.out / "pipelined_profile.json").write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
