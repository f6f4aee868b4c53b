"""How many workers a backend runs: capped, and never more than there are tasks."""

from __future__ import annotations

import os

import pytest

from boardgym.train.cli import main
from boardgym.train.common.backends import Backend, flat_map, parallel_map, task_ranges
from boardgym.train.common.commands import MAX_WORKERS, local_cpus
from tests.commands import usage_error


def test_workers_cap(capsys: pytest.CaptureFixture[str]) -> None:
    Backend(workers=local_cpus())
    with pytest.raises(ValueError, match=f"local backend runs at most {local_cpus()} "
                                         r"processes.*--backend ray"):
        Backend(workers=local_cpus() + 1)
    Backend("ray", workers=MAX_WORKERS)
    with pytest.raises(ValueError, match=f"at most {MAX_WORKERS} tasks"):
        Backend("ray", workers=MAX_WORKERS + 1)
    err = usage_error(["evaluate", "tictactoe", "random", "random", "--workers",
                       str(local_cpus() + 1)], capsys)
    assert f"at most {local_cpus()} processes" in err and "--backend ray" in err
    with pytest.raises(SystemExit):
        main(["evaluate", "tictactoe", "random", "random", "--workers", "1000000"])
    assert f"at most {MAX_WORKERS}" in capsys.readouterr().err


def pid(state: None, task: range) -> list[int]:
    return [os.getpid()] * len(task)


def nothing() -> None:
    return None


@pytest.mark.skipif(local_cpus() < 2, reason="two local workers need two CPUs")
def test_work_of_one_task_runs_in_this_process() -> None:
    backend = Backend(workers=2)
    one = task_ranges(25, backend, 4)
    assert len(one) == 1 and [list(task) for task in one] == [[0, 1, 2, 3]]
    assert set(flat_map(pid, one, nothing, backend)) == {os.getpid()}
    two = task_ranges(2, backend, 4)
    assert len(two) == 2 and os.getpid() not in set(flat_map(pid, two, nothing, backend))
    assert list(parallel_map(pid, [], nothing, backend)) == []
