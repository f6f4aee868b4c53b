"""``wpc``, Reversi's 1-ply weighted-piece-counter player (the Othello League's standard
heuristic player): the moves it plays on known positions, its ties, its symmetry, a plain
reference on random positions, and the envs playing against it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from boardgym import agents
from boardgym.envs.games import reversi
from boardgym.envs.games.core import batch_of, unbatch
from tests.boards import candidate_sets, random_batch
from tests.envs.vectors import make, random_actions

SEEDS = range(40)
WEIGHTS = """
 1.00 -0.25  0.10  0.05  0.05  0.10 -0.25  1.00
-0.25 -0.25  0.01  0.01  0.01  0.01 -0.25 -0.25
 0.10  0.01  0.05  0.02  0.02  0.05  0.01  0.10
 0.05  0.01  0.02  0.01  0.01  0.02  0.01  0.05
 0.05  0.01  0.02  0.01  0.01  0.02  0.01  0.05
 0.10  0.01  0.05  0.02  0.02  0.05  0.01  0.10
-0.25 -0.25  0.01  0.01  0.01  0.01 -0.25 -0.25
 1.00 -0.25  0.10  0.05  0.05  0.10 -0.25  1.00
"""
"""Yoshioka et al.'s weights as the papers print them, a1..h8 row by row."""
HUNDREDTHS = [round(float(weight) * 100) for weight in WEIGHTS.split()]

# X to move: c1 (cell 2, weight 10) flips c2 (1): +12; c4 (cell 26, weight 2) flips d4, e4,
# f4 (1 + 1 + 2): +10, the most discs; e5 (cell 36) flips d4: +3.
EDGE_OVER_MORE_DISCS = ("-------- --O----- --X----- ---OOOX- "
                        "-------- -------- -------- -------- X")
# As above, and f1 (cell 5, weight 10) flips f2 (1): +12 too, a tie with c1; f5 (cell 37)
# flips f4: +6; d5 (cell 35) flips e4: +3.
TIED_EDGES = ("-------- --O--O-- --X--X-- ---OOOX- "
              "-------- -------- -------- -------- X")
# O to move: the corner h8 (cell 63) flips the X-square g7 (-25): 100 - 2 * 25 = +50; d4
# (cell 27) flips e5 (1): +3.
CORNER_THROUGH_AN_X_SQUARE = ("-------- -------- -------- -------- "
                              "----X--- ---X-O-- ------X- -------- O")


def wpc_score(me: int, opp: int) -> int:
    """The weighted piece counter, in hundredths: the mover's weights minus the opponent's."""
    return sum(HUNDREDTHS[c] * ((me >> c & 1) - (opp >> c & 1)) for c in range(reversi.CELLS))


def gains(state: reversi.State) -> dict[int, int]:
    """Each legal move's WPC after it, flips included, played plainly with the rules."""
    scores = {}
    for move in np.flatnonzero(reversi.legal_mask(state)):
        flipped = int(reversi.flips(state, int(move)))
        scores[int(move)] = wpc_score(state.me | 1 << int(move) | flipped, state.opp ^ flipped)
    return scores


def reference(state: reversi.State) -> set[int]:
    """The legal moves with the best WPC after them."""
    scores = gains(state)
    return {move for move, score in scores.items() if score == max(scores.values())}


def bits(word: int) -> set[int]:
    """The cells of a bitboard."""
    return {cell for cell in range(reversi.CELLS) if word >> cell & 1}


def candidates(state: reversi.State) -> set[int]:
    """``wpc``'s candidate moves in a single game."""
    return bits(int(candidate_sets("reversi", "wpc", batch_of(state))[0]))


def moves_played(state: reversi.State) -> set[int]:
    """Every move ``wpc`` plays in ``state`` over ``SEEDS``."""
    agent = agents.make("reversi", "wpc")
    return {int(agent.act(state, np.random.default_rng(seed))) for seed in SEEDS}


def gains_over(text: str) -> dict[int, int]:
    """Each legal move's WPC gain in the position ``text``: the WPC after it less before."""
    state = reversi.parse(text)
    return {move: score - wpc_score(state.me, state.opp) for move, score in gains(state).items()}


def test_the_positions_are_as_described() -> None:
    assert gains_over(EDGE_OVER_MORE_DISCS) == {2: 12, 26: 10, 36: 3}
    assert gains_over(TIED_EDGES) == {2: 12, 5: 12, 26: 10, 35: 3, 36: 3, 37: 6}
    assert gains_over(CORNER_THROUGH_AN_X_SQUARE) == {27: 3, 63: 50}
    assert reversi.parse(CORNER_THROUGH_AN_X_SQUARE).to_move == 1


