"""Tic-tac-toe rules: all eight lines, a draw, illegal moves."""

import numpy as np
import pytest

from boardgym.envs.games import IllegalMoveError, tictactoe

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def play(cells: list[int]) -> tictactoe.State:
    state = tictactoe.initial_state()
    for cell in cells:
        state = tictactoe.apply(state, cell)
    return state


@pytest.mark.parametrize("line", LINES)
def test_every_line_wins(line: tuple[int, int, int]) -> None:
    others = [c for c in range(9) if c not in line][:2]  # O's two marks cannot win
    moves = [line[0], others[0], line[1], others[1], line[2]]
    state = play(moves)
    assert tictactoe.is_terminal(state)
    assert tictactoe.result(state, 0) == 1
    assert not tictactoe.legal_mask(state).any()


def test_second_player_wins() -> None:
    state = play([0, 3, 1, 4, 8, 5])
    assert tictactoe.is_terminal(state) and tictactoe.result(state, 0) == -1


def test_draw() -> None:
    state = play([0, 4, 8, 1, 7, 6, 2, 5, 3])
    assert tictactoe.is_terminal(state) and tictactoe.result(state, 0) == 0


def test_taken_cell_and_out_of_range_are_illegal() -> None:
    state = play([4])
    for action in (4, -1, 9):
        with pytest.raises(IllegalMoveError):
            tictactoe.apply(state, action)
    assert np.flatnonzero(tictactoe.legal_mask(state)).tolist() == [0, 1, 2, 3, 5, 6, 7, 8]
