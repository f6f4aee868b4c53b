"""The strong Reversi player: ``alphabeta:D`` with a positional evaluation and an exact
endgame solve (``mcts:N`` is the every-game one of ``agents.search``).

The evaluation (side to move minus opponent, in rough "disc" units) weighs mobility, corners,
stable discs, frontier discs, and the edge squares next to empty corners (X- and C-squares),
which hand the corner to the opponent. With at most ``ENDGAME_EMPTIES`` empty squares the
player maximises the final disc difference: through the compiled endgame solver
(``agents.solvers.reversi``, about 40x faster at 12 empties) when numba is installed, else by
searching to the end in Python. Both find the same outcome; the solver counts the empty
squares of a game that ends early for the winner, as endgame solvers do, so when margins are
that close the two may choose different winning moves.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from boardgym.agents.search import (
    Heuristics,
    alphabeta_factory,
    decisive,
    margin_of,
    no_solver,
    search,
)
from boardgym.envs.games import players
from boardgym.envs.games import reversi as rules
from boardgym.envs.games.bitboard import FULL64
from boardgym.envs.games.reversi import CELLS, CORNERS, EDGES, SIZE, State, legal_bits

ENDGAME_EMPTIES = 12
"""Search exactly to the end of the game from this many empty squares or fewer."""
FASTEST_FIRST_MIN_EMPTIES = 5
"""Below this many empty squares, ordering by the opponent's replies costs more than it saves."""
DEFAULT_DEPTH = 4
MAX_DEPTH = 8
"""The deepest ``alphabeta:D``: up to ten seconds a midgame move; depth 10 takes a minute."""

AXES = tuple(zip(rules.LEFT_SHIFTS, rules.RIGHT_SHIFTS, strict=True))
"""Per line direction: (shift, mask) towards higher bits and towards lower bits."""
BORDERS = tuple(FULL64 ^ (((FULL64 << step) & low) & ((FULL64 >> step) & high))
                for (step, low), (_, high) in AXES)
"""Per direction: the squares with no neighbour on one side of that line (the board's rim)."""

CORNER_CELLS = (0, SIZE - 1, CELLS - SIZE, CELLS - 1)
X_SQUARES = {0: 1 << 9, 7: 1 << 14, 56: 1 << 49, 63: 1 << 54}
"""The diagonal neighbour of each corner."""
C_SQUARES = {0: (1 << 1) | (1 << 8), 7: (1 << 6) | (1 << 15),
             56: (1 << 48) | (1 << 57), 63: (1 << 62) | (1 << 55)}
"""The edge neighbours of each corner."""

W_MOBILITY = 4.0
W_CORNER = 30.0
W_STABLE = 6.0
W_FRONTIER = -1.5
W_X_SQUARE = -15.0
W_C_SQUARE = -5.0
W_DISC = 0.0

ORDER_PRIORITY = (CORNERS, EDGES ^ CORNERS ^ sum(C_SQUARES.values()),
                  FULL64 ^ EDGES ^ sum(X_SQUARES.values()), sum(C_SQUARES.values()),
                  sum(X_SQUARES.values()))
"""Square groups in the order moves are tried: corners, safe edges, inner squares, C, X."""


def _shift_up(bits: int, step: int, mask: int) -> int:
    """Squares whose neighbour ``step`` bits lower (in a direction with wrap mask ``mask``) is in
    ``bits``."""
    return (bits << step) & mask


def _full_lines(filled: int, step: int, up_mask: int, down_mask: int) -> int:
    """Squares whose whole line in direction ``step`` is filled."""
    up = down = FULL64 ^ filled
    for _ in range(SIZE - 1):
        up |= _shift_up(up, step, up_mask)
        down |= (down >> step) & down_mask
    return FULL64 ^ (up | down)


def _anchors(filled: int) -> list[int]:
    """Per line direction: the squares that are safe along it whatever their neighbours hold,
    because the line is full or they sit on the board's rim across it."""
    return [border | _full_lines(filled, step, up, down)
            for border, ((step, up), (_, down)) in zip(BORDERS, AXES, strict=True)]


def _grow_stable(discs: int, anchors: list[int]) -> int:
    """The stable discs among ``discs``, given the ``_anchors`` of the position."""
    stable = 0
    while True:
        grown = discs
        for base, ((step, up), (_, down)) in zip(anchors, AXES, strict=True):
            grown &= base | _shift_up(stable, step, up) | ((stable >> step) & down)
        if grown == stable:
            return stable
        stable = grown


def stable_discs(me: int, opp: int) -> int:
    """Discs of ``me`` that can never be flipped (a safe under-estimate).

    A disc is stable when, along each of the four line directions, its line is full or one of
    its two neighbours on that line is the board's rim or a stable disc of the same colour.
    """
    return _grow_stable(me, _anchors(me | opp))


def _stable_difference(me: int, opp: int) -> int:
    """Stable discs of ``me`` minus those of ``opp``, taken as 0 while every corner is empty
    (a disc can then only be stable on lines that are full end to end, which is rare)."""
    filled = me | opp
    if not filled & CORNERS:
        return 0
    anchors = _anchors(filled)
    return _grow_stable(me, anchors).bit_count() - _grow_stable(opp, anchors).bit_count()