def test_wpc_prefers_heavy_squares_to_more_discs() -> None:
    state = reversi.parse(EDGE_OVER_MORE_DISCS)
    assert moves_played(state) == {2}
    assert {int(agents.make("reversi", "corner_best").act(state, np.random.default_rng(seed)))
            for seed in SEEDS} == {26}


def test_wpc_takes_a_corner_that_flips_an_x_square() -> None:
    assert moves_played(reversi.parse(CORNER_THROUGH_AN_X_SQUARE)) == {63}


def test_ties_are_every_best_move_picked_with_one_draw() -> None:
    state = reversi.parse(TIED_EDGES)
    assert candidates(state) == {2, 5} == moves_played(state)
    assert candidates(reversi.initial_state()) == bits(reversi.initial_state().legal)
    agent, rng, once = agents.make("reversi", "wpc"), np.random.default_rng(0), \
        np.random.default_rng(0)
    agent.act(state, rng)
    once.integers(0, 2**64, dtype=np.uint64)
    assert rng.bit_generator.state == once.bit_generator.state


def test_weights_in_hundredths_are_the_papers() -> None:
    from boardgym.agents.compiled.reversi import WPC_WEIGHTS

    assert WPC_WEIGHTS.tolist() == HUNDREDTHS


def test_candidates_follow_the_plain_rule_on_random_positions() -> None:
    state = random_batch(reversi, 2000, seed=3)
    found = candidate_sets("reversi", "wpc", state)
    live = np.flatnonzero(state.legal != 0)
    assert len(live) > 1500 and any(int(word) >> 63 for word in state.me | state.opp)
    for i in live:
        assert bits(int(found[i])) == reference(unbatch(state, int(i)))
    assert (found[state.legal == 0] == 0).all()


def symmetries() -> list[np.ndarray]:
    """The 8 symmetries of the board as cell permutations: ``image[cell]``."""
    board = reversi.BOARD_MAP
    images = [np.rot90(board, k) for k in range(4)]
    images += [image.T for image in images]
    inverse = []
    for image in images:  # image[r, c] = the cell that lands on (r, c)
        where = np.empty(reversi.CELLS, dtype=np.int64)
        where[image.ravel()] = board.ravel()
        inverse.append(where)
    return inverse


def mapped(word: int, image: np.ndarray) -> int:
    """A bitboard with each cell moved to ``image[cell]``."""
    return sum(1 << int(image[cell]) for cell in bits(word))


def transformed(state: reversi.State, image: np.ndarray) -> reversi.State:
    """The position's image under a symmetry."""
    me, opp = mapped(state.me, image), mapped(state.opp, image)
    return reversi.State(me, opp, state.to_move, reversi.legal_bits(me, opp))


def test_symmetric_positions_have_symmetric_candidates() -> None:
    images = symmetries()
    assert len({tuple(image) for image in images}) == 8
    state = random_batch(reversi, 300, seed=8)
    for i in np.flatnonzero(state.legal != 0):
        position = unbatch(state, int(i))
        found = candidates(position)
        for image in images:
            assert candidates(transformed(position, image)) == {int(image[m]) for m in found}


def opponent_replies(env: Any, steps: int, check: Callable[[reversi.State, int], None]) -> int:
    """Step ``env`` (a Reversi vector env) with random actions; for each single opponent
    reply, ``check(position it replied in, reply)``. Returns how many were checked."""
    rng, checked = np.random.default_rng(1), 0
    _, info = env.reset(seed=1)
    ended = np.zeros(env.num_envs, dtype=bool)
    for _ in range(steps):
        before = [reversi.parse(text) for text in env.unwrapped.position_texts()]
        actions = random_actions(info["action_mask"], rng)
        _, _, terminated, truncated, info = env.step(actions)
        after_texts = env.unwrapped.position_texts()
        for i, state in enumerate(before):
            reply = int(info["opponent_action"][i])
            if ended[i] or reply < 0 or reversi.is_terminal(state):
                continue
            position = reversi.apply(state, int(actions[i]))
            if reversi.is_terminal(position) or reversi.to_text(
                    reversi.apply(position, reply)) != after_texts[i]:
                continue  # the opponent moved more than once
            check(position, reply)
            checked += 1
        ended = terminated | truncated
    return checked


def test_the_vector_env_plays_against_wpc() -> None:
    def check(position: reversi.State, reply: int) -> None:
        assert reply in reference(position)

    assert opponent_replies(make("Reversi-v0", num_envs=16, opponent="wpc"), 40, check) > 200


def test_an_argument_is_refused() -> None:
    with pytest.raises(ValueError, match="takes no argument"):
        agents.make("reversi", "wpc:2")
