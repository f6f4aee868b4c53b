"""Batched opponents: one decision for N games at once, each mirroring a single agent.

A batched agent does not pick a move itself: ``candidates(state)`` returns, for each game of
a batched rules state, the *set* of moves its single-env twin (``agents.make(game, name)``)
may play there, as a ``uint64`` bitmask over action indices (bit ``a`` set = action ``a``).
Every classic AI picks uniformly among such a set (it shuffles, then takes the first best
move), so ``choose(candidates, uniforms)`` with one uniform draw per game plays exactly like
the single agent, in distribution. The vector env owns the random numbers.

``make(game, spec)`` returns the batched twin of a built-in name, or ``None`` when there is
none; ``LoopedAgent`` then runs the single agent game by game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

from agents.tictactoe import CELL_GROUPS, CENTRE_FIRST, CORNER_FIRST, move_values, winning_cell
from envs.games import canonical_name, four_in_a_row, reversi, tictactoe
from envs.games.bitboard import bit_of, popcount, unpack

Candidates = Callable[[Any], np.ndarray]
"""Batched state -> ``uint64`` bitmask per game of the moves the agent may choose."""

BYTE_BITS = 8
BYTES_PER_WORD = 8
BYTE_VALUES = 1 << BYTE_BITS
EVERY_BYTE = np.uint64(0x0101_0101_0101_0101)
"""1 in every byte: multiplying byte counts by it gives their running (prefix) sums."""
HIGH_BITS = np.uint64(0x8080_8080_8080_8080)
"""The top bit of every byte (the per-byte comparison flags of the SWAR tricks below)."""
GATHER_LOW_BITS = np.uint64(0x0102_0408_1020_4080)
"""Multiplier moving bit 0 of byte ``k`` of a word to bit ``56 + k`` (no carries collide)."""
TOP_BYTE = np.uint64(56)
BYTE_MASK = np.uint64(BYTE_VALUES - 1)
LAST_BYTE = np.uint64(BYTES_PER_WORD - 1)
U8 = np.uint64(BYTE_BITS)
LOG2_BYTE_BITS = np.uint64(3)
WORD_BITS = 64
EXACT_FLOAT_BITS = 52
FLOAT_WEIGHTS = 2.0 ** np.arange(EXACT_FLOAT_BITS)
"""``2 ** a`` as float64: a bool mask times these sums to its bits exactly."""


def _select_in_byte() -> np.ndarray:
    """Table at ``value * 8 + r``: position of the ``r``-th set bit of the byte ``value``."""
    table = np.zeros(BYTE_VALUES * BYTE_BITS, dtype=np.uint64)
    for value in range(BYTE_VALUES):
        for rank, position in enumerate(p for p in range(BYTE_BITS) if value >> p & 1):
            table[value * BYTE_BITS + rank] = position
    return table


SELECT_IN_BYTE = _select_in_byte()


def take(state: Any, index: np.ndarray) -> Any:
    """The sub-batch ``index`` (integer or bool array) of a batched rules state."""
    return type(state)(*(f[index] if isinstance(f, np.ndarray) else f for f in state))


def unbatch(state: Any, i: int) -> Any:
    """Game ``i`` of a batched rules state as a single state (Python ints)."""
    return type(state)(*(int(f[i]) if isinstance(f, np.ndarray) else f for f in state))


def bits_from_mask(mask: np.ndarray) -> np.ndarray:
    """``(N, A)`` bool mask (A <= 64) -> ``(N,)`` uint64 with bit ``a`` set where ``mask[:, a]``."""
    n, width = mask.shape
    if width <= EXACT_FLOAT_BITS:  # a sum of distinct powers of two below 2**53 is exact
        return (mask @ FLOAT_WEIGHTS[:width]).astype(np.uint64)
    octets = np.zeros((n, WORD_BITS), dtype=np.uint8)
    octets[:, :width] = mask
    # each uint64 holds 8 mask bytes of 0/1; one multiply packs them into its top byte
    packed = (octets.view(np.uint64) * GATHER_LOW_BITS) >> TOP_BYTE
    return packed.astype(np.uint8).view(np.uint64).reshape(n)


def nth_set_bit(bits: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Position of the ``n``-th (0-based, from bit 0 up) set bit of each word of ``bits``.

    ``n`` must be below each word's bit count (elsewhere the result is some position in
    0..63). The byte holding the bit is found with per-byte prefix counts in one word; a
    table gives the bit inside that byte.
    """
    words = np.ascontiguousarray(bits, dtype=np.uint64)
    rank = n.astype(np.uint64)
    byte_counts = np.bitwise_count(words.view(np.uint8)).view(np.uint64).reshape(words.shape)
    through = byte_counts * EVERY_BYTE  # byte k: set bits in bytes 0..k
    # bytes whose running count is <= rank lie wholly below the wanted bit; count them
    at_most = ((rank * EVERY_BYTE) | HIGH_BITS) - through
    byte = np.bitwise_count(at_most & HIGH_BITS).astype(np.uint64) & LAST_BYTE
    shift = byte << LOG2_BYTE_BITS
    before = ((through << U8) >> shift) & BYTE_MASK
    octet = (words >> shift) & BYTE_MASK
    rank_in_octet = (rank - before) & LAST_BYTE
    inside = SELECT_IN_BYTE[((octet << LOG2_BYTE_BITS) | rank_in_octet).astype(np.intp)]
    return (shift + inside).astype(np.int64)


