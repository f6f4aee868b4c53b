"""Search players on known positions: forced wins, avoided losses, exact endgames, MCTS."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from boardgym import agents
from boardgym.agents import four_in_a_row_strong, reversi_strong
from boardgym.agents.search import (
    AlphaBetaAgent,
    Heuristics,
    MCTSAgent,
    decisive,
    is_decisive,
    margin_of,
    search,
)
from boardgym.envs.games import four_in_a_row, reversi, tictactoe
from tests.boards import c4_state, ttt_state

SEEDS = range(4)

# X to move: X in column 4 makes three in a row open at both ends (columns 1 and 5).
C4_DOUBLE_THREAT = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    O . X X . . O
"""
# X to move must stop O's open three: only columns 1 and 4 do.
C4_MUST_BLOCK = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . X
    . . O O . . X
"""


def _brute_force_discs(state: reversi.State) -> int:
    """Final disc difference for the side to move under perfect play, by plain minimax."""
    if reversi.is_terminal(state):
        return state.me.bit_count() - state.opp.bit_count()
    values = []
    for move in np.flatnonzero(reversi.legal_mask(state)):
        child = reversi.apply(state, int(move))
        value = _brute_force_discs(child)
        values.append(value if child.to_move == state.to_move else -value)
    return max(values)


def _endgame(seed: int, empties: int) -> reversi.State:
    """A position reached by seeded random play with ``empties`` empty squares (not over)."""
    rng = np.random.default_rng(seed)
    while True:
        state = reversi.initial_state()
        while reversi_strong.empties(state) > empties and not reversi.is_terminal(state):
            state = reversi.apply(state, int(rng.choice(np.flatnonzero(
                reversi.legal_mask(state)))))
        if not reversi.is_terminal(state):
            return state


def _move_values(state: reversi.State) -> dict[int, int]:
    """Brute-force final disc difference after each legal move, for the side to move."""
    values = {}
    for move in np.flatnonzero(reversi.legal_mask(state)):
        child = reversi.apply(state, int(move))
        value = _brute_force_discs(child)
        values[int(move)] = value if child.to_move == state.to_move else -value
    return values


@pytest.mark.parametrize("seed", SEEDS)
def test_four_in_a_row_alphabeta_makes_the_double_threat(seed: int) -> None:
    state = c4_state(C4_DOUBLE_THREAT)
    result = search(state, four_in_a_row_strong.HEURISTICS, 4, np.random.default_rng(seed))
    assert result.move == 4
    assert is_decisive(result.value) and result.value > 0
    assert agents.make("four_in_a_row", "alphabeta:4").act(state, np.random.default_rng(seed)) == 4


@pytest.mark.parametrize("seed", SEEDS)
def test_four_in_a_row_alphabeta_blocks_the_open_three(seed: int) -> None:
    state = c4_state(C4_MUST_BLOCK)
    move = agents.make("four_in_a_row", "alphabeta:4").act(state, np.random.default_rng(seed))
    assert move in (1, 4)


def test_four_in_a_row_exact_solve_reports_the_fastest_win() -> None:
    # 4x4 board, connect 3: X to move wins at once in column 1 (X X _ on the bottom row).
    state = c4_state("""
        . . . .
        . . . .
        O . . .
        X X . O
    """, connect=3)
    result = search(state, four_in_a_row_strong.HEURISTICS, 1, np.random.default_rng(0))
    assert result.move == 2
    assert result.exact and margin_of(result.value) == 16 - 5  # empty cells left after the win


@pytest.mark.parametrize("seed", range(3))
def test_reversi_endgame_solver_matches_brute_force(seed: int) -> None:
    state = _endgame(seed, empties=7)
    assert reversi_strong.solve(state) == _brute_force_discs(state)


@pytest.mark.parametrize("seed", range(3))
def test_reversi_alphabeta_plays_an_optimal_endgame_move(seed: int) -> None:
    state = _endgame(100 + seed, empties=7)
    values = _move_values(state)
    best = max(values.values())
    move = agents.make("reversi", "alphabeta:2").act(state, np.random.default_rng(seed))
    assert values[move] == best


def test_reversi_alphabeta_finds_the_forced_win_and_avoids_the_losing_moves() -> None:
    # A seeded endgame in which the side to move has winning and losing moves alike.
    state = next(s for s in (_endgame(seed, empties=6) for seed in range(200, 260))
                 if max(_move_values(s).values()) > 0 > min(_move_values(s).values()))
    values = _move_values(state)
    for seed in SEEDS:
        move = agents.make("reversi", "alphabeta:1").act(state, np.random.default_rng(seed))
        assert values[move] == max(values.values()) > 0


def test_reversi_evaluation_counts_corners_and_stable_discs() -> None:
    state = reversi.State(me=reversi.CORNERS | 0b10, opp=1 << 27, to_move=0, legal=0)
    assert reversi_strong.stable_discs(state.me, state.opp) == reversi.CORNERS | 0b10
    swapped = reversi.State(state.opp, state.me, 1, 0)
    assert reversi_strong.evaluate(state) > 0 > reversi_strong.evaluate(swapped)


def test_generic_search_solves_tictactoe() -> None:
    heuristics = Heuristics(rules=tictactoe)
    empty = search(tictactoe.initial_state(), heuristics, 9, np.random.default_rng(0))
    assert empty.value == 0 and empty.exact is False and empty.depth == 9
    fork = ttt_state("""
        X . .
        . O .
        . . X
    """, to_move=1)
    # O must not play a corner: X then forks. Every side cell holds the draw.
    result = search(fork, heuristics, 9, np.random.default_rng(0))
    assert result.value == 0 and result.move in (1, 3, 5, 7)


@pytest.mark.parametrize("seed", SEEDS)
def test_mcts_takes_the_immediate_win(seed: int) -> None:
    state = ttt_state("""
        X X .
        O O .
        . . .
    """)
    assert MCTSAgent(tictactoe, 400).act(state, np.random.default_rng(seed)) == 2
    c4 = c4_state("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        O O O . . . .
        X X X . . . O
    """)
    assert agents.make("four_in_a_row", "mcts:300").act(c4, np.random.default_rng(seed)) == 3


