"""The base of every error modular_ppo raises about its user's input or files.

Each stage subclasses it (BodyGraphError, EnvError, PPOConfigError, CheckpointError, ...);
its message names the file, field or element at fault and the fix, so the CLI prints the
message alone, with no traceback, and exits non-zero.
"""


class ModularPPOError(ValueError):
    """Bad input, a bad file or an impossible request, explained in the message."""
