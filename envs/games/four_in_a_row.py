"""Four-in-a-row (Connect Four) rules on bitboards, for any board that fits in 64 bits.

Layout: column ``c`` owns bits ``c * (rows + 1)`` (bottom cell) to ``c * (rows + 1) + rows - 1``
(top cell); bit ``c * (rows + 1) + rows`` is an always-empty sentinel that stops lines from
wrapping between columns. The action is the column, 0 on the left. The first player is red
(``X`` in text), the second yellow (``O``).

A token lands on the lowest empty cell of its column; ``connect`` tokens in a row
horizontally, vertically or diagonally win; a full board without a line is a draw.

Every bit function serves a Python int (one game) and a ``uint64`` array (a batch);
``initial_batch`` and ``apply_batch`` are the batched twins of ``initial_state`` and ``apply``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

import numpy as np

from boardgym.envs.games import four_in_a_row_bits as bits
from boardgym.envs.games.bitboard import Bits, planes, select, state_from_fields, unpack
from boardgym.envs.games.core import (
    NO_TRAIL,
    START_TRAIL,
    Game,
    IllegalMoveError,
    NetworkSize,
    Style,
    Trail,
    for_side,
    side_view,
)

ROWS, COLUMNS, CONNECT = 6, 7, 4
MIN_SIDE = 4
WORD_BITS = 64


@dataclass(frozen=True)
class Geometry:
    """Precomputed bit tables of one board size; shared by every state of that size."""

    rows: int
    columns: int
    connect: int
    height: int = field(init=False)
    bottom: int = field(init=False)
    """One bit at the bottom of every column."""
    board: int = field(init=False)
    """Every playable cell."""
    top: int = field(init=False)
    """The top playable cell of every column."""
    board_map: np.ndarray = field(init=False, repr=False, compare=False)
    """Bit position of each (row, col) cell, row 0 at the top."""
    top_cells: np.ndarray = field(init=False, repr=False, compare=False)
    column_cells: np.ndarray = field(init=False, repr=False, compare=False)
    """``0, 1, ..., columns - 1``: the bit of each column in ``legal_bits``."""
    column_bits: np.ndarray = field(init=False, repr=False, compare=False)
    """``uint64`` mask of each column's playable cells."""
    column_ints: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """The same column masks as Python ints (for single games)."""
    line_shifts: tuple[int, ...] = field(init=False)
    """Bit distance between neighbours: vertical, horizontal and the two diagonals."""
    words: np.ndarray = field(init=False, repr=False, compare=False)
    """The compiled rules' table of the size (``four_in_a_row_bits.board_words``)."""

    def __post_init__(self) -> None:
        h = self.rows + 1
        cols = range(self.columns)
        column = (1 << self.rows) - 1
        values = {
            "height": h,
            "bottom": sum(1 << (c * h) for c in cols),
            "board": sum(column << (c * h) for c in cols),
            "top": sum(1 << (c * h + self.rows - 1) for c in cols),
            "board_map": np.array([[c * h + self.rows - 1 - r for c in cols]
                                   for r in range(self.rows)]),
            "top_cells": np.array([c * h + self.rows - 1 for c in cols]),
            "column_cells": np.arange(self.columns),
            "column_bits": np.array([column << (c * h) for c in cols], dtype=np.uint64),
            "column_ints": tuple(column << (c * h) for c in cols),
            "line_shifts": (1, h, h - 1, h + 1),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "words", bits.board_words(self))


