"""Reversi (Othello) rules on 64-bit bitboards.

Cell ``row * 8 + col`` is bit ``row * 8 + col`` (row 0 at the top, col 0 on the left); the
action index is the same number. The first player (``to_move == 0``, black, ``X`` in the
classic console programs) starts with d5 and e4, the second with d4 and e5.

A move must flip at least one disc along one of 8 directions. Passing is automatic: after
``apply`` the side to move has a legal move unless the game is over (neither side can move).
More discs wins; equal counts are a draw.

The rules run on the compiled bit rules of ``reversi_bits``: each function here takes a
Python int (one game), calls the compiled function and returns Python ints, or takes
``uint64`` arrays (a batch; any shapes that broadcast) and runs the compiled loop over them.
``initial_batch`` and ``apply_batch`` are the batched twins of ``initial_state`` and ``apply``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from boardgym.envs.games import reversi_bits as compiled
from boardgym.envs.games.bitboard import (
    Bits,
    bit_of,
    planes,
    popcount,
    select,
    state_from_fields,
    unpack,
)
from boardgym.envs.games.core import Game, IllegalMoveError, NetworkSize, Style, side_view
from boardgym.envs.games.reversi_bits import (
    CELLS,
    FIRST_START,
    LEFT_SHIFTS,
    MAX_RUN,
    NOT_COL_0,
    NOT_COL_7,
    RIGHT_SHIFTS,
    SECOND_START,
    SIZE,
)

__all__ = ["ACTION_CELLS", "BOARD_MAP", "CELLS", "CORNERS", "EDGES", "FIRST_START", "GAME",
           "LEFT_SHIFTS", "MAX_RUN", "NOT_COL_0", "NOT_COL_7", "NUM_ACTIONS", "RIGHT_SHIFTS",
           "SECOND_START", "SIZE", "SYMBOLS", "State", "action_bits", "apply", "apply_batch",
           "flip_bits", "flips", "from_discs", "initial_batch", "initial_state", "is_terminal",
           "legal_bits", "legal_mask", "observation", "parse", "play", "result", "score",
           "square_name", "to_text"]

NUM_ACTIONS = CELLS
ACTION_CELLS = np.arange(CELLS)
BOARD_MAP = ACTION_CELLS.reshape(SIZE, SIZE)
"""Bit position of each (row, col) cell."""
CORNERS = 0x8100_0000_0000_0081
EDGES = 0xFF81_8181_8181_81FF


class State(NamedTuple):
    """A Reversi position. For a batch, every field is an array of shape ``(N,)``.

    Attributes:
        me: discs of the side to move.
        opp: discs of the other side.
        to_move: 0 if the first player moves next, 1 otherwise.
        legal: legal-move bits of the side to move; 0 exactly when the game is over.
    """

    me: Bits
    opp: Bits
    to_move: int | np.ndarray
    legal: Bits


def _flat(values: Bits | np.ndarray, shape: tuple[int, ...], dtype: npt.DTypeLike) -> np.ndarray:
    """``values`` broadcast to ``shape``, flat, of ``dtype``: what the compiled loops read (a
    view where one serves; the loops take strided and read-only arrays)."""
    array = np.asarray(values, dtype=dtype)
    if array.shape != shape:
        array = np.broadcast_to(array, shape)
    return array.reshape(-1)


def _batched(loop: Callable[..., np.ndarray], *words: Bits) -> np.ndarray:
    """``loop`` (a compiled ``*_batch`` function) over ``words`` broadcast together, in
    their broadcast shape."""
    shape = np.broadcast_shapes(*(np.shape(word) for word in words))
    return loop(*(_flat(word, shape, np.uint64) for word in words)).reshape(shape)


def legal_bits(me: Bits, opp: Bits) -> Bits:
    """Cells where the side owning ``me`` may play against ``opp``: the empty cell just past
    a run of ``opp`` discs that starts next to a disc of ``me`` (``reversi_bits.legal_moves``;
    ints or arrays)."""
    if isinstance(me, np.ndarray) or isinstance(opp, np.ndarray):
        return _batched(compiled.legal_moves_batch, me, opp)
    return int(compiled.legal_moves(me, opp))


def flip_bits(me: Bits, opp: Bits, move: Bits) -> Bits:
    """Discs of ``opp`` flipped when the owner of ``me`` plays the single-bit ``move``: each
    run of ``opp`` discs next to ``move`` that a disc of ``me`` closes
    (``reversi_bits.flips``; ints or arrays)."""
    if isinstance(me, np.ndarray) or isinstance(opp, np.ndarray) or isinstance(move, np.ndarray):
        return _batched(compiled.flips_batch, me, opp, move)
    return int(compiled.flips(me, opp, move))


def initial_state() -> State:
    """The standard start: four discs in the centre, first player to move."""
    return State(FIRST_START, SECOND_START, 0, legal_bits(FIRST_START, SECOND_START))


def initial_batch(n: int) -> State:
    """``n`` start positions as a batched state."""
    start = initial_state()
    return State(me=np.full(n, start.me, dtype=np.uint64),
                 opp=np.full(n, start.opp, dtype=np.uint64),
                 to_move=np.zeros(n, dtype=np.int64),
                 legal=np.full(n, start.legal, dtype=np.uint64))


def action_bits(state: State) -> Bits:
    """Legal actions as bits (bit ``a`` for action ``a``), 0 exactly when the game is over."""
    return state.legal


def legal_mask(state: State) -> np.ndarray:
    """Bool mask of legal actions, shape ``(64,)`` (``(N, 64)`` for a batch)."""
    return unpack(state.legal, ACTION_CELLS).view(bool)


def apply(state: State, action: int) -> State:
    """The position after the side to move plays ``action``.

    Raises:
        IllegalMoveError: the game is over, or ``action`` is not a legal move here (the
            message lists the legal ones).
    """
    if not 0 <= action < CELLS or not (state.legal >> action) & 1:
        if not state.legal:
            raise IllegalMoveError("the game is over (neither side can move): no move can be "
                                   "played")
        raise IllegalMoveError(f"{action} is not a legal Reversi move here; legal moves: "
                               f"{np.flatnonzero(legal_mask(state)).tolist()}")
    return play(state, action)


def play(state: State, action: int) -> State:
    """``apply`` without the legality check: ``action`` must be set in ``action_bits``
    (``reversi_bits.play``: passes included)."""
    me, opp, to_move, legal = compiled.play(state.me, state.opp, state.to_move, action)
    return state_from_fields(State, (int(me), int(opp), int(to_move), int(legal)))


def apply_batch(state: State, actions: np.ndarray) -> State:
    """Batched ``apply``: game ``i`` plays ``actions[i]``, which must be legal there (a game
    whose action is not gets some position; ``reversi_bits.play_batch``)."""
    shape = np.broadcast_shapes(*(np.shape(field) for field in state), np.shape(actions))
    me, opp = (np.array(_flat(discs, shape, np.uint64)) for discs in (state.me, state.opp))
    to_move = np.array(_flat(state.to_move, shape, np.int64))
    legal = np.empty_like(me)
    compiled.play_batch(me, opp, to_move, legal, _flat(actions, shape, np.int64))
    return State(*(field.reshape(shape) for field in (me, opp, to_move, legal)))


def is_terminal(state: State) -> bool | np.ndarray:
    """True when neither side can move."""
    return state.legal == 0


def score(state: State) -> tuple[Bits, Bits]:
    """Disc counts ``(first player, second player)``."""
    mine, theirs = popcount(state.me), popcount(state.opp)
    return select(state.to_move == 0, mine, theirs), select(state.to_move == 0, theirs, mine)


def result(state: State, side: int | np.ndarray) -> int | np.ndarray:
    """+1 if ``side`` (0 = the first player) has more discs, -1 if fewer, 0 if equal
    (terminal states)."""
    mine, theirs = (popcount(bits) for bits in side_view(state, side))
    if isinstance(mine, np.ndarray):
        return np.sign(mine - theirs)
    return (mine > theirs) - (mine < theirs)


def flips(state: State, action: int) -> Bits:
    """Bitboard of the discs that ``action`` would flip for the side to move (0 if none)."""
    return flip_bits(state.me, state.opp, bit_of(action))


def observation(state: State, side: int | np.ndarray | None = None) -> np.ndarray:
    """uint8 planes ``(2, 8, 8)`` (``(N, 2, 8, 8)``): ``side``'s discs (default: the side to
    move's), then the other's."""
    return planes(*side_view(state, side), BOARD_MAP)


SYMBOLS = "-XO"
"""Position text: an empty square, a first-player (black) disc, a second-player disc."""


def from_discs(first: int, second: int, first_to_move: bool) -> State:
    """The position with these discs, passes applied: if the side to move cannot move but
    the other can, the other moves."""
    me, opp = (first, second) if first_to_move else (second, first)
    to_move = 0 if first_to_move else 1
    legal = legal_bits(me, opp)
    if not legal and legal_bits(opp, me):
        me, opp, to_move, legal = opp, me, 1 - to_move, legal_bits(opp, me)
    return State(me, opp, to_move, legal)


def parse(text: str) -> State:
    """A position as in the FForum / Edax ``.obf`` files: 64 characters ``X`` (black, the
    first player), ``O`` or ``-``, a1 b1 .. h1 then row 2 and so on, then the side to move
    (``X`` or ``O``); spaces, a trailing ``;`` and what follows it are ignored. A side to
    move without a legal move passes (the other moves), so that the state keeps the rule of
    ``apply``: its side to move has a legal move unless the game is over; ``to_text`` then
    names the side that moves.

    Raises:
        ValueError: the wrong number of squares, a bad symbol, or no side to move.
    """
    body = text.split(";")[0].replace(" ", "").replace(".", "-").upper()
    board, side = body[:CELLS], body[CELLS:]
    if len(board) != CELLS or set(board) - set(SYMBOLS) or side not in ("X", "O"):
        raise ValueError(f"a Reversi position is {CELLS} squares X, O or - (a1..h1, then "
                         "row 2, ...) and the side to move, X or O, as in .obf files; got "
                         f"{text!r}")
    first = sum(1 << i for i, c in enumerate(board) if c == "X")
    second = sum(1 << i for i, c in enumerate(board) if c == "O")
    return from_discs(first, second, side == "X")


def to_text(state: State) -> str:
    """``state`` in ``parse``'s notation: 64 squares, a space, the side to move."""
    first, second = (int(b) for b in side_view(state, 0))
    squares = "".join(SYMBOLS[(first >> i & 1) + 2 * (second >> i & 1)] for i in range(CELLS))
    return f"{squares} {SYMBOLS[1 + int(state.to_move)]}"


