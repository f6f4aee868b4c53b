"""The game flow of ``boardgym play``, shared by the terminal and the pygame window: rounds,
seats, the scoreboard, and how a person sees a game and names its moves (``BoardView``).

The side that moves first is always the game's first side name (``X``, ``red``), as in every
game's position text: ``--side`` and ``--first`` both say who moves first (``fixed_seat``),
and without either the move order is drawn each round and gives the person's side name.

Everything about a game comes from its ``Game`` record: the side names
(``record.side_names``), the move names (``record.action_name``: ``e3``, ``column 4``,
``cell 5``), whether it ends with a disc count (``record.scored``) and the board drawing
(``envs.render``). What a move does on the board is read from the rules: the cell it fills,
the discs it turns over. The last move is marked on the text board (``<`` after its row, ``^``
under its column) and a game with a disc count ends with the classic Reversegam margin line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from string import ascii_lowercase
from typing import Any

import numpy as np

from boardgym.envs import render
from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Game
from boardgym.envs.games.records import HUMAN, GameRecord, append_record
from boardgym.envs.svg import move_cell

QUIT, HINTS, HELP = "quit", "hints", "help"
HINT_MARK = "."
"""Marks a legal move on the text board when its name is longer than one character."""
NUMPAD_SIDE = 3
"""``--numpad`` numbers the cells of a 3x3 board like a keyboard's numpad (7 8 9 on top)."""
FIRST_CHOICES = ("random", "you", "computer")
LAST_ROW_MARK = " <"
"""Follows the text board's row holding the last move."""
LAST_COLUMN_MARK = "^"
"""Stands under the text board's column holding the last move."""
PROBE = "\0"
"""A character no text board draws: shows where a cell is drawn (``BoardView.cell_position``)."""
PAUSE_PROMPT = "Press Enter to see the computer's move."


class QuitGame(Exception):
    """The person asked to stop playing (typed ``quit``, pressed Esc or closed the window)."""


class BadMove(ValueError):
    """What a person typed is not a legal move; the message says why and how to type one."""


@dataclass(frozen=True)
class Options:
    """What ``boardgym play`` was asked for.

    Attributes:
        game: canonical game name.
        opponent: the agent spec of the computer player.
        side: 0 or 1 (index into the record's ``side_names``), or None to ask.
        first: ``"random"``, ``"you"`` or ``"computer"``.
        config: the board options (``initial_state`` keyword arguments).
        numpad: a 3x3 board's cells numbered like a keyboard's numpad.
        seed: seed of the random generator (first player draws, the agent's tie-breaks).
        pause: in the terminal, wait for Enter before each computer move (``PAUSE_PROMPT``).
        record_file: the game record file each finished game is added to (None: none).
    """

    game: str
    opponent: str
    side: int | None
    first: str
    config: dict[str, int] = field(default_factory=dict)
    numpad: bool = False
    seed: int | None = None
    pause: bool = False
    record_file: str | None = None

    @property
    def record(self) -> Game:
        """The game's record."""
        return game_record(self.game)


@dataclass(frozen=True)
class Seats:
    """Who sits where in one round. The side that moves first is always the first side name
    of the game's record (``X``, ``red``), as in the position notation: the person's side
    name follows from whether they move first.

    Attributes:
        human_player: the person's rules player, 0 if they move first (and play the first
            side name), 1 if second.
    """

    human_player: int

    @property
    def human_side(self) -> int:
        """0 if the person plays the first side name, 1 otherwise: their rules player."""
        return self.human_player

    def side(self, player: int) -> int:
        """0 if rules ``player`` holds the first side name (it moves first), 1 otherwise."""
        return player


@dataclass(frozen=True)
class Move:
    """One move of a round: the position before and after, and who passed in between."""

    before: Any
    action: int
    after: Any
    passed: int | None
    """The rules player who had no legal move and passed, or None."""


class Round:
    """One game of a match: the position, the seats of the person and the computer, and the
    last move played (``last``, None before the first)."""

    def __init__(self, record: Game, config: dict[str, int], seats: Seats) -> None:
        self.game, self.config = record, dict(config)
        self.rules, self.seats = record.rules, seats
        self.state = self.rules.initial_state(**config)
        self.last: Move | None = None
        self.moves: list[int] = []
        """Every action played so far."""

    @property
    def over(self) -> bool:
        """True once the game has ended."""
        return bool(self.rules.is_terminal(self.state))

    @property
    def human_to_move(self) -> bool:
        """True when the person is to move."""
        return bool(self.state.to_move == self.seats.human_player)

    def play(self, action: int) -> Move:
        """Play ``action`` for the side to move (a legal one) and return what happened."""
        before = self.state
        self.state = self.rules.apply(before, action)
        self.moves.append(int(action))
        repeat = self.state.to_move == before.to_move and not self.over
        self.last = Move(before, action, self.state, 1 - before.to_move if repeat else None)
        return self.last

    def winner(self) -> int | None:
        """The rules player who won, or None for a tie (once over)."""
        first_player_result = int(self.rules.result(self.state, 0))
        return None if first_player_result == 0 else (0 if first_player_result > 0 else 1)


