"""The token networks' max sizes (`NetworkConfig.max_modules`, `max_obs_size`,
`max_action_size`): the sizes a run resolves them to, and what a run says when a body
does not fit them."""

from __future__ import annotations

import dataclasses
import math

from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.networks import MaxSizeTooSmall, NetworkConfig
from modular_ppo.runs.config import TrainRunConfig, flag
from modular_ppo.runs.errors import RunConfigError


MODULE_HEADROOM = 2.0
"""Default max_modules of a run of several bodies or with held-out bodies: this many times
the largest training body's module count, so the trained network can act on larger bodies
of the family."""
SIZE_HEADROOM = 1.5
"""Default max_obs_size and max_action_size of such a run: this many times the largest,
rounded up."""


def max_size_error(config: TrainRunConfig, error: MaxSizeTooSmall) -> RunConfigError:
    """The run's view of a max size too small for a body: the flag to raise, or, when
    the network comes from --init-from, the source run that cannot hold the body."""
    if config.init_from is not None:
        return RunConfigError(f"--init-from {config.init_from}: {source_cannot_hold(error)}")
    name = flag(error.field)
    return RunConfigError(f"{name} {error.value}: {_what_body_needs(error)}. Give {name} "
                          f"{error.needed} or more, or leave it out to fit the body.")


def source_cannot_hold(error: MaxSizeTooSmall, this_run: bool = False) -> str:
    """Why a trained run's network (its max sizes fix its parameters) cannot act on a
    body, and the run that could; `this_run`: the network of the run being set up (its
    `--held-out` bodies), and the flag that makes room."""
    name = flag(error.field)
    if this_run:
        return (f"this run's network is built with {name} {error.value}, but "
                f"{_what_body_needs(error)}. Give {name} {error.needed} or more.")
    return (f"that run's network was built with {name} {error.value}, but "
            f"{_what_body_needs(error)}. Train a run with {name} {error.needed} or more "
            "to act on this body.")


def _what_body_needs(error: MaxSizeTooSmall) -> str:
    body, needed = error.body_name, error.needed
    return {
        "max_modules": f"body '{body}' has {needed} modules",
        "max_obs_size": f"a module of body '{body}' observes {needed} values",
        "max_action_size": f"a module of body '{body}' has {needed} actions",
    }[error.field]


def with_max_sizes(network: NetworkConfig, envs: dict[str, ModularEnvProtocol],
                   headroom: bool) -> NetworkConfig:
    """`network` with its unset max sizes set to fit every body of `envs`: with headroom
    (MODULE_HEADROOM, SIZE_HEADROOM) for a network meant to act on other bodies too, else
    exactly (the sizes a network built with them unset has, now recorded in the run's
    config so that zero-shot and fine-tuning know them). Sizes given are kept (too small
    ones fail when the networks are built, naming the body and the size it needs)."""
    modules = max(len(env.obs_sizes) for env in envs.values())
    obs = max(max(env.obs_sizes.values()) for env in envs.values())
    actions = max(max(env.action_sizes.values(), default=1) for env in envs.values())
    module_factor, size_factor = (MODULE_HEADROOM, SIZE_HEADROOM) if headroom else (1, 1)
    defaults = {
        "max_modules": math.ceil(module_factor * modules),
        "max_obs_size": math.ceil(size_factor * obs),
        "max_action_size": math.ceil(size_factor * actions),
    }
    return dataclasses.replace(network, **{
        field: value for field, value in defaults.items() if getattr(network, field) is None
    })
