"""An env whose episodes end visibly: the same ModularEnv on a simulator that never restarts.

`ModularEnv.step` starts a new episode inside the step that ends one (auto-reset), so the
state it returns after a done step is the next episode's first and the terminal
observation is gone. Other libraries' APIs hand the terminal observation to their user and
reset on their own terms (PettingZoo and Gymnasium on `reset()`, JaxMARL in its `step`).
The adapters therefore step `episodic(env)`: the env's own body, task, config and
simulator, with the simulator's `restart_where` holding the state. Everything else
(observations, rewards, termination, truncation, episode metrics) is ModularEnv's code.
"""

from __future__ import annotations

from typing import Any

from jaxtyping import Array, Bool, Float

from modular_ppo.env import ModularEnv, Simulator


class HeldSimulator:
    """A `Simulator` that delegates to `simulator` but never restarts: `restart_where`
    returns `data` unchanged, so a done step's state is the terminal state. Attributes
    other than the protocol's (e.g. `.model`) are the wrapped simulator's."""

    def __init__(self, simulator: Simulator):
        self.simulator = simulator
        """The wrapped simulator, which starts and steps the states."""
        self.dt = simulator.dt
        """Seconds per control step."""

    def start(self, qpos: Float[Array, "nq"], qvel: Float[Array, "nv"]) -> Any:
        return self.simulator.start(qpos, qvel)

    def restart_where(
        self, done: Bool[Array, ""], data: Any, qpos: Float[Array, "nq"], qvel: Float[Array, "nv"]
    ) -> Any:
        return data

    def step(self, data: Any, ctrl: Float[Array, "nu"]) -> Any:
        return self.simulator.step(data, ctrl)

    def __getattr__(self, name: str) -> Any:
        if name == "simulator":  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.simulator, name)


def episodic(env: ModularEnv) -> ModularEnv:
    """`env` without auto-reset: after a done step the state stays the terminal one (its
    obs the terminal observation; `done` and `info["truncation"]` as `env.step` gives
    them); the caller starts the next episode with `reset`. Stepping on from a terminal
    state continues its physics: don't."""
    return ModularEnv(env.body, env.task, env.config, physics=HeldSimulator(env.physics))
