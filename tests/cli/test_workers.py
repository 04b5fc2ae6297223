"""`pipeline.cli.workers.run`, what `check` and `regress` share: results in the
order of the tasks whatever order they finish in, `on_done(i)` as task `i`
finishes, and a task's exception ending the run without starting the tasks
still queued. Oracles: the tasks' own arguments, and the files each task
that ran leaves behind. (The Dask path: tests/cli/test_dask.py, on a real cluster.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pipeline.cli import workers


def slow_square(n: int, seconds: float) -> int:
    """A task that finishes after `seconds` (a module-level function: it pickles by name)."""
    time.sleep(seconds)
    return n * n


def mark_then_maybe_fail(folder: str, n: int, fail: bool) -> int:
    """Leaves `folder/n` as proof that task n started; fails at once if `fail`, else takes a while."""
    Path(folder, str(n)).write_text(str(os.getpid()))
    if fail:
        raise ValueError(f"task {n} refused")
    time.sleep(0.2)
    return n


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_come_back_in_task_order_whatever_order_they_finish(jobs):
    # With two processes the first task is the slowest: it finishes last.
    tasks = [(0, 1.5), (1, 0.0), (2, 0.0), (3, 0.0)]
    done: list[int] = []
    assert workers.run(slow_square, tasks, jobs=jobs, on_done=done.append) == [0, 1, 4, 9]
    assert sorted(done) == [0, 1, 2, 3]  # one tick per task
    if jobs == 1:
        assert done == [0, 1, 2, 3]  # in this process: one after the other
    else:
        assert done[-1] == 0  # ticks as they finish: the slow one last


def test_jobs_spawn_processes_and_a_single_task_runs_here(tmp_path):
    folder = tmp_path / "b"
    folder.mkdir()
    assert workers.run(mark_then_maybe_fail, [(str(folder), n, False) for n in range(3)], jobs=2) == [0, 1, 2]
    pids = {p.read_text() for p in folder.iterdir()}
    assert str(os.getpid()) not in pids and 1 <= len(pids) <= 2  # spawned processes, at most `jobs`
    single = tmp_path / "c"
    single.mkdir()
    assert workers.run(mark_then_maybe_fail, [(str(single), 7, False)], jobs=2) == [7]
    assert (single / "7").read_text() == str(os.getpid())  # one task: no process to spawn


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_task_s_exception_ends_the_run_and_the_queued_tasks_do_not_start(tmp_path, jobs):
    tasks = [(str(tmp_path), n, n == 0) for n in range(20)]
    done: list[int] = []
    with pytest.raises(ValueError, match="task 0 refused"):
        workers.run(mark_then_maybe_fail, tasks, jobs=jobs, on_done=done.append)
    time.sleep(3)  # the queued tasks would all have run by now (20 × 0.2 s over two processes)
    started = sorted(int(p.name) for p in tmp_path.iterdir())
    assert 0 in started and 0 not in done
    if jobs == 1:
        assert started == [0]
    else:  # the pool hands a few tasks ahead to its queue (jobs + 1); the rest are cancelled
        assert len(started) <= 2 * jobs + 2 < len(tasks), started
