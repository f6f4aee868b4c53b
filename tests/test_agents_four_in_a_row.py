"""The classic four-in-a-row AIs: hand-computed ``potential`` values, the quirk, board sizes.

Boards are drawn top row first; ``X`` is the side to move, ``O`` the other side.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from boardgym.agents.four_in_a_row import potential
from boardgym.envs.games import four_in_a_row

from boardgym import agents
from tests.boards import random_position

SEEDS = range(30)
EMPTY, ME, OPP = ".", "X", "O"

# X wins in column 1 and in column 3; O threatens to win in column 6.
TWO_WINS_AND_A_THREAT = """
.......
.......
.......
.X.X..O
.X.X..O
.X.X..O
"""
# O threatens to win in column 6; X has no threat.
ONE_THREAT = """
.......
.......
.......
......O
X.....O
X..X..O
"""
# X has two tokens in column 0; O's two tokens are too far apart to help each other.
VERTICAL_PAIR = """
.......
.......
.......
.......
X......
X.O...O
"""


def position(board: str, connect: int = four_in_a_row.CONNECT) -> four_in_a_row.State:
    """The state drawn in ``board`` (its size is the drawing's size)."""
    rows = board.split()
    geom = four_in_a_row.geometry(len(rows), len(rows[0]), connect)
    bits = {ME: 0, OPP: 0, EMPTY: 0}
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            bits[ch] |= 1 << int(geom.board_map[r, c])
    return four_in_a_row.State(bits[ME], bits[OPP], 0,
                               four_in_a_row.has_line(bits[OPP], geom), geom)


def moves_played(spec: str, state: four_in_a_row.State) -> set[int]:
    """Every column ``spec`` plays in ``state`` over ``SEEDS``."""
    agent = agents.make("four_in_a_row", spec)
    return {int(agent.act(state, np.random.default_rng(seed))) for seed in SEEDS}


# -- the classic algorithm, written out naively on a list-of-columns board (the oracle) -----


def classic_potential(board: list[list[str]], tile: str, depth: int, connect: int) -> list[float]:
    """The classic program's getPotentialMoves; ``board[c]`` lists column c bottom first."""
    width, height = len(board), len(board[0])
    if depth == 0 or all(EMPTY not in column for column in board):
        return [0] * width
    enemy = OPP if tile == ME else ME
    values: list[float] = [0] * width
    for first in range(width):
        dupe = copy.deepcopy(board)
        if EMPTY not in dupe[first]:
            continue
        dupe[first][dupe[first].index(EMPTY)] = tile
        if classic_winner(dupe, tile, connect):
            values[first] = 1
            break
        if all(EMPTY not in column for column in dupe):
            values[first] = 0
            continue
        for counter in range(width):
            dupe2 = copy.deepcopy(dupe)
            if EMPTY not in dupe2[counter]:
                continue
            dupe2[counter][dupe2[counter].index(EMPTY)] = enemy
            if classic_winner(dupe2, enemy, connect):
                values[first] = -1
                break
            results = classic_potential(dupe2, tile, depth - 1, connect)
            values[first] += (sum(results) / width) / width
    assert height > 0
    return values


def classic_winner(board: list[list[str]], tile: str, connect: int) -> bool:
    """Whether ``tile`` has ``connect`` in a row on the list-of-columns board."""
    width, height = len(board), len(board[0])
    for c in range(width):
        for r in range(height):
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                cells = [(c + i * dc, r + i * dr) for i in range(connect)]
                if all(0 <= x < width and 0 <= y < height and board[x][y] == tile
                       for x, y in cells):
                    return True
    return False


def columns_of(state: four_in_a_row.State) -> list[list[str]]:
    """The state as the classic list-of-columns board (bottom first)."""
    planes = four_in_a_row.observation(state)  # row 0 on top
    rows, cols = planes.shape[1:]
    return [[ME if planes[0, r, c] else OPP if planes[1, r, c] else EMPTY
             for r in reversed(range(rows))] for c in range(cols)]


# -- tests ---------------------------------------------------------------------------------


def test_the_win_stops_the_scan() -> None:
    """Column 0 lets O win (-1); column 1 wins (1) and ends the scan, so column 3, another
    win, keeps 0."""
    assert potential(position(TWO_WINS_AND_A_THREAT), 1) == (-1, 1, 0, 0, 0, 0, 0)


def test_the_quirk_makes_lookahead_play_the_leftmost_win() -> None:
    assert moves_played("lookahead:2", position(TWO_WINS_AND_A_THREAT)) == {1}


def test_every_move_but_the_block_loses() -> None:
    state = position(ONE_THREAT)
    assert potential(state, 1) == (-1, -1, -1, -1, -1, -1, 0)
    assert moves_played("lookahead:1", state) == {6}
    assert moves_played("lookahead", state) == {6}


def test_hand_computed_depth_two_value() -> None:
    """X can make four in column 0 only by playing it twice, and only if O's reply (k) is
    not column 0: six of the seven replies leave a depth-1 sum of 1 (column 0 wins first),
    each adding 1/7/7. No other line of four is within reach of either side."""
    state = position(VERTICAL_PAIR)
    assert potential(state, 1) == (0,) * 7
    values = potential(state, 2)
    assert values[0] == pytest.approx(6 / 49)
    assert values[1:] == (0,) * 6


def test_depth_zero_and_a_full_board_give_zeros() -> None:
    assert potential(position(ONE_THREAT), 0) == (0,) * 7
    full = position("XOXO\nXOXO\nOXOX\nOXOX")
    assert potential(full, 3) == (0,) * 4


@pytest.mark.parametrize(("size", "depth", "seed", "moves"), [
    ({}, 2, 0, 16),
    ({"rows": 4, "columns": 5, "connect": 3}, 2, 1, 6),
    ({"rows": 4, "columns": 5, "connect": 3}, 2, 5, 5),
    ({"rows": 5, "columns": 4, "connect": 4}, 3, 0, 8),
    ({"rows": 5, "columns": 4, "connect": 4}, 3, 3, 8),
])
def test_potential_equals_the_classic_algorithm_exactly(size: dict[str, int], depth: int,
                                                         seed: int, moves: int) -> None:
    state = random_position(four_in_a_row, np.random.default_rng(seed), moves, **size)
    expected = classic_potential(columns_of(state), ME, depth, state.geom.connect)
    assert any(value not in (-1, 0, 1) for value in expected)  # a position worth checking
    assert list(potential(state, depth)) == expected


def test_ties_are_broken_at_random_among_playable_columns() -> None:
    state = position("X...\nXOXO\nXOXO\nOXOX")  # column 0 full; nothing decided
    assert moves_played("lookahead:1", state) == {1, 2, 3}


@pytest.mark.parametrize(("size", "spec"), [
    ({"rows": 4, "columns": 4, "connect": 2}, "lookahead:2"),
    ({"rows": 4, "columns": 12, "connect": 4}, "lookahead:1"),
    ({"rows": 12, "columns": 4, "connect": 5}, "lookahead:2"),
    ({"rows": 7, "columns": 8, "connect": 4}, "lookahead:2"),
])
def test_lookahead_plays_whole_games_on_every_board_size(size: dict[str, int],
                                                         spec: str) -> None:
    rng = np.random.default_rng(0)
    players = agents.make("four_in_a_row", spec), agents.make("four_in_a_row", "random")
    state = four_in_a_row.initial_state(**size)
    while not four_in_a_row.is_terminal(state):
        state = four_in_a_row.apply(state, int(players[state.to_move].act(state, rng)))
    assert state.me | state.opp != 0


def test_lookahead_spec_and_names() -> None:
    assert {"lookahead", "random"} <= set(agents.names("four_in_a_row"))
    assert agents.make("connect_four", "lookahead:3").depth == 3  # type: ignore[attr-defined]
    for bad in ("lookahead:0", "lookahead:-1", "lookahead:two", "lookahead:"):
        with pytest.raises(ValueError, match="positive integer"):
            agents.make("four_in_a_row", bad)
