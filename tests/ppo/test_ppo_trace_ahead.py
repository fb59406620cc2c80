"""`trace_share_ahead`: the device share's MJX step traced before the run needs it (while
it builds networks and states), so that tracing the share's step program later takes MJX's
step from JAX's caches; not traced where the exported store keeps the share's program."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from mujoco import mjx

from tiny_body import tiny_xml

from modular_ppo.body import BodyGraph
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.env.device_twin import device_twin
from modular_ppo.ppo import trace_share_ahead
from modular_ppo.ppo.ahead import CompileAhead, was_exported
from modular_ppo.ppo.exported_step import ExportedSteps
from modular_ppo.ppo.pipelined_rollout import part_sizes

N_ENVS, SHARE = 8, 0.5


@pytest.fixture
def mjx_steps(monkeypatch):
    """How many times MJX's step function has been traced for one env so far."""
    calls = []
    step = mjx.step
    monkeypatch.setattr(mjx, "step", lambda *args: calls.append(1) or step(*args))
    return calls


@pytest.fixture
def loops_batched(monkeypatch):
    """How many loops (scan: the twin's substeps, MJX's own) vmap has batched so far: a
    trace for one env is batched again for each count of envs, which JAX's caches keep
    too (JAX has no public hook for this; its batching rule table is private)."""
    from jax._src.interpreters import batching
    from jax._src.lax.control_flow.loops import scan_p

    calls = []
    rule = batching.fancy_primitive_batchers[scan_p]
    monkeypatch.setitem(batching.fancy_primitive_batchers, scan_p,
                        lambda *args, **kwargs: calls.append(1) or rule(*args, **kwargs))
    return calls


def cpu_env(name: str):
    body = BodyGraph.from_mjcf(tiny_xml(name=name, world='<geom name="floor" type="plane" '
                                        'size="5 5 0.1"/>'))
    return make_env(body, EnvConfig(episode_length=10), "cpu", nthread=1)


def trace_share_step(env) -> None:
    """Trace what the share's step program calls: the twin's env step, vmapped over a
    share's part of CPU-backend states (as `_split` hands it over)."""
    n = part_sizes(N_ENVS, SHARE)[2]
    states = jax.eval_shape(jax.vmap(env.reset), jax.random.split(jax.random.key(0), n))
    actions = {m: jax.ShapeDtypeStruct((n, k), jnp.float32) for m, k in env.action_sizes.items()}
    jax.eval_shape(jax.vmap(device_twin(env).step), states, actions)


def test_the_share_step_takes_mjx_step_traced_ahead(mjx_steps, loops_batched):
    traced_there = cpu_env("there")
    trace_share_step(traced_there)
    assert mjx_steps and loops_batched  # without a trace ahead, both happen here

    ahead = cpu_env("ahead")
    trace_share_ahead(ahead, N_ENVS, SHARE).result()
    before = len(mjx_steps), len(loops_batched)
    assert before[0] > 1 and before[1] > 1
    trace_share_step(ahead)
    # the states' shapes and types, and the share's env count, matched the trace ahead
    assert (len(mjx_steps), len(loops_batched)) == before
    assert trace_share_ahead(ahead, N_ENVS, SHARE) is trace_share_ahead(ahead, N_ENVS, SHARE)


def test_no_trace_ahead_without_a_share_or_where_the_store_keeps_the_program(mjx_steps,
                                                                            tmp_path):
    env = cpu_env("stored")
    assert trace_share_ahead(env, N_ENVS, 0.0).result() is None
    store = ExportedSteps(tmp_path, "the run's key")
    assert not was_exported(store, "stored share", "step")

    def step(x):
        return x * 2

    compiler = CompileAhead(store)
    compiler.submit(jax.jit(step), jnp.ones(3), label="stored share")
    compiler.close()
    assert was_exported(store, "stored share", "step")
    assert not was_exported(store, "other share", "step")
    assert not was_exported(ExportedSteps(tmp_path, "another key"), "stored share", "step")
    assert trace_share_ahead(env, N_ENVS, SHARE, store, label="stored").result() is None
    assert mjx_steps == []
