"""Tic-tac-toe rules on 9-bit bitboards.

Cells 0..8 row-major from the top-left; cell ``i`` is bit ``i`` and action ``i``. The first
player is ``X``, the second ``O``. Three in a row (row, column or diagonal) wins; a full
board without a line is a draw.

Every bit function serves a Python int (one game) and a ``uint64`` array (a batch);
``initial_batch`` and ``apply_batch`` are the batched twins of ``initial_state`` and ``apply``.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import numpy as np

from boardgym.envs.games.bitboard import Bits, bit_of, planes, select, state_from_fields, unpack
from boardgym.envs.games.core import Game, IllegalMoveError, NetworkSize, Style, for_side, side_view

SIZE = 3
CELLS = SIZE * SIZE
NUM_ACTIONS = CELLS
FULL = (1 << CELLS) - 1
ACTION_CELLS = np.arange(CELLS)
BOARD_MAP = ACTION_CELLS.reshape(SIZE, SIZE)
CENTRE = 4
CORNER_CELLS = (0, 2, 6, 8)
SIDE_CELLS = (1, 3, 5, 7)
LINES = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns
    (0, 4, 8), (2, 4, 6),  # diagonals
)
LINE_BITS = tuple(sum(1 << cell for cell in line) for line in LINES)


class State(NamedTuple):
    """A tic-tac-toe position. For a batch, every field is an ``(N,)`` array.

    Attributes:
        me: marks of the side to move.
        opp: marks of the other side (the one that just moved).
        to_move: 0 if ``X`` (the first player) moves next, 1 otherwise.
    """

    me: Bits
    opp: Bits
    to_move: int | np.ndarray


def _scan_lines(bits: Bits) -> bool | np.ndarray:
    """True where ``bits`` hold one of the eight lines (checked line by line)."""
    found: bool | np.ndarray = False
    for line in LINE_BITS:
        found = found | ((bits & line) == line)
    return found


LINE_TABLE = np.asarray(_scan_lines(np.arange(1 << CELLS, dtype=np.uint64)))
"""``_scan_lines`` of every 9-bit board, indexed by the board."""
LINE_TUPLE = tuple(bool(found) for found in LINE_TABLE)
"""The same table as Python bools (single games)."""
OPEN_TABLE = np.where(LINE_TABLE, 0, FULL).astype(np.uint64)
"""Per 9-bit board of the last mover: the cells still open to play, all (``FULL``) unless
it holds a line (then none: the game is over)."""
OPEN_TUPLE = tuple(int(cells) for cells in OPEN_TABLE)
"""The same table as Python ints (single games)."""


def has_line(bits: Bits) -> bool | np.ndarray:
    """True where ``bits`` hold one of the eight lines."""
    if isinstance(bits, np.ndarray):
        return LINE_TABLE[(bits & FULL).astype(np.intp)]
    return LINE_TUPLE[bits & FULL]


def initial_state() -> State:
    """The empty board, ``X`` to move."""
    return State(0, 0, 0)


def initial_batch(n: int) -> State:
    """``n`` empty boards as a batched state."""
    zeros = np.zeros(n, dtype=np.uint64)
    return State(zeros, zeros.copy(), np.zeros(n, dtype=np.int64))


def legal_bits(state: State) -> Bits:
    """Empty cells, or none once the game is over (a full board has none anyway)."""
    opp = state.opp
    empty = FULL ^ (state.me | opp)
    if isinstance(opp, np.ndarray):
        return empty & OPEN_TABLE[(opp & FULL).astype(np.intp)]
    return empty & OPEN_TUPLE[opp & FULL]


action_bits = legal_bits
"""Legal actions as bits (bit ``a`` for action ``a``), 0 exactly when the game is over."""


def legal_mask(state: State) -> np.ndarray:
    """Bool mask of legal actions, ``(9,)`` (``(N, 9)`` for a batch)."""
    return unpack(legal_bits(state), ACTION_CELLS).view(bool)


def _play(state: State, move: Bits) -> State:
    """The position after the side to move marks the cell ``move`` (one bit)."""
    return state_from_fields(State, (state.opp, state.me | move, 1 - state.to_move))


def play(state: State, action: int) -> State:
    """``apply`` without the legality check: ``action`` must be set in ``action_bits``."""
    return _play(state, 1 << action)


def apply(state: State, action: int) -> State:
    """The position after the side to move marks cell ``action``.

    Raises:
        IllegalMoveError: the game is over, the cell is out of range, or taken (the message
            says which, with the free cells).
    """
    if not 0 <= action < CELLS or not (legal_bits(state) >> action) & 1:
        raise IllegalMoveError(illegal_reason(state, action))
    return play(state, action)


def illegal_reason(state: State, action: int) -> str:
    """Why cell ``action`` cannot be played in the single ``state`` (the game over, out of
    range, or taken), with the free cells where the game goes on."""
    if is_terminal(state):
        last_mover = SYMBOLS[2 - int(state.to_move)]
        how = f"{last_mover} has three in a row" if has_line(state.opp) else "the board is full"
        return f"the game is over ({how}): no cell can be played"
    free = np.flatnonzero(legal_mask(state)).tolist()
    if not 0 <= action < CELLS:
        return f"cell {action} is out of range: cells are 0..{CELLS - 1}; free cells: {free}"
    return f"cell {action} is taken; free cells: {free}"


def apply_batch(state: State, actions: np.ndarray) -> State:
    """Batched ``apply``: game ``i`` marks cell ``actions[i]``, which must be free."""
    return _play(state, bit_of(np.asarray(actions)))


def is_terminal(state: State) -> bool | np.ndarray:
    """True when the last mover made a line or the board is full."""
    return has_line(state.opp) | ((state.me | state.opp) == FULL)


def result(state: State, side: int | np.ndarray) -> int | np.ndarray:
    """+1 if ``side`` (0 = ``X``) made a line, -1 if the other side did, 0 for a draw
    (terminal states): the last mover is the only one who can hold a line."""
    return select(has_line(state.opp), for_side(select(state.to_move == 1, 1, -1), side), 0)


def observation(state: State, side: int | np.ndarray | None = None) -> np.ndarray:
    """uint8 planes ``(2, 3, 3)`` (batched ``(N, 2, 3, 3)``): ``side``'s marks (default: the
    side to move's), then the other's."""
    return planes(*side_view(state, side), BOARD_MAP)


SYMBOLS = "-XO"
"""Position text: an empty cell, an ``X``, an ``O``."""


def parse(text: str) -> State:
    """The position of 9 characters, cells 0..8 row-major from the top left, each ``X``,
    ``O`` or ``-`` (``.`` too); spaces and slashes between rows are ignored. ``X`` moves
    first, so the side to move follows from the counts.

    Raises:
        ValueError: wrong length or symbol, counts no game reaches, both sides in line, or a
            line of the side to move (the game ended before the last move).
    """
    cells = text.strip().replace("/", "").replace(" ", "").replace(".", "-").upper()
    if len(cells) != CELLS or set(cells) - set(SYMBOLS):
        raise ValueError(f"a tic-tac-toe position is {CELLS} characters X, O or - (row by row "
                         f"from the top left), e.g. 'X-O-X----'; got {text!r}")
    x = sum(1 << i for i, c in enumerate(cells) if c == "X")
    o = sum(1 << i for i, c in enumerate(cells) if c == "O")
    x_count, o_count = x.bit_count(), o.bit_count()
    if x_count - o_count not in (0, 1):
        raise ValueError(f"X moves first, so X has as many marks as O or one more; {text!r} "
                         f"has {x_count} X and {o_count} O")
    if has_line(x) and has_line(o):
        raise ValueError(f"both sides have a line in {text!r}: no game reaches it")
    x_to_move = x_count == o_count
    if has_line(x if x_to_move else o):
        raise ValueError(f"{'X' if x_to_move else 'O'} has a line in {text!r} but the other "
                         "side moved after it: no game reaches it")
    return State(x, o, 0) if x_to_move else State(o, x, 1)


def to_text(state: State) -> str:
    """The 9-character text of ``parse``."""
    x, o = side_view(state, 0)
    return "".join(SYMBOLS[(int(x) >> i & 1) + 2 * (int(o) >> i & 1)] for i in range(CELLS))


def cell_name(action: int) -> str:
    """``cell 5``: cells numbered 1-9 row by row from the top left."""
    return f"cell {action + 1}"


GAME = Game(
    name="tictactoe",
    title="Tic-tac-toe",
    rules=sys.modules[__name__],  # type: ignore[arg-type]
    env_id="TicTacToe-v0",
    aliases=("tic_tac_toe",),
    default_opponent="rules",
    side_names=("X", "O"),
    style=Style(" XO", 120, (250, 250, 245), (30, 30, 30), ((200, 40, 40), (30, 80, 200)),
                "marks", text_frame="grid"),
    network=NetworkSize(channels=32, blocks=2, hidden=64),
    action_name=cell_name,
    env_doc="""Tic-tac-toe against a built-in opponent.

    ## Action Space
    ``Discrete(9)``: mark cell ``row * 3 + col`` (0 top-left .. 8 bottom-right); taken cells
    are illegal.

    ## Observation Space
    ``Box(0, 1, (2, 3, 3), uint8)``: plane 0 the agent's marks, plane 1 the opponent's.

    ## Rewards
    At the end +1 win, -1 loss, 0 draw; 0 before. An illegal action: -1.

    ## Starting State
    An empty board, or ``reset(options={"position": "X-O-X----"})``; who moves first is drawn
    per episode (``first_player="random"``). The first player is ``X``. The agent never gets
    a position without a legal move: a finished position, or one that the opponent's reply
    ends before the agent has moved, is refused with a ``ValueError`` naming the
    ``first_player`` that seats the agent on the side to move.

    ## Episode End
    Three in a row, a full board (draw), or an illegal action with ``illegal_action="lose"``.

    ## Arguments
    ``opponent`` (default ``"rules"``, the classic win-block-corner-centre-side AI),
    ``first_player``, ``opening`` (a sampler of where each game starts),
    ``illegal_action``, ``render_mode``: see ``TurnBasedEnv``.

    ## Info
    ``action_mask``, ``opponent_action``, ``winner`` (at the end), ``illegal_action``.

    ## Version History
    * v0: initial release.
    """,
)
