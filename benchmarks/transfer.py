"""Zero-shot transfer and multi-body throughput: one shared network trained on centipede-4
and centipede-6, evaluated on centipede-8, which it never saw.

    python benchmarks/transfer.py                 # appends a section to BENCHMARKS.md
    python benchmarks/transfer.py --steps 100000 --no-append
    python benchmarks/transfer.py --arch attention --morphology policy_and_value --hop-bias 3

Trains, with the same network and PPO settings and the same number of env steps:
(1) centipede-4 + centipede-6 together (half the environments each), (2) centipede-8
alone. Evaluates on centipede-8: (1) zero-shot (its parameters unchanged; the observation
normalizer from the policy's own warm-up steps, `eval --body`), (2) the policy trained on
it, and a uniformly random policy. Throughput: env-steps/s of the mixed run against short
single-body runs of centipede-4 and centipede-6 with the same total number of
environments (median over the calls after the first, compile excluded). `--arch`,
`--morphology` and `--hop-bias` set the network of every run (NetworkConfig.arch,
.morphology, .attention.hop_bias): run the script once per setting to compare them.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import io
import json
import os
import statistics
import tempfile
import typing
from pathlib import Path

import jax
import jax.numpy as jnp
from report import cpu_model  # benchmarks/report.py, beside this script
from rich.console import Console

from modular_ppo.body import load_body
from modular_ppo.commands import EvalCommand, evaluate_run
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.networks import AttentionConfig, NetworkConfig
from modular_ppo.networks.config import Morphology
from modular_ppo.ppo import EvalConfig, default_ppo_config
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.run_dir import read_metrics
from modular_ppo.runs.train_run import run_training

ROOT = Path(__file__).resolve().parents[1]

TRAIN_ON, TARGET = "centipede-4,centipede-6", "centipede-8"
EPISODES = 32


def train(body: str, steps: int, root: Path, name: str, network: NetworkConfig) -> Path:
    config = TrainRunConfig(
        body=body, network=network, ppo=dataclasses.replace(default_ppo_config("cpu"), total_steps=steps),
        env=EnvConfig(episode_length=1000), eval=EvalConfig(n_envs=8),
        eval_every_steps=0, checkpoint_every_steps=0, video=False, runs_root=root,
        run_name=name,
    )
    return run_training(config, Console(file=io.StringIO()))


def throughput(run_dir: Path) -> float:
    """Median env-steps/s over the run's calls, the first (compiling) one left out."""
    rows = [r["throughput/env_steps_per_s"] for r in read_metrics(run_dir)
            if "throughput/env_steps_per_s" in r]
    return statistics.median(rows[1:] or rows)


def random_policy_return(body_name: str, episodes: int, seed: int) -> float:
    """Team return of uniformly random actions in [-1, 1], one full episode per env."""
    env = make_env(load_body(body_name), EnvConfig(episode_length=1000), "auto")

    @jax.jit
    def run(key):
        reset_key, action_key = jax.random.split(key)
        state = jax.vmap(env.reset)(jax.random.split(reset_key, episodes))

        def step(carry, key):
            state, running = carry
            keys = jax.random.split(key, len(env.action_sizes))
            actions = {m: jax.random.uniform(k, (episodes, n), minval=-1.0, maxval=1.0)
                       for (m, n), k in zip(env.action_sizes.items(), keys)}
            state = jax.vmap(env.step)(state, actions)
            reward = running * sum(state.reward.values())
            return (state, running * (1.0 - state.done)), reward

        _, rewards = jax.lax.scan(step, (state, jnp.ones(episodes)),
                                  jax.random.split(action_key, env.episode_length))
        return jnp.mean(jnp.sum(rewards, axis=0))

    return float(run(jax.random.key(seed)))


def team_returns(results: dict) -> tuple[float, float, float, float]:
    """Team return (deterministic, stochastic), episode length and forward velocity
    (deterministic)."""
    det, sto = results["deterministic"], results["stochastic"]
    return (det["episode/team_return"], sto["episode/team_return"], det["episode/length"],
            det["episode/forward_velocity"])


