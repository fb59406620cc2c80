"""The base of every error modular_ppo raises about its user's input or files.

Each stage subclasses it (BodyGraphError, EnvError, PPOConfigError, CheckpointError, ...);
its message names the file, field or element at fault and the fix, so the CLI prints the
message alone, with no traceback, and exits non-zero.

Where error classes live: each package's own `errors.py` (`body`, `env`, `networks`, `ppo`,
`runs`, `commands`); this module holds the base class and the errors of the top-level
modules (`analysis`, `output_paths`).
"""


class ModularPPOError(ValueError):
    """Bad input, a bad file or an impossible request, explained in the message."""


class AnalysisError(ModularPPOError):
    """A run dir that holds nothing to analyze."""


class OutputPathError(ModularPPOError):
    """A path a command would write to that cannot be written."""
