"""How many XLA operations one rollout step runs (issue 16): the compiled `collect_rollout`
of a body at the CLI's CPU defaults, its loop body's instructions counted by kind. On CPU
each fusion, copy, product and callback is dispatched on its own, at a cost that does not
shrink with the number of environments.

    python benchmarks/hlo_op_count.py --body centipede-4 --arch shared
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import re

import jax

from modular_ppo.networks import NetworkConfig
from modular_ppo.ppo import collect_rollout, default_ppo_config
from modular_ppo.runs.build import build_run
from modular_ppo.runs.config import TrainRunConfig


def rollout_hlo(body: str, arch: str) -> str:
    """The optimized HLO text of one rollout of `body`'s first group."""
    config = TrainRunConfig(body=body, network=NetworkConfig(arch=arch), ppo=dataclasses.replace(
        default_ppo_config("cpu"), total_steps=10**6))
    run = build_run(config)
    group, state = run.groups[0], run.state
    rollout = jax.jit(lambda s: collect_rollout(
        group.env, group.graphdef, s.network_state(group.name), s.groups[group.name].env_state,
        s.groups[group.name].recurrent, run.config.ppo.rollout_length)[3])
    return rollout.lower(state).compile().as_text()


def loop_body_counts(hlo: str) -> collections.Counter:
    """Instructions by kind in the largest while-loop body (XLA names it "%wide...")."""
    computations = re.split(r"\n(?=\S)", hlo)
    body = max((c for c in computations if c.startswith("%wide")), key=len)
    kinds = collections.Counter()
    for line in body.splitlines()[1:]:
        match = re.search(r"= \S+ ([a-z][\w-]*)\(", line)
        if match:
            kinds[match.group(1)] += 1
    return kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body", default="centipede-4")
    parser.add_argument("--arch", default="shared")
    args = parser.parse_args()
    kinds = loop_body_counts(rollout_hlo(args.body, args.arch))
    dispatched = sum(kinds[k] for k in ("fusion", "copy", "dot", "custom-call", "conditional"))
    print(f"{args.body}, {args.arch}: one rollout step's loop body")
    for kind, count in kinds.most_common():
        print(f"  {kind}: {count}")
    print(f"  dispatched one by one (fusion, copy, dot, custom-call, conditional): {dispatched}")


if __name__ == "__main__":
    main()
