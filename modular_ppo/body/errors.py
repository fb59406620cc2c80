"""Errors raised while reading a morphology."""

from modular_ppo.errors import ModularPPOError


class BodyGraphError(ModularPPOError):
    """A model or partition that cannot be turned into a module graph (a ValueError).

    The message names the file, the element at fault and what to change.
    """
