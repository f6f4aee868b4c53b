"""The parallel map's index ranges and flattening, in this process and on worker processes."""

from __future__ import annotations

import itertools
from contextlib import closing

import pytest

from boardgym.train.common.backends import Backend, flat_map, task_ranges

INLINE, POOL = Backend(), Backend(workers=2)


def squares(offset: int, indices: range) -> list[int]:
    """One task: ``index ** 2 + offset`` for each index of the range (picklable)."""
    return [index ** 2 + offset for index in indices]


def ten() -> int:
    """A worker's state (picklable)."""
    return 10


def test_inline_ranges_hold_one_index_and_pool_ranges_the_size_cut_at_the_total() -> None:
    assert list(task_ranges(4, INLINE, 3)) == [range(0, 1), range(1, 2), range(2, 3)]
    assert list(task_ranges(4, POOL, 10)) == [range(0, 4), range(4, 8), range(8, 10)]
    assert list(task_ranges(4, POOL, 0)) == []
    endless = task_ranges(3, POOL)
    assert list(itertools.islice(endless, 3)) == [range(0, 3), range(3, 6), range(6, 9)]


@pytest.mark.parametrize("backend", [INLINE, POOL], ids=["inline", "pool"])
def test_flat_map_flattens_in_index_order_and_counts_each_task(backend: Backend) -> None:
    counted: list[int] = []
    items = list(flat_map(squares, task_ranges(3, backend, 7), ten, backend, None,
                          counted.append))
    assert items == [index ** 2 + 10 for index in range(7)]
    assert sum(counted) == 7
    assert counted == ([1] * 7 if backend.inline else [3, 3, 1])


def test_flat_map_uses_the_state_given_in_this_process_and_stops_when_closed() -> None:
    assert list(flat_map(squares, task_ranges(2, INLINE, 2), ten, INLINE, 0)) == [0, 1]
    with closing(flat_map(squares, task_ranges(5, POOL), ten, POOL)) as endless:
        assert list(itertools.islice(endless, 12)) == [index ** 2 + 10 for index in range(12)]