def geometry(rows: int = ROWS, columns: int = COLUMNS, connect: int = CONNECT) -> Geometry:
    """The validated ``Geometry`` of a board size.

    Raises:
        ValueError: a side below 4, ``connect`` outside 2..max(rows, columns), or a board too
            big for 64 bits (``(rows + 1) * columns <= 64``).
    """
    for name, value in (("rows", rows), ("columns", columns), ("connect", connect)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise ValueError(f"{name} must be an int, got {value!r}")
    if rows < MIN_SIDE or columns < MIN_SIDE:
        raise ValueError(f"rows and columns must each be >= {MIN_SIDE}, got rows={rows}, "
                         f"columns={columns}")
    if not 2 <= connect <= max(rows, columns):
        raise ValueError(f"connect must be between 2 and max(rows, columns) = "
                         f"{max(rows, columns)}, got connect={connect}")
    if (rows + 1) * columns > WORD_BITS:
        raise ValueError(f"a {rows}x{columns} board does not fit the 64-bit board: "
                         f"(rows + 1) * columns must be <= {WORD_BITS}")
    return _geometry(int(rows), int(columns), int(connect))


@cache
def _geometry(rows: int, columns: int, connect: int) -> Geometry:
    return Geometry(rows, columns, connect)


class State(NamedTuple):
    """A four-in-a-row position. For a batch, ``me``, ``opp``, ``to_move``, ``won`` are
    ``(N,)`` arrays.

    Attributes:
        me: tokens of the side to move.
        opp: tokens of the other side (the one that just moved).
        to_move: 0 if the first player moves next, 1 otherwise.
        won: ``has_line(opp)``: the last move made a line (worked out once, as it is played).
        geom: the board size's bit tables.
        trail: the columns played to reach a single state, in order, where known (what
            ``to_text`` writes, so that a text reads back as itself); ``NO_TRAIL`` in batches.
            Left out of equality and hashing (see ``core.Trail``): the position alone is
            compared, so transpositions stay equal states.
    """

    me: Bits
    opp: Bits
    to_move: int | np.ndarray
    won: bool | np.ndarray
    geom: Geometry
    trail: Trail = NO_TRAIL


def _words(values: np.ndarray) -> np.ndarray:
    """``values`` as the flat ``uint64`` array the compiled batch loops take."""
    return np.asarray(values, dtype=np.uint64).reshape(-1)


def has_line(tokens: Bits, geom: Geometry) -> bool | np.ndarray:
    """True where ``tokens`` hold ``connect`` cells in a row in any direction
    (``four_in_a_row_bits.has_line``)."""
    if isinstance(tokens, np.ndarray):
        return bits.has_line_batch(_words(tokens), geom.words).reshape(tokens.shape)
    return bool(bits.has_line(tokens, geom.words))


def initial_state(rows: int = ROWS, columns: int = COLUMNS, connect: int = CONNECT) -> State:
    """The empty board of the given size, first player to move."""
    return State(0, 0, 0, False, geometry(rows, columns, connect), START_TRAIL)


def initial_batch(n: int, rows: int = ROWS, columns: int = COLUMNS,
                  connect: int = CONNECT) -> State:
    """``n`` empty boards as a batched state."""
    zeros = np.zeros(n, dtype=np.uint64)
    return State(zeros, zeros.copy(), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool),
                 geometry(rows, columns, connect))


def legal_bits(state: State) -> Bits:
    """Playable columns as bits (bit ``c`` for column ``c``); none once the game is over (a
    full board has none anyway): ``four_in_a_row_bits.legal_columns``."""
    words = state.geom.words
    if isinstance(state.me, np.ndarray):
        won = np.asarray(state.won, dtype=np.bool_).reshape(-1)
        return bits.legal_columns_batch(_words(state.me), _words(state.opp), won, words)
    return int(bits.legal_columns(state.me, state.opp, state.won, words))


action_bits = legal_bits
"""Legal actions as bits (bit ``a`` for action ``a``), 0 exactly when the game is over."""


def legal_mask(state: State) -> np.ndarray:
    """Bool mask of playable columns, ``(columns,)`` (``(N, columns)``); all False once over."""
    return unpack(legal_bits(state), state.geom.column_cells).view(bool)


def landing_cells(filled: Bits, geom: Geometry) -> Bits:
    """The drop rule: the cell where a token dropped in each column lands, given the
    ``filled`` cells (none for a full column). AND with a column's mask for that column
    (``four_in_a_row_bits.landing``)."""
    if isinstance(filled, np.ndarray):
        return bits.landing_batch(_words(filled), geom.words).reshape(filled.shape)
    return int(bits.landing(filled, geom.words))


def illegal_reason(state: State, action: int) -> str | None:
    """Why column index ``action`` (0-based) cannot be played in the single ``state``, in
    the 1-based column notation (out of range, full, or the game over); None if it can."""
    geom = state.geom
    if not 0 <= action < geom.columns:
        return (f"column index {action} is out of range: actions are 0..{geom.columns - 1} "
                f"(columns 1..{geom.columns} in the notation)")
    if is_terminal(state):
        return "the game is over (a line was made or the board is full): no column can be played"
    if (state.me | state.opp) & geom.top & geom.column_ints[action]:
        return f"column {action + 1} is full"
    return None


