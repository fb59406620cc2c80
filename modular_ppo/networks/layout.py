"""BodyLayout: what the networks need to know about one body, checked once on the host."""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from typing import Any

from modular_ppo.body import BodyGraph, morphology_features
from modular_ppo.networks.config import NetworkConfig
from modular_ppo.networks.errors import MaxSizeTooSmall, NetworkConfigError


@dataclasses.dataclass(frozen=True)
class BodyLayout:
    """A body's modules, sizes and module tree as hashable tuples, in body module order.

    It is static structure (part of a network's graph definition, not of its state), so
    networks built from different bodies with the same padded sizes have the same
    parameter shapes.
    """

    modules: tuple[str, ...]
    actuated: tuple[str, ...]
    obs_sizes: tuple[int, ...]
    action_sizes: tuple[int, ...]
    """Per module; 0 for modules without actuators."""
    parents: tuple[int, ...]
    """Index of each module's parent module, -1 for the root."""
    hop_distance: tuple[tuple[int, ...], ...]
    """`BodyGraph.hop_distance`: [modules][modules] hops in the module tree, -1 between
    separate trees."""
    morphology: tuple[tuple[float, ...], ...]
    """[modules][MORPHOLOGY_WIDTH] each module's `modular_ppo.body.morphology_features`, if
    the config appends them to tokens (`NetworkConfig.morphology`); else empty."""
    max_modules: int
    max_obs_size: int
    max_action_size: int

    @classmethod
    def build(
        cls, body: BodyGraph, obs_sizes: Mapping[str, int], config: NetworkConfig
    ) -> BodyLayout:
        modules = body.module_names
        _check_obs_sizes(body, obs_sizes)
        sizes = tuple(int(obs_sizes[m]) for m in modules)
        actions = tuple(body.modules[m].n_actuators for m in modules)
        return cls(
            modules=modules,
            actuated=body.actuated_modules,
            obs_sizes=sizes,
            action_sizes=actions,
            parents=tuple(
                -1 if body.modules[m].parent is None else modules.index(body.modules[m].parent)
                for m in modules
            ),
            hop_distance=tuple(tuple(int(d) for d in row) for row in body.hop_distance),
            morphology=(
                tuple(tuple(float(x) for x in v) for v in morphology_features(body).values())
                if config.morphology != "none"
                else ()
            ),
            max_modules=_padded(config, "max_modules", len(modules), body),
            max_obs_size=_padded(config, "max_obs_size", max(sizes), body),
            max_action_size=_padded(config, "max_action_size", max(actions), body),
        )

    def index(self, module: str) -> int:
        return self.modules.index(module)

    def obs_size(self, module: str) -> int:
        return self.obs_sizes[self.index(module)]

    def action_size(self, module: str) -> int:
        return self.action_sizes[self.index(module)]

    def check_observations(self, obs: Mapping[str, Any], batch_dims: int | None) -> None:
        """Raise a NetworkConfigError naming the module if `obs` does not fit this body.

        batch_dims: the number of leading axes each array must have, None for any.
        """
        _check_keys("obs", obs, self.modules)
        for module, size in zip(self.modules, self.obs_sizes):
            shape = getattr(obs[module], "shape", None)
            if (
                shape is None
                or not shape
                or shape[-1] != size
                or (batch_dims is not None and len(shape) != batch_dims + 1)
            ):
                lead = "batch" if batch_dims == 1 else "..."
                raise NetworkConfigError(
                    f"obs['{module}'] has shape {shape}; expected [{lead}, {size}] "
                    f"(the obs size this network was built with for module '{module}')."
                )
        leading = {m: tuple(obs[m].shape[:-1]) for m in self.modules}
        if len(set(leading.values())) > 1:
            raise NetworkConfigError(
                f"obs arrays disagree on their batch axes: {leading}. Give every module "
                "observations of the same batch."
            )

    def check_extras(self, extras: Mapping[str, Any]) -> None:
        raw = extras.get("raw_actions") if isinstance(extras, Mapping) else None
        if raw is None:
            raise NetworkConfigError(
                "extras has no 'raw_actions'; pass the `output.extras` of an earlier call "
                "unchanged (or extras=None to sample new actions)."
            )
        _check_keys("extras['raw_actions']", raw, self.actuated)
        for module in self.actuated:
            shape = getattr(raw[module], "shape", None)
            if shape is None or len(shape) != 2 or shape[-1] != self.action_size(module):
                raise NetworkConfigError(
                    f"extras['raw_actions']['{module}'] has shape {shape}; expected "
                    f"[batch, {self.action_size(module)}]. Pass the `output.extras` of an "
                    "earlier call on this body unchanged."
                )


def _check_keys(what: str, given: Mapping[str, Any], expected: tuple[str, ...]) -> None:
    if not isinstance(given, Mapping) or set(given) != set(expected):
        keys = sorted(given) if isinstance(given, Mapping) else type(given).__name__
        raise NetworkConfigError(
            f"{what} must be a dict keyed by exactly the modules {', '.join(expected)}; got {keys}."
        )


def _check_obs_sizes(body: BodyGraph, obs_sizes: Mapping[str, int]) -> None:
    missing = [m for m in body.module_names if m not in obs_sizes]
    extra = sorted(set(obs_sizes) - set(body.module_names))
    if missing or extra:
        raise NetworkConfigError(
            f"obs_sizes does not match the modules of body '{body.name}' "
            f"({', '.join(body.module_names)}): missing {missing}, unexpected {extra}. "
            "Pass the env's `obs_sizes` for this body."
        )
    for module in body.module_names:
        size = obs_sizes[module]
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 0:
            raise NetworkConfigError(
                f"obs_sizes['{module}'] is {size!r}; it must be a non-negative int."
            )


def _padded(config: NetworkConfig, field: str, needed: int, body: BodyGraph) -> int:
    value = getattr(config, field)
    if value is None:
        return needed
    if value < needed:
        raise MaxSizeTooSmall(field, value, needed, body.name)
    return value
