"""Body families and held-out bodies in a run's settings: ranges expand, and settings
that cannot work are refused naming the flag."""

import pytest

from modular_ppo.networks import NetworkConfig
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.errors import RunConfigError

SHARED = NetworkConfig(arch="shared")


def test_a_family_range_expands_in_order_to_the_sizes_the_family_has():
    # Centipedes have an even number of legs (at least 4), swimmers at least 2 segments.
    config = TrainRunConfig(body="centipede-3..7,swimmer-1..3", network=SHARED,
                            held_out=("centipede-8", "centipede-10..11"))
    assert config.bodies == ("centipede-4", "centipede-6", "swimmer-2", "swimmer-3")
    assert config.held_out_bodies == ("centipede-8", "centipede-10")
    assert TrainRunConfig(body="centipede-6..6").bodies == ("centipede-6",)


@pytest.mark.parametrize("settings, fragments", [
    (dict(body="centipede-7..3", network=SHARED),
     ["--body centipede-7..3", "range 7..3 is empty", "centipede-3..7"]),
    (dict(body="centipede-3..5", network=SHARED, held_out=("centipede-4",)),
     ["--held-out centipede-4", "also a training body"]),
    (dict(body="centipede-4", held_out=("centipede-8",)),
     ["--held-out centipede-8 with --arch separate", "--arch shared, graph or attention"]),
    (dict(body="centipede-4", network=SHARED, held_out=("centipede-9..8",)),
     ["--held-out centipede-9..8", "is empty"]),
    (dict(body="centipede-5..5", network=SHARED),
     ["--body centipede-5..5", "no centipede has a size in 5..5", "bodies list",
      "centipede-5..7"]),
])
def test_settings_that_cannot_work_are_refused(settings, fragments):
    with pytest.raises(RunConfigError) as error:
        TrainRunConfig(**settings)
    for fragment in fragments:
        assert fragment in str(error.value), (fragment, str(error.value))
