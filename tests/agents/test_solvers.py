"""The exact solvers (``boardgym.agents.solvers``) against brute force, known values, and the
four-in-a-row ``solver`` player in play."""

from __future__ import annotations

import importlib
from functools import cache

import numpy as np
import pytest

import boardgym  # noqa: F401  (registers the players)
from boardgym.agents import solvers
from boardgym.agents.solvers import four_in_a_row as c4_solver
from boardgym.agents.solvers import reversi as reversi_solver
from boardgym.envs.games import four_in_a_row, players, reversi
from boardgym.envs.games.core import batch_of, put
from tests.boards import random_position

PONS_END_EASY = "2252576253462244111563365343671351441"
"""The first position of Pascal Pons' ``Test_L3_R1`` benchmark set: score -1."""


def _legal(rules, state) -> list[int]:  # type: ignore[no-untyped-def]
    return np.flatnonzero(rules.legal_mask(state)).tolist()


@cache
def _c4_minimax(state: four_in_a_row.State) -> int:
    """Pons' score by exhaustive search: a win with the ``n + 1``-th token scores
    ``(cells + 1 - n) // 2`` for its player."""
    geom = state.geom
    cells = geom.rows * geom.columns
    played = (state.me | state.opp).bit_count()
    best = -cells
    for column in _legal(four_in_a_row, state):
        after = four_in_a_row.apply(state, column)
        if after.won:
            return (cells + 1 - played) // 2
        best = max(best, 0 if four_in_a_row.is_terminal(after) else -_c4_minimax(after))
    return best


def _c4_column_minimax(state: four_in_a_row.State) -> list[int | None]:
    cells = state.geom.rows * state.geom.columns
    played = (state.me | state.opp).bit_count()
    scores: list[int | None] = [None] * state.geom.columns
    for column in _legal(four_in_a_row, state):
        after = four_in_a_row.apply(state, column)
        scores[column] = ((cells + 1 - played) // 2 if after.won else
                          0 if four_in_a_row.is_terminal(after) else -_c4_minimax(after))
    return scores


def _positions(rules, seed: int, plies: int, count: int, **options):  # type: ignore[no-untyped-def]
    """``count`` positions after exactly ``plies`` random plies, none of them over."""
    rng = np.random.default_rng(seed)
    start = rules.initial_state(**options)
    discs = (start.me | start.opp).bit_count() + plies
    found = []
    while len(found) < count:
        state = random_position(rules, rng, plies, **options)
        if not rules.is_terminal(state) and (state.me | state.opp).bit_count() == discs:
            found.append(state)
    return found


@pytest.mark.parametrize("seed", range(4))
def test_four_in_a_row_agrees_with_brute_force_near_the_end(seed: int) -> None:
    for state in _positions(four_in_a_row, seed, 32, 3):
        assert c4_solver.column_scores(state) == _c4_column_minimax(state)
        assert c4_solver.solve(state) == _c4_minimax(state)


@pytest.mark.parametrize("seed", range(3))
def test_four_in_a_row_agrees_on_a_small_board_solved_exhaustively(seed: int) -> None:
    for state in _positions(four_in_a_row, seed, 2, 2, rows=4, columns=4, connect=3):
        assert c4_solver.column_scores(state) == _c4_column_minimax(state)


def test_four_in_a_row_other_sizes_agree() -> None:
    for state in _positions(four_in_a_row, 7, 18, 2, rows=5, columns=5, connect=4):
        assert c4_solver.column_scores(state) == _c4_column_minimax(state)


def test_four_in_a_row_known_value() -> None:
    state = four_in_a_row.parse(PONS_END_EASY)
    assert c4_solver.solve(state) == -1
    assert max(s for s in c4_solver.column_scores(state) if s is not None) == -1


def test_four_in_a_row_immediate_win_and_full_columns() -> None:
    state = four_in_a_row.parse("454545")  # the first player completes column 4 (index 3)
    assert c4_solver.solve(state) == (42 + 1 - 6) // 2
    scores = c4_solver.column_scores(four_in_a_row.parse(PONS_END_EASY))
    assert scores[:5] == [None] * 5


def test_four_in_a_row_bad_input() -> None:
    with pytest.raises(ValueError, match="game is over"):
        c4_solver.solve(four_in_a_row.parse("4545454"))
    with pytest.raises(ValueError, match="not a batch"):
        c4_solver.solve(four_in_a_row.initial_batch(2))


def test_four_in_a_row_budget() -> None:
    c4_solver.board(four_in_a_row.initial_state().geom).reset()
    with pytest.raises(c4_solver.BudgetExceededError):
        c4_solver.column_scores(four_in_a_row.initial_state(), max_nodes=1000)


@pytest.mark.long
def test_empty_board_is_a_first_player_win_on_move_41() -> None:
    assert c4_solver.solve(four_in_a_row.initial_state()) == 1


def _final(state: reversi.State) -> int:
    mine, theirs = state.me.bit_count(), state.opp.bit_count()
    empties = reversi.CELLS - mine - theirs
    return (mine - theirs) + (empties if mine > theirs else -empties if mine < theirs else 0)


def _reversi_minimax(state: reversi.State) -> int:
    """The final disc difference for the side to move, by plain minimax over the rules
    (which pass for a side without a move)."""
    if reversi.is_terminal(state):
        return _final(state)
    return max(_reversi_after(state, move) for move in _legal(reversi, state))


def _reversi_after(state: reversi.State, move: int) -> int:
    after = reversi.apply(state, move)
    value = _reversi_minimax(after)
    return value if after.to_move == state.to_move else -value


