"""benchmarks/network_cost.py: the FLOP count of a network's gradient step is the program's
own (it grows with the minibatch, and a transformer over module tokens costs more than one
MLP per module), and the table divides every network by the separate one."""

import network_cost


def test_flops_grow_with_the_minibatch_and_the_table_divides_by_separate():
    small = network_cost.gradient_step("hopper-modular", "separate", 4)
    large = network_cost.gradient_step("hopper-modular", "separate", 8)
    attention = network_cost.gradient_step("hopper-modular", "attention", 4)
    # Products dominate: doubling the samples doubles the count, give or take what is
    # paid once per call.
    assert 1.9 < large.flops / small.flops < 2.1
    assert attention.flops > 3 * small.flops
    assert attention.parameters > small.parameters > 0
    network_cost.measure([small, attention], rounds=1, calls=1)
    assert len(small.cpu_s) == len(attention.cpu_s) == 1 and small.cpu_ms > 0
    lines = network_cost.table([small, attention]).splitlines()
    separate_row, attention_row = lines[2].split(" | "), lines[3].split(" | ")
    assert separate_row[0] == "| separate" and separate_row[-2:] == ["1.0", "1.0 |"]
    assert attention_row[-2] == f"{attention.flops / small.flops:.1f}"
