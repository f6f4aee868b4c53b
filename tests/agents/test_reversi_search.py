"""The compiled Reversi ``alphabeta:D`` against the Python search it replaced: the same
evaluation floats, move orders and ``SearchResult`` (move, value, depth, proof, positions
visited) as ``agents.search.search`` over ``reference_reversi_strong.REFERENCE_HEURISTICS``
for the same seed, on random games from the opening to the solver's endgame."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from boardgym import agents
from boardgym.agents import reversi_search, reversi_strong
from boardgym.agents.search import SearchResult, decisive, search
from boardgym.agents.solvers import reversi as solver
from boardgym.envs.games import reversi
from boardgym.envs.games.reversi import State
from tests.agents import reference_reversi_strong as reference

GAMES = 40
"""Random games whose every position checks the evaluation and the move order."""
SEARCHED = 200
"""Unfinished positions searched at depths 1 to 4, from random play of 0 to 47 plies."""
ENDGAMES = 8
"""Positions within the solver's reach (``ENDGAME_EMPTIES``) searched at depths 1 to 4."""
BIT_63 = 1 << 63
ENDGAME_EMPTIES = reversi_search.ENDGAME_EMPTIES


def _random_play(rng: np.random.Generator, plies: int) -> State:
    """The position after up to ``plies`` uniformly random moves from the start."""
    state = reversi.initial_state()
    for _ in range(plies):
        if reversi.is_terminal(state):
            break
        state = reversi.apply(state, int(rng.choice(np.flatnonzero(reversi.legal_mask(state)))))
    return state


@cache
def _game_positions() -> tuple[State, ...]:
    """Every position of ``GAMES`` random games, finished ones included."""
    rng, positions = np.random.default_rng(75), list[State]()
    for _ in range(GAMES):
        state = reversi.initial_state()
        positions.append(state)
        while not reversi.is_terminal(state):
            state = reversi.apply(state, int(rng.choice(np.flatnonzero(
                reversi.legal_mask(state)))))
            positions.append(state)
    return tuple(positions)


@cache
def _searched_positions() -> tuple[State, ...]:
    """``SEARCHED`` unfinished positions beyond the solver's reach, from the opening to
    13 empty squares, where the order by replies starts below the root."""
    rng, positions = np.random.default_rng(7), list[State]()
    while len(positions) < SEARCHED:
        state = _random_play(rng, len(positions) % 48)
        if not reversi.is_terminal(state) and reference.empties(state) > ENDGAME_EMPTIES:
            positions.append(state)
    return tuple(positions)


def _endgames() -> list[State]:
    """``ENDGAMES`` unfinished positions with ``ENDGAME_EMPTIES`` empty squares or fewer."""
    rng, positions = np.random.default_rng(11), list[State]()
    while len(positions) < ENDGAMES:
        state = _random_play(rng, 48 + len(positions) % 8)
        if not reversi.is_terminal(state) and reference.empties(state) <= ENDGAME_EMPTIES:
            positions.append(state)
    return positions


def _both(state: State, depth: int, seed: int) -> tuple[SearchResult, SearchResult]:
    """The compiled search and the reference's, each with ``seed``'s rng; in the solver's
    reach, its table emptied before each (the positions it visits depend on what it holds)."""
    endgame = reference.empties(state) <= ENDGAME_EMPTIES
    if endgame:
        solver.TABLE.reset()
    compiled = reversi_search.search(state, depth, np.random.default_rng(seed))
    if endgame:
        solver.TABLE.reset()
    return compiled, search(state, reference.REFERENCE_HEURISTICS, depth,
                            np.random.default_rng(seed))


def test_evaluation_order_and_stable_discs_are_the_reference_ones() -> None:
    positions = _game_positions()
    assert any((state.me | state.opp) & BIT_63 for state in positions)
    for state in positions:
        me, opp = int(state.me), int(state.opp)
        assert reversi_strong.stable_discs(me, opp) == reference.stable_discs(me, opp)
        assert reversi_strong.final_value(state) == reference.final_value(state)
        if not reversi.is_terminal(state):
            assert reversi_strong.evaluate(state).hex() == reference.evaluate(state).hex()
            assert reversi_strong.ordered_moves(state) == reference.ordered_moves(state)


