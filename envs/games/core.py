"""What every game shares: the ``Rules`` protocol, the ``Game`` record, and the few rules
that are the same for all games (the mover's view, the result for a side, batch slicing).

A game is one rules module implementing ``Rules`` plus one ``Game`` record; every table of
the project (env ids, board options, render colours, square names, network size, ...)
derives from the records in ``boardgym.envs.games.GAMES``.

States are immutable named tuples whose first fields are ``me`` (the stones of the side to
move), ``opp`` (the other side's) and ``to_move`` (0 = the first player). A *batched* state
has the same fields as ``(N,)`` arrays; the bit functions of each game serve both. A game
whose text is the moves played (four-in-a-row) keeps them in a ``Trail`` field, which is left
out of every comparison: equal positions are equal states whatever order reached them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from boardgym.envs.games.bitboard import Bits, select

RGB = tuple[int, int, int]


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in the given position."""


def one_line(message: str) -> str:
    """``message`` on a single line (inner line breaks become spaces): how every error is
    shown, since messages from torch, zipfile or argparse may span many lines."""
    return " ".join(str(message).split())


class Trail(tuple[int, ...]):
    """The actions that reached a single state, in order, where they are known: a state field
    of the games whose position text is the moves played (four-in-a-row's ``to_text``).

    A ``Trail`` is left out of equality and hashing (every ``Trail`` equals every other and
    they hash alike), so a state's equality and hash stay those of its position: memos keyed
    by state, transposition tables (``tuple(state)`` keys included) and solvers see equal
    positions as one, whatever order reached them. Carrying it costs one small tuple per
    single-game move. Batched states never carry one (``NO_TRAIL``: the order of N games is
    not kept), nor do the single states taken out of a batch (``unbatch``).
    """

    __slots__ = ()
    known: bool = True
    """False for ``NO_TRAIL``: the order is not known."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Trail)

    def __ne__(self, other: object) -> bool:
        return not isinstance(other, Trail)

    def __hash__(self) -> int:
        return TRAIL_HASH

    def __repr__(self) -> str:
        return f"Trail({tuple(self)!r})" if self.known else "NO_TRAIL"

    def then(self, action: int) -> Trail:
        """This trail followed by ``action`` (``NO_TRAIL`` stays unknown)."""
        return tuple.__new__(Trail, (*self, action))


class _UnknownTrail(Trail):
    """The trail of a state whose order of moves is not known."""

    __slots__ = ()
    known = False

    def then(self, action: int) -> Trail:
        return self

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return _no_trail, ()


TRAIL_HASH = hash("Trail")
NO_TRAIL: Trail = _UnknownTrail()
"""The ``Trail`` of batched states, and of any state whose order of moves is not known."""
START_TRAIL = Trail()
"""The ``Trail`` of a start position: no move yet."""


def _no_trail() -> Trail:
    """``NO_TRAIL`` (how it unpickles: one object)."""
    return NO_TRAIL


def forget_trail(state: Any) -> Any:
    """``state`` without its order of moves (its ``Trail``, if any, made ``NO_TRAIL``): the
    game's ``to_text`` then writes the one text of the position, whatever order reached it
    (four-in-a-row: each column's tokens bottom up), as a key for telling positions apart."""
    return type(state)(*(NO_TRAIL if isinstance(f, Trail) else f for f in state))


def position_key(rules: Any, state: Any) -> str:
    """The one text of ``state``'s position in ``rules``' notation, whatever order of moves
    reached it (``to_text`` of ``forget_trail``): what labelled sets write and tell positions
    apart by."""
    return str(rules.to_text(forget_trail(state)))


class Rules(Protocol):
    """The rules of one game, as a module of pure functions over an immutable state.

    ``side`` arguments are 0 (the first player) or 1; for batched states an ``(N,)`` array.
    Passing is automatic: after ``apply`` the side to move has a legal move unless the game
    is over.
    """

    def initial_state(self, **options: Any) -> Any:
        """The start position; ``options`` are the board options of the ``Game`` record
        (validated: a ``ValueError`` names a bad one)."""

    def initial_batch(self, n: int, **options: Any) -> Any:
        """``n`` start positions as one batched state."""

    def action_bits(self, state: Any) -> Bits:
        """The legal actions as bits (bit ``a`` for action ``a``); 0 once the game is over."""

    def legal_mask(self, state: Any) -> np.ndarray:
        """Bool mask of the legal actions, one entry per action (``(N, A)`` batched)."""

    def apply(self, state: Any, action: int) -> Any:
        """The position after the side to move plays ``action``.

        Raises:
            IllegalMoveError: ``action`` is not legal here (the message lists the legal ones).
        """

    def play(self, state: Any, action: int) -> Any:
        """``apply`` without the legality check (``action`` is set in ``action_bits``)."""

    def apply_batch(self, state: Any, actions: np.ndarray) -> Any:
        """Batched ``apply``: game ``i`` plays ``actions[i]``, which must be legal there."""

    def is_terminal(self, state: Any) -> bool | np.ndarray:
        """True when the game is over."""

    def result(self, state: Any, side: int | np.ndarray) -> int | np.ndarray:
        """+1 / 0 / -1 for ``side`` in a finished game (win / draw / loss)."""

    def observation(self, state: Any, side: int | np.ndarray | None = None) -> np.ndarray:
        """uint8 planes ``(2, rows, cols)`` (``(N, 2, rows, cols)`` batched): ``side``'s stones,
        then the other's; ``side=None`` is the side to move."""

    def parse(self, text: str, **options: Any) -> Any:
        """The position written as ``text`` in the game's usual notation.

        Raises:
            ValueError: the text is not a position (the message says what is wrong).
        """

    def to_text(self, state: Any) -> str:
        """``state`` in the notation ``parse`` reads."""


@dataclass(frozen=True)
class Style:
    """How a game looks: text symbols and the image sprites' sizes and colours."""

    symbols: str
    """Text of an empty cell, a first-player stone, a second-player stone."""
    cell: int
    """Pixels per cell in ``rgb_array`` images."""
    background: RGB
    grid: RGB
    colours: tuple[RGB, RGB]
    """The first player's stones, then the second's."""
    shape: str
    """``"disc"``, ``"token"`` (a disc in a hole) or ``"marks"`` (X and O)."""
    text_frame: str = "box"
    """How ``ansi`` text frames the board: ``"box"`` (a border, column labels above and
    below, row numbers on both sides), ``"rack"`` (column labels above, open at the top
    like a four-in-a-row rack) or ``"grid"`` (cells apart, ``---+---`` between rows)."""
    column_labels: str = ""
    """One character per column for the text board's rulers; empty: the column numbers
    ``1, 2, ...`` (mod 10)."""


@dataclass(frozen=True)
class NetworkSize:
    """The size of a game's policy/value networks: a conv tower of ``blocks`` residual
    blocks of ``channels`` channels, and a dense head of ``hidden`` units."""

    channels: int = 32
    blocks: int = 2
    hidden: int = 128


@dataclass(frozen=True)
class Game:
    """One game: its rules and everything the project derives from them.

    Attributes:
        name: the canonical name (CLI, ``agents.make``, file names): ``"four_in_a_row"``.
        title: the human name, ``"Four-in-a-row"``.
        rules: the rules module (see ``Rules``).
        env_id: the Gymnasium id, ``"FourInARow-v0"``; the env classes are named after it
            (``FourInARowEnv``, ``FourInARowVectorEnv``).
        env_doc: the env's spec in Gymnasium style (Action Space, Observation Space, Rewards,
            Starting State, Episode End, Arguments, Version History): the env class docstring.
        aliases: other names of the game (``"connect_four"``).
        env_aliases: other env ids (``"ConnectFour-v0"``).
        options: the board options and their defaults (``{"rows": 6, ...}``); validated by
            ``rules.initial_state``.
        default_opponent: the env's default opponent spec.
        side_names: what the first and the second player are called (``"red"``, ``"yellow"``).
        scored: the game ends with a disc count (``reward="score"``, ``info["score"]``).
        style: render symbols and colours.
        network: the size of the game's networks.
        action_name: the name a person reads for an action (``"e6"``, ``"column 4"``).
    """

    name: str
    title: str
    rules: Rules
    env_id: str
    env_doc: str
    aliases: tuple[str, ...] = ()
    env_aliases: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    default_opponent: str = "random"
    side_names: tuple[str, str] = ("X", "O")
    scored: bool = False
    style: Style = Style(" XO", 64, (240, 240, 240), (30, 30, 30),
                         ((20, 20, 20), (200, 40, 40)), "disc")
    network: NetworkSize = NetworkSize()
    action_name: Callable[[int], str] = str

    def __reduce__(self) -> tuple[Callable[[str], Game], tuple[str]]:
        """Records pickle by name (the rules module inside cannot): unpickling finds the
        registered game of that name."""
        return _registered_game, (self.name,)

    @property
    def class_prefix(self) -> str:
        """The env id without its version: ``"FourInARow"``."""
        return self.env_id.rpartition("-v")[0]

    def board_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` checked against the game's board options.

        Raises:
            ValueError: an option the game does not have (the message lists its options).
        """
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            valid = ", ".join(self.options) or "none"
            raise ValueError(f"{self.title} has no option {', '.join(map(repr, unknown))}; "
                             f"its board options: {valid}")
        return dict(options)


def _registered_game(name: str) -> Game:
    """The registered game ``name`` (how a pickled ``Game`` comes back)."""
    from boardgym.envs.games import game  # the registry imports this module: looked up late

    return game(name)


# -- the rules every game shares ----------------------------------------------------------

def side_view(state: Any, side: int | np.ndarray | None) -> tuple[Bits, Bits]:
    """``(side's stones, the other's)`` of a state whose ``me``/``opp`` are the side to move's
    and the other's; ``side=None`` is the side to move. Elementwise for batches."""
    if side is None:
        return state.me, state.opp
    movers = state.to_move == side
    return select(movers, state.me, state.opp), select(movers, state.opp, state.me)


def for_side(first_player_result: int | np.ndarray, side: int | np.ndarray) -> Any:
    """A result of the first player (+1 / 0 / -1) as seen by ``side``."""
    return select(np.asarray(side) == 0, first_player_result, -first_player_result) \
        if isinstance(side, np.ndarray) else (first_player_result if side == 0
                                              else -first_player_result)


def take(state: Any, index: np.ndarray) -> Any:
    """The sub-batch ``index`` (integer or bool array) of a batched state."""
    return type(state)(*(f[index] if isinstance(f, np.ndarray) else f for f in state))


def join(states: Sequence[Any]) -> Any:
    """One batched state of the games of the batched ``states``, in order (the fields that are
    not arrays, such as the board, are the first state's)."""
    first = states[0]
    return type(first)(*(np.concatenate([state[k] for state in states])
                         if isinstance(value, np.ndarray) else value
                         for k, value in enumerate(first)))


def unbatch(state: Any, i: int) -> Any:
    """Game ``i`` of a batched state as a single state (Python ints; its ``Trail``, if any,
    is ``NO_TRAIL``: a batch keeps no order of moves)."""
    return type(state)(*(f[i].item() if isinstance(f, np.ndarray) else f for f in state))


def batch_of(state: Any) -> Any:
    """A single state as a batch of one (its int fields as ``(1,)`` arrays; a ``Trail``
    becomes ``NO_TRAIL``, as in every batch)."""
    def one(name: str, value: Any) -> Any:
        if isinstance(value, Trail):
            return NO_TRAIL
        if isinstance(value, bool):
            return np.array([value])
        if isinstance(value, int):  # bitboards are uint64, the side to move int64
            return np.array([value], dtype=np.int64 if name == "to_move" else np.uint64)
        return value
    return type(state)(*(one(name, value) for name, value in zip(state._fields, state,
                                                                 strict=True)))


def put(whole: Any, index: np.ndarray, part: Any) -> None:
    """Write the sub-batch ``part`` (or one batch-of-one game, broadcast) into the games
    ``index`` of the batched state ``whole``, in place."""
    for target, piece in zip(whole, part, strict=True):
        if isinstance(target, np.ndarray):
            target[index] = piece


__all__ = ["NO_TRAIL", "START_TRAIL", "Game", "IllegalMoveError", "NetworkSize", "Rules",
           "Style", "Trail", "batch_of", "for_side", "forget_trail", "join", "one_line",
           "position_key", "put",
           "side_view", "take", "unbatch"]
