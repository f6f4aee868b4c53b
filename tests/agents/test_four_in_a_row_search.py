"""The compiled four-in-a-row alpha-beta (``agents.four_in_a_row_search``) against the Python
reference (``reference_four_in_a_row_strong``: the generic ``agents.search.search`` over the
heuristics as they were in Python): the same heuristic values, the same ``SearchResult`` for
the same seed, on random positions of several board sizes, the exact phase and its budget cut
included."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from boardgym import agents
from boardgym.agents import four_in_a_row_search as compiled
from boardgym.agents import four_in_a_row_strong
from boardgym.agents.search import search
from boardgym.envs.games import four_in_a_row as rules
from boardgym.envs.games.four_in_a_row import State
from boardgym.envs.games.four_in_a_row_bits import board_words
from tests.agents import reference_four_in_a_row_strong as reference

SMALL_BUDGET = 400
"""The exact phase's budget in the many-position test: cut often, and the reference stays
quick."""
BOARDS = {(6, 7, 4): 90, (5, 4, 4): 24, (4, 5, 3): 40, (7, 8, 4): 42, (4, 12, 5): 4}
"""Board sizes ``(rows, columns, connect)`` and how many random positions of each."""
POSITIONS = [(size, seed) for size, count in BOARDS.items() for seed in range(count)]
POSITION_IDS = [f"{rows}x{columns}c{connect}-seed{seed}" for (rows, columns, connect), seed
                in POSITIONS]
DEPTHS = range(1, 7)


def random_position(size: tuple[int, int, int], seed: int) -> State:
    """A position after a random number of random plies (the last one before the game
    ends, if it ends first)."""
    rows, columns, connect = size
    rng = np.random.default_rng(seed)
    state = rules.initial_state(rows, columns, connect)
    for _ in range(int(rng.integers(0, rows * columns - 1))):
        child = rules.apply(state, int(rng.choice(np.flatnonzero(rules.legal_mask(state)))))
        if rules.is_terminal(child):
            break
        state = child
    return state


def random_game(size: tuple[int, int, int], seed: int) -> list[State]:
    """Every position of one random game, the finished one included."""
    rng = np.random.default_rng(seed)
    states = [rules.initial_state(*size)]
    while not rules.is_terminal(states[-1]):
        moves = np.flatnonzero(rules.legal_mask(states[-1]))
        states.append(rules.apply(states[-1], int(rng.choice(moves))))
    return states


@pytest.mark.parametrize("size", [(6, 7, 4), (4, 5, 3), (7, 8, 5), (4, 12, 12), (9, 6, 2)],
                         ids=str)
def test_compiled_heuristics_give_the_reference_values(size: tuple[int, int, int]) -> None:
    words = board_words(rules.geometry(*size))
    heuristic = compiled.heuristic_words(rules.geometry(*size))
    strong = four_in_a_row_strong.HEURISTICS
    for seed in range(8):
        *playing, finished = random_game(size, seed)
        for state in playing:
            me, opp = np.uint64(state.me), np.uint64(state.opp)
            empty = state.geom.board ^ (state.me | state.opp)
            for bits in (state.me, state.opp):
                assert compiled.threats(np.uint64(bits), np.uint64(empty), words, heuristic) \
                    == reference.threats(bits, empty, state.geom)
            assert strong.evaluate(state) == reference.evaluate(state)
            assert strong.moves(state) == reference.ordered_moves(state)
            assert strong.exact_plies(state) == reference.exact_plies(state)
            assert compiled.evaluate(me, opp, words, heuristic) == reference.evaluate(state)
        assert strong.value_of_end(finished) == reference.final_value(finished)


def assert_same_search(state: State, depth: int, seed: int, budget: int) -> None:
    """The compiled search and the reference give one ``SearchResult`` and leave ``rng`` at
    the same point."""
    heuristics = replace(reference.REFERENCE_HEURISTICS, exact_budget=budget)
    expected_rng, rng = np.random.default_rng(seed), np.random.default_rng(seed)
    expected = search(state, heuristics, depth, expected_rng)
    assert compiled.search(state, depth, rng, budget) == expected, (rules.to_text(state), depth)
    assert rng.random() == expected_rng.random()


@pytest.mark.parametrize(("size", "seed"), POSITIONS, ids=POSITION_IDS)
def test_compiled_search_gives_the_reference_result(size: tuple[int, int, int],
                                                    seed: int) -> None:
    state = random_position(size, seed)
    for depth in DEPTHS:
        assert_same_search(state, depth, seed, SMALL_BUDGET)


def test_the_positions_cover_the_exact_phase_and_its_budget_cut() -> None:
    kinds = set()
    for size, seed in POSITIONS[::5]:
        state = random_position(size, seed)
        plies = reference.exact_plies(state)
        result = compiled.search(state, 2, np.random.default_rng(seed), SMALL_BUDGET)
        kinds.add("middle" if plies is None else "exact" if result.exact else "cut")
    assert kinds == {"middle", "exact", "cut"}


def test_the_full_budget_cuts_the_exact_search_at_the_same_node() -> None:
    # 20 empty cells, too many to solve within EXACT_BUDGET positions.
    state = rules.parse("1564767323524436631322")
    assert reference.exact_plies(state) == 20
    expected = search(state, reference.REFERENCE_HEURISTICS, 1, np.random.default_rng(0))
    result = compiled.search(state, 1, np.random.default_rng(0))
    assert result == expected and not result.exact
    assert result.nodes == 7 + compiled.EXACT_BUDGET + 1  # depth 1, then the budget's node


def test_a_small_table_grows_and_the_search_is_unchanged() -> None:
    table = compiled.Table(bits=2)
    for seed in range(4):
        state = random_position((6, 7, 4), seed)
        result = compiled.search(state, 6, np.random.default_rng(seed), table=table)
        assert result == compiled.search(state, 6, np.random.default_rng(seed))
    assert table.bits > 2


def test_the_registered_alphabeta_plays_the_reference_move() -> None:
    player = agents.make("four_in_a_row", "alphabeta")
    assert isinstance(player, four_in_a_row_strong.FourInARowAlphaBeta)
    assert player.depth == four_in_a_row_strong.DEFAULT_DEPTH == 6
    for seed in range(3):
        state = random_position((6, 7, 4), 100 + seed)
        expected = search(state, reference.REFERENCE_HEURISTICS, 6, np.random.default_rng(seed))
        assert player.act(state, np.random.default_rng(seed)) == expected.move


def test_bad_searches_are_refused_as_the_generic_search_refuses_them() -> None:
    with pytest.raises(ValueError, match="at least 1 ply"):
        compiled.search(rules.initial_state(), 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="finished game"):
        compiled.search(rules.parse("1212121"), 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="numpy Generator"):
        agents.make("four_in_a_row", "alphabeta:2").act(rules.initial_state(), 0)