def keep_round(options: Options, round_: Round) -> None:
    """Add the finished ``round_`` to ``options.record_file`` (if any) as a game record: the
    person is ``HUMAN``, the computer its spec."""
    if options.record_file is None:
        return
    players = [HUMAN, HUMAN]
    players[1 - round_.seats.human_player] = options.opponent
    append_record(options.record_file, GameRecord(
        round_.game.name, tuple(round_.moves), (players[0], players[1]), round_.config,
        seed=options.seed, source="play"))


def first_player(first: str, rng: np.random.Generator) -> int:
    """The person's rules player: 0 if they move first (``first`` may draw it at random)."""
    if first == "random":
        return int(rng.integers(2))
    return 0 if first == "you" else 1


SEAT_OF_FIRST = {"you": 0, "computer": 1}
"""The person's rules player that ``--first`` fixes (``random``: none)."""


def fixed_seat(record: Game, side: int | None, first: str) -> int | None:
    """The person's rules player in every round when ``--side`` or ``--first`` fixes it
    (the first side name moves first, so ``--side`` says who moves first), None when it is
    drawn each round.

    Raises:
        ValueError: ``--side`` and ``--first`` disagree on who moves first.
    """
    by_first = SEAT_OF_FIRST.get(first)
    if side is not None and by_first is not None and side != by_first:
        first_side, chosen = record.side_names[0], record.side_names[side]
        raise ValueError(f"--side {chosen} and --first {first} disagree: {first_side} moves "
                         f"first in {record.name}; drop one of them")
    return side if side is not None else by_first


def seats_of(options: Options, rng: np.random.Generator) -> Seats:
    """The seats of a new round: fixed by ``--side``/``--first`` (``fixed_seat``), else the
    person's move order drawn from ``rng``, which gives their side name."""
    seat = fixed_seat(options.record, options.side, options.first)
    return Seats(first_player("random", rng) if seat is None else seat)


@dataclass
class Scoreboard:
    """Wins, losses and ties of the person over the rounds of a match."""

    wins: int = 0
    losses: int = 0
    ties: int = 0

    def record(self, round_: Round) -> None:
        """Count a finished round."""
        winner = round_.winner()
        if winner is None:
            self.ties += 1
        elif winner == round_.seats.human_player:
            self.wins += 1
        else:
            self.losses += 1

    def text(self, you: str | None, computer: str) -> str:
        """``Scoreboard after 3 rounds: you (X) 2 wins / 1 loss / 0 ties; ...`` (``you``:
        the person's side name when it is the same every round, else None: ``you 2 wins``)."""
        rounds = self.wins + self.losses + self.ties

        def tally(wins: int, losses: int) -> str:
            return (f"{wins} win{'s' * (wins != 1)} / {losses} loss{'es' * (losses != 1)} / "
                    f"{self.ties} tie{'s' * (self.ties != 1)}")

        person = "you" if you is None else f"you ({you})"
        return (f"Scoreboard after {rounds} round{'s' * (rounds != 1)}: {person} "
                f"{tally(self.wins, self.losses)}; {computer} {tally(self.losses, self.wins)}")


def side_index(record: Game, text: str) -> int | None:
    """0 or 1 for a side name of the game (any case, or its first letter), else None."""
    text = text.strip().lower()
    for index, name in enumerate(record.side_names):
        if text in (name.lower(), name[0].lower()):
            return index
    return None


