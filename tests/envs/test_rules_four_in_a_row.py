"""Four-in-a-row rules on known positions and move sequences, on several board sizes."""

import numpy as np
import pytest

from boardgym.envs.games import IllegalMoveError, four_in_a_row
from tests.boards import c4_state


def play(moves: list[int], **size: int) -> four_in_a_row.State:
    state = four_in_a_row.initial_state(**size)
    for column in moves:
        state = four_in_a_row.apply(state, column)
    return state


SIZES = [dict(rows=6, columns=7, connect=4), dict(rows=6, columns=9, connect=5),
         dict(rows=4, columns=4, connect=3), dict(rows=7, columns=8, connect=4)]


@pytest.mark.parametrize("size", SIZES)
def test_vertical_win(size: dict[str, int]) -> None:
    k = size["connect"]
    state = play([0, 1] * (k - 1) + [0], **size) if k <= size["rows"] else None
    if state is None:
        pytest.skip("no vertical line fits")
    assert four_in_a_row.is_terminal(state) and four_in_a_row.result(state, 0) == 1


@pytest.mark.parametrize("size", SIZES)
def test_horizontal_win_for_second_player(size: dict[str, int]) -> None:
    k = size["connect"]
    moves = [size["columns"] - 1]  # X starts far right, then follows O one row higher
    for column in range(k - 1):
        moves += [column, column]
    state = play([*moves, k - 1], **size)
    assert not four_in_a_row.is_terminal(play(moves, **size))
    assert four_in_a_row.is_terminal(state) and four_in_a_row.result(state, 0) == -1


@pytest.mark.parametrize("size", SIZES)
def test_diagonal_wins_both_ways(size: dict[str, int]) -> None:
    k = size["connect"]
    # Up-right diagonal of X from (bottom, 0): column c needs c tokens under X's.
    rising = c4_board(size, {(c, c) for c in range(k)}, below="O")
    falling = c4_board(size, {(k - 1 - c, c) for c in range(k)}, below="O")
    for state in (rising, falling):
        assert four_in_a_row.is_terminal(state) and four_in_a_row.result(state, 0) == 1


def c4_board(size: dict[str, int], xs: set[tuple[int, int]], below: str) -> four_in_a_row.State:
    """Board with X at (height, column) cells and ``below`` filling under them; O to move."""
    rows, cols = size["rows"], size["columns"]
    grid = [["."] * cols for _ in range(rows)]
    for height, col in xs:
        grid[rows - 1 - height][col] = "X"
        for h in range(height):
            grid[rows - 1 - h][col] = below
    return c4_state("\n".join("".join(r) for r in grid), to_move=1, connect=size["connect"])


def test_no_wrap_between_columns() -> None:
    # Three at the top of column 0 and one at the bottom of column 1 are not a line.
    state = c4_state("""
        X......
        X......
        X......
        O......
        O......
        OX.....
    """, to_move=1)
    assert not four_in_a_row.is_terminal(state)


def test_full_column_is_illegal() -> None:
    state = play([3] * 6)
    assert not four_in_a_row.legal_mask(state)[3]
    assert four_in_a_row.legal_mask(state).sum() == 6
    with pytest.raises(IllegalMoveError):
        four_in_a_row.apply(state, 3)
    with pytest.raises(IllegalMoveError):
        four_in_a_row.apply(state, 7)


def test_full_board_draw() -> None:
    # Column pairs filled in a pattern that never lines up four.
    order = []
    for pair in ((0, 1), (2, 3), (4, 5)):
        order += [pair[0], pair[1]] * 3 + [pair[1], pair[0]] * 3
    order += [6] * 6
    state = four_in_a_row.initial_state()
    for i, column in enumerate(order):
        assert not four_in_a_row.is_terminal(state), f"ended early at move {i}"
        state = four_in_a_row.apply(state, column)
    assert four_in_a_row.is_terminal(state) and four_in_a_row.result(state, 0) == 0
    assert not four_in_a_row.legal_mask(state).any()


def test_observation_has_row_zero_on_top() -> None:
    planes = four_in_a_row.observation(play([2]))
    assert planes.shape == (2, 6, 7)
    assert planes[1, 5, 2] == 1 and planes.sum() == 1  # X's token, seen by O to move


@pytest.mark.parametrize("bad", [dict(rows=3), dict(columns=3), dict(connect=9),
                                 dict(rows=8, columns=8), dict(rows=6.0)])
def test_bad_sizes_raise_clear_errors(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"rows|columns|connect|fit"):
        four_in_a_row.initial_state(**bad)  # type: ignore[arg-type]


def test_legal_mask_is_all_false_after_a_win() -> None:
    state = play([0, 1, 0, 1, 0, 1, 0])
    assert four_in_a_row.is_terminal(state)
    assert np.array_equal(four_in_a_row.legal_mask(state), np.zeros(7, bool))
