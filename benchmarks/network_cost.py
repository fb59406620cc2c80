"""Issue 15: what each architecture's gradient step costs in arithmetic, and how fast this
machine does it.

    python benchmarks/network_cost.py                      # ant-modular, minibatch 512
    python benchmarks/network_cost.py --body centipede-6 --write

For every architecture at the CLI's default sizes, the gradient of the network's share of the
PPO loss (log-likelihoods of given actions plus squared values, summed) over one minibatch of
random observations: its floating-point operations as XLA's cost analysis of the compiled
program counts them (forward and backward; the optimizer's few per parameter are left out),
and its process CPU time (median of alternating rounds, so every architecture sees the same
load). The FLOP ratio to the separate network is the least its update time ratio can be on a
machine that runs every architecture's products at the same rate; the time ratio is what
this machine gives. Batch 512 is one minibatch of the CLI's CPU default (64 envs x 32 steps,
4 minibatches), the update being 16 such steps (4 epochs x 4 minibatches). `--write` appends
the table to BENCHMARKS.md with the command, host, versions and load.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.networks import NetworkConfig, count_parameters, make_network
from every_body import append_to_benchmarks  # beside this script

ARCHITECTURES = ("separate", "shared", "graph", "attention")


@dataclasses.dataclass
class GradientStep:
    arch: str
    parameters: int
    flops: float
    """Floating-point operations of one call (XLA's cost analysis of the compiled program)."""
    call: Callable[[], object]
    cpu_s: list[float] = dataclasses.field(default_factory=list)

    @property
    def cpu_ms(self) -> float:
        return statistics.median(self.cpu_s) * 1e3

    @property
    def gflops_per_s(self) -> float:
        return self.flops / 1e9 / (self.cpu_ms / 1e3)


def network_gradient(body_name: str, arch: str, batch: int):
    """The jitted value and gradient of `arch`'s share of the PPO loss over `batch` random
    samples of `body_name`, the parameters it takes, and the network."""
    body = load_body(body_name)
    env = make_env(body, EnvConfig(), "cpu")
    network = make_network(body, env.obs_sizes, NetworkConfig(arch=arch), rngs=nnx.Rngs(0))
    graphdef, params, rest = nnx.split(network, nnx.Param, ...)
    rng = np.random.default_rng(0)
    obs = {m: jnp.asarray(rng.standard_normal((batch, n)), jnp.float32)
           for m, n in env.obs_sizes.items()}
    raw = {m: jnp.asarray(rng.standard_normal((batch, network.layout.action_size(m))),
                          jnp.float32) for m in network.layout.actuated}

    def loss(params):
        net = nnx.merge(graphdef, params, rest)
        out = net(net.initialize_state(batch), obs, {"raw_actions": raw}).output
        return (sum(jnp.sum(x) for x in out.loglikelihoods.values())
                + sum(jnp.sum(v ** 2) for v in out.value_estimates.values()))

    return jax.jit(jax.value_and_grad(loss)), params, network


def gradient_step(body_name: str, arch: str, batch: int) -> GradientStep:
    """`network_gradient` compiled, with its FLOP count."""
    function, params, network = network_gradient(body_name, arch, batch)
    compiled = function.lower(params).compile()
    analysis = compiled.cost_analysis()
    analysis = analysis[0] if isinstance(analysis, list) else analysis
    return GradientStep(arch, count_parameters(network)["total"], float(analysis["flops"]),
                        lambda: jax.block_until_ready(compiled(params)))


def measure(steps: list[GradientStep], rounds: int, calls: int) -> None:
    """Time every step's calls in alternating rounds (process CPU seconds per call)."""
    for step in steps:
        step.call()  # the first call allocates
    for _ in range(rounds):
        for step in steps:
            for _ in range(calls):
                start = time.process_time()
                step.call()
                step.cpu_s.append(time.process_time() - start)


def table(steps: list[GradientStep]) -> str:
    base = next((s for s in steps if s.arch == "separate"), steps[0])
    lines = [
        f"| network | parameters | MFLOP per gradient step | CPU ms per gradient step | "
        f"GFLOP/s | FLOPs / {base.arch} | CPU time / {base.arch} |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in steps:
        lines.append(
            f"| {s.arch} | {s.parameters:,} | {s.flops / 1e6:,.0f} | {s.cpu_ms:.2f} | "
            f"{s.gflops_per_s:.1f} | {s.flops / base.flops:.1f} | {s.cpu_ms / base.cpu_ms:.1f} |"
        )
    return "\n".join(lines)


def section(steps: list[GradientStep], body: str, batch: int, command: str) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"\n## What a gradient step of each network costs: {body}, minibatch {batch} "
        f"(issue 15, {when})\n\n"
        f"`{command}` ({platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"jax {jax.__version__}; 1-min / 5-min / 15-min load at the end {load}). FLOPs: XLA's "
        "cost analysis of the compiled gradient (forward and backward); CPU ms: process CPU "
        "time, median of alternating rounds.\n\n" + table(steps) + "\n"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body", default="ant-modular")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--archs", nargs="+", choices=ARCHITECTURES, default=list(ARCHITECTURES))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=5, help="timed calls per round and network")
    parser.add_argument("--write", action="store_true", help="append the table to BENCHMARKS.md")
    args = parser.parse_args(argv)
    steps = [gradient_step(args.body, arch, args.batch) for arch in args.archs]
    measure(steps, args.rounds, args.calls)
    command = "python benchmarks/network_cost.py " + " ".join(argv if argv is not None
                                                              else sys.argv[1:])
    text = section(steps, args.body, args.batch, command.strip())
    print(text, flush=True)
    if args.write:
        append_to_benchmarks(text)


if __name__ == "__main__":
    main()
