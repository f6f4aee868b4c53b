"""The strong four-in-a-row player: ``alphabeta:D`` with a threat-based evaluation and an exact
solve near the end, on any board size (``mcts:N`` is the every-game one of ``agents.search``).

A *threat* of a player is an empty cell that would complete ``connect`` in a row for them.
The evaluation (side to move minus opponent) counts threats, plus how many possible lines
pass through each token. (A bonus for threats on the rows whose parity favours their owner,
the classic zugzwang rule, made ``alphabeta:6`` lose more often to ``lookahead:2``, so there
is none.) Moves are tried winning first, then blocking, then from the centre outwards.
With at most ``EXACT_EMPTIES`` empty cells the search tries to play to the end of the game,
within a budget of ``EXACT_BUDGET`` positions.

The heuristics and the search are compiled (``agents.four_in_a_row_search``); ``HEURISTICS``
gives the same heuristics to ``agents.search.search``, and the player's moves are that
search's over them. ``FourInARowAlphaBeta.act_many`` (``search_many``) plays a batch of
games in compiled loops, each drawing from its own generator: the moves and generator
states of ``act`` game by game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import types

from boardgym.agents import four_in_a_row_search as compiled
from boardgym.agents.base import check_rng
from boardgym.agents.four_in_a_row_search import (  # noqa: F401  (the heuristics' constants)
    EXACT_BUDGET,
    EXACT_EMPTIES,
    FLOATS,
    INTS,
    ROWS,
    W_LINE,
    W_THREAT,
    WIN_NOW,
    WORDS,
)
from boardgym.agents.mcts import drawing, permute, words_array
from boardgym.agents.ntuple.network import NET_TYPE
from boardgym.agents.search import (
    NO_NET,
    AlphaBetaAgent,
    Heuristics,
    SearchResult,
    alphabeta_factory,
)
from boardgym.envs.games import four_in_a_row as rules
from boardgym.envs.games import players
from boardgym.envs.games.compiled import entry
from boardgym.envs.games.core import Game
from boardgym.envs.games.four_in_a_row import State
from boardgym.envs.games.four_in_a_row_bits import board_words

DEFAULT_DEPTH = 6
MAX_DEPTH = 14
"""The deepest ``alphabeta:D``: about ten seconds an early move on the default board when
the search ran in Python (the cap is kept so that seeded specs stay valid alike)."""


def _bits(state: State) -> tuple[np.uint64, np.uint64, np.ndarray]:
    """``(me, opp, words)``: the state as the compiled functions take it."""
    return np.uint64(int(state.me)), np.uint64(int(state.opp)), board_words(state.geom)


def evaluate(state: State) -> float:
    """Heuristic value of a non-final position for the side to move (positive is good)."""
    me, opp, words = _bits(state)
    return float(compiled.evaluate(me, opp, words, compiled.heuristic_words(state.geom)))


def ordered_moves(state: State) -> list[int]:
    """Playable columns: winning ones first, then blocking ones, then centre-first."""
    me, opp, words = _bits(state)
    out = np.empty(state.geom.columns, dtype=np.int64)
    count = compiled.ordered_columns(me, opp, words, compiled.heuristic_words(state.geom), out)
    return out[:count].tolist()


def empties(state: State) -> int:
    """Number of empty cells."""
    return int(compiled.empty_cells(*_bits(state)))


def final_value(state: State) -> float:
    """The finished game's value for the side to move: lost (the opponent made a line, the
    more empty cells left the faster) or drawn."""
    me, opp, words = _bits(state)
    return float(compiled.final_value(me, opp, bool(state.won), words))


def _exact_plies(state: State) -> int | None:
    left = int(compiled.exact_plies(*_bits(state)))
    return None if left < 0 else left


HEURISTICS = Heuristics(rules=rules, evaluate=evaluate, order=ordered_moves,
                        final_value=final_value, exact_plies=_exact_plies,
                        key=lambda state: (state.me, state.opp), exact_budget=EXACT_BUDGET)


@entry("void(u8[::1], u8[::1], u8[::1], u8[::1], i8[:, ::1], i8[::1], intp[::1], intp[::1])")
def shuffled_columns(me: np.ndarray, opp: np.ndarray, words: np.ndarray,
                     heuristic: np.ndarray, orders: np.ndarray, counts: np.ndarray,
                     functions: np.ndarray, states: np.ndarray) -> None:
    """The root order of each unfinished game ``i`` of a batch, game after game: its
    ``ordered_columns`` shuffled by ``rng.permutation`` drawn through the handles
    ``(functions[i], states[i])`` (``mcts.drawing``), into ``orders[i, :counts[i]]``."""
    for i in range(me.shape[0]):
        counts[i] = compiled.ordered_columns(me[i], opp[i], words, heuristic, orders[i])
        permute(orders[i], counts[i], functions[i], states[i])


@entry(types.int64(WORDS, WORDS, ROWS, INTS, types.int64, types.int64, WORDS, WORDS, WORDS,
                   INTS, FLOATS, INTS, INTS, types.int64, NET_TYPE))
def search_batch(me: np.ndarray, opp: np.ndarray, orders: np.ndarray, counts: np.ndarray,
                 depth: int, budget: int, words: np.ndarray, heuristic: np.ndarray,
                 keys: np.ndarray, meta: np.ndarray, values: np.ndarray, stats: np.ndarray,
                 out: np.ndarray, start: int, net: tuple) -> int:  # type: ignore[type-arg]
    """``search_kernel``'s move (over ``net``) into ``out[i]`` for each game ``i`` from
    ``start`` on, over its
    root moves ``orders[i, :counts[i]]``, each search a new generation of the table
    (``keys``, ``meta``, ``values``, ``stats``: a ``Table``'s); the first game whose search
    fills the table (grow it and go on from there), or the number of games."""
    for i in range(start, me.shape[0]):
        stats[compiled.GENERATION] += 1
        out[i] = compiled.search_kernel(
            me[i], opp[i], orders[i, :counts[i]].copy(), depth,
            compiled.exact_plies(me[i], opp[i], words), budget, words, heuristic, keys, meta,
            values, stats, net)[0]
        if stats[compiled.STATUS] == compiled.TABLE_FULL:
            return i
    return me.shape[0]


def search_many(state: State, depth: int, rngs: Sequence[np.random.Generator],
                budget: int = EXACT_BUDGET, table: compiled.Table = compiled.TABLE,
                net: tuple = NO_NET) -> np.ndarray:  # type: ignore[type-arg]
    """``four_in_a_row_search.search(unbatch(state, k), depth, rngs[k], budget, net=net)
    .move`` for each game ``k`` of the batched ``state``, in compiled loops: first every game's root
    order is drawn, game after game (``shuffled_columns``), then the games are searched
    (``search_batch``). The same moves, and each generator left in the state of that
    game-by-game loop (one given for several games draws for them in turn).

    Raises:
        ValueError: ``depth`` < 1, a finished game, not one numpy Generator per game.
    """
    me, opp = words_array(state.me), words_array(state.opp)
    if depth < 1:
        raise ValueError(f"search depth must be at least 1 ply, got {depth}")
    if not np.asarray(rules.legal_bits(state)).all():
        raise ValueError("cannot search a finished game: there is no move to choose")
    if len(rngs) != len(me):
        raise ValueError(f"act_many needs one generator per game: {len(me)} games, "
                         f"{len(rngs)} generators")
    words, heuristic = board_words(state.geom), compiled.heuristic_words(state.geom)
    orders = np.empty((len(me), state.geom.columns), dtype=np.int64)
    counts = np.empty(len(me), dtype=np.int64)
    with drawing(rngs) as (functions, addresses):
        shuffled_columns(me, opp, words, heuristic, orders, counts, functions, addresses)
    moves, start = np.empty(len(me), dtype=np.int64), 0
    while (start := search_batch(me, opp, orders, counts, depth, budget, words, heuristic,
                                 table.keys, table.meta, table.values, table.stats, moves,
                                 start, net)) < len(me):
        table.grow()
    return moves


class FourInARowAlphaBeta(AlphaBetaAgent):
    """``AlphaBetaAgent`` over ``HEURISTICS`` whose search is the compiled one: the same move
    as ``agents.search.search(state, HEURISTICS, depth, rng)``, many times faster."""

    def search(self, state: State, rng: np.random.Generator) -> SearchResult:
        """The search of ``act``: the move, its value, depth, proof and positions visited."""
        return compiled.search(state, self.depth, check_rng(rng))

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """The searched move for the side to move."""
        return self.search(state, rng).move

    def act_many(self, state: Any, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """``act`` in each game ``k`` of the batched ``state`` with ``rngs[k]``: the moves
        and generator states of that game-by-game loop, faster (``search_many``)."""
        return search_many(state, self.depth, rngs)


_spec = alphabeta_factory(lambda _: HEURISTICS, DEFAULT_DEPTH, MAX_DEPTH)


def alphabeta_player(record: Game, arg: str | None) -> FourInARowAlphaBeta:
    """The player of an ``alphabeta[:D]`` spec (``alphabeta_factory``'s checks and depth)."""
    spec = _spec(record, arg)
    return FourInARowAlphaBeta(spec.heuristics, spec.depth)


players.register(rules.GAME.name, "alphabeta", alphabeta_player,
                 help=f"alpha-beta D plies deep (default {DEFAULT_DEPTH}, at most "
                      f"{MAX_DEPTH}): threats and open "
                      f"lines; exact from {EXACT_EMPTIES} empty cells")
