"""The strong Reversi player: ``alphabeta:D`` with a positional evaluation and an exact
endgame solve (``mcts:N`` is the every-game one of ``agents.search``).

The evaluation (side to move minus opponent, in rough "disc" units) weighs mobility, corners,
stable discs, frontier discs, and the edge squares next to empty corners (X- and C-squares),
which hand the corner to the opponent. With at most ``ENDGAME_EMPTIES`` empty squares the
player maximises the final disc difference through the compiled endgame solver
(``agents.solvers.reversi``), which counts the empty squares of a game that ends early for
the winner, as endgame solvers do.

Every rule of the player is compiled in ``agents.reversi_search``: the evaluation, the move
order, and the search the player runs (``reversi_search.search``). ``HEURISTICS`` offers the
same evaluation and order to the generic ``agents.search.search``, which finds the same
moves, values and positions visited (slowly: it is the Python loop over the same rules).
``ReversiAlphaBeta.act_many`` (``search_many``) plays a batch of games in compiled loops,
each drawing from its own generator: the moves and generator states of ``act`` game by game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numba import types

from boardgym.agents import reversi_search
from boardgym.agents.base import check_rng
from boardgym.agents.mcts import drawing, permute, words_array
from boardgym.agents.ntuple.network import NET_TYPE
from boardgym.agents.reversi_search import (
    ARRAY_I8,
    ARRAY_U8,
    ENDGAME_EMPTIES,
    FASTEST_FIRST_MIN_EMPTIES,
    FILLED,
    ROW,
    TABLE_TYPE,
    check_search,
    compiled_endgame,
    deepen,
    order_moves,
    root_order,
    solved,
)
from boardgym.agents.reversi_search import evaluate as compiled_evaluate
from boardgym.agents.reversi_search import final_value as compiled_final_value
from boardgym.agents.reversi_search import search as compiled_search
from boardgym.agents.reversi_search import stable_discs as compiled_stable_discs
from boardgym.agents.search import (
    NO_NET,
    AlphaBetaAgent,
    Heuristics,
    SearchResult,
    margin_of,
    no_solver,
    search,
    sized,
)
from boardgym.envs.games import players
from boardgym.envs.games import reversi as rules
from boardgym.envs.games.compiled import entry
from boardgym.envs.games.core import Game, unbatch
from boardgym.envs.games.reversi import CELLS, State

__all__ = ["DEFAULT_DEPTH", "ENDGAME_EMPTIES", "EXACT_HEURISTICS", "FASTEST_FIRST_MIN_EMPTIES",
           "HEURISTICS", "MAX_DEPTH", "ReversiAlphaBeta", "compiled_endgame", "empties",
           "evaluate", "final_value", "ordered_moves", "search_many", "solve", "stable_discs"]

DEFAULT_DEPTH = 4
MAX_DEPTH = 8
"""The deepest ``alphabeta:D``, where a middle-game move stays within seconds."""


def evaluate(state: State) -> float:
    """Heuristic value of a non-final position for the side to move (positive is good):
    ``reversi_search.evaluate`` of its discs and legal moves."""
    return float(compiled_evaluate(int(state.me), int(state.opp), int(state.legal)))


def stable_discs(me: int, opp: int) -> int:
    """Discs of ``me`` that can never be flipped (a safe under-estimate):
    ``reversi_search.stable_discs``."""
    return int(compiled_stable_discs(int(me), int(opp)))


def ordered_moves(state: State) -> list[int]:
    """Legal moves, most promising first (``reversi_search.order_moves``): corners, safe
    edge squares, inner squares, C- and X-squares; from ``ENDGAME_EMPTIES`` down to
    ``FASTEST_FIRST_MIN_EMPTIES`` empty squares, fewest opponent replies first."""
    return [int(move) for move in root_order(state)]


def empties(state: State) -> int:
    """Number of empty squares."""
    return CELLS - int(state.me | state.opp).bit_count()


def final_value(state: State) -> float:
    """The finished game's value for the side to move: won/lost by the disc difference."""
    return float(compiled_final_value(int(state.me), int(state.opp)))


def _endgame_plies(state: State) -> int | None:
    left = empties(state)
    return left if left <= ENDGAME_EMPTIES else None


HEURISTICS = Heuristics(rules=rules, evaluate=evaluate, order=ordered_moves,
                        final_value=final_value, exact_plies=_endgame_plies,
                        key=lambda state: (state.me, state.opp), solve_moves=compiled_endgame)
"""The player's knowledge for ``agents.search.search``: the compiled evaluation and order."""
EXACT_HEURISTICS = replace(HEURISTICS, exact_plies=empties, solve_moves=no_solver)
"""Search to the end in Python, whatever the empties: the reference the compiled solver
is tested against (``solve``)."""


def solve(state: State) -> int:
    """The final disc difference (side to move minus opponent) under perfect play, by the
    generic search to the end of the game whatever the empty squares: use it on endgames."""
    if rules.is_terminal(state):
        return int(margin_of(final_value(state)))
    return int(margin_of(search(state, EXACT_HEURISTICS, 1, np.random.default_rng(0)).value))