def _parser() -> argparse.ArgumentParser:
    """The command line of this script."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1_500_000,
                        help="env steps of each of the two training runs")
    parser.add_argument("--throughput-steps", type=int, default=20_480,
                        help="env steps of each short single-body throughput run")
    parser.add_argument("--throughput-only", action="store_true",
                        help="only the short throughput runs (mixed and single-body, in turn)")
    parser.add_argument("--arch", choices=("shared", "graph", "attention"), default="shared",
                        help="the network architecture of every run")
    parser.add_argument("--morphology", choices=typing.get_args(Morphology), default="none",
                        help="which streams' module tokens carry the morphology features")
    parser.add_argument("--hop-bias", type=int, default=None,
                        help="with --arch attention: a learned attention bias by hop distance "
                             "0..HOP_BIAS (default: none)")
    parser.add_argument("--no-append", action="store_true", help="print only")
    return parser


def main() -> None:
    """Run what the flags ask for, print its figures and append its section to BENCHMARKS.md."""
    args = _parser().parse_args()
    load_before = os.getloadavg()
    started = dt.datetime.now(dt.timezone.utc)
    # Same sizes in every run, so the centipede-8 policy has the same network.
    network = NetworkConfig(arch=args.arch, morphology=args.morphology,
                            attention=AttentionConfig(hop_bias=args.hop_bias),
                            max_modules=18, max_obs_size=179, max_action_size=3)
    console = Console(file=io.StringIO())
    if args.throughput_only:
        with tempfile.TemporaryDirectory() as tmp:
            speeds = short_run_speeds(args.throughput_steps, Path(tmp), network)
        section = throughput_report(args, started, load_before, os.getloadavg(), speeds)
        print(section)
        if not args.no_append:
            with open(ROOT / "BENCHMARKS.md", "a") as f:
                f.write(section)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        mixed = train(TRAIN_ON, args.steps, root, "mixed", network)
        alone = train(TARGET, args.steps, root, "alone", network)
        speeds = {**short_run_speeds(args.throughput_steps, root, network),
                  TARGET: throughput(alone)}
        zero_shot = evaluate_run(EvalCommand(mixed, EPISODES, body=TARGET), console)[TARGET]
        trained = evaluate_run(EvalCommand(alone, EPISODES), console)[TARGET]
    random_return = random_policy_return(TARGET, EPISODES, seed=2)
    load_after = os.getloadavg()

    figures = {
        "zero_shot": team_returns(zero_shot),
        "trained_on_target": team_returns(trained),
        "random_return": random_return,
        "env_steps_per_s": speeds,
    }
    print(json.dumps(figures, indent=2))
    if args.no_append:
        return
    section = report(args, started, load_before, load_after, figures)
    with open(ROOT / "BENCHMARKS.md", "a") as f:
        f.write(section)
    print(section)


def short_run_speeds(steps: int, root: Path, network: NetworkConfig) -> dict[str, float]:
    """Env-steps/s of short runs made one after the other, so under the same load: the
    mixed run, then each body alone with the same total number of environments."""
    runs = {"mixed": train(TRAIN_ON, steps, root, "mixed-speed", network)}
    runs.update({body: train(body, steps, root, f"{body}-speed", network)
                 for body in TRAIN_ON.split(",")})
    return {name: throughput(run) for name, run in runs.items()}


def throughput_lines(steps: int, speeds: dict[str, float]) -> list[str]:
    single = {b: speeds[b] for b in TRAIN_ON.split(",")}
    return [
        f"Training throughput (env-steps/s, median over calls after the first; short runs of "
        f"{steps:,} steps made one after the other, 64 envs in all):",
        "",
        "| run | env-steps/s |",
        "|---|---|",
        f"| {TRAIN_ON} mixed (one jitted step, 32 envs of each body) | {speeds['mixed']:,.0f} |",
        *(f"| {b} alone (64 envs) | {v:,.0f} |" for b, v in single.items()),
        *([f"| {TARGET} alone (the long run) | {speeds[TARGET]:,.0f} |"]
          if TARGET in speeds else []),
        "",
        f"Mixed / mean of the single-body runs it combines: "
        f"{speeds['mixed'] / statistics.mean(single.values()):.2f}.",
        "",
    ]


def throughput_report(args, started, load_before, load_after, speeds) -> str:
    return "\n".join([
        "",
        f"### Multi-body training throughput ({started:%Y-%m-%d %H:%M} UTC)",
        "",
        f"Command: `python benchmarks/transfer.py --throughput-only{network_flags(args)}`. "
        f"{_hardware()}; load "
        f"average {load_before[0]:.1f} before, {load_after[0]:.1f} after.",
        "",
        *throughput_lines(args.throughput_steps, speeds),
    ])


def network_flags(args) -> str:
    """The network flags of the command line, those left at their defaults omitted."""
    return ((f" --arch {args.arch}" if args.arch != "shared" else "")
            + (f" --morphology {args.morphology}" if args.morphology != "none" else "")
            + (f" --hop-bias {args.hop_bias}" if args.hop_bias is not None else ""))


def _hardware() -> str:
    return f"Hardware: {cpu_model()}, {os.cpu_count()} cores, JAX {jax.__version__} on CPU, CPU backend"


def report(args, started, load_before, load_after, figures) -> str:
    zs, tr = figures["zero_shot"], figures["trained_on_target"]
    speeds = figures["env_steps_per_s"]
    command = "python benchmarks/transfer.py" + (
        f" --steps {args.steps}" if args.steps != 1_500_000 else "") + network_flags(args)
    lines = [
        "",
        f"## Zero-shot transfer: {TRAIN_ON} -> {TARGET} ({started:%Y-%m-%d %H:%M} UTC)",
        "",
        f"Command: `{command}`. {_hardware()}; load average {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after (the machine was shared with other jobs).",
        "",
        f"Both policies: --arch {args.arch} (64, 64), morphology features: {args.morphology}"
        f"{'' if args.hop_bias is None else f', attention hop bias 0..{args.hop_bias}'}, "
        "max sizes 18 modules / 179 obs / 3 actions, "
        "the CLI's CPU defaults (`default_ppo_config`: 64 envs x 32 steps, 4 epochs x 4 "
        "minibatches, gamma 0.97, team advantage), episodes of 1000 steps, "
        f"**{args.steps:,} env steps** each (the mixed run: 32 envs of each body, equal loss "
        f"shares). Evaluation on {TARGET}: {EPISODES} episodes of up to 1000 steps; the "
        "zero-shot policy's normalizer statistics come from 4,096 warm-up steps of its own "
        "actions on the new body (no reward, no parameter change).",
        "",
        f"| policy on {TARGET} | team return (deterministic) | team return (stochastic) "
        "| episode length (deterministic) | forward velocity (deterministic) |",
        "|---|---|---|---|---|",
        f"| zero-shot, trained on {TRAIN_ON} | {zs[0]:.1f} | {zs[1]:.1f} | {zs[2]:.0f} "
        f"| {zs[3]:.2f} |",
        f"| trained on {TARGET} alone, same steps | {tr[0]:.1f} | {tr[1]:.1f} | {tr[2]:.0f} "
        f"| {tr[3]:.2f} |",
        f"| uniformly random actions | {figures['random_return']:.1f} | - | - | - |",
        "",
        *(["Where the forward velocities are near 0 neither policy walks yet: the team "
           "returns then measure staying upright (alive bonus, 1 per step, until the "
           "episode ends) minus control cost.", ""]
          if max(abs(zs[3]), abs(tr[3])) < 0.1 else []),
        *throughput_lines(args.throughput_steps, speeds),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
