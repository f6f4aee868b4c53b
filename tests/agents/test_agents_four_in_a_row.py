"""The classic four-in-a-row AI: ``potential`` by hand, the quirk, and the batched search equal
to a naive transcription of the classic program, value for value, on several board sizes.

Boards are drawn top row first; ``X`` is the side to move, ``O`` the other side.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest

from boardgym import agents
from boardgym.agents.four_in_a_row import potential, python_sum
from boardgym.envs.games import four_in_a_row
from boardgym.envs.games.core import batch_of, unbatch
from tests.boards import c4_state, candidate_sets, random_batch

SEEDS = range(30)

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


def values(board: str, depth: int, connect: int = four_in_a_row.CONNECT) -> tuple[float, ...]:
    """``potential`` of the position drawn in ``board`` (X to move), column by column."""
    column_values, _ = potential(batch_of(c4_state(board, connect=connect)), depth)
    return tuple(column_values[:, 0].tolist())


def moves_played(spec: str, board: str) -> set[int]:
    """Every column ``spec`` plays in the position drawn in ``board`` over ``SEEDS``."""
    agent, state = agents.make("four_in_a_row", spec), c4_state(board)
    return {int(agent.act(state, np.random.default_rng(seed))) for seed in SEEDS}


# -- the classic program, transcribed naively (the reference) ------------------------------


@cache
def classic_potential(me: int, opp: int, depth: int,
                      geom: four_in_a_row.Geometry) -> tuple[float, ...]:
    """The classic program's ``getPotentialMoves`` line by line, on bitboards: ``me`` to move
    (its ``tile``), ``opp`` the enemy. Values are ints until a sum of replies makes them
    floats, as in the classic program."""
    columns = geom.columns
    if depth == 0 or (me | opp) == geom.board:
        return (0,) * columns
    result: list[float] = [0] * columns
    for first, first_cells in enumerate(geom.column_ints):
        drop = four_in_a_row.landing_cells(me | opp, geom) & first_cells
        if not drop:
            continue
        mine = me | drop
        if four_in_a_row.has_line(mine, geom):
            result[first] = 1
            break
        if (mine | opp) == geom.board:
            result[first] = 0
            continue
        for counter_cells in geom.column_ints:
            reply = four_in_a_row.landing_cells(mine | opp, geom) & counter_cells
            if not reply:
                continue
            theirs = opp | reply
            if four_in_a_row.has_line(theirs, geom):
                result[first] = -1
                break
            found = classic_potential(mine, theirs, depth - 1, geom)
            result[first] += (sum(found) / columns) / columns
    return tuple(result)


def assert_potential_is_classic(state: Any, depth: int) -> None:
    """``potential`` of every game of the batch equals ``classic_potential``, value for
    value, with its types (which values the classic program holds as floats); and
    ``lookahead:depth`` may play exactly the playable columns of highest value."""
    column_values, is_float = potential(state, depth)
    candidates = candidate_sets("four_in_a_row", f"lookahead:{depth}", state)
    for i in range(len(state.me)):
        single = unbatch(state, i)
        expected = classic_potential(single.me, single.opp, depth, state.geom)
        assert column_values[:, i].tolist() == list(expected)
        assert is_float[:, i].tolist() == [isinstance(v, float) for v in expected]
        playable = np.flatnonzero(four_in_a_row.legal_mask(single))
        best = max((expected[c] for c in playable), default=None)
        assert int(candidates[i]) == sum(1 << int(c) for c in playable if expected[c] == best)


# -- tests ---------------------------------------------------------------------------------


def test_the_win_stops_the_scan() -> None:
    """Column 0 lets O win (-1); column 1 wins (1) and ends the scan, so column 3, another
    win, keeps 0."""
    assert values(TWO_WINS_AND_A_THREAT, 1) == (-1, 1, 0, 0, 0, 0, 0)


def test_the_quirk_makes_lookahead_play_the_leftmost_win() -> None:
    assert moves_played("lookahead:2", TWO_WINS_AND_A_THREAT) == {1}


def test_every_move_but_the_block_loses() -> None:
    assert values(ONE_THREAT, 1) == (-1, -1, -1, -1, -1, -1, 0)
    assert moves_played("lookahead:1", ONE_THREAT) == {6}
    assert moves_played("lookahead", ONE_THREAT) == {6}


def test_hand_computed_depth_two_value() -> None:
    """X can make four in column 0 only by playing it twice, and only if O's reply (k) is
    not column 0: six of the seven replies leave a depth-1 sum of 1 (column 0 wins first),
    each adding 1/7/7. No other line of four is within reach of either side."""
    assert values(VERTICAL_PAIR, 1) == (0,) * 7
    found = values(VERTICAL_PAIR, 2)
    assert found[0] == pytest.approx(6 / 49)
    assert found[1:] == (0,) * 6
    state = c4_state(VERTICAL_PAIR)
    assert classic_potential(state.me, state.opp, 2, state.geom) == found


def test_depth_zero_and_a_full_board_give_zeros() -> None:
    assert values(ONE_THREAT, 0) == (0,) * 7
    assert values("XOXO\nXOXO\nOXOX\nOXOX", 3) == (0,) * 4


def test_ties_are_broken_at_random_among_playable_columns() -> None:
    board = "X...\nXOXO\nXOXO\nOXOX"  # column 0 full; nothing decided
    agent, state = agents.make("four_in_a_row", "lookahead:1"), c4_state(board)
    assert {agent.act(state, np.random.default_rng(seed)) for seed in SEEDS} == {1, 2, 3}


BOARD_SIZES = [{"rows": 4, "columns": 5, "connect": 3}, {"rows": 5, "columns": 4},
               {"rows": 7, "columns": 8}, {"rows": 6, "columns": 7}]
LATE_POSITIONS = 200
"""Positions a board size and depth, from the middle of the game to its end."""


@pytest.mark.parametrize("size", BOARD_SIZES)
@pytest.mark.parametrize("depth", [1, 2])
def test_potential_is_classic_late_in_the_game(depth: int, size: dict[str, int]) -> None:
    """Quiet play from half full to full: full columns, threats for both sides, some games
    over."""
    cells = size["rows"] * size["columns"]
    state = random_batch(four_in_a_row, LATE_POSITIONS, 2, cells // 2, cells + 1, quiet=True,
                         options=size)
    full_columns = ((state.me | state.opp)[:, None] & np.uint64(state.geom.top)
                    & state.geom.column_bits) != 0
    live = four_in_a_row.legal_mask(state).any(axis=1)
    assert full_columns[live].any(axis=1).mean() > 0.3
    assert_potential_is_classic(state, depth)


@pytest.mark.parametrize(("size", "n"), [(BOARD_SIZES[0], 40), (BOARD_SIZES[3], 12)])
def test_potential_is_classic_bit_for_bit_in_openings(size: dict[str, int], n: int) -> None:
    """Opening positions, where depth 3 adds up many inexact floats (with 5 or 7 columns,
    ``/ columns / columns`` rounds): adding them in another order changes the last bits."""
    state = random_batch(four_in_a_row, n, 3, 0, 20, options=size)
    _, is_float = potential(state, 3)
    assert is_float.any(), "positions worth checking"
    for depth in (1, 2, 3):
        assert_potential_is_classic(state, depth)


@pytest.mark.parametrize(("size", "spec"), [
    ({"rows": 4, "columns": 4, "connect": 2}, "lookahead:2"),
    ({"rows": 4, "columns": 12, "connect": 4}, "lookahead:1"),
    ({"rows": 12, "columns": 4, "connect": 5}, "lookahead:2"),
    ({"rows": 7, "columns": 8, "connect": 4}, "lookahead:2"),
])
def test_lookahead_plays_whole_games_on_every_board_size(size: dict[str, int],
                                                         spec: str) -> None:
    rng = np.random.default_rng(0)
    players_ = agents.make("four_in_a_row", spec), agents.make("four_in_a_row", "random")
    state = four_in_a_row.initial_state(**size)
    while not four_in_a_row.is_terminal(state):
        state = four_in_a_row.apply(state, int(players_[state.to_move].act(state, rng)))
    assert state.me | state.opp != 0


def test_lookahead_spec_and_names() -> None:
    assert {"alphabeta", "lookahead", "mcts", "random"} <= set(agents.names("four_in_a_row"))
    assert repr(agents.make("connect_four", "lookahead:3")) == "CandidatePlayer('lookahead:3')"
    for bad in ("lookahead:0", "lookahead:-1", "lookahead:two", "lookahead:"):
        with pytest.raises(ValueError, match="positive integer"):
            agents.make("four_in_a_row", bad)


def cpython_sum(items: list[float | int], compensate_floats: bool,
                compensate_ints: bool) -> float:
    """CPython's ``sum`` of small ints and floats, step by step (``Python/bltinmodule.c``)."""
    total: float = 0
    compensation = 0.0
    for position, item in enumerate(items):
        if isinstance(total, int) and isinstance(item, int):
            total += item
            continue
        in_float_loop = not isinstance(total, int) and position > 0
        added = total + item
        if compensate_floats and in_float_loop and (isinstance(item, float) or compensate_ints):
            big, small = (total, item) if abs(total) >= abs(item) else (item, total)
            compensation += (big - added) + small
        total = added
    return float(total + compensation if compensation else total)


@pytest.mark.parametrize(("floats", "ints"), [(False, False), (True, False), (True, True)])
def test_python_sum_adds_in_cpythons_order(floats: bool, ints: bool) -> None:
    rng = np.random.default_rng(5)
    items = rng.normal(size=(9, 3000)) * 10.0 ** rng.integers(-2, 17, size=(9, 3000))
    is_float = rng.random((9, 3000)) < 0.7
    items[~is_float] = rng.integers(-1, 2, size=(~is_float).sum())
    sums = python_sum(items, is_float, floats, ints)
    native = sum([1e100, 1.0, -1e100]) != 0.0, sum([1e100, 1, -1e100]) != 0.0
    for i in range(items.shape[1]):
        column = [float(v) if f else int(v) for v, f in zip(items[:, i], is_float[:, i],
                                                             strict=True)]
        expected = cpython_sum(column, floats, ints)
        assert sums[i] == expected
        if native == (floats, ints):
            assert expected == sum(column)