@pytest.mark.parametrize("empties", [1, 4, 6, 8])
def test_reversi_agrees_with_minimax(empties: int) -> None:
    positions = _positions(reversi, empties, reversi.CELLS - 4 - empties, 2)
    for state in positions:
        expected = {move: _reversi_after(state, move) for move in _legal(reversi, state)}
        assert reversi_solver.move_scores(state) == expected
        assert reversi_solver.solve(state) == max(expected.values())


@pytest.mark.long
def test_reversi_agrees_with_minimax_at_ten_empties() -> None:
    (state,) = _positions(reversi, 10, reversi.CELLS - 14, 1)
    assert reversi_solver.solve(state) == _reversi_minimax(state)


def test_reversi_finished_game_and_bad_input() -> None:
    for side, score in (("X", reversi.CELLS), ("O", -reversi.CELLS)):
        over = reversi.parse("X" * (reversi.CELLS - 4) + "----" + side)  # no O disc: no move
        assert reversi.is_terminal(over)
        assert reversi_solver.solve(over) == score
        assert reversi_solver.move_scores(over) == {}
    with pytest.raises(ValueError, match="not a batch"):
        reversi_solver.solve(reversi.initial_batch(2))


def _undecided_for_mover(seed: int) -> four_in_a_row.State:
    """A 7x6 position after 12 or more random plies whose side to move does not lose."""
    rng = np.random.default_rng(seed)
    while True:
        state = random_position(four_in_a_row, rng, 12)
        if not four_in_a_row.is_terminal(state) and c4_solver.solve(state) >= 0:
            return state


@pytest.mark.parametrize("seed", range(3))
def test_solver_player_never_loses_to_lookahead(seed: int) -> None:
    record = four_in_a_row.GAME
    state = _undecided_for_mover(seed)
    solver_side = state.to_move
    seats = {solver_side: players.make(record, "solver"),
             1 - solver_side: players.make(record, "lookahead:2")}
    rng = np.random.default_rng(seed)
    while not four_in_a_row.is_terminal(state):
        state = four_in_a_row.apply(state, seats[state.to_move].act(state, rng))
    assert four_in_a_row.result(state, solver_side) >= 0


def test_solver_player_spec() -> None:
    record = four_in_a_row.GAME
    assert "solver" in players.entries(record)
    with pytest.raises(ValueError, match="positive integer"):
        players.make(record, "solver:x")
    player = players.make(record, "solver:1")
    state = four_in_a_row.parse("454545")
    assert player.act(state, np.random.default_rng(0)) == 3


def test_solver_player_moves_do_not_depend_on_earlier_searches() -> None:
    """A position that needs more than the budget from an empty table gets the fallback's
    move even when an earlier search in the process (another game's, another player's) left
    the table warm enough to solve it: a game's moves depend on that game alone."""
    record = four_in_a_row.GAME
    state = four_in_a_row.parse("314174747557")
    budget = 5000
    with pytest.raises(c4_solver.BudgetExceededError):
        c4_solver.board(state.geom).reset()
        c4_solver.column_scores(state, budget)
    assert c4_solver.best_columns(state, 2_000_000) == [6]  # the table now holds the answer
    fallback = players.make(record, c4_solver.FALLBACK).act(state, np.random.default_rng(0))
    assert fallback != 6
    player = c4_solver.SolverPlayer(record, budget)
    assert player.act(state, np.random.default_rng(0)) == fallback


@pytest.mark.long
def test_solver_player_answers_from_the_empty_board() -> None:
    record = four_in_a_row.GAME
    seats = [players.make(record, "solver"), players.make(record, "lookahead:2")]
    state, rng = four_in_a_row.initial_state(), np.random.default_rng(0)
    while not four_in_a_row.is_terminal(state):
        state = four_in_a_row.apply(state, seats[state.to_move].act(state, rng))
    assert four_in_a_row.result(state, 0) >= 0


def _batch(rules, states):  # type: ignore[no-untyped-def]
    """The single ``states`` as one batched state."""
    batch = rules.initial_batch(len(states), **({"rows": states[0].geom.rows,
                                                 "columns": states[0].geom.columns,
                                                 "connect": states[0].geom.connect}
                                                if hasattr(states[0], "geom") else {}))
    for i, state in enumerate(states):
        put(batch, np.array([i]), batch_of(state))
    return batch


def _empties(state) -> int:  # type: ignore[no-untyped-def]
    cells = state.geom.rows * state.geom.columns if hasattr(state, "geom") else reversi.CELLS
    return int(cells - (state.me | state.opp).bit_count())


@pytest.mark.parametrize(("name", "rules", "plies"), [
    ("four_in_a_row", four_in_a_row, (22, 30)), ("reversi", reversi, (48, 58))])
def test_leaf_values_are_exact_outcomes_within_reach_only(name: str, rules, plies) -> None:  # type: ignore[no-untyped-def]
    """The solvers' scores are checked against minimax above; here: who is answered, and
    the outcome is the sign of the exact score."""
    solver = importlib.import_module(f"boardgym.agents.solvers.{name}")
    states = [state for ply in range(*plies, 2) for state in _positions(rules, ply, ply, 2)]
    values = solvers.leaf_values(name)(_batch(rules, states))  # type: ignore[misc]
    reached = [_empties(state) <= solver.LEAF_EMPTIES for state in states]
    assert any(reached) and not all(reached)
    for state, value, inside in zip(states, values, reached, strict=True):
        assert np.isnan(value) if not inside else value == np.sign(solver.solve(state))


def test_leaf_values_of_a_game_without_solver_module() -> None:
    assert solvers.leaf_values("tictactoe") is None