@entry("void(u8[::1], u8[::1], u8[::1], i8[:, ::1], i8[::1], intp[::1], intp[::1])")
def shuffled_orders(me: np.ndarray, opp: np.ndarray, legal: np.ndarray, orders: np.ndarray,
                    counts: np.ndarray, functions: np.ndarray, states: np.ndarray) -> None:
    """The root order of each unfinished game ``i`` of a batch, game after game: its
    ``order_moves`` shuffled by ``rng.permutation`` drawn through the handles ``(functions[i],
    states[i])`` (``mcts.drawing``), into ``orders[i, :counts[i]]``."""
    keys = np.empty(ROW, dtype=np.int64)
    for i in range(me.shape[0]):
        counts[i] = order_moves(me[i], opp[i], legal[i], orders[i], keys)
        permute(orders[i], counts[i], functions[i], states[i])


@entry(types.int64(ARRAY_U8, ARRAY_U8, types.Array(types.int64, 2, "C"), ARRAY_I8,
                   types.Array(types.boolean, 1, "C"), types.int64, TABLE_TYPE, ARRAY_I8,
                   types.int64, NET_TYPE))
def deepen_batch(me: np.ndarray, opp: np.ndarray, orders: np.ndarray, counts: np.ndarray,
                 searched: np.ndarray, depth: int, table: tuple,  # type: ignore[type-arg]
                 out: np.ndarray, start: int, net: tuple) -> int:  # type: ignore[type-arg]
    """``deepen``'s move (over ``net``) into ``out[i]`` for each game ``i`` from ``start``
    on where ``searched[i]``, over its root moves ``orders[i, :counts[i]]``; the first game
    whose search fills ``table`` (grow it and go on from there), or the number of games."""
    for i in range(start, me.shape[0]):
        if searched[i]:
            out[i] = deepen(me[i], opp[i], orders[i, :counts[i]].copy(), depth, table,
                            net)[0]
            if table[4][FILLED]:
                return i
    return me.shape[0]


def search_many(state: State, depth: int, rngs: Sequence[np.random.Generator],
                net: tuple = NO_NET) -> np.ndarray:  # type: ignore[type-arg]
    """``reversi_search.search(unbatch(state, k), depth, rngs[k], net).move`` for each game
    ``k`` of the batched ``state``, in compiled loops: first every game's root order is drawn,
    game after game (``shuffled_orders``), then the endgames are solved and the other games
    searched (``deepen_batch``). The same moves, and each generator left in the state of
    that game-by-game loop (one given for several games draws for them in turn).

    Raises:
        ValueError: ``depth`` out of range, a finished game, not one numpy Generator per
            game.
    """
    me, opp, legal = (words_array(bits) for bits in (state.me, state.opp, state.legal))
    check_search(depth, bool(legal.all()))
    if len(rngs) != len(me):
        raise ValueError(f"act_many needs one generator per game: {len(me)} games, "
                         f"{len(rngs)} generators")
    orders, counts = np.empty((len(me), ROW), dtype=np.int64), np.empty(len(me), np.int64)
    with drawing(rngs) as (functions, addresses):
        shuffled_orders(me, opp, legal, orders, counts, functions, addresses)
    endgame = CELLS - np.bitwise_count(me | opp) <= ENDGAME_EMPTIES
    moves = np.empty(len(me), dtype=np.int64)
    for k in np.flatnonzero(endgame).tolist():
        moves[k] = solved(unbatch(state, k), orders[k, :counts[k]]).move
    start = 0
    table = reversi_search.TABLE  # the single search's, looked up when called
    while (start := deepen_batch(me, opp, orders, counts, ~endgame, depth, table.arrays,
                                 moves, start, net)) < len(me):
        table.grow()
    return moves


class ReversiAlphaBeta(AlphaBetaAgent):
    """``alphabeta:D``: plays the move of the compiled ``reversi_search.search``, the
    ``SearchResult`` of ``agents.search.search`` over ``HEURISTICS`` (the same rng draws)."""

    def search(self, state: State, rng: np.random.Generator) -> SearchResult:
        """The search of ``act``: the move, its value, depth, proof and positions visited."""
        return compiled_search(state, self.depth, check_rng(rng))

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """The searched move for the side to move."""
        return self.search(state, rng).move

    def act_many(self, state: Any, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """``act`` in each game ``k`` of the batched ``state`` with ``rngs[k]``: the moves
        and generator states of that game-by-game loop, faster (``search_many``)."""
        return search_many(state, self.depth, rngs)


def alphabeta_player(record: Game, arg: str | None) -> ReversiAlphaBeta:
    """The player of an ``alphabeta[:D]`` spec: ``D`` plies deep (``DEFAULT_DEPTH`` when
    absent, at most ``MAX_DEPTH``: ``agents.search.sized``)."""
    return ReversiAlphaBeta(HEURISTICS, sized(arg, "alphabeta", DEFAULT_DEPTH, MAX_DEPTH,
                                              "deeper, a move takes minutes"))


players.register(rules.GAME.name, "alphabeta", alphabeta_player,
                 help=f"alpha-beta D plies deep (default {DEFAULT_DEPTH}, at most "
                      f"{MAX_DEPTH}): mobility, corners, "
                      f"stable discs; exact from {ENDGAME_EMPTIES} empty squares")
