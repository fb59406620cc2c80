"""Errors of the run layer: each message names the file, setting or run at fault and the fix.

Where error classes live: each package's own `errors.py` (this one for `runs`), the base
class `ModularPPOError` and the top-level modules' errors in `modular_ppo/errors.py`."""

from __future__ import annotations

import signal
from pathlib import Path

from modular_ppo.errors import ModularPPOError


class RunConfigError(ModularPPOError):
    """A run setting that cannot work; the message names the field and the fix."""


class RunDirError(ModularPPOError):
    """A run directory that is missing, or would overwrite another run."""


class CheckpointError(ModularPPOError):
    """A checkpoint that cannot be used for this run; the message says why and what to do."""


class EnvRewardError(ModularPPOError):
    """An environment that does not reward exactly the modules it observes."""


class TrainingFailed(ModularPPOError):
    """Training stopped on non-finite values; the run dir keeps the last good checkpoint
    and failure.json."""

    def __init__(self, message: str, run_dir: Path):
        super().__init__(message)
        self.run_dir = run_dir


class TrainingInterrupted(KeyboardInterrupt):
    """Training stopped on a signal; `message` says what was saved and how to resume."""

    def __init__(self, run_dir: Path, step: int, saved: bool, signum: int):
        self.run_dir = run_dir
        self.step = step
        self.saved = saved
        self.exit_code = 128 + signum
        """The shell's convention for a process ended by signal `signum` (130: Ctrl-C)."""
        what = (f"checkpoint saved at step {step:,}" if saved
                else f"stopped at once near step {step:,}; the checkpoints saved before are kept")
        self.message = (f"interrupted ({signal.Signals(signum).name}): {what}. Continue with "
                        f"`python cli.py train --resume {run_dir}`.")
        super().__init__(self.message)


class TransferError(ModularPPOError):
    """A run's policy that cannot act on the body asked for."""


class RenderError(ModularPPOError):
    """Rendering is not possible on this machine; the message says what to install."""
