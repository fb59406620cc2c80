"""Helpers of the reliability tests: a tiny body, a tiny training config, the CLI in this
process, and plain text of its output."""

import contextlib
import io
import re
from pathlib import Path

from tiny_body import TINY_ACTUATORS, tiny_xml  # noqa: F401  (the tests import them from here)

from modular_ppo import cli

ROOT = Path(__file__).resolve().parents[2]
"""The repository root, where `python cli.py` runs."""

STEPS_PER_ITERATION = 16
TINY = [
    "--ppo.n-envs", "4", "--ppo.n-minibatches", "2", "--ppo.rollout-length", "4",
    "--ppo.n-epochs", "1", "--env.episode-length", "16",
    "--eval.n-envs", "2", "--eval.episode-length", "4", "--eval-every-steps", "0",
    "--no-video",
]
"""One iteration = 4 envs x 4 steps. Every run of the tests uses these shapes, so the
training step compiles once and later runs, subprocesses too, load it from the cache."""


def plain(text: str) -> str:
    """CLI output without rich / tyro box drawing and line wrapping."""
    return " ".join(re.sub(r"[\u2500-\u257f]", " ", text).split())


def cli_main(*args: object) -> tuple[int, str]:
    """`cli.main` in this process; its exit code and everything it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.main([str(a) for a in args])
    return code, out.getvalue()