class BoardView:
    """How a person sees one game and names its moves; ``seats`` is set for each round.

    Moves are typed as the record's move names (``e3``, ``column 4``, ``cell 5``) or their
    last word (``4``, ``5``); square names such as ``e3`` also as column-then-row digits
    (``53``, as the classic Reversegam reads them).

    Args:
        record: the game.
        config: the board options.
        numpad: number a 3x3 board's cells like a numpad (7 8 9 on the top row).

    Raises:
        ValueError: ``numpad`` for a board that is not 3x3 cells.
    """

    def __init__(self, record: Game, config: dict[str, int], numpad: bool = False) -> None:
        self.record, self.rules = record, record.rules
        self.seats = Seats(0)
        start = self.rules.initial_state(**config)
        self.rows, self.cols = first_planes(record, start).shape[1:]
        self.n_actions = int(self.rules.legal_mask(start).size)
        self.drops = self.n_actions == self.cols != self.rows * self.cols
        """Actions are columns and a stone falls to the lowest free cell (four-in-a-row)."""
        if numpad and (self.drops or (self.rows, self.cols) != (NUMPAD_SIDE, NUMPAD_SIDE)):
            raise ValueError(f"--numpad numbers the cells of a {NUMPAD_SIDE}x{NUMPAD_SIDE} "
                             f"board; drop it for {record.name}")
        self.numpad = numpad
        self.names = [record.action_name(self._numbered(a)) for a in range(self.n_actions)]
        self.short_names = [name.split()[-1].lower() for name in self.names]
        self.typed = self._typed_names()
        """What a person may type for each action (lower case) -> the action."""

    @property
    def title(self) -> str:
        """The game's human name."""
        return self.record.title

    @property
    def numbered(self) -> bool:
        """Every board cell shows its one-character move name when hints are on (the cells'
        numbering is worth showing before the first move)."""
        return not self.drops and all(len(name) == 1 for name in self.short_names)

    @property
    def help(self) -> str:
        """How to type a move, hints and quit."""
        short = self.short_names
        if all(name.isdigit() for name in short):
            noun = self.names[0].split()[0].lower()
            ordered = sorted(short, key=int)
            top = ""
            if not self.drops:
                top = f" ({' '.join(short[:self.cols])} is the top row)"
            how = f"Type a {noun} number from {ordered[0]} to {ordered[-1]}{top}"
        else:
            how = (f"Type a square as its name, like {short[0]}, or as column then row digits, "
                   f"like {_digits(short[0])}")
        return f"{how}; 'hints' shows the legal moves, 'quit' ends the game."

    def _numbered(self, action: int) -> int:
        """The action whose record name ``action`` takes (numpad: rows upside down)."""
        if not self.numpad:
            return action
        row, col = divmod(action, self.cols)
        return (self.rows - 1 - row) * self.cols + col

    def _typed_names(self) -> dict[str, int]:
        typed: dict[str, int] = {}
        for action, (name, short) in enumerate(zip(self.names, self.short_names, strict=True)):
            for text in (name.lower(), short, _digits(short)):
                typed.setdefault(text, action)
        return typed

    def side_name(self, player: int) -> str:
        """The side name of rules ``player`` (``X``, ``O``, ``red``, ``yellow``)."""
        return self.record.side_names[self.seats.side(player)]

    def planes(self, state: Any) -> np.ndarray:
        """The board as planes ``(2, rows, cols)``: the first side name's stones (the first
        player's), then the other's."""
        return first_planes(self.record, state)

    def text(self, state: Any, hints: bool = False, last: Move | None = None) -> str:
        """The text board; with ``hints``, the legal moves marked on their empty cells; with
        ``last`` (the move that led to ``state``), that move marked: ``LAST_ROW_MARK`` after
        its row and a line below the board with ``LAST_COLUMN_MARK`` under its column and
        the move's name.

        Example (Reversi, the last move d3)::

              abcdefgh
             +--------+
            1|        |1
            2|        |2
            3|   X    |3 <
            ...
              abcdefgh
                 ^ last move: d3
        """
        labels = {self.cell(state, a): self.hint_label(a) for a in self.legal(state)} \
            if hints else {}
        board = render.ansi_labelled(self.record, self.planes(state), labels)
        if last is None:
            return board
        line, column = self.cell_position(state, self.cell(last.before, last.action))
        lines = board.rstrip("\n").split("\n")
        lines[line] += LAST_ROW_MARK
        lines.append(f"{' ' * column}{LAST_COLUMN_MARK} last move: {self.move_name(last.action)}")
        return "\n".join(lines) + "\n"

    def cell_position(self, state: Any, cell: int) -> tuple[int, int]:
        """The line and the character column where board ``cell`` is drawn in ``text(state)``
        (found by drawing the board with ``PROBE`` on that cell, emptied)."""
        planes = self.planes(state).copy()
        planes[(slice(None), *divmod(cell, self.cols))] = 0
        probe = render.ansi_labelled(self.record, planes, {cell: PROBE}).split("\n")
        line = next(k for k, text in enumerate(probe) if PROBE in text)
        return line, probe[line].index(PROBE)

    def counts(self, state: Any) -> list[int]:
        """The stones of each side name on the board (first side name first)."""
        return [int(count) for count in self.planes(state).reshape(2, -1).sum(axis=1)]

    def score_text(self, state: Any) -> str:
        """``X: 3  O: 2`` for games that end with a disc count; empty for the others."""
        if not self.record.scored:
            return ""
        return "  ".join(f"{name}: {count}" for name, count in zip(self.record.side_names,
                                                                  self.counts(state),
                                                                  strict=True))

    def legal(self, state: Any) -> list[int]:
        """The legal actions of the side to move."""
        return np.flatnonzero(self.rules.legal_mask(state)).tolist()

    def cell(self, state: Any, action: int) -> int:
        """The board cell (``row * cols + col``) that legal ``action`` fills."""
        return move_cell(self.record, state, action)

    def action_at(self, state: Any, cell: int) -> int:
        """The action a person means by clicking board cell ``cell``."""
        return cell % self.cols if self.drops else cell

    def turned(self, move: Move) -> np.ndarray:
        """A ``(rows, cols)`` 0/1 uint8 array of the stones ``move`` turned over."""
        before, after = self.planes(move.before), self.planes(move.after)
        return ((before.sum(axis=0) > 0) & (before != after).any(axis=0)).astype(np.uint8)

    def hint_label(self, action: int) -> str:
        """The character marking legal ``action`` on the text board when hints are on: its
        one-character name, else ``HINT_MARK``."""
        short = self.short_names[action]
        return short if len(short) == 1 else HINT_MARK

    def move_name(self, action: int) -> str:
        """How a person names ``action``."""
        return self.names[action]

    def parse(self, text: str, state: Any) -> int:
        """The legal action that ``text`` names.

        Raises:
            BadMove: malformed or illegal; the message explains the format.
        """
        action = self.typed.get(" ".join(text.lower().split()))
        if action is None:
            raise BadMove(f"{text!r} is not a move. {self.help}")
        if action not in self.legal(state):
            raise BadMove(f"{self.move_name(action)} is not a legal move here; type 'hints' "
                          "to see the legal moves.")
        return action


