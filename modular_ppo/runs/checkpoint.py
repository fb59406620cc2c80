"""Checkpoints of the full training state, with orbax.

A checkpoint holds every leaf of the training-state pytree (parameters, optimizer state,
normalizer statistics, RNG keys, env states, step counters) plus a JSON identity (body,
architecture, leaf structure). Orbax writes each step into a temporary folder and renames it
when complete, so a kill during a write leaves the previous checkpoint loadable. Restoring
walks back from the newest step when one cannot be read (and, with `set_aside`, moves the
unreadable ones aside).
"""

from __future__ import annotations

import hashlib
import logging
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp

from modular_ppo.runs.checkpoint_v1 import v1_layouts
from modular_ppo.runs.checkpoint_v2_v3 import v2_layout, v3_layout
from modular_ppo.runs.errors import CheckpointError

logger = logging.getLogger(__name__)


FORMAT = 4
"""The layout of the training state in checkpoints written now (`ppo.TrainingState`, the
optimizer's state on the parameters stacked by shape), saved in each checkpoint's identity.
Formats 3 (raveled parameters) and 2 (per array) are read through `checkpoint_v2_v3`,
format 1 (no "format" in the identity) through `checkpoint_v1` and then as format 2."""


def structure_id(tree: Any) -> str:
    """A short fingerprint of a pytree's structure, leaf shapes and dtypes."""
    leaves = jax.tree_util.tree_flatten_with_path(_keys_to_data(tree))[0]
    text = "".join(
        f"{jax.tree_util.keystr(path)}{np.shape(x)}{_dtype(x)}" for path, x in leaves
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _dtype(x: Any) -> np.dtype:
    """A leaf's dtype, without fetching its value (an array of several processes has
    none here)."""
    return np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype


def _is_prng_key(x: Any) -> bool:
    return isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def _keys_to_data(tree: Any) -> Any:
    """Typed PRNG keys are not array-serializable: store their raw key data."""
    return jax.tree.map(lambda x: jax.random.key_data(x) if _is_prng_key(x) else x, tree)


def _to_saved(tree: Any) -> dict[str, Any]:
    """The non-empty leaves by flat index (orbax refuses zero-size arrays; the template
    rebuilds those, and the structure, on restore)."""
    leaves = jax.tree.leaves(_keys_to_data(tree))
    return {f"{i:05d}": leaf for i, leaf in enumerate(leaves) if np.size(leaf) > 0}


def _from_saved(template: Any, saved: dict[str, Any]) -> Any:
    raw_template = _keys_to_data(template)
    leaves, treedef = jax.tree.flatten(raw_template)
    restored = [saved.get(f"{i:05d}", leaf) for i, leaf in enumerate(leaves)]
    return jax.tree.map(
        lambda t, r: jax.random.wrap_key_data(r, impl=jax.random.key_impl(t))
        if _is_prng_key(t)
        else r,
        template,
        jax.tree.unflatten(treedef, restored),
    )


class Checkpointer:
    """Saves and restores a training state under `<run_dir>/checkpoints/<step>/`."""

    def __init__(self, directory: Path, identity: dict[str, Any], max_to_keep: int = 3):
        self.directory = Path(directory).resolve()
        self.identity = identity
        self._manager = ocp.CheckpointManager(
            self.directory,
            options=ocp.CheckpointManagerOptions(max_to_keep=max_to_keep, create=True),
            item_names=("state", "identity"),
        )

    def save(self, step: int, state: Any) -> None:
        identity = {**self.identity, "format": FORMAT, "step": int(step),
                    "structure": structure_id(state)}
        self._manager.save(
            int(step),
            args=ocp.args.Composite(
                state=ocp.args.StandardSave(_to_saved(state)),
                identity=ocp.args.JsonSave(identity),
            ),
            force=True,
        )
        self._manager.wait_until_finished()

    def steps(self) -> list[int]:
        return sorted(self._manager.all_steps())

    def restore_latest(self, template: Any, set_aside: bool = False) -> tuple[int, Any]:
        """Restore the newest readable checkpoint into the structure of `template`.

        Falls back to older checkpoints, with a warning, when the newest is unreadable.
        set_aside: move the unreadable ones to `unreadable-checkpoints/` beside this folder,
        so that training on from the older one can save those steps again.
        """
        steps = self.steps()
        if not steps:
            raise CheckpointError(
                f"{self.directory}: no checkpoint to resume from. The run saved none "
                "(it stopped before its first checkpoint); start a new run instead."
            )
        unreadable = []
        for step in reversed(steps):
            try:
                identity = self._manager.restore(
                    step, args=ocp.args.Composite(identity=ocp.args.JsonRestore())
                )["identity"]
                layout, upgrade = self._layout(identity, template, step)
                self._check_identity(identity, structure_id(layout), step)
                saved = self._manager.restore(
                    step,
                    args=ocp.args.Composite(state=ocp.args.StandardRestore(_to_saved(layout))),
                )["state"]
            except CheckpointError:
                raise
            except Exception as e:  # noqa: BLE001 - any unreadable checkpoint falls back
                warnings.warn(
                    f"{self.directory / str(step)}: checkpoint unreadable ({type(e).__name__}: "
                    f"{e}); falling back to an earlier one.",
                    stacklevel=2,
                )
                unreadable.append(step)
                continue
            if set_aside and unreadable:
                self._set_aside(unreadable)
            return step, upgrade(_from_saved(layout, saved))
        raise CheckpointError(
            f"{self.directory}: none of the checkpoints {steps} could be read. "
            "They are damaged; start a new run."
        )

    def _set_aside(self, steps: list[int]) -> None:
        aside = self.directory.parent / "unreadable-checkpoints"
        aside.mkdir(exist_ok=True)
        for step in steps:
            target = aside / str(step)
            while target.exists():
                target = target.with_name(target.name + "+")
            (self.directory / str(step)).rename(target)
        self._manager.reload()
        warnings.warn(f"moved the unreadable checkpoints {steps} to {aside}.", stacklevel=3)

    def _layout(self, identity: dict[str, Any], template: Any,
                step: int) -> tuple[Any, Callable[[Any], Any]]:
        """The template of the state as this checkpoint holds it, and the function that
        turns it into one like `template`."""
        written = identity.get("format", 1)
        if written == FORMAT:
            return template, lambda state: state
        if written not in (1, 2, 3):
            raise CheckpointError(
                f"{self.directory / str(step)}: this checkpoint has format {written}, written "
                f"by a newer modular_ppo; this one reads formats 1 to {FORMAT}. Resume it with "
                "the modular_ppo version that trained it."
            )
        if written == 3:
            return v3_layout(template)
        v2, from_v2 = v2_layout(template)
        if written == 2:
            return v2, from_v2
        for layout, to_v2 in v1_layouts(v2):
            if structure_id(layout) == identity.get("structure"):
                return layout, lambda state, to_v2=to_v2: from_v2(to_v2(state))
        return template, lambda state: state  # _check_identity says why it does not fit

    def _check_identity(self, identity: dict[str, Any], expected: str, step: int) -> None:
        where = self.directory / str(step)
        for key in ("body", "arch"):
            if key in self.identity and identity.get(key) != self.identity[key]:
                raise CheckpointError(
                    f"{where}: this checkpoint was saved by a run with {key} "
                    f"'{identity.get(key)}', but the run being restored is built with "
                    f"'{self.identity[key]}' (from its config.json). The checkpoints and "
                    "config.json come from different runs: resume the run directory that "
                    "saved these checkpoints, with its own config.json."
                )
        if identity.get("structure") != expected:
            raise CheckpointError(
                f"{where}: this checkpoint holds a training state of another shape than the "
                "run's config.json builds (different network sizes, env count or options, or "
                "a modular_ppo version that builds them differently). Resume the run "
                "directory that saved these checkpoints, with its own config.json and the "
                "modular_ppo version it was trained with."
            )

    def close(self) -> None:
        self._manager.close()
