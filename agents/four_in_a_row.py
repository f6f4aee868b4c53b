"""Built-in four_in_a_row players: the classic console program's AIs.

- ``random``: a uniformly random playable column.
- ``lookahead:N`` (``lookahead`` alone means N = 2): the classic fitness search ``potential``
  looking N moves of each side ahead; it plays the column of highest potential among the
  playable ones, ties broken uniformly at random. The default opponent of ``FourInARow-v0``.
- ``alphabeta:D`` (default 6) and ``mcts:N`` (default 800): the strong reference players of
  ``agents.four_in_a_row_strong``.

``potential`` is memoised on the bitboard position (a bounded LRU cache), which changes no
returned value: each value is computed by exactly the classic sequence of float operations.
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np
from boardgym.agents.base import Agent, AgentFactory, RandomAgent, no_argument
from boardgym.agents.four_in_a_row_strong import AGENTS as STRONG_AGENTS
from boardgym.envs.games import four_in_a_row as rules

DEFAULT_DEPTH = 2
POTENTIAL_CACHE_SIZE = 1 << 18
"""Positions remembered by ``potential``: enough for a whole game at depth 2 or 3."""
WIN, LOSS, NEUTRAL = 1, -1, 0


@cache
def _column_masks(geom: rules.Geometry) -> tuple[tuple[int, int], ...]:
    """``(top cell bit, every cell of the column)`` of each column, left to right, as ints."""
    return tuple((1 << int(top), int(column))
                 for top, column in zip(geom.top_cells, geom.column_bits, strict=True))


def _open_columns(filled: int, geom: rules.Geometry) -> list[tuple[int, int]]:
    """``(column, its cells)`` of each column, left to right, whose top cell is empty."""
    return [(c, cells) for c, (top, cells) in enumerate(_column_masks(geom)) if not filled & top]


def _potential(me: int, opp: int, depth: int, geom: rules.Geometry) -> tuple[float, ...]:
    """``potential`` on raw bitboards: ``me`` is the side whose moves are rated."""
    if depth == 0 or (me | opp) == geom.board:
        return (NEUTRAL,) * geom.columns
    return _search(me, opp, depth, geom)


@lru_cache(maxsize=POTENTIAL_CACHE_SIZE)
def _search(me: int, opp: int, depth: int, geom: rules.Geometry) -> tuple[float, ...]:
    """``_potential`` past its two trivial cases, memoised on the position."""
    columns = geom.columns
    values: list[float] = [NEUTRAL] * columns
    for c, c_cells in _open_columns(me | opp, geom):
        mine = me | (((me | opp) + geom.bottom) & c_cells)
        if rules.has_line(mine, geom):
            values[c] = WIN
            break  # the classic quirk: the columns to the right keep 0
        if (mine | opp) == geom.board:
            continue  # the value stays 0
        for _, k_cells in _open_columns(mine | opp, geom):
            theirs = opp | (((mine | opp) + geom.bottom) & k_cells)
            if rules.has_line(theirs, geom):
                values[c] = LOSS
                break
            values[c] += sum(_potential(mine, theirs, depth - 1, geom)) / columns / columns
    return tuple(values)


def potential(state: rules.State, depth: int) -> tuple[float, ...]:
    """The classic fitness of each column for the side to move of ``state``.

    If ``depth`` is 0 or the board is full, every value is 0. Otherwise, for each column ``c``
    from left to right: a full column keeps 0; drop the side to move's token in ``c``; if that
    makes a line, ``c`` gets 1 and the scan **stops** (columns to the right keep 0); else if
    the board is now full, ``c`` keeps 0; else for each open column ``k`` the opponent drops in
    ``k``: if that makes a line, ``c`` gets -1 and the loop over ``k`` stops; otherwise
    ``sum(potential(after k, depth - 1)) / columns / columns`` is added to ``c``.

    Args:
        state: a single (not batched) position.
        depth: moves of each side to look ahead, >= 0.

    Returns:
        One value per column, left to right.
    """
    return _potential(int(state.me), int(state.opp), depth, state.geom)


class LookaheadAgent:
    """``lookahead:N``: the playable column of highest ``potential(state, N)``; ties random."""

    def __init__(self, depth: int = DEFAULT_DEPTH) -> None:
        self.depth = depth

    def act(self, state: rules.State, rng: np.random.Generator) -> int:
        """The move as specified in the class docstring."""
        values = potential(state, self.depth)
        playable = [c for c, _ in _open_columns(int(state.me) | int(state.opp), state.geom)]
        best = max(values[c] for c in playable)
        return int(rng.choice([c for c in playable if values[c] == best]))


def lookahead(arg: str | None) -> Agent:
    """The ``lookahead[:N]`` factory: N a positive integer, 2 when omitted.

    Raises:
        ValueError: N is not a positive integer.
    """
    if arg is None:
        return LookaheadAgent()
    if not arg.isdigit() or int(arg) < 1:
        raise ValueError(f"lookahead depth must be a positive integer, e.g. 'lookahead:2'; "
                         f"got 'lookahead:{arg}'")
    return LookaheadAgent(int(arg))


AGENTS: dict[str, AgentFactory] = {
    "random": no_argument("random", lambda: RandomAgent(rules)),
    "lookahead": lookahead,
    **STRONG_AGENTS,  # alphabeta:D and mcts:N
}
