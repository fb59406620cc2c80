"""Packaging beside pyproject.toml (which holds the metadata): the bundled body files stay
in `bodies/` at the top of the repository and are installed as `modular_ppo/bodies`."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["modular_ppo", "modular_ppo.*"]), "modular_ppo.bodies"],
    package_dir={"modular_ppo.bodies": "bodies"},
    package_data={"modular_ppo.bodies": ["*.xml", "**/*.xml", "**/*.txt", "**/*.md", "**/LICENSE*"]},
)
