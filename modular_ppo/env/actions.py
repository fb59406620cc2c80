"""Module-keyed actions in [-1, 1] -> MuJoCo `ctrl`, through the body's actuator ids."""

from __future__ import annotations

from collections.abc import Mapping

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from modular_ppo.body import BodyGraph
from modular_ppo.env.errors import ActionError, EnvError


class ActionMap:
    """Checks action dicts, cleans non-finite entries, maps them affinely onto ctrlrange.

    An action of -1 / +1 is the low / high end of the actuator's ctrlrange (actuators
    without a ctrlrange use [-1, 1]); values outside [-1, 1] are clipped. Non-finite
    entries (NaN, +-inf) are replaced by 0, the middle of the range, and flagged.
    """

    def __init__(self, body: BodyGraph):
        model = body.model
        self.sizes = {name: body.modules[name].n_actuators for name in body.actuated_modules}
        """Actuated module -> number of actions, in module order."""
        order = np.concatenate([body.modules[n].actuator_ids for n in self.sizes])
        if sorted(order.tolist()) != list(range(model.nu)):
            raise EnvError(
                f"{body.source}: the modules' actuators do not cover each of the model's "
                f"{model.nu} actuators exactly once. Fix the partition."
            )
        self._ctrl_from_flat = np.argsort(order)
        """ctrl[i] = concatenated_actions[_ctrl_from_flat[i]]: a gather, cheaper than a scatter."""
        limited = np.asarray(model.actuator_ctrllimited, bool)
        low, high = model.actuator_ctrlrange[:, 0], model.actuator_ctrlrange[:, 1]
        self._mid = np.where(limited, (low + high) / 2, 0.0).astype(np.float32)
        self._half = np.where(limited, (high - low) / 2, 1.0).astype(np.float32)
        # A ctrlrange of zero width holds ctrl fixed: its action reads as 0.
        self._inv_half = np.divide(
            1.0, self._half, out=np.zeros_like(self._half), where=self._half > 0
        )

    def check(self, action: dict[str, Float[Array, "act"]]) -> None:
        """Raise ActionError at trace time for wrong keys or shapes (single env)."""
        check_action_dict(action, self.sizes, keyed_by="actuated module", error=ActionError)

    def sanitize(
        self, action: dict[str, Float[Array, "act"]]
    ) -> tuple[dict[str, Float[Array, "act"]], Float[Array, ""]]:
        """Non-finite entries -> 0; also returns 1.0 if any entry was non-finite, else 0.0."""
        clean, invalid = {}, jnp.zeros((), bool)
        for name in self.sizes:
            a = jnp.asarray(action[name], jnp.float32)
            finite = jnp.isfinite(a)
            clean[name] = jnp.where(finite, a, 0.0)
            invalid = invalid | ~finite.all()
        return clean, invalid.astype(jnp.float32)

    def to_ctrl(self, action: dict[str, Float[Array, "act"]]) -> Float[Array, "nu"]:
        flat = jnp.concatenate([action[n] for n in self.sizes])
        return self._mid + self._half * jnp.clip(flat[self._ctrl_from_flat], -1.0, 1.0)

    def from_ctrl(self, ctrl: Float[Array, "nu"]) -> Float[Array, "nu"]:
        """The action in [-1, 1] that `ctrl` holds, per actuator (MuJoCo order)."""
        return (ctrl - self._mid) * self._inv_half


def check_action_dict(
    action: Mapping[str, Float[Array, "act"]],
    sizes: Mapping[str, int],
    *,
    keyed_by: str,
    error: type[Exception],
) -> None:
    """Raise `error` unless `action` is one environment's actions: a dict with exactly the
    keys of `sizes` (each a `keyed_by`, e.g. "actuated module" or "agent"), each of shape
    (size,). The message names the key and the shape it expects."""
    check_action_keys(action, {k: (n,) for k, n in sizes.items()}, keyed_by=keyed_by,
                      error=error)
    for key, size in sizes.items():
        shape = tuple(jnp.shape(action[key]))
        if shape != (size,):
            raise error(
                f"the action of {keyed_by} {key!r} has shape {shape}; {keyed_by} {key!r} has "
                f"{size} actuator(s): give shape ({size},) with entries in [-1, 1] "
                "(one environment: vmap over a batch)."
            )


def check_action_keys(
    action: object,
    shapes: Mapping[str, tuple[int, ...]],
    *,
    keyed_by: str,
    error: type[Exception],
    subject: str = "action",
) -> None:
    """Raise `error` unless `action` is a dict with exactly the keys of `shapes` (each a
    `keyed_by`); the message calls it `subject`, names the missing and unknown keys and
    gives every key with the shape it expects."""
    expected = ", ".join(f"{k!r}: shape {shape}" for k, shape in shapes.items())
    if not isinstance(action, Mapping):
        raise error(f"{subject} must be a dict keyed by {keyed_by} ({', '.join(shapes)}), "
                    f"got {type(action).__name__}; give {{{expected}}}.")
    missing = [k for k in shapes if k not in action]
    unknown = [k for k in action if k not in shapes]
    if missing or unknown:
        raise error(f"{subject}: missing {keyed_by}(s) {missing or 'none'} and unknown "
                    f"{keyed_by}(s) {unknown or 'none'}; give exactly {{{expected}}}.")
