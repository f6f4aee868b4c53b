"""The classic Reversi AIs, each one candidate-move set (``agents.base``).

Each classic AI shuffles the legal moves, then scans them for the first best one: in
distribution, a uniform choice among the best moves, which is what the players here do.

- ``corner_best``: the corners if any are legal; otherwise the moves that leave the mover
  the most discs. The default opponent of ``Reversi-v0``.
- ``worst``: the moves that leave the mover the fewest discs.
- ``corner_side_best``: the corners; else the moves on the board's edge (row or column 0 or
  7); else ``corner_best``'s moves.

Those are the classic console program's. The game-learning literature's reference player is
``wpc``, the 1-ply weighted piece counter (Yoshioka et al.; the "standard heuristic player" of
Szubert and Jaskowski's Othello League): the moves after which the position's WPC, the sum of
the board weights ``agents.compiled.reversi.WPC_WEIGHTS`` over the mover's discs minus over
the opponent's, is largest (in hundredths, so ties are exact).

After a move the mover owns its discs, the new disc and the flipped ones, so "most discs" is
"most flips" and "fewest discs" is "fewest flips". ``alphabeta:D`` is in
``agents.reversi_strong``; ``random`` and ``mcts:N`` are every game's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from boardgym.agents import reversi_strong  # noqa: F401  (registers alphabeta)
from boardgym.agents.base import Candidates, no_argument, register_candidates
from boardgym.agents.compiled import REVERSI_PLAYERS, register_twins
from boardgym.agents.compiled.reversi import wpc_batch
from boardgym.envs.games import reversi as rules
from boardgym.envs.games.bitboard import bit_of, unpack
from boardgym.envs.games.core import take
from boardgym.envs.games.reversi_bits import flip_counts_batch

NO_MOVE_KEY = -rules.CELLS - 1
"""Below every move's sort key (a flip count or its negative)."""


def flip_counts(me: np.ndarray, opp: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """How many discs each of ``moves`` (single bits) flips for ``me`` against ``opp``
    (``reversi_bits.flips``, elementwise, counted in the compiled loop)."""
    return flip_counts_batch(*(np.asarray(words, dtype=np.uint64) for words in (me, opp, moves)))


def extreme_flip_moves(state: rules.State, most: bool) -> np.ndarray:
    """Per game of a batched state, the legal moves flipping the most (``most``) or the
    fewest discs, as a ``uint64`` bitmask (0 for a finished game)."""
    games, cells = np.nonzero(unpack(state.legal, rules.ACTION_CELLS))
    moves = bit_of(cells)
    counts = flip_counts(state.me[games], state.opp[games], moves)
    key = counts if most else -counts
    best = np.full(len(state.legal), NO_MOVE_KEY)
    np.maximum.at(best, games, key)
    chosen = np.where(key == best[games], moves, np.uint64(0))
    result = np.zeros(len(state.legal), dtype=np.uint64)
    np.bitwise_or.at(result, games, chosen)
    return result


def first_region(state: rules.State, regions: Sequence[int], most: bool) -> np.ndarray:
    """Per game of a batched state, its legal moves in the first of ``regions`` (bitboards)
    that holds any, else ``extreme_flip_moves(state, most)``."""
    result = np.zeros(len(state.legal), dtype=np.uint64)
    open_games = np.ones(len(state.legal), dtype=np.bool_)
    for region in regions:
        inside = state.legal & np.uint64(region)
        found = open_games & (inside != 0)
        result[found] = inside[found]
        open_games &= ~found
    rest = np.flatnonzero(open_games)
    if rest.size:
        result[rest] = extreme_flip_moves(take(state, rest), most)
    return result


def corner_best(state: rules.State) -> np.ndarray:
    """``corner_best``'s candidates: the corners, else the moves flipping the most discs."""
    return first_region(state, (rules.CORNERS,), most=True)


def corner_side_best(state: rules.State) -> np.ndarray:
    """``corner_side_best``'s candidates: the corners, else the edge moves, else the moves
    flipping the most discs."""
    return first_region(state, (rules.CORNERS, rules.EDGES), most=True)


def worst(state: rules.State) -> np.ndarray:
    """``worst``'s candidates: the moves flipping the fewest discs."""
    return first_region(state, (), most=False)


def wpc(state: rules.State) -> np.ndarray:
    """``wpc``'s candidates: the moves after which the weighted piece counter of the position
    (flips included) is largest for the mover, every tied one
    (``agents.compiled.reversi.wpc_batch``)."""
    return wpc_batch(*(np.asarray(words, dtype=np.uint64)
                       for words in (state.me, state.opp, state.legal)))


CLASSIC: dict[str, tuple[Candidates, str]] = {
    "corner_best": (corner_best, "a corner, else the move flipping the most discs"),
    "corner_side_best": (corner_side_best, "a corner, else an edge, else the most discs"),
    "worst": (worst, "the move flipping the fewest discs"),
    "wpc": (wpc, "the move leaving the best weighted piece counter (the Othello League's "
                 "standard heuristic player)"),
}
"""The classic AIs: name -> (candidates, one-line help)."""

for _name, (_candidates, _help) in CLASSIC.items():
    register_candidates(rules.GAME.name, _name, no_argument(_name, _candidates), _help)
register_twins(rules.GAME.name, "reversi", REVERSI_PLAYERS)  # random's too
