"""Errors raised while building or calling a network."""

from modular_ppo.errors import ModularPPOError


class NetworkConfigError(ModularPPOError):
    """A network configuration, body or input the networks cannot work with.

    The message names the field, module or key at fault and what to change.
    """
