"""Reversi rules on known positions, through the rules module's public functions."""

import numpy as np
import pytest

from boardgym.envs.games import IllegalMoveError, reversi
from tests.boards import reversi_state


def legal(state: reversi.State) -> list[int]:
    return np.flatnonzero(reversi.legal_mask(state)).tolist()


def at(row: int, col: int) -> int:
    return row * reversi.SIZE + col


def test_start_position_has_four_legal_moves() -> None:
    state = reversi.initial_state()
    assert legal(state) == [at(2, 3), at(3, 2), at(4, 5), at(5, 4)]  # d3 c4 f5 e6
    assert reversi.score(state) == (2, 2)
    assert state.to_move == 0 and not reversi.is_terminal(state)


def test_first_move_flips_one_disc_and_passes_the_turn() -> None:
    state = reversi.apply(reversi.initial_state(), at(2, 3))
    assert reversi.score(state) == (4, 1)
    assert state.to_move == 1


def test_multi_direction_flip() -> None:
    state = reversi_state("""
        X . . X . . X .
        . O . O . O . .
        . . O O O . . .
        X O O . O O O X
        . . O O O . . .
        . O . O . O . .
        X . . X . . X .
        . . . . . . . .
    """)
    flipped = reversi.flips(state, at(3, 3))
    expected = [at(1, 1), at(2, 2), at(1, 3), at(2, 3), at(1, 5), at(2, 4), at(3, 1), at(3, 2),
                at(3, 4), at(3, 5), at(3, 6), at(4, 2), at(5, 1), at(4, 3), at(5, 3), at(4, 4),
                at(5, 5)]
    assert sorted(b for b in range(64) if flipped >> b & 1) == sorted(expected)
    after = reversi.apply(state, at(3, 3))
    assert reversi.score(after) == (8 + 17 + 1, 0)
    assert reversi.is_terminal(after) and reversi.result(after, 0) == 1


def test_no_flip_without_a_capping_disc() -> None:
    state = reversi_state("""
        O O O O O O O X
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
    """)
    assert reversi.flips(state, at(1, 0)) == 0
    assert legal(state) == []  # X: O O O ... to the west edge has no X cap; nothing on row 1


def test_forced_pass_keeps_the_turn() -> None:
    # X plays a1; then O has no move and passes, X moves again.
    state = reversi_state("""
        . O X . . . . .
        O O . . . . . .
        X . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . X X
    """)
    assert at(0, 0) in legal(state)
    after = reversi.apply(state, at(0, 0))
    assert after.to_move == 0, "O had no legal move, so X moves again"
    assert not reversi.is_terminal(after)
    assert legal(after)


def test_game_ends_before_the_board_is_full() -> None:
    # X captures O's last disc: no discs left to move, so the game is over.
    state = reversi_state("""
        X O . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
    """)
    after = reversi.apply(state, at(0, 2))
    assert reversi.is_terminal(after)
    assert reversi.score(after) == (3, 0) and reversi.result(after, 0) == 1
    assert legal(after) == []


def test_draw_on_equal_discs() -> None:
    # One empty cell; X's last move flips only h7 and leaves 32-32.
    state = reversi_state("""
        X X X X X X X X
        X X X X X X X X
        X X X X X X X X
        X X X O O O O O
        O O O O O O O O
        O O O O O O O X
        O O O O O O X O
        O O O O O O X .
    """)
    assert reversi.score(state) == (30, 33)
    assert legal(state) == [at(7, 7)]
    after = reversi.apply(state, at(7, 7))
    assert reversi.is_terminal(after)
    assert reversi.score(after) == (32, 32)
    assert reversi.result(after, 0) == 0


def test_illegal_moves_raise() -> None:
    state = reversi.initial_state()
    for action in (0, at(3, 3), -1, 64):
        with pytest.raises(IllegalMoveError):
            reversi.apply(state, action)


def test_observation_planes_are_side_to_move_first() -> None:
    state = reversi.apply(reversi.initial_state(), at(2, 3))
    planes = reversi.observation(state)
    assert planes.shape == (2, 8, 8) and planes.dtype == np.uint8
    assert planes[0].sum() == 1 and planes[1].sum() == 4  # O to move: 1 disc vs X's 4
