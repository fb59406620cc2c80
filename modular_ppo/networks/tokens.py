"""Module tokens: every module's observation padded to one size, plus its identity and,
optionally, its morphology features.

The shared, graph and attention architectures see a body as a sequence of such tokens, so
their weights do not depend on a body's module count or on which module has which size.
Tokens are module-major, [modules, batch, features]: a module's slice is contiguous, which
makes per-module gathers and message passing about twice as fast on CPU as batch-major.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from modular_ppo.body import MORPHOLOGY_WIDTH
from modular_ppo.networks.config import ModuleIdentity
from modular_ppo.networks.layout import BodyLayout


def token_size(layout: BodyLayout, identity: ModuleIdentity, morphology: bool) -> int:
    """Width of a token of `pack_tokens`."""
    return (
        layout.max_obs_size
        + (layout.max_modules if identity == "index" else 0)
        + (MORPHOLOGY_WIDTH if morphology else 0)
    )


def global_size(layout: BodyLayout) -> int:
    """Width of the global features: all module observations, padded to max_modules."""
    return layout.max_modules * layout.max_obs_size


def padded_observations(
    layout: BodyLayout, obs: dict[str, Float[Array, "batch _obs"]]
) -> Float[Array, "modules batch max_obs"]:
    return jnp.stack(
        [
            jnp.pad(obs[m], ((0, 0), (0, layout.max_obs_size - n)))
            for m, n in zip(layout.modules, layout.obs_sizes)
        ]
    )


def pack_tokens(
    layout: BodyLayout,
    padded: Float[Array, "modules batch max_obs"],
    identity: ModuleIdentity,
    morphology: bool,
) -> Float[Array, "modules batch token"]:
    """Each module's token: its padded observations, then a one-hot of its index (identity
    "index", width max_modules), then its morphology features (`layout.morphology`)."""
    n_modules, batch, _ = padded.shape
    constants = []
    if identity == "index":
        constants.append(np.eye(n_modules, layout.max_modules, dtype=np.float32))
    if morphology:
        constants.append(np.asarray(layout.morphology, np.float32))
    if not constants:
        return padded
    per_module = np.concatenate(constants, axis=-1)[:, None, :]
    per_module = jnp.broadcast_to(per_module, (n_modules, batch, per_module.shape[-1]))
    return jnp.concatenate([padded, per_module], axis=-1)


def with_global_features(
    layout: BodyLayout,
    tokens: Float[Array, "modules batch token"],
    padded: Float[Array, "modules batch max_obs"],
) -> Float[Array, "modules batch token_and_global"]:
    """Append every module's observations to each token (the centralized critic's input)."""
    n_modules, batch, _ = padded.shape
    everything = jnp.concatenate(list(padded), axis=-1)
    everything = jnp.pad(everything, ((0, 0), (0, global_size(layout) - everything.shape[-1])))
    everything = jnp.broadcast_to(everything, (n_modules, batch, everything.shape[-1]))
    return jnp.concatenate([tokens, everything], axis=-1)
