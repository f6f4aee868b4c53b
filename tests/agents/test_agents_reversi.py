"""The classic Reversi AIs on hand-built positions (``X`` is the side to move), and their
candidate sets against a plain reference on random positions."""

from __future__ import annotations

import numpy as np
import pytest

from boardgym import agents
from boardgym.envs.games import reversi
from boardgym.envs.games.core import unbatch
from tests.boards import candidate_sets, random_batch

SEEDS = range(40)

# X at cell 0 (a corner) flips 1 disc; X at cell 26 flips 3.
CORNER_VS_BIG_FLIP = """
.OX.....
........
........
...OOOX.
........
........
........
........
"""
# X at cell 26 flips 3; X at cell 41 flips 1; neither is on a corner or an edge.
BIG_VS_SMALL_INNER = """
........
........
........
...OOOX.
........
..OX....
........
........
"""
# X at cell 1 (top edge) flips 1; X at cell 26 flips 3.
EDGE_VS_BIG_FLIP = """
..OX....
........
........
...OOOX.
........
........
........
........
"""
# X at cell 26 or at cell 42 flips 3 (a tie); X at cell 9 flips 1. None is on an edge.
TIED_BEST = """
........
..OX....
........
...OOOX.
........
...OOOX.
........
........
"""


def position(board: str) -> reversi.State:
    """The state drawn in ``board`` (8 rows of ``X`` side to move, ``O`` other, ``.``)."""
    rows = board.split()
    me = sum(1 << (r * reversi.SIZE + c) for r, row in enumerate(rows)
             for c, ch in enumerate(row) if ch == "X")
    opp = sum(1 << (r * reversi.SIZE + c) for r, row in enumerate(rows)
              for c, ch in enumerate(row) if ch == "O")
    return reversi.State(me, opp, 0, reversi.legal_bits(me, opp))


def flip_counts(state: reversi.State) -> dict[int, int]:
    """Number of discs flipped by each legal move."""
    return {int(move): int(reversi.flips(state, int(move))).bit_count()
            for move in np.flatnonzero(reversi.legal_mask(state))}


def moves_played(spec: str, state: reversi.State) -> set[int]:
    """Every move ``spec`` plays in ``state`` over ``SEEDS``."""
    agent = agents.make("reversi", spec)
    return {int(agent.act(state, np.random.default_rng(seed))) for seed in SEEDS}


def test_positions_are_as_described() -> None:
    assert flip_counts(position(CORNER_VS_BIG_FLIP)) == {0: 1, 26: 3}
    assert flip_counts(position(BIG_VS_SMALL_INNER)) == {26: 3, 41: 1}
    assert flip_counts(position(EDGE_VS_BIG_FLIP)) == {1: 1, 26: 3}
    assert flip_counts(position(TIED_BEST)) == {9: 1, 26: 3, 42: 3}


def test_builtin_names() -> None:
    assert agents.names("reversi") == ["alphabeta", "az", "corner_best", "corner_side_best", "mcts",
                                       "ntuple", "random", "worst", "wpc"]


@pytest.mark.parametrize("spec", ["corner_best", "corner_side_best"])
def test_a_corner_beats_a_bigger_flip(spec: str) -> None:
    assert moves_played(spec, position(CORNER_VS_BIG_FLIP)) == {0}


def test_corner_best_takes_the_most_discs() -> None:
    assert moves_played("corner_best", position(BIG_VS_SMALL_INNER)) == {26}
    assert moves_played("corner_best", position(EDGE_VS_BIG_FLIP)) == {26}


def test_corner_best_breaks_ties_uniformly_with_one_draw() -> None:
    state = position(TIED_BEST)
    agent = agents.make("reversi", "corner_best")
    moves = [agent.act(state, np.random.default_rng(seed)) for seed in range(400)]
    assert 150 < moves.count(26) < 250 and moves.count(26) + moves.count(42) == 400
    rng, once = np.random.default_rng(0), np.random.default_rng(0)
    agent.act(state, rng)
    once.integers(0, 2**64, dtype=np.uint64)
    assert rng.bit_generator.state == once.bit_generator.state  # one draw, no more


def test_worst_takes_the_fewest_discs() -> None:
    assert moves_played("worst", position(BIG_VS_SMALL_INNER)) == {41}
    assert moves_played("worst", position(TIED_BEST)) == {9}


def test_corner_side_best_prefers_an_edge_to_a_bigger_flip() -> None:
    assert moves_played("corner_side_best", position(EDGE_VS_BIG_FLIP)) == {1}


def test_corner_side_best_falls_back_to_corner_best() -> None:
    assert moves_played("corner_side_best", position(BIG_VS_SMALL_INNER)) == {26}
    assert moves_played("corner_side_best", position(TIED_BEST)) == {26, 42}


def test_random_plays_every_legal_move() -> None:
    state = position(TIED_BEST)
    assert moves_played("random", state) == {9, 26, 42}


@pytest.mark.parametrize("spec", ["random", "corner_best", "worst", "corner_side_best", "wpc"])
def test_whole_games_are_legal_and_reproducible(spec: str) -> None:
    def play(seed: int) -> list[int]:
        rng, agent = np.random.default_rng(seed), agents.make("reversi", spec)
        state, moves = reversi.initial_state(), []
        while not reversi.is_terminal(state):
            moves.append(int(agent.act(state, rng)))
            state = reversi.apply(state, moves[-1])  # raises on an illegal move
        return moves

    assert play(7) == play(7)
    assert play(7) != play(8)


def test_an_argument_is_refused() -> None:
    with pytest.raises(ValueError, match="takes no argument"):
        agents.make("reversi", "corner_best:2")


def reference_candidates(state: reversi.State, regions: tuple[int, ...], most: bool) -> set[int]:
    """The classic rule, plainly: the legal moves in the first region holding any, else those
    flipping the most (``most``) or the fewest discs."""
    legal = [int(move) for move in np.flatnonzero(reversi.legal_mask(state))]
    for region in regions:
        inside = {move for move in legal if (region >> move) & 1}
        if inside:
            return inside
    counts = flip_counts(state)
    extreme = max(counts.values()) if most else min(counts.values())
    return {move for move, count in counts.items() if count == extreme}


CLASSIC_RULES = {"corner_best": ((reversi.CORNERS,), True),
                 "corner_side_best": ((reversi.CORNERS, reversi.EDGES), True),
                 "worst": ((), False)}


@pytest.mark.parametrize("spec", sorted(CLASSIC_RULES))
def test_candidates_follow_the_classic_rule_on_random_positions(spec: str) -> None:
    state = random_batch(reversi, 3000, seed=5)
    candidates = candidate_sets("reversi", spec, state)
    live = np.flatnonzero(state.legal != 0)
    assert len(live) > 2000
    for i in live:
        expected = reference_candidates(unbatch(state, int(i)), *CLASSIC_RULES[spec])
        assert {m for m in range(reversi.CELLS) if int(candidates[i]) >> m & 1} == expected
