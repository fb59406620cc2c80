"""Helpers of the reliability tests: a tiny body, a tiny training config, the CLI in this
process, and plain text of its output."""

import contextlib
import io
import re
from pathlib import Path

from modular_ppo import cli

ROOT = Path(__file__).resolve().parents[2]
"""The repository root, where `python cli.py` runs."""

TINY_BODY = """
<mujoco model="{name}">
  <option timestep="0.01" {option}/>
  {custom}
  <worldbody>
    {world}
    <body name="base" pos="0 0 0.5">
      <joint name="slide" type="slide" axis="1 0 0"/>
      <geom name="base_geom" type="capsule" fromto="0 0 0 0.2 0 0" size="0.05"
            contype="0" conaffinity="0"/>
      {base}
      <body name="arm" pos="0.2 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" range="-90 90"/>
        <geom name="arm_geom" type="capsule" fromto="0 0 0 0.2 0 0" size="0.05"
              contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <actuator>{actuators}</actuator>
</mujoco>
"""
"""Two modules (base, arm), one motor each, no contacts: the cheapest MJX body to compile.
The fields let catalog cases break it in one place."""

TINY_ACTUATORS = ('<motor name="push" joint="slide" ctrlrange="-1 1" gear="10"/>'
                  '<motor name="bend" joint="elbow" ctrlrange="-1 1" gear="5"/>')


def tiny_xml(name: str = "tiny", option: str = "", custom: str = "", world: str = "",
             base: str = "", actuators: str = TINY_ACTUATORS) -> str:
    return TINY_BODY.format(name=name, option=option, custom=custom, world=world, base=base,
                            actuators=actuators)


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
