"""Where a mixed-body iteration's extra time goes (issue 16): wall and process CPU ms per
training iteration, and CPU ms of each body's rollout, mixed against each body alone with the
same network (the runs timed in interleaved rounds, so load changes fall on all alike); then
each body's env stepped alone at 32 and 64 envs (zero actions), and MuJoCo's batch with one
thread against the default.

    taskset -c 1 python benchmarks/mixed_body_profile.py                # centipede-4,centipede-6
    taskset -c 1 python benchmarks/mixed_body_profile.py --bodies centipede-4,centipede-8
    taskset -c 1 python benchmarks/mixed_body_profile.py --steps-only --n-envs 256
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


@dataclasses.dataclass
class Timed:
    """A function of a state (a training state, env states, simulator fields) and its
    timings, ms per call."""

    call: object
    wall: list[float] = dataclasses.field(default_factory=list)
    cpu: list[float] = dataclasses.field(default_factory=list)

    def time_once(self, state):
        wall, cpu = time.perf_counter(), time.process_time()
        out = jax.block_until_ready(self.call(state))
        self.cpu.append((time.process_time() - cpu) * 1e3)
        self.wall.append((time.perf_counter() - wall) * 1e3)
        return out

    def median_cpu_ms(self, state, repeats: int) -> float:
        """Median CPU ms of `repeats` calls, each continuing from the last one's output."""
        for _ in range(repeats):
            state = self.time_once(state)
        return statistics.median(self.cpu)


@dataclasses.dataclass
class Profiled:
    """One run's compiled training step and each body's compiled rollout, at a state one
    step into training."""

    name: str
    steps_per_iteration: int
    state: object
    step: Timed
    rollouts: dict[str, Timed]
    network: NetworkConfig
    """The network config the run resolved (max sizes), for the single-body runs to share."""


def profiled_run(body: str, network: NetworkConfig, n_envs: int) -> Profiled:
    config = TrainRunConfig(body=body, network=network, ppo=dataclasses.replace(
        default_ppo_config("cpu"), n_envs=n_envs, total_steps=10**6))
    run = build_run(config)
    ppo = run.config.ppo
    step = train_step.lower(run.groups, ppo, run.state).compile()
    state = jax.block_until_ready(step(run.state)[0])
    rollouts = {
        g.name: Timed(jax.jit(lambda s, g=g: collect_rollout(
            g.env, g.graphdef, s.network_state(g.name), s.groups[g.name].env_state,
            s.groups[g.name].recurrent, ppo.rollout_length)[3]).lower(state).compile())
        for g in run.groups
    }
    return Profiled(body, ppo.steps_per_iteration * ppo.iterations_per_call, state,
                    Timed(lambda s: step(s)[0]), rollouts, run.config.network)


def interleaved_rounds(runs: list[Profiled], rounds: int) -> None:
    """Each round times one training step of every run in turn (then each body's rollout
    alone), so a change of load during the measurement falls on every run alike. The
    training steps always continue from the state the previous one returned."""
    for _ in range(rounds):
        for run in runs:
            run.state = run.step.time_once(run.state)
            for rollout in run.rollouts.values():
                rollout.time_once(run.state)


def profile_table(runs: list[Profiled]) -> None:
    median = statistics.median
    print("| CPU ms per iteration | rollout(s) | update | total | wall ms | env-steps/s (wall) |\n"
          "|---|---|---|---|---|---|")
    for run in runs:
        rollouts = [median(r.cpu) for r in run.rollouts.values()]
        total, wall = median(run.step.cpu), median(run.step.wall)
        print(f"| {run.name} | " + " + ".join(f"{v:.0f}" for v in rollouts)
              + f" | {total - sum(rollouts):.0f} | {total:.0f} | {wall:.0f} | "
              f"{run.steps_per_iteration / wall * 1e3:,.0f} |", flush=True)
    mixed, single = runs[0], runs[1:]
    for clock in ("wall", "cpu"):
        speed = {run.name: run.steps_per_iteration / median(getattr(run.step, clock))
                 for run in runs}
        alone = [speed[run.name] for run in single]
        print(f"\nmixed / mean of the single-body runs ({clock} clock): "
              f"{speed[mixed.name] / statistics.mean(alone):.3f}; / harmonic mean: "
              f"{speed[mixed.name] / statistics.harmonic_mean(alone):.3f}")


def env_stepping(name: str, n_envs: int) -> float:
    env = make_env(load_body(name), EnvConfig(), "cpu")
    zero = {m: jnp.zeros((n_envs, k)) for m, k in env.action_sizes.items()}

    @jax.jit
    def run(state):
        return jax.lax.scan(lambda s, _: (jax.vmap(env.step)(s, zero), None), state,
                            length=32)[0]

    first = jax.block_until_ready(
        run(jax.vmap(env.reset)(jax.random.split(jax.random.key(0), n_envs))))
    return Timed(run).median_cpu_ms(first, 20)


def mujoco_step_ms(name: str, n_envs: int, nthread: int) -> float:
    body = load_body(name)
    simulator = ThreadedSimulator(body.model, body.frame_skip, nthread)
    fields = simulator.start(np.tile(body.init_qpos, (n_envs, 1)),
                             np.zeros((n_envs, body.model.nv)))
    step = Timed(lambda state: list(simulator.step(*state)[:len(STATE_FIELDS)]))
    return step.median_cpu_ms(list(fields[:len(STATE_FIELDS)]), 200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", default="centipede-4,centipede-6")
    parser.add_argument("--rounds", type=int, default=30,
                        help="interleaved rounds of one training step of every run")
    parser.add_argument("--n-envs", type=int, default=default_ppo_config("cpu").n_envs,
                        help="environments of every run, the mixed run's split evenly "
                             "between its bodies (default: the CLI's)")
    parser.add_argument("--steps-only", action="store_true",
                        help="only the training steps, not the env stepping and thread counts")
    args = parser.parse_args()
    bodies = args.bodies.split(",")
    mixed = profiled_run(args.bodies, NetworkConfig(arch="shared"), args.n_envs)
    runs = [mixed, *(profiled_run(body, mixed.network, args.n_envs) for body in bodies)]
    interleaved_rounds(runs, args.rounds)
    profile_table(runs)
    if args.steps_only:
        return
    print("\n| env, zero actions | CPU ms per 32 steps, 32 envs | 64 envs |\n|---|---|---|")
    for body in bodies:
        print(f"| {body} | {env_stepping(body, 32):.1f} | {env_stepping(body, 64):.1f} |",
              flush=True)
    print("\n| MuJoCo batch step, CPU ms per call | nthread | 32 envs | 64 envs |\n"
          "|---|---|---|---|")
    for nthread in (2, 1):
        print(f"| {bodies[0]} | {nthread} | {mujoco_step_ms(bodies[0], 32, nthread):.2f} | "
              f"{mujoco_step_ms(bodies[0], 64, nthread):.2f} |", flush=True)


if __name__ == "__main__":
    main()