SEEDED_PLAYERS = {
    "reversi alphabeta:2": (reversi, lambda: agents.make("reversi", "alphabeta:2")),
    "four_in_a_row alphabeta:3": (four_in_a_row,
                                  lambda: agents.make("four_in_a_row", "alphabeta:3")),
    "tictactoe mcts 50": (tictactoe, lambda: MCTSAgent(tictactoe, 50)),
}


@pytest.mark.parametrize("name", SEEDED_PLAYERS)
def test_search_players_are_seeded_through_rng(name: str) -> None:
    rules, build = SEEDED_PLAYERS[name]
    player, state = build(), rules.initial_state()
    first = [player.act(state, np.random.default_rng(seed)) for seed in range(6)]
    assert first == [player.act(state, np.random.default_rng(seed)) for seed in range(6)]


@pytest.mark.parametrize("spec", ["alphabeta:0", "alphabeta:x", "mcts:0", "mcts:-3"])
def test_bad_search_specs_name_the_fix(spec: str) -> None:
    name = spec.partition(":")[0]
    with pytest.raises(ValueError, match=f"{name}:"):
        agents.make("four_in_a_row", spec)


def test_decisive_values_outrank_every_heuristic_value() -> None:
    assert decisive(1, 0) > 10_000 > decisive(-1, 0)
    assert decisive(1, 5) > decisive(1, 2) and margin_of(decisive(-1, 3)) == -3
    assert decisive(0, 7) == 0 and not is_decisive(0.0)
    with pytest.raises(ValueError, match="finished game"):
        search(tictactoe.State(0b11000, 0b111, 1), Heuristics(rules=tictactoe), 2,
               np.random.default_rng(0))


def test_an_exact_search_over_its_budget_keeps_the_depth_limited_move() -> None:
    heuristics = replace(four_in_a_row_strong.HEURISTICS,
                         exact_plies=four_in_a_row_strong.empties, exact_budget=50)
    result = search(four_in_a_row.initial_state(), heuristics, 2, np.random.default_rng(0))
    assert not result.exact and result.depth == 2 and result.nodes <= 50 + 100
    assert result.move in range(7)


def test_every_game_has_alphabeta_and_mcts_and_its_own_heuristics_win() -> None:
    for name in ("reversi", "four_in_a_row", "tictactoe"):
        assert {"alphabeta", "mcts", "random"} <= set(agents.names(name))
    reversi_own = agents.make("reversi", "alphabeta:2")
    four_own = agents.make("four_in_a_row", "alphabeta")
    generic = agents.make("tictactoe", "alphabeta")
    assert all(isinstance(p, AlphaBetaAgent) for p in (reversi_own, four_own, generic))
    assert reversi_own.heuristics is reversi_strong.HEURISTICS  # type: ignore[attr-defined]
    assert four_own.heuristics is four_in_a_row_strong.HEURISTICS  # type: ignore[attr-defined]
    assert generic.heuristics.rules is tictactoe  # type: ignore[attr-defined]
    assert generic.heuristics.order is None  # type: ignore[attr-defined]


def test_generic_alphabeta_values_finished_games_by_the_rules_result() -> None:
    lost = ttt_state("""
        X X .
        O O O
        X . .
    """)  # X to move: O has a line
    assert Heuristics(rules=tictactoe).value_of_end(lost) == decisive(-1, 0)
    drawn = ttt_state("""
        X O X
        X O O
        O X X
    """, to_move=1)
    assert Heuristics(rules=tictactoe).value_of_end(drawn) == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_reversi_alphabeta_endgame_through_the_compiled_solver(seed: int) -> None:
    """From ``ENDGAME_EMPTIES`` empties alphabeta asks the compiled solver: its move is one of
    the solver's best, its value proven, and the outcome the Python endgame search finds."""
    pytest.importorskip("numba")
    from boardgym.agents.solvers import reversi as solver

    state = _endgame(seed, reversi_strong.ENDGAME_EMPTIES)
    compiled = search(state, reversi_strong.HEURISTICS, 2, np.random.default_rng(seed))
    python = search(state, replace(reversi_strong.HEURISTICS, solve_moves=lambda _: None), 2,
                    np.random.default_rng(seed))
    scores = solver.move_scores(state)
    assert compiled.exact and python.exact
    assert scores[compiled.move] == max(scores.values()) == margin_of(compiled.value)
    assert np.sign(compiled.value) == np.sign(python.value)
    assert compiled.nodes > 0