def first_planes(record: Game, state: Any) -> np.ndarray:
    """The board as planes ``(2, rows, cols)``: the first player's stones, then the other's."""
    return render.first_player_planes(record.rules, state)


def _digits(square: str) -> str:
    """A square name ``e3`` as column-then-row digits ``53``; other names as they are."""
    if len(square) > 1 and square[0] in ascii_lowercase and square[1:].isdigit():
        return f"{ascii_lowercase.index(square[0]) + 1}{square[1:]}"
    return square


def seat_text(view: BoardView, seats: Seats, opponent: str) -> str:
    """The start of a round: ``You are X. You go first.`` or ``You are O. random (X) goes
    first.``: the first side name always moves first."""
    first = view.side_name(0)
    if seats.human_player == 0:
        return f"You are {first}. You go first."
    return f"You are {view.side_name(1)}. {opponent} ({first}) goes first."


def verdict(round_: Round, opponent: str) -> str:
    """The end of a round for the person: ``You win!``, ``You lose to ...`` or a tie."""
    winner = round_.winner()
    if winner is None:
        return "It's a tie."
    return "You win!" if winner == round_.seats.human_player else f"You lose to {opponent}."


def margin_text(view: BoardView, round_: Round) -> str:
    """The end of a game with a disc count (``record.scored``) as the classic Reversegam says
    it: ``You beat the computer by N points!``, ``You lost. The computer beat you by N
    points.`` or ``The game was a tie!``."""
    winner = round_.winner()
    if winner is None:
        return "The game was a tie!"
    first, second = view.counts(round_.state)
    margin = abs(first - second)
    points = f"{margin} point{'s' * (margin != 1)}"
    if winner == round_.seats.human_player:
        return f"You beat the computer by {points}!"
    return f"You lost. The computer beat you by {points}."


def outcome_text(view: BoardView, round_: Round, opponent: str) -> str:
    """Which side won and what it means for the person: the margin line for games with a
    disc count, else the ``verdict``."""
    winner = round_.winner()
    said = margin_text(view, round_) if view.record.scored else verdict(round_, opponent)
    return said if winner is None else f"{view.side_name(winner)} wins. {said}"


def result_text(view: BoardView, round_: Round, opponent: str) -> str:
    """The end of a round in words: the score (games with a disc count), then
    ``outcome_text``."""
    score = view.score_text(round_.state)
    outcome = outcome_text(view, round_, opponent)
    return f"{score}. {outcome}" if score else outcome
