"""Changes proposed to the PPO stage, installable for a what-if measurement.

Flat replay: `ppo.loss.ppo_loss` re-scores a minibatch with `ppo.rollout.replay`, a
`lax.scan` over the rollout's time steps (needed to carry a recurrent state). For a
network without recurrent state every time step is independent, so one call on the
[time x envs] samples flattened gives the same log-likelihoods, values and (equal-sized
steps) the same mean regularisation loss, as a few large matrix products instead of
`rollout_length` small ones, forward and backward.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import jax
from flax import nnx

from modular_ppo.ppo import loss as ppo_loss_module
from modular_ppo.ppo.rollout import Replay, replay


def flat_replay(graphdef, network_state, recurrent, obs, extras, done) -> Replay:
    """`replay`, with time folded into the batch when the network has no recurrent state."""
    if jax.tree.leaves(recurrent):
        return replay(graphdef, network_state, recurrent, obs, extras, done)
    steps, envs = done.shape

    def fold(x):
        return x.reshape(steps * envs, *x.shape[2:])

    def unfold(x):
        return x.reshape(steps, envs, *x.shape[1:])

    out = nnx.merge(graphdef, network_state)(
        recurrent, jax.tree.map(fold, obs), jax.tree.map(fold, extras)
    )
    return Replay(jax.tree.map(unfold, out.output.loglikelihoods),
                  jax.tree.map(unfold, out.output.value_estimates), out.regularization_loss)


@contextlib.contextmanager
def flat_replay_installed() -> Iterator[None]:
    """ppo_loss uses `flat_replay` for the functions traced inside this block."""
    original = ppo_loss_module.replay
    ppo_loss_module.replay = flat_replay
    try:
        yield
    finally:
        ppo_loss_module.replay = original
