"""Issue 15, point 1: do same-shaped modules run faster as one call over stacked weights?

    python benchmarks/stacked_modules.py                       # ant-modular, 512 and 5120
    python benchmarks/stacked_modules.py --body centipede-6 --batch 512

Times the gradient of the separate network's outputs (log-likelihoods of given actions plus
squared values, summed: the network's share of the PPO loss) over one minibatch, two ways
in one process, in alternating rounds so both see the same load:
- as committed: `SeparateNetwork`, one policy / value stream per module, called in turn;
- stacked: streams with the same structure and shapes (the ant's four legs) run as one
  `jax.vmap` over their weights stacked on a new axis (`run_streams` below), so each layer
  is one batched matrix product. Its outputs and gradients are checked against the first.
Batch 512 is a minibatch of the CLI's CPU default (64 envs x 32 steps / 4 minibatches),
5120 one of Brax's batch shape. Prints process CPU ms per call (median over the rounds;
less sensitive than wall time to other processes on a shared machine) and wall ms.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Hashable

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from modular_ppo.networks import separate
from network_cost import network_gradient  # beside this script


def run_streams(streams, carries, inputs):
    """Every stream on its inputs, same-shaped ones as one vmap over stacked weights."""
    groups: dict[Hashable, list[str]] = {}
    for key, stream in streams.items():
        graphdef, state = nnx.split(stream)
        leaves, structure = jax.tree.flatten((state, carries[key], inputs[key]))
        signature = (graphdef, structure, tuple((x.shape, x.dtype) for x in leaves))
        groups.setdefault(signature, []).append(key)
    next_carries, outputs = {}, {}
    for keys in groups.values():
        graphdef, _ = nnx.split(streams[keys[0]])
        stacked = jax.tree.map(lambda *xs: jnp.stack(xs),
                               *[(nnx.state(streams[k]), carries[k], inputs[k]) for k in keys])
        group_carries, group_outputs = jax.vmap(
            lambda state, carry, x: nnx.merge(graphdef, state)(carry, x)
        )(*stacked)
        for i, key in enumerate(keys):
            next_carries[key] = jax.tree.map(lambda leaf: leaf[i], group_carries)
            outputs[key] = jax.tree.map(lambda leaf: leaf[i], group_outputs)
    return next_carries, outputs


def stacked_forward(self, state, obs):
    """SeparateNetwork.forward with the streams run by `run_streams` (no centralized critic)."""
    policy_state, policies = run_streams(self.policy, state["policy"], obs)
    value_state, values = run_streams(self.value, state["value"], obs)
    return {"policy": policy_state, "value": value_state}, policies, values


def gradient_function(body_name: str, batch: int):
    function, params, _ = network_gradient(body_name, "separate", batch)
    return function, params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body", default="ant-modular")
    parser.add_argument("--batch", type=int, nargs="+", default=[512, 5120])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--calls", type=int, default=5, help="timed calls per round and way")
    args = parser.parse_args()
    committed_forward = separate.SeparateNetwork.forward
    print(f"{args.body}, separate network, gradient of one minibatch: process CPU ms per call "
          "(median), wall ms per call (median)")
    print("| batch | as committed: CPU ms | wall ms | stacked: CPU ms | wall ms | "
          "stacked / committed (CPU) |\n|---|---|---|---|---|---|")
    for batch in args.batch:
        functions = {}
        for way, forward in (("committed", committed_forward), ("stacked", stacked_forward)):
            separate.SeparateNetwork.forward = forward
            functions[way] = gradient_function(args.body, batch)
        separate.SeparateNetwork.forward = committed_forward
        results = {way: jax.block_until_ready(f(p)) for way, (f, p) in functions.items()}
        for a, b in zip(jax.tree.leaves(results["committed"]), jax.tree.leaves(results["stacked"])):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)
        cpu = {way: [] for way in functions}
        wall = {way: [] for way in functions}
        for _ in range(args.rounds):
            for way, (f, p) in functions.items():
                for _ in range(args.calls):
                    w, c = time.perf_counter(), time.process_time()
                    jax.block_until_ready(f(p))
                    wall[way].append(time.perf_counter() - w)
                    cpu[way].append(time.process_time() - c)
        med = {way: (statistics.median(cpu[way]) * 1e3, statistics.median(wall[way]) * 1e3)
               for way in functions}
        print(f"| {batch} | {med['committed'][0]:.2f} | {med['committed'][1]:.2f} | "
              f"{med['stacked'][0]:.2f} | {med['stacked'][1]:.2f} | "
              f"{med['stacked'][0] / med['committed'][0]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
