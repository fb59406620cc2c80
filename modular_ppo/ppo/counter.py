"""An environment-step counter that does not wrap, in int32 arithmetic (no jax_enable_x64)."""

from __future__ import annotations

import jax.numpy as jnp
from flax import struct
from jaxtyping import Array, Int

LOW_BASE = 2**30
"""`low` stays below this; `high` counts its multiples. int32 `high` reaches 2**61 steps."""


@struct.dataclass
class StepCounter:
    """A count of environment steps as `high * 2**30 + low`, both int32 on device, exact up
    to 2**61 (a run at 10**7 steps per second takes over 7,000 years to get there).
    `int(counter)` gives the exact Python int on the host."""

    high: Int[Array, ""]
    low: Int[Array, ""]

    @classmethod
    def zero(cls) -> StepCounter:
        return cls(high=jnp.zeros((), jnp.int32), low=jnp.zeros((), jnp.int32))

    @classmethod
    def of(cls, steps: int) -> StepCounter:
        """A counter holding `steps` (a host int), e.g. to test behavior near 2**31."""
        high, low = divmod(int(steps), LOW_BASE)
        return cls(high=jnp.asarray(high, jnp.int32), low=jnp.asarray(low, jnp.int32))

    def add(self, steps: int) -> StepCounter:
        """The counter plus `steps` (a static Python int below 2**30, e.g. the steps of
        one PPO iteration; larger increments are added in parts)."""
        high, low = self.high, self.low
        for part in _parts(steps):
            low = low + part  # < 2**31: low < 2**30 and part < 2**30
            high = high + low // LOW_BASE
            low = low % LOW_BASE
        return StepCounter(high=high, low=low)

    def __int__(self) -> int:
        return int(self.high) * LOW_BASE + int(self.low)


def _parts(steps: int) -> list[int]:
    if steps < 0:
        raise ValueError(f"a step counter only counts up; got an increment of {steps}.")
    parts = [LOW_BASE - 1] * (steps // (LOW_BASE - 1))
    return [*parts, steps % (LOW_BASE - 1)]
