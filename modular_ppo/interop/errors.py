"""Errors the adapters raise about their user's input (bodies, task names, actions)."""

from modular_ppo.errors import ModularPPOError


class InteropError(ModularPPOError):
    """A body, task name or setting an adapter cannot serve; the message says what to use."""


class AgentActionError(InteropError):
    """Actions with a missing or unknown agent, or an agent's action of the wrong shape.

    The message names the agent and the shape it expects.
    """
