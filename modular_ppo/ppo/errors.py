"""Errors of the PPO stage: each message names the setting or output at fault and the fix."""


class PPOConfigError(ValueError):
    """A PPO or evaluation setting is out of range."""


class NetworkEnvMismatch(ValueError):
    """The network's outputs do not fit the environment's modules or action sizes."""
