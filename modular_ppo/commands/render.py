"""`render`: a video of a run's latest policy, modules colored apart."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
from rich.console import Console

from modular_ppo.commands.errors import CommandError
from modular_ppo.compile_cache import CompileCacheConfig, CompileCacheFlags
from modular_ppo.output_paths import make_parent, output_file
from modular_ppo.runs.build import restore_run
from modular_ppo.runs.transfer import DEFAULT_WARMUP_STEPS, policy_on_body, trained_policies

VIDEO_SUFFIXES = (".mp4", ".gif")
MAX_STEPS = 100_000
"""The longest video, in control steps (over half an hour at 50 steps a second)."""


@dataclasses.dataclass(frozen=True)
class RenderCommand:
    """Render a video of a run's latest policy, modules colored apart."""

    run: Path
    """The run directory."""
    out: Path = Path("video.mp4")
    """Output file, .mp4 or .gif."""
    steps: int = 250
    """Control steps to render."""
    body: str | None = None
    """Render the policy on this body (default: the run's first body); see `eval --body`."""
    cache: CompileCacheFlags = CompileCacheConfig()
    """Where compiled programs are kept between commands."""


def render_run(command: RenderCommand, console: Console | None = None) -> Path:
    """A video of the run's latest policy acting deterministically, modules colored apart:
    on the run's (first) body, or on `command.body` as `evaluate_run` puts it there."""
    from modular_ppo.runs.episode import record_episode
    from modular_ppo.runs.video import render_frames, write_video

    console = console or Console()
    out = output_file(command.out, "--out", VIDEO_SUFFIXES)
    if not 1 <= command.steps <= MAX_STEPS:
        raise CommandError(f"--steps {command.steps}: give a number of control steps from 1 "
                           f"to {MAX_STEPS:,}.")
    run, step = restore_run(command.run)
    key = jax.random.key(run.config.seed)
    if command.body is None:
        policy = next(iter(trained_policies(run).values()))
    else:
        policy = policy_on_body(run, str(command.run), command.body, DEFAULT_WARMUP_STEPS, key)
    qpos = record_episode(policy.env, policy.graphdef, policy.network_state, key, command.steps)
    path = write_video(render_frames(policy.body, qpos), make_parent(out),
                       fps=1.0 / policy.env.dt)
    console.print(f"wrote {path} ({command.steps} steps of the policy at step {step:,} on "
                  f"{policy.body.name})")
    return path
