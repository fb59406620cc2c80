"""Where an env step of the CPU backend goes (issue 15): CPU time of the same jitted rollout of
random actions with parts of the step taken out.

    python benchmarks/env_step_profile.py                  # ant-modular, 64 envs x 32 steps
    python benchmarks/env_step_profile.py --actions zero   # standing still: no episode ends
    python benchmarks/env_step_profile.py --body centipede-6 --n-envs 256

Variants, each a jitted `lax.scan` of `vmap(env.step)` over 32 steps, timed in turn:
1. as committed: MuJoCo's C simulator behind a host call per step (host_call.py), and a second one
   that restarts the environments whose episode ended, made only on steps where one did
   (random actions topple the ant within tens of steps: most steps have one);
2. without the restart callback (no environment restarts: the rest as in 1);
3. the step host call returning its inputs instead of stepping MuJoCo (the call's own
   cost: transfers of every state and derived field, numpy conversions), no restart;
4. no callbacks: the JAX side alone (actions, rewards, termination, observations).
So 1 - 2 is the restart, 2 - 3 MuJoCo's stepping (with the kinematics at the new state that
observations read), 3 - 4 the callback machinery. Prints process CPU ms per rollout (median
of 30 calls; less sensitive than wall time to other processes) and wall ms, and where
environments restart, the share of steps on which some environment's episode ended.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.env.cpu_simulator import DERIVED_FIELDS, STATE_FIELDS, CpuData, CpuPhysics
from modular_ppo.env.host_call import host_call, register

STEPS = 32
FIELDS = STATE_FIELDS + DERIVED_FIELDS


class _Echo:
    def arrays(self, *arrays):
        return arrays


_ECHO = _Echo()
register("env_step_profile/echo", _ECHO, "arrays")


def echo_step(self: CpuPhysics, data: CpuData, ctrl) -> CpuData:
    """A host call with the real one's inputs and outputs that does not step MuJoCo."""
    fields = [jnp.asarray(getattr(data, name), jnp.float32) for name in FIELDS]
    out = host_call("env_step_profile/echo",
                    tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in fields), *fields)
    return CpuData(**dict(zip(FIELDS, out)))


VARIANTS = {
    "as committed": {},
    "without the restart callback": {"restart_where": lambda self, done, data, *pose: data},
    "echo callback instead of MuJoCo, no restart": {
        "restart_where": lambda self, done, data, *pose: data, "step": echo_step},
    "no callbacks (the JAX side alone)": {
        "restart_where": lambda self, done, data, *pose: data,
        "step": lambda self, data, ctrl: data},
}


def rollout_times(
    body_name: str, n_envs: int, actions: str, calls: int = 30
) -> tuple[float, float, float]:
    """Median process CPU s and wall s of one jitted 32-step rollout of random (or zero)
    actions, and the share of steps on which some environment was done."""
    env = make_env(load_body(body_name), EnvConfig(), "cpu")
    sizes = dict(env.action_sizes)

    @jax.jit
    def run(state, key):
        def step(state, key):
            keys = jax.random.split(key, len(sizes))
            action = {m: jax.random.uniform(k, (n_envs, n), minval=-1.0, maxval=1.0)
                      for (m, n), k in zip(sizes.items(), keys)}
            if actions == "zero":
                action = jax.tree.map(jnp.zeros_like, action)
            state = jax.vmap(env.step)(state, action)
            return state, jnp.any(state.done > 0)

        return jax.lax.scan(step, state, jax.random.split(key, STEPS))

    state = jax.vmap(env.reset)(jax.random.split(jax.random.key(0), n_envs))
    state = jax.block_until_ready(run(state, jax.random.key(1))[0])
    cpu, wall, ended = [], [], []
    for i in range(calls):
        c, w = time.process_time(), time.perf_counter()
        state, any_done = jax.block_until_ready(run(state, jax.random.key(i)))
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
        ended.append(float(any_done.mean()))
    return statistics.median(cpu), statistics.median(wall), statistics.mean(ended)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body", default="ant-modular")
    parser.add_argument("--n-envs", type=int, default=64)
    parser.add_argument("--actions", choices=("random", "zero"), default="random")
    args = parser.parse_args()
    print(f"{args.body}, CPU backend, {args.n_envs} envs x {STEPS} steps of {args.actions} "
          "actions")
    print("| variant | CPU ms per rollout | wall ms | env steps per CPU-s | steps with an "
          "episode end |\n|---|---|---|---|---|")
    originals = {name: getattr(CpuPhysics, name) for name in ("step", "restart_where")}
    for variant, replaced in VARIANTS.items():
        for name, function in {**originals, **replaced}.items():
            setattr(CpuPhysics, name, function)
        cpu, wall, ended = rollout_times(args.body, args.n_envs, args.actions)
        restarts = "restart_where" not in replaced
        print(f"| {variant} | {cpu * 1e3:.1f} | {wall * 1e3:.1f} | "
              f"{args.n_envs * STEPS / cpu:,.0f} | {f'{ended:.0%}' if restarts else '-'} |",
              flush=True)
    for name, function in originals.items():
        setattr(CpuPhysics, name, function)


if __name__ == "__main__":
    main()