def apply(state: State, action: int) -> State:
    """The position after the side to move drops a token in column ``action`` (0-based;
    column ``action + 1`` in the notation).

    Raises:
        IllegalMoveError: ``illegal_reason`` (out of range, a full column, the game over),
            with the playable columns.
    """
    reason = illegal_reason(state, action)
    if reason is not None:
        playable = [c + 1 for c in np.flatnonzero(legal_mask(state)).tolist()]
        raise IllegalMoveError(f"{reason}; playable columns (1-based): {playable or 'none'}")
    return play(state, action)


def play(state: State, action: int) -> State:
    """``apply`` without the legality check: ``action`` must be set in ``action_bits``
    (``four_in_a_row_bits.play``)."""
    me, opp, won = bits.play(state.me, state.opp, action, state.geom.words)
    return state_from_fields(State, (int(me), int(opp), 1 - state.to_move, bool(won),
                                     state.geom, state.trail.then(action)))


def apply_batch(state: State, actions: np.ndarray) -> State:
    """Batched ``apply``: game ``i`` drops in column ``actions[i]``, which must be playable."""
    me, opp, won = bits.play_batch(_words(state.me), _words(state.opp),
                                   np.asarray(actions, dtype=np.int64).reshape(-1),
                                   state.geom.words)
    return state_from_fields(State, (me, opp, 1 - state.to_move, won, state.geom, NO_TRAIL))


def is_terminal(state: State) -> bool | np.ndarray:
    """True when the last mover made a line or the board is full."""
    return state.won | ((state.me | state.opp) == state.geom.board)


def result(state: State, side: int | np.ndarray) -> int | np.ndarray:
    """+1 if ``side`` (0 = the first player) made a line, -1 if the other did, 0 for a draw
    (terminal states): only the last mover can have made one."""
    return select(state.won, for_side(select(state.to_move == 1, 1, -1), side), 0)


def observation(state: State, side: int | np.ndarray | None = None) -> np.ndarray:
    """uint8 planes ``(2, rows, columns)`` (batched ``(N, 2, rows, columns)``), row 0 on top:
    ``side``'s tokens (default: the side to move's), then the other's."""
    return planes(*side_view(state, side), state.geom.board_map)


def parse(text: str, rows: int = ROWS, columns: int = COLUMNS, connect: int = CONNECT) -> State:
    """The position reached by playing the columns in ``text`` from the empty board, as in
    Pascal Pons' solver: 1-based column digits, ``"4453"``; on boards of more than 9 columns
    the numbers are separated by spaces or commas. An empty text is the empty board. The
    state keeps the order read (its ``trail``): ``to_text`` writes the text back as it was
    (in its usual form: digits, or numbers separated by one space past 9 columns).

    Raises:
        ValueError: not a column, a full column, or a move after the game ended.
    """
    state = initial_state(rows, columns, connect)
    words = text.replace(",", " ").split()
    moves = words if len(words) > 1 or columns > 9 else list(text.strip())
    for ply, word in enumerate(moves, start=1):
        if not word.isdigit() or not 1 <= int(word) <= columns:
            raise ValueError(f"move {ply} of {text!r} is {word!r}, not a column 1..{columns}; "
                             "a position is the columns played, e.g. '4453'")
        if is_terminal(state):
            raise ValueError(f"move {ply} of {text!r} comes after the game ended")
        if not legal_bits(state) >> (int(word) - 1) & 1:
            raise ValueError(f"move {ply} of {text!r} drops in column {word}, which is full")
        state = play(state, int(word) - 1)
    return state


def to_text(state: State) -> str:
    """The columns played to reach ``state`` (``parse``'s notation): its ``trail`` where it
    is known, so ``to_text(parse(t)) == t`` and ``to_text(apply(s, a))`` is ``to_text(s)``
    with column ``a + 1`` added; else (a state taken out of a batch) a sequence that reaches
    it: the tokens of each column bottom up, the sides alternating from the first player,
    no line before the last move. Raises ValueError for a position no game reaches."""
    geom = state.geom
    moves = list(state.trail) if state.trail.known else _replayed(state)
    separator = " " if geom.columns > 9 else ""
    return separator.join(str(c + 1) for c in moves)


