"""`eval`: a run's latest checkpoint evaluated per module, on its bodies or another."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from rich.console import Console

from modular_ppo.commands.errors import CommandError
from modular_ppo.commands.tables import table
from modular_ppo.compile_cache import CompileCacheConfig, CompileCacheFlags
from modular_ppo.env import Backend, make_env
from modular_ppo.output_paths import output_file
from modular_ppo.ppo import EvalConfig, episode_ends, make_evaluator
from modular_ppo.runs.atomic_write import write_atomically
from modular_ppo.runs.build import restore_run
from modular_ppo.runs.config import StatisticsSource
from modular_ppo.runs.metrics_log import to_floats
from modular_ppo.runs.transfer import (
    DEFAULT_WARMUP_STEPS,
    policy_on_body,
    trained_policies,
    transfer_key,
)

MAX_EPISODES = 100_000
"""The most episodes per mode: each is one environment, all stepped side by side."""
MAX_WARMUP_STEPS = 1_000_000_000


@dataclasses.dataclass(frozen=True)
class EvalCommand:
    """Evaluate a run's latest checkpoint: deterministic and stochastic returns per module,
    on the bodies it trained on or zero-shot on another."""

    run: Path
    """The run directory (runs/<body>/<timestamp>)."""
    episodes: int = 16
    """Episodes per mode."""
    body: str | None = None
    """Evaluate on this body instead (bundled name or MJCF path). One the run did not train
    on gets the run's parameters unchanged in a network built for it (the run's --arch and
    max sizes: shared, graph or attention runs only)."""
    warmup_steps: int = DEFAULT_WARMUP_STEPS
    """With --body a body the run did not train on: env steps of the policy acting on it
    that estimate the observation normalizer statistics that --new-body-statistics does not
    take from the trained bodies (no reward used; rounded up to a multiple of 64: 4
    rounds of 16 environments); 0: none."""
    new_body_statistics: StatisticsSource = "trained-bodies"
    """With --body a body the run did not train on: where its normalizer statistics come
    from: "trained-bodies" (pooled from the trained bodies' modules that observe the same
    blocks, by the module's name, else its name without digits, else any; the warm-up only
    for modules that match none) or "warm-up" (--warmup-steps of the policy on it)."""
    backend: Backend | None = None
    """Evaluate on this simulator instead of the run's own ("mjx", "cpu" or "warp"): the
    same policy on MJX and on MuJoCo's C simulator (sim-to-sim)."""
    output: Path | None = None
    """Also write the results (body -> mode -> metric -> value, the step, the statistics
    source) to this JSON file; an existing file is refused, not overwritten."""
    episode_ends: bool = False
    """Also count, per mode, how the episodes ended: the fraction truncated by the time
    limit, terminated, and terminated outside each of the task's healthy ranges (e.g. the
    root's height below its range: a fall; above it: a jump), from a second rollout of the
    same episodes without auto-reset (`modular_ppo.ppo.episode_ends`)."""
    cache: CompileCacheFlags = CompileCacheConfig()
    """Where compiled programs are kept between commands."""


def _check_command(command: EvalCommand) -> None:
    """CommandError for an episode count or warm-up out of range, or an --output file that
    exists or has no folder."""
    if not 1 <= command.episodes <= MAX_EPISODES:
        raise CommandError(f"--episodes {command.episodes}: give a number of episodes from 1 "
                           f"to {MAX_EPISODES:,} (they run side by side).")
    if not 0 <= command.warmup_steps <= MAX_WARMUP_STEPS:
        raise CommandError(f"--warmup-steps {command.warmup_steps}: give 0 (no warm-up) up to "
                           f"{MAX_WARMUP_STEPS:,} env steps.")
    if command.output is not None:
        output_file(command.output, "--output")
        if command.output.exists():
            raise CommandError(f"--output {command.output}: the file exists; give a new path "
                               "(results are never written over another file).")
        if not command.output.parent.is_dir():
            raise CommandError(f"--output {command.output}: no directory "
                               f"{command.output.parent}; create it or give a path in an "
                               "existing one.")


def evaluate_run(command: EvalCommand, console: Console | None = None) -> dict:
    """Deterministic and stochastic returns of a run's latest checkpoint, per module: on
    every body it trained on, or on `command.body` (zero-shot when the run did not train
    on it; see `modular_ppo.runs.transfer`); on the run's simulator backend, or on
    `command.backend` (sim-to-sim: the same policy on MJX or MuJoCo's C simulator).
    Returns body -> {"deterministic": metrics, "stochastic": metrics}."""
    console = console or Console()
    run_dir, episodes, backend = command.run, command.episodes, command.backend
    _check_command(command)
    run, step = restore_run(run_dir)
    key = transfer_key(run.config.seed)
    if command.body is None:
        policies = trained_policies(run)
    else:
        policies = {command.body: policy_on_body(run, str(run_dir), command.body,
                                                 command.warmup_steps, key,
                                                 command.new_body_statistics)}
    if backend is not None:
        policies = {
            name: dataclasses.replace(policy, env=make_env(policy.body, run.config.env, backend))
            for name, policy in policies.items()
        }
    results = {}
    for name, policy in policies.items():
        results[name] = {}
        for deterministic in (True, False):
            config = EvalConfig(n_envs=episodes, deterministic=deterministic)
            evaluator = make_evaluator(policy.env, policy.graphdef, config)
            metrics = to_floats(evaluator(policy.network_state, key))
            if command.episode_ends:
                metrics |= episode_ends(policy.env, policy.graphdef, policy.network_state,
                                        config, key)
            results[name]["deterministic" if deterministic else "stochastic"] = metrics
        rows = [
            {"metric": k.removeprefix("episode/"), **{mode: m[k] for mode, m in results[name].items()}}
            for k in results[name]["deterministic"]
        ]
        how = "" if policy.trained_on else (
            f", zero-shot: not trained on, normalizer from {command.warmup_steps:,} warm-up steps"
            if command.new_body_statistics == "warm-up" else
            ", zero-shot: not trained on, normalizer from the trained bodies' modules (a "
            "warm-up for modules that match none)"
        )
        where = f", on the {backend} backend" if backend is not None else ""
        console.print(table(f"{name} / {run.config.arch} at step {step:,} "
                            f"({episodes} episodes{how}{where})", rows))
    if command.output is not None:
        record = {"run": str(run_dir), "step": step, "episodes": episodes,
                  "new_body_statistics": command.new_body_statistics,
                  "warmup_steps": command.warmup_steps,
                  "backend": backend or run.config.backend, "results": results}
        write_atomically(command.output, json.dumps(record, indent=1))
    return results
