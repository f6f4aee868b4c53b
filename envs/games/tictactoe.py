"""Tic-tac-toe rules on 9-bit bitboards.

Cells 0..8 row-major from the top-left; cell ``i`` is bit ``i`` and action ``i``. The first
player is ``X``, the second ``O``. Three in a row (row, column or diagonal) wins; a full
board without a line is a draw.

The rules themselves are the compiled functions of ``tictactoe_bits`` (lines, legal cells, a
move, the result); this module is their ``Rules`` face. A batch (``uint64`` arrays) runs their
compiled loops. One game (Python ints) reads memo tables that are built once, at import, by
the same compiled functions, because a compiled call from Python costs more than a whole
tic-tac-toe rule (ns per call, one game, ``timeit``):

==============  ===============  =============  ===========
call            Python int code  compiled call  memo (this)
==============  ===============  =============  ===========
``has_line``    93               111            92
``legal_bits``  148              133            133
``play``        198              377            146
``legal_mask``  794              -              518
==============  ===============  =============  ===========

(Best of 9 runs of 200,000 calls on a 2-core AMD EPYC; "compiled call" is the bare compiled
function, and for ``play`` the ``State`` built from its words.)

- ``LINE_MEMO``: ``has_line`` of every 9-bit word.
- ``LEGAL_MEMO``: ``legal`` of every position index ``me << CELLS | opp`` (2 MB).
- ``MASK_MEMO``: the bool mask of every 9-bit word of legal cells (for ``legal_mask``).
- ``SUCCESSORS``: for every unfinished position reachable from the empty board
  (``reachable_positions``), the ``State`` after each legal action (compiled ``play``'s),
  keyed by ``successor_key``; any other state or action calls the compiled ``play``.

``result`` calls its compiled function directly (cheaper than the Python code it replaced).
``initial_batch`` and ``apply_batch`` are the batched twins of ``initial_state`` and ``apply``.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import numpy as np

from boardgym.envs.games import tictactoe_bits as bits
from boardgym.envs.games.bitboard import Bits, planes, state_from_fields, unpack
from boardgym.envs.games.core import Game, IllegalMoveError, NetworkSize, Style, side_view, take

SIZE, CELLS, LINES, POSITION_BITS = bits.SIZE, bits.CELLS, bits.LINES, bits.POSITION_BITS
NUM_ACTIONS = CELLS
FULL = int(bits.FULL)
ACTION_CELLS = np.arange(CELLS)
BOARD_MAP = ACTION_CELLS.reshape(SIZE, SIZE)
CENTRE = 4
CORNER_CELLS = (0, 2, 6, 8)
SIDE_CELLS = (1, 3, 5, 7)
LINE_BITS = tuple(int(line) for line in bits.LINE_BITS)


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


def _words(values: Bits) -> np.ndarray:
    """``values`` as the writeable ``uint64`` array the compiled loops take (no copy when it
    is one already)."""
    return np.require(values, np.uint64, "W")


def _counts(values: int | np.ndarray, n: int) -> np.ndarray:
    """``values`` (an int or ``(n,)`` ints) as the writeable ``(n,)`` int64 array the compiled
    loops take."""
    if np.ndim(values) == 0:
        return np.full(n, values, dtype=np.int64)
    return np.require(values, np.int64, "W")


def has_line(marks: Bits) -> bool | np.ndarray:
    """True where ``marks`` hold one of the eight lines."""
    if isinstance(marks, np.ndarray):
        words = _words(marks & FULL)
        return bits.has_line_batch(words.reshape(-1)).reshape(words.shape)
    return LINE_MEMO[marks & FULL]


def initial_state() -> State:
    """The empty board, ``X`` to move."""
    return State(0, 0, 0)


def initial_batch(n: int) -> State:
    """``n`` empty boards as a batched state."""
    zeros = np.zeros(n, dtype=np.uint64)
    return State(zeros, zeros.copy(), np.zeros(n, dtype=np.int64))


def legal_bits(state: State) -> Bits:
    """Empty cells, or none once the game is over (a full board has none anyway)."""
    me, opp, _ = state
    if isinstance(opp, np.ndarray):
        return bits.legal_batch(_words(me), _words(opp))
    return LEGAL_MEMO[me << CELLS | opp]


action_bits = legal_bits
"""Legal actions as bits (bit ``a`` for action ``a``), 0 exactly when the game is over."""


def legal_mask(state: State) -> np.ndarray:
    """Bool mask of legal actions, ``(9,)`` (``(N, 9)`` for a batch)."""
    if isinstance(state.opp, np.ndarray):
        return bits.legal_mask_batch(_words(state.me), _words(state.opp))
    return MASK_MEMO[legal_bits(state)].copy()


def successor_key(state: State) -> int:
    """The key of a single ``state`` in ``SUCCESSORS``: ``to_move << POSITION_BITS`` plus the
    position index ``me << CELLS | opp``."""
    return state.to_move << POSITION_BITS | state.me << CELLS | state.opp


def play(state: State, action: int) -> State:
    """``apply`` without the legality check: ``action`` must be set in ``action_bits``."""
    me, opp, to_move = state
    found = SUCCESSORS.get(to_move << POSITION_BITS | me << CELLS | opp)  # successor_key
    if found is not None and (after := found[action]) is not None:
        return after
    return _compiled_play(state, action)


def _compiled_play(state: State, action: int) -> State:
    """``play`` by the compiled function, without the memo."""
    me, opp, to_move, _ = bits.play(state.me, state.opp, state.to_move, action)
    return state_from_fields(State, (me, opp, to_move))


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
    me = np.array(state.me, dtype=np.uint64)
    opp = np.array(state.opp, dtype=np.uint64)
    to_move = np.array(_counts(state.to_move, me.shape[0]))
    bits.play_batch(me, opp, to_move, np.empty_like(me), _counts(actions, me.shape[0]))
    return state_from_fields(State, (me, opp, to_move))


def is_terminal(state: State) -> bool | np.ndarray:
    """True when the last mover made a line or the board is full (no legal cell)."""
    return legal_bits(state) == 0


def result(state: State, side: int | np.ndarray) -> int | np.ndarray:
    """+1 if ``side`` (0 = ``X``) made a line, -1 if the other side did, 0 for a draw
    (terminal states): the last mover is the only one who can hold a line."""
    if isinstance(state.opp, np.ndarray):
        n = state.opp.shape[0]
        return bits.result_batch(_words(state.opp), _counts(state.to_move, n), _counts(side, n))
    return bits.result(state.opp, state.to_move, side)


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


def reachable_positions() -> State:
    """Every position reachable from the empty board, finished ones included, as one batched
    state: ply by ply, each ply in increasing position index."""
    level, levels = initial_batch(1), []
    while level.me.size:
        levels.append(level)
        game, action = np.nonzero(legal_mask(level))
        after = apply_batch(take(level, game), action)
        _, first = np.unique(after.me << np.uint64(CELLS) | after.opp, return_index=True)
        level = take(after, first)
    fields = zip(*levels, strict=True)
    return state_from_fields(State, tuple(np.concatenate(field) for field in fields))


def _interned(values: list[int]) -> tuple[int, ...]:
    """``values`` (each below ``2 ** CELLS``) as a tuple sharing one int object per value."""
    ints = list(range(1 << CELLS))
    return tuple(map(ints.__getitem__, values))


def _single_states(batch: State) -> dict[int, State]:
    """The games of ``batch`` as single states (their words interned Python ints), keyed by
    ``successor_key``."""
    fields = (_interned(batch.me.tolist()), _interned(batch.opp.tolist()),
              np.asarray(batch.to_move).tolist())
    states = (state_from_fields(State, game) for game in zip(*fields, strict=True))
    return {successor_key(state): state for state in states}


def _successors() -> dict[int, tuple[State | None, ...]]:
    """``SUCCESSORS``: every unfinished reachable position's states after its legal actions
    (compiled ``play``'s; one object per position), None after the illegal ones."""
    reachable = _single_states(reachable_positions())

    def after(state: State, action: int) -> State | None:
        if not legal_bits(state) >> action & 1:
            return None
        return reachable[successor_key(_compiled_play(state, action))]

    return {key: tuple(after(state, action) for action in range(CELLS))
            for key, state in reachable.items() if legal_bits(state)}


_INDEX = np.arange(1 << POSITION_BITS, dtype=np.uint64)
LINE_MEMO = tuple(bits.has_line_batch(_INDEX[:1 << CELLS]).tolist())
"""``tictactoe_bits.has_line`` of every 9-bit word, indexed by the word (single games)."""
LEGAL_MEMO = _interned(bits.legal_batch(_INDEX >> np.uint64(CELLS), _INDEX & bits.FULL).tolist())
"""``tictactoe_bits.legal`` of every position index ``me << CELLS | opp`` (single games)."""
SUCCESSORS = _successors()
"""``successor_key(state)`` -> per action 0..8 the state ``tictactoe_bits.play`` gives (None
for an illegal action), for every unfinished position reachable from the empty board (single
games; 5,478 states in all, one object each)."""
MASK_MEMO = unpack(_INDEX[:1 << CELLS], ACTION_CELLS).view(bool)
"""The bool mask ``(CELLS,)`` of every 9-bit word of legal cells (read-only; single games)."""
MASK_MEMO.flags.writeable = False
del _INDEX


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
