"""Shared adapters of the interop tests: one per (body, settings), so each compiles once."""

from __future__ import annotations

import functools

import pytest

from modular_ppo.env import EnvConfig


@functools.cache
def _jaxmarl(name: str, episode_length: int):
    from modular_ppo.interop import JaxMARLEnv

    return JaxMARLEnv(name, config=EnvConfig(episode_length=episode_length))


@pytest.fixture(scope="session")
def jaxmarl_env():
    """jaxmarl_env(name, episode_length) -> the session's JaxMARLEnv."""
    return _jaxmarl
