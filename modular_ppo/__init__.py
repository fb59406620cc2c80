"""modular_ppo: train modular bodies as teams of agents with PPO on JAX, Flax NNX and MJX.

The package is a pipeline; each stage imports only earlier ones:
body -> env -> networks -> ppo -> runs -> analysis. Importing it does no work; programs
that render call `modular_ppo.headless.prepare_process()` first (the command line does).
"""

__version__ = "0.1.0"