def square_name(action: int) -> str:
    """Algebraic ``e6``: the column letter a-h from the left, the row 1-8 from the top."""
    row, col = divmod(action, SIZE)
    return f"{'abcdefgh'[col]}{row + 1}"


GAME = Game(
    name="reversi",
    title="Reversi",
    rules=sys.modules[__name__],  # type: ignore[arg-type]
    env_id="Reversi-v0",
    aliases=("othello",),
    default_opponent="corner_best",
    side_names=("X", "O"),
    scored=True,
    style=Style(" XO", 64, (0, 120, 48), (0, 70, 28), ((20, 20, 20), (240, 240, 240)), "disc",
                column_labels="abcdefgh"),
    network=NetworkSize(channels=64, blocks=4, hidden=128),
    action_name=square_name,
    env_doc="""Reversi (Othello) on an 8x8 board against a built-in opponent.

    ## Action Space
    ``Discrete(64)``: action ``row * 8 + col`` places a disc on that square (row 0 at the top,
    col 0 on the left; square ``e3`` is action 2*8+4). Legal moves flip at least one disc:
    see ``env.action_masks()`` / ``info["action_mask"]``.

    ## Observation Space
    ``Box(0, 1, (2, 8, 8), uint8)``: plane 0 the agent's discs, plane 1 the opponent's.

    ## Rewards
    At the end +1 win, -1 loss, 0 draw (more discs wins); 0 before. With ``reward="score"``
    the final disc difference (agent - opponent) / 64 instead. An illegal action: -1.

    ## Starting State
    The standard four centre discs, or ``reset(options={"position": text})`` (64 squares and
    the side to move, as in ``.obf`` files). Who moves first is drawn per episode
    (``first_player="random"``); the first player has the black discs (``X`` in text). A text
    whose side to move has no legal move is read with the pass made (``parse``: the other
    side is to move), as after any move. The agent never gets a position without a legal
    move: a finished position, or one that the opponent's replies end before the agent has
    moved, is refused with a ``ValueError`` naming the ``first_player`` that seats the agent
    on the side to move.

    ## Episode End
    When neither side can move (the board full included), or on an illegal action with
    ``illegal_action="lose"``. A side without a legal move passes automatically: when the
    agent must pass, the opponent moves again within the same ``step``.

    ## Arguments
    ``opponent`` (default ``"corner_best"``): a built-in player name (see
    ``boardgym.agents.names("reversi")``), an ``Agent``, or a checkpoint path.
    ``first_player``: ``"random" | "agent" | "opponent"``. ``opening``: None, or
    ``opening(rng) -> position text | None`` for where each game starts (see
    ``TurnBasedEnv``). ``illegal_action``:
    ``"lose" | "raise"``. ``reward``: ``"win" | "score"``. ``render_mode``:
    ``"ansi" | "rgb_array" | "human" | "svg"``.

    ## Info
    ``action_mask``, ``opponent_action`` (its last move this step, or None), ``score``
    (``(agent discs, opponent discs)``), ``winner`` (+1 agent, -1 opponent, 0 draw; at the end),
    ``illegal_action`` (True when the episode ended on one).

    ## Version History
    * v0: initial release.
    """,
)
