"""Non-finite training: which module went first, and the record kept in failure.json."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from modular_ppo.runs.run_dir import CHECKPOINT_DIR, FAILURE_FILE

_MODULE_FLAGS = {"actions": "sampled actions", "actor": "actor loss", "critic": "critic loss"}
_RUN_FLAGS = {
    "rollout": "observations or rewards",
    "regularization": "entropy term",
    "gradients": "gradients",
    "parameters": "parameters",
}


def nonfinite_failure(
    metrics: dict[str, float], step: int, last_checkpoint: int | None, run_dir: Path
) -> dict[str, Any] | None:
    """The failure.json record (with its "error" message) if the PPO step flagged
    non-finite values (`nonfinite/*` metrics), else None."""
    if not metrics.get("nonfinite/any"):
        return None
    flagged = [key.removeprefix("nonfinite/") for key, value in metrics.items()
               if key.startswith("nonfinite/") and key != "nonfinite/any" and value]
    modules: dict[str, list[str]] = {}
    for flag in flagged:
        kind, _, module = flag.partition("/")
        if kind in _MODULE_FLAGS and module:
            modules.setdefault(module, []).append(_MODULE_FLAGS[kind])
    also = [what for flag, what in _RUN_FLAGS.items() if flag in flagged]
    if modules:
        where = "; ".join(f"module '{m}' ({', '.join(what)})" for m, what in modules.items())
        where = f"first in {where}"
        check = f"Check the reward and observations of {', '.join(map(repr, modules))}"
    else:
        where = f"in the {', '.join(also)}"
        check = "Check the body's rewards and observations"
    kept = (f"the last good checkpoint, step {last_checkpoint:,}, is kept in "
            f"{run_dir / CHECKPOINT_DIR}" if last_checkpoint is not None
            else "no checkpoint had been saved yet")
    message = (
        f"non-finite values (NaN or inf) at step {step:,}, {where}"
        + (f"; also in the {', '.join(also)}" if modules and also else "")
        + f". Training stopped without saving this state; {kept}; details in "
        f"{run_dir / FAILURE_FILE}. {check}, or start a new run with a lower "
        "--ppo.learning-rate or --ppo.gradient-clipping."
    )
    return {
        "step": step,
        "error": message,
        "modules": list(modules),
        "flags": flagged,
        "last_checkpoint": last_checkpoint,
        "metrics": {k: v if math.isfinite(v) else str(v) for k, v in metrics.items()},
    }
