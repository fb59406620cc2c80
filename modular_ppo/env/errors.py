"""Errors raised while building or driving a ModularEnv."""

from modular_ppo.errors import ModularPPOError


class EnvError(ModularPPOError):
    """A configuration, body or action the environment cannot use.

    The message names the field, file or module at fault and what to change.
    """


class UnsupportedModelError(EnvError):
    """MJX refuses the body's model (`mjx.put_model` raised NotImplementedError)."""


class ActionError(EnvError):
    """An action dict with missing or unknown module keys, or wrong shapes."""