def _frontier(discs: int, empty: int) -> int:
    """Discs next to at least one empty square."""
    near_empty = 0
    for step, mask in rules.LEFT_SHIFTS:
        near_empty |= _shift_up(empty, step, mask)
    for step, mask in rules.RIGHT_SHIFTS:
        near_empty |= (empty >> step) & mask
    return discs & near_empty


def _corner_danger(discs: int, filled: int) -> tuple[int, int]:
    """Numbers of ``discs`` on X-squares and on C-squares next to an empty corner."""
    x = c = 0
    for corner in CORNER_CELLS:
        if not (filled >> corner) & 1:
            x += (discs & X_SQUARES[corner]).bit_count()
            c += (discs & C_SQUARES[corner]).bit_count()
    return x, c


def evaluate(state: State) -> float:
    """Heuristic value of a non-final position for the side to move (positive is good)."""
    me, opp = int(state.me), int(state.opp)
    filled = me | opp
    empty = FULL64 ^ filled
    my_x, my_c = _corner_danger(me, filled)
    their_x, their_c = _corner_danger(opp, filled)
    return (W_MOBILITY * (int(state.legal).bit_count() - int(legal_bits(opp, me)).bit_count())
            + W_CORNER * ((me & CORNERS).bit_count() - (opp & CORNERS).bit_count())
            + W_STABLE * _stable_difference(me, opp)
            + W_FRONTIER * (_frontier(me, empty).bit_count() - _frontier(opp, empty).bit_count())
            + W_X_SQUARE * (my_x - their_x) + W_C_SQUARE * (my_c - their_c)
            + W_DISC * (me.bit_count() - opp.bit_count()))


def ordered_moves(state: State) -> list[int]:
    """Legal moves, most promising first.

    In the endgame (from ``ENDGAME_EMPTIES`` down to ``FASTEST_FIRST_MIN_EMPTIES`` empty
    squares) the moves that leave the opponent the fewest replies come first; otherwise, and
    among equals, corners, then safe edge squares, inner squares, C- and X-squares.
    """
    moves = _by_square(state)
    if FASTEST_FIRST_MIN_EMPTIES <= empties(state) <= ENDGAME_EMPTIES:
        moves.sort(key=lambda move: _replies(state, move))
    return moves


def _replies(state: State, move: int) -> int:
    """How many moves the opponent has after ``move`` (0 when the opponent must pass)."""
    child = rules.apply(state, move)
    return 0 if child.to_move == state.to_move else int(child.legal).bit_count()


def _by_square(state: State) -> list[int]:
    """Legal moves: corners, then safe edge squares, inner squares, C- and X-squares."""
    moves: list[int] = []
    for group in ORDER_PRIORITY:
        bits = int(state.legal) & group
        while bits:
            low = bits & -bits
            moves.append(low.bit_length() - 1)
            bits ^= low
    return moves


def empties(state: State) -> int:
    """Number of empty squares."""
    return CELLS - int(state.me | state.opp).bit_count()


def final_value(state: State) -> float:
    """The finished game's value for the side to move: won/lost by the disc difference."""
    diff = int(state.me).bit_count() - int(state.opp).bit_count()
    return decisive((diff > 0) - (diff < 0), abs(diff))


def _endgame_plies(state: State) -> int | None:
    left = empties(state)
    return left if left <= ENDGAME_EMPTIES else None


def compiled_endgame(state: State) -> tuple[dict[int, float], int] | None:
    """Every legal move's exact value (``decisive``: won or lost by the final disc
    difference) from the compiled endgame solver, and the positions it visited; ``None``
    without numba (the ``solvers`` extra), when the Python search plays the endgame itself.
    """
    try:
        from boardgym.agents.solvers import reversi as solver  # numba: loaded on first use
    except ImportError:
        return None
    scores, nodes = solver.counted_move_scores(state)
    values = {move: decisive((score > 0) - (score < 0), abs(score))
              for move, score in scores.items()}
    return values, nodes


HEURISTICS = Heuristics(rules=rules, evaluate=evaluate, order=ordered_moves,
                        final_value=final_value, exact_plies=_endgame_plies,
                        key=lambda state: (state.me, state.opp), solve_moves=compiled_endgame)
EXACT_HEURISTICS = replace(HEURISTICS, exact_plies=empties, solve_moves=no_solver)
"""Search to the end in pure Python, whatever the empties: the reference the compiled solver
is tested against (``solve``)."""


def solve(state: State) -> int:
    """The final disc difference (side to move minus opponent) under perfect play.

    Searches to the end of the game whatever the number of empty squares: use it on endgames.
    """
    if rules.is_terminal(state):
        return int(margin_of(final_value(state)))
    return int(margin_of(search(state, EXACT_HEURISTICS, 1, np.random.default_rng(0)).value))


players.register(rules.GAME.name, "alphabeta",
                 alphabeta_factory(lambda _: HEURISTICS, DEFAULT_DEPTH, MAX_DEPTH),
                 help=f"alpha-beta D plies deep (default {DEFAULT_DEPTH}, at most "
                      f"{MAX_DEPTH}): mobility, corners, "
                      f"stable discs; exact from {ENDGAME_EMPTIES} empty squares")
