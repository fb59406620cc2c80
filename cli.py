"""`python cli.py ...` from a clone: the modular_ppo command line (the `modular-ppo`
console script; its code is `modular_ppo/cli.py`)."""

from modular_ppo.cli import main, run

__all__ = ["main", "run"]

if __name__ == "__main__":
    run()