def _replayed(state: State) -> list[int]:
    """A sequence of columns that reaches ``state`` (see ``to_text``).

    Raises:
        ValueError: no game reaches the position.
    """
    first, second = (int(b) for b in side_view(state, 0))
    moves = _replay(first, second, 0, 0, state.geom, set())
    if moves is None:
        raise ValueError("no sequence of moves reaches this position")
    return moves


def _replay(first: int, second: int, mine: int, theirs: int, geom: Geometry,
            dead: set[tuple[int, int]]) -> list[int] | None:
    """Columns that take the position ``(mine, theirs)`` (the side to move's tokens, the
    other's, sides alternating from the first player) to ``(first, second)``; None if none
    can (depth-first, remembering dead ends in ``dead``)."""
    mover_target = first if (mine | theirs).bit_count() % 2 == 0 else second
    if mine | theirs == first | second:
        return []
    if has_line(theirs, geom) or (mine, theirs) in dead:
        return None
    drops = landing_cells(mine | theirs, geom) & mover_target
    for column, cells in enumerate(geom.column_ints):
        if drops & cells:
            rest = _replay(first, second, theirs, mine | drops & cells, geom, dead)
            if rest is not None:
                return [column, *rest]
    dead.add((mine, theirs))
    return None


def column_name(action: int) -> str:
    """``column 4``: columns numbered from 1 on the left."""
    return f"column {action + 1}"


GAME = Game(
    name="four_in_a_row",
    title="Four-in-a-row",
    rules=sys.modules[__name__],  # type: ignore[arg-type]
    env_id="FourInARow-v0",
    aliases=("connect_four",),
    env_aliases=("ConnectFour-v0",),
    options={"rows": ROWS, "columns": COLUMNS, "connect": CONNECT},
    default_opponent="lookahead:2",
    side_names=("red", "yellow"),
    style=Style(".XO", 72, (0, 70, 200), (0, 70, 200), ((220, 30, 30), (245, 205, 0)), "token",
                text_frame="rack"),
    network=NetworkSize(channels=64, blocks=4, hidden=128),
    action_name=column_name,
    env_doc="""Four-in-a-row (Connect Four) against a built-in opponent, on a configurable board.

    ## Action Space
    ``Discrete(columns)``: drop a token in that column (0 on the left: column 1 in the
    position text); a full column is illegal.

    ## Observation Space
    ``Box(0, 1, (2, rows, columns), uint8)``, row 0 at the top: plane 0 the agent's tokens,
    plane 1 the opponent's.

    ## Rewards
    At the end +1 win, -1 loss, 0 draw; 0 before. An illegal action: -1.

    ## Starting State
    An empty board, or ``reset(options={"position": "4453"})`` (the columns played, 1-based;
    ``env.position_text()`` keeps that order and adds the moves played); who moves first is
    drawn per episode (``first_player="random"``). The first player has red tokens (``X`` in
    text). The agent never gets a position without a legal move: a finished position, or one
    that the opponent's replies end before the agent has moved (``"445566"`` with
    ``first_player="opponent"``: the default opponent, red, wins at once), is refused with a
    ``ValueError`` naming the ``first_player`` that seats the agent on the side to move.

    ## Episode End
    ``connect`` tokens in a row (horizontal, vertical or diagonal), a full board (draw), or an
    illegal action with ``illegal_action="lose"``.

    ## Arguments
    ``rows`` (6), ``columns`` (7): each >= 4, with ``(rows + 1) * columns <= 64``;
    ``connect`` (4): at most ``max(rows, columns)``. ``opponent`` (default ``"lookahead:2"``,
    the classic fitness search), ``first_player``, ``opening`` (a sampler of where each game
    starts), ``illegal_action``, ``render_mode``: see ``TurnBasedEnv``.

    ## Info
    ``action_mask``, ``opponent_action``, ``winner`` (at the end), ``illegal_action``.

    ## Version History
    * v0: initial release.
    """,
)
