"""A resumed run's TensorBoard events, like its metrics.jsonl, hold each step once: the
events logged after the checkpoint it resumes from are dropped, then written again."""

from modular_ppo.runs.event_files import event_files, read_events, rewind_event_files
from modular_ppo.runs.metrics_log import MetricsLog
from modular_ppo.runs.run_dir import TENSORBOARD_DIR, read_metrics, rewind_metrics


def scalars(run_dir) -> list[tuple[int, str, float]]:
    """(step, tag, value) of every scalar in the run's event files, in file order."""
    return [(event.step, value.tag, value.simple_value)
            for path in event_files(run_dir / TENSORBOARD_DIR)
            for event in read_events(path)
            for value in event.summary.value]


def log_steps(run_dir, steps, value: float) -> None:
    log = MetricsLog(run_dir)
    for step in steps:
        log.write(step, {"loss": value + step})
    log.close()


def test_rewinding_drops_the_events_after_the_step_and_keeps_the_new_ones(tmp_path):
    log_steps(tmp_path, range(1, 11), 0.0)
    assert [s for s, _, _ in scalars(tmp_path)] == list(range(1, 11))

    assert rewind_metrics(tmp_path, 6) == 4
    assert scalars(tmp_path) == [(s, "loss", float(s)) for s in range(1, 7)]

    log_steps(tmp_path, range(7, 11), 100.0)  # the resumed run trains 7..10 again
    assert scalars(tmp_path) == ([(s, "loss", float(s)) for s in range(1, 7)]
                                 + [(s, "loss", 100.0 + s) for s in range(7, 11)])
    assert [row["step"] for row in read_metrics(tmp_path)] == list(range(1, 11))


def test_a_torn_last_record_is_dropped_and_untouched_files_stay_as_they_were(tmp_path):
    log_steps(tmp_path, range(1, 4), 0.0)
    (path,) = event_files(tmp_path / TENSORBOARD_DIR)
    whole = path.read_bytes()
    assert rewind_event_files(tmp_path / TENSORBOARD_DIR, 3) == 0
    assert path.read_bytes() == whole

    path.write_bytes(whole[:-5])  # a process killed while writing the last event
    assert [s for s, _, _ in scalars(tmp_path)] == [1, 2]
    rewind_event_files(tmp_path / TENSORBOARD_DIR, 3)
    assert [s for s, _, _ in scalars(tmp_path)] == [1, 2]
    assert whole.startswith(path.read_bytes())  # the complete records, unchanged
