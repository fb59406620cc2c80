"""Errors of the commands' own flags."""

from modular_ppo.errors import ModularPPOError


class CommandError(ModularPPOError):
    """A command's flag out of range, named with its fix."""