def test_searches_to_depth_4_are_the_reference_ones() -> None:
    positions = _searched_positions()
    assert min(map(reference.empties, positions)) <= ENDGAME_EMPTIES + 4
    for index, state in enumerate(positions):
        for depth in range(1, 5):
            compiled, python = _both(state, depth, index)
            assert compiled == python, (reversi.to_text(state), depth)


@pytest.mark.parametrize("index", range(ENDGAMES))
def test_endgames_are_the_solvers_as_before(index: int) -> None:
    state = _endgames()[index]
    for depth in range(1, 5):
        compiled, python = _both(state, depth, index)
        assert compiled == python and compiled.exact
        assert compiled.depth == reference.empties(state)


@pytest.mark.parametrize(("index", "depth"), [(0, 5), (1, 5), (40, 5), (47, 5), (0, 6),
                                              (48, 6)])
def test_deeper_searches_are_the_reference_ones(index: int, depth: int) -> None:
    state = _searched_positions()[index]
    compiled, python = _both(state, depth, index)
    assert compiled == python


def test_a_wipe_out_is_proven_at_the_first_iteration() -> None:
    # X (d4) takes O's only disc (e4) by playing f4: no disc left to O, the game is won 3-0.
    state = reversi.from_discs(1 << 27, 1 << 28, first_to_move=True)
    compiled, python = _both(state, 4, 0)
    assert compiled == python == SearchResult(29, decisive(1, 3), 1, True, 1)


def _positions_with_a_pass(count: int) -> list[State]:
    """``count`` positions beyond the solver's reach where some move makes the opponent
    pass, from games of a greedy first player (most flips) against a random second."""
    rng, found = np.random.default_rng(0), list[State]()
    while len(found) < count:
        state = reversi.initial_state()
        while not reversi.is_terminal(state) and len(found) < count:
            moves = reference.ordered_moves(state)
            if reference.empties(state) > ENDGAME_EMPTIES and any(
                    reversi.apply(state, move).to_move == state.to_move for move in moves):
                found.append(state)
            move = (max(moves, key=lambda m: int(reversi.flips(state, m)).bit_count())
                    if state.to_move == 0 else int(rng.choice(moves)))
            state = reversi.apply(state, move)
    return found


def test_passes_keep_the_side_to_move() -> None:
    """A move that makes the opponent pass is searched for the same side (not negated), at
    the root and below, as in the reference."""
    for index, state in enumerate(_positions_with_a_pass(6)):
        for depth in (1, 2, 3):
            compiled, python = _both(state, depth, index)
            assert compiled == python


def test_a_table_that_fills_grows_and_the_search_is_unchanged(
        monkeypatch: pytest.MonkeyPatch) -> None:
    table = reversi_search.Table(bits=2)
    monkeypatch.setattr(reversi_search, "TABLE", table)
    for index, state in enumerate(_searched_positions()[20:26]):
        compiled, python = _both(state, 3, index)
        assert compiled == python
    assert table.slots > 4 and 2 * table.entries <= table.slots


def test_the_registered_player_is_the_compiled_search() -> None:
    player = agents.make("reversi", "alphabeta")
    assert isinstance(player, reversi_strong.ReversiAlphaBeta)
    assert player.depth == reversi_strong.DEFAULT_DEPTH == 4
    assert player.heuristics is reversi_strong.HEURISTICS
    state = _searched_positions()[30]
    for seed in range(3):
        expected = search(state, reference.REFERENCE_HEURISTICS, 4, np.random.default_rng(seed))
        assert player.search(state, np.random.default_rng(seed)) == expected
        assert player.act(state, np.random.default_rng(seed)) == expected.move


def test_the_python_search_over_the_compiled_heuristics_is_the_same() -> None:
    state = _searched_positions()[10]
    compiled, _ = _both(state, 3, 3)
    assert search(state, reversi_strong.HEURISTICS, 3, np.random.default_rng(3)) == compiled


@pytest.mark.parametrize(("depth", "message"), [(0, "at least 1 ply"),
                                                (1 << 16, "at most 65535 plies")])
def test_search_depth_out_of_range_is_refused(depth: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        reversi_search.search(reversi.initial_state(), depth, np.random.default_rng(0))


def test_a_finished_game_is_refused() -> None:
    finished = reversi.from_discs(1 << 27 | 1 << 28, 0, first_to_move=False)
    with pytest.raises(ValueError, match="finished game"):
        reversi_search.search(finished, 2, np.random.default_rng(0))
