"""Errors of the PPO stage: each message names the setting or output at fault and the fix."""

from modular_ppo.errors import ModularPPOError


class PPOConfigError(ModularPPOError):
    """A PPO or evaluation setting is out of range."""


class NetworkEnvMismatch(ModularPPOError):
    """The network's outputs do not fit the environment's modules or action sizes."""


class DistributedSetupError(ModularPPOError):
    """The arguments to join a run of several processes are inconsistent."""


class BodyGroupError(ModularPPOError):
    """Bodies, networks or settings that cannot be trained together in one run."""
