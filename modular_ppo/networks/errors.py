"""Errors raised while building or calling a network."""

from modular_ppo.errors import ModularPPOError


class NetworkConfigError(ModularPPOError):
    """A network configuration, body or input the networks cannot work with.

    The message names the field, module or key at fault and what to change.
    """


class MaxSizeTooSmall(NetworkConfigError):
    """A max size (`NetworkConfig.max_modules`, `max_obs_size` or `max_action_size`) below
    what a body needs; the run layer names the flag (or the --init-from run) instead."""

    def __init__(self, field: str, value: int, needed: int, body_name: str):
        super().__init__(
            f"NetworkConfig.{field} is {value} but body '{body_name}' needs at least "
            f"{needed}; raise it to {needed} or more (or None to fit this body)."
        )
        self.field, self.value, self.needed, self.body_name = field, value, needed, body_name