def choose(candidates: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """One action per game, uniformly among its candidate bits (``uniforms`` in [0, 1)).

    Games without candidates (finished games) get action 0; their move is never applied.
    """
    counts = np.bitwise_count(candidates)
    rank = np.minimum((uniforms * counts).astype(np.int64), np.maximum(counts, 1) - 1)
    return np.where(counts > 0, nth_set_bit(candidates, rank), 0)


class BatchedAgent:
    """A batched opponent: the candidate-move sets of a single agent, for N games at once.

    Args:
        name: the single agent's spec (``"corner_best"``).
        candidates: batched state -> ``uint64`` candidate bitmask per game.
    """

    def __init__(self, name: str, candidates: Candidates) -> None:
        self.name = name
        self.candidates = candidates

    def act(self, state: Any, uniforms: np.ndarray) -> np.ndarray:
        """One move per game of the batched ``state``, drawn with ``uniforms``."""
        return choose(self.candidates(state), uniforms)

    def __repr__(self) -> str:
        return f"BatchedAgent({self.name!r})"


class LoopedAgent:
    """A single agent run game by game over a batch (for agents without a batched twin).

    Args:
        agent: any ``Agent`` (``act(state, rng) -> action``).
    """

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def act_each(self, state: Any, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """One move per game, game ``i`` drawing from ``rngs[i]``."""
        return np.array([self.agent.act(unbatch(state, i), rng) for i, rng in enumerate(rngs)],
                        dtype=np.int64)


# -- Reversi ------------------------------------------------------------------------------

def _extreme_flip_moves(state: Any, most: bool) -> np.ndarray:
    """Legal moves flipping the most (``most``) or the fewest discs, per game."""
    rows, cells = np.nonzero(unpack(state.legal, reversi.ACTION_CELLS))
    moves = bit_of(cells)
    counts = popcount(reversi.flip_bits(state.me[rows], state.opp[rows], moves))
    key = counts if most else -counts
    result = np.zeros(len(state.legal), dtype=np.uint64)
    if rows.size == 0:
        return result
    starts = np.flatnonzero(np.diff(rows, prepend=-1))
    best = np.maximum.reduceat(key, starts)
    group = np.cumsum(np.diff(rows, prepend=rows[0]) != 0)
    chosen = np.where(key == best[group], moves, np.uint64(0))
    result[rows[starts]] = np.bitwise_or.reduceat(chosen, starts)
    return result


def _first_region(state: Any, regions: Sequence[int], most: bool) -> np.ndarray:
    """Legal moves in the first of ``regions`` holding any, else the extreme-flip moves."""
    result = np.zeros(len(state.legal), dtype=np.uint64)
    open_games: np.ndarray = np.ones(len(state.legal), dtype=np.bool_)
    for region in regions:
        inside = state.legal & np.uint64(region)
        found = open_games & (inside != 0)
        result[found] = inside[found]
        open_games &= ~found
    rest = np.flatnonzero(open_games)
    result[rest] = _extreme_flip_moves(take(state, rest), most)
    return result


def _reversi_agents() -> dict[str, Candidates]:
    return {
        "random": lambda state: state.legal,
        "corner_best": lambda state: _first_region(state, (reversi.CORNERS,), True),
        "corner_side_best": lambda state: _first_region(
            state, (reversi.CORNERS, reversi.EDGES), True),
        "worst": lambda state: _first_region(state, (), False),
    }


# -- Four-in-a-row ------------------------------------------------------------------------

def _lines_after_drops(state: Any, columns: np.ndarray) -> np.ndarray:
    """``(C, N)``: whether the side to move makes a line by dropping in each column."""
    after = four_in_a_row.apply_batch(state, columns)
    return np.asarray(four_in_a_row.has_line(after.opp, state.geom))


def _lookahead_1(state: Any) -> np.ndarray:
    """``lookahead:1`` per game: the first winning column; else the columns after which the
    opponent cannot win at once; else every open column (all rated -1)."""
    geom = state.geom
    columns = np.arange(geom.columns).reshape(-1, 1)
    playable = four_in_a_row.legal_mask(state).T  # (C, N)
    wins = _lines_after_drops(state, columns) & playable
    swapped = state._replace(me=state.opp, opp=state.me, to_move=1 - state.to_move)
    threats = _lines_after_drops(swapped, columns) & playable
    mine = four_in_a_row.apply_batch(state, columns)
    above = _lines_after_drops(mine, columns)  # the opponent's reply in the same column
    other_threats = threats.sum(axis=0) - threats > 0
    safe = playable & ~(other_threats | above)
    first_win = wins & (np.cumsum(wins, axis=0) == 1)
    chosen = np.where(wins.any(axis=0), first_win, np.where(safe.any(axis=0), safe, playable))
    return bits_from_mask(chosen.T)


def _four_in_a_row_agents() -> dict[str, Candidates]:
    return {
        "random": lambda state: np.asarray(four_in_a_row.legal_bits(state), dtype=np.uint64),
        "lookahead:1": _lookahead_1,
    }


# -- Tic-tac-toe: tables over every (me, opp) position ------------------------------------

def _reachable_positions() -> list[tictactoe.State]:
    """Every non-terminal position reachable from the empty board."""
    seen: dict[tuple[int, int], tictactoe.State] = {}
    frontier = [tictactoe.initial_state()]
    while frontier:
        state = frontier.pop()
        key = (int(state.me), int(state.opp))
        if key in seen or tictactoe.is_terminal(state):
            continue
        seen[key] = state
        frontier += [tictactoe.apply(state, int(a))
                     for a in np.flatnonzero(tictactoe.legal_mask(state))]
    return list(seen.values())


def _cells_bits(cells: Sequence[int]) -> int:
    return sum(1 << cell for cell in cells)


def _rule_moves(order: Sequence[str]) -> Callable[[tictactoe.State], int]:
    """The moves the classic rule AI with group ``order`` may play, as a bitmask."""
    def moves(state: tictactoe.State) -> int:
        me, opp = int(state.me), int(state.opp)
        for marks in (me, opp):
            cell = winning_cell(marks, state)
            if cell is not None:
                return 1 << cell
        empty = tictactoe.FULL ^ (me | opp)
        return next(bits for bits in (empty & _cells_bits(CELL_GROUPS[name]) for name in order)
                    if bits)
    return moves


def _perfect_moves(state: tictactoe.State) -> int:
    values = move_values(state)
    best = max(values.values())
    return _cells_bits([cell for cell, v in values.items() if v == best])


@cache
def _table(rule: Callable[[tictactoe.State], int]) -> np.ndarray:
    """``rule`` tabulated over every position, indexed by ``me << 9 | opp``."""
    table = np.zeros(1 << (2 * tictactoe.CELLS), dtype=np.uint64)
    for state in _reachable_positions():
        table[(int(state.me) << tictactoe.CELLS) | int(state.opp)] = rule(state)
    return table


def _tabulated(rule: Callable[[tictactoe.State], int]) -> Candidates:
    def candidates(state: Any) -> np.ndarray:
        index = (state.me << np.uint64(tictactoe.CELLS)) | state.opp
        return _table(rule)[index.astype(np.intp)]
    return candidates


_RULES = _rule_moves(CORNER_FIRST)
_RULES_CENTRE = _rule_moves(CENTRE_FIRST)


def _tictactoe_agents() -> dict[str, Candidates]:
    return {
        "random": lambda state: np.asarray(tictactoe.legal_bits(state), dtype=np.uint64),
        "rules": _tabulated(_RULES),
        "rules_center": _tabulated(_RULES_CENTRE),
        "perfect": _tabulated(_perfect_moves),
    }


BATCHED: dict[str, Callable[[], dict[str, Candidates]]] = {
    "reversi": _reversi_agents,
    "four_in_a_row": _four_in_a_row_agents,
    "tictactoe": _tictactoe_agents,
}


def names(game: str) -> list[str]:
    """The agent specs of ``game`` that have a batched twin, sorted."""
    return sorted(BATCHED[canonical_name(game)]())


def make(game: str, spec: Any) -> BatchedAgent | None:
    """The batched twin of the built-in agent ``spec`` of ``game``, or None if it has none
    (an ``Agent`` object, a checkpoint, or a name without a batched version)."""
    if not isinstance(spec, str):
        return None
    found = BATCHED[canonical_name(game)]().get(spec)
    return None if found is None else BatchedAgent(spec, found)


__all__ = ["BatchedAgent", "LoopedAgent", "bits_from_mask", "choose", "make", "names",
           "nth_set_bit", "take", "unbatch"]
