"""Players whose moves come from a person: typed at a terminal (``TerminalHuman``) or made with
the mouse in a pygame window (``PygameHuman``). Both are agents like any other: ``act(state,
rng)`` returns a legal action of the rules state.

A ``BoardView`` is how a person sees one game and names its moves: the side names (``X``/``O``,
``red``/``black``), the text board with hints, move names such as ``e3`` / ``column 4`` /
``cell 5``, and parsing what the person typed. ``Seats`` says which side the person plays.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from boardgym.envs import render
from boardgym.envs.games import canonical_name

SIDES = {"reversi": ("X", "O"), "four_in_a_row": ("red", "black"), "tictactoe": ("X", "O")}
"""Side names per game: the first names the X stones (black discs, red tokens)."""
QUIT, HINTS, HELP = "quit", "hints", "help"
COLUMN_LETTERS = "abcdefgh"
MOVE_FPS = 30
"""Frame rate cap while a ``PygameHuman`` waits for a move."""


class QuitGame(Exception):
    """The person asked to stop playing (typed ``quit``, pressed Esc or closed the window)."""


class BadMove(ValueError):
    """What a person typed is not a legal move; the message says why and how to type one."""


@dataclass(frozen=True)
class Seats:
    """Who sits where in one round.

    Attributes:
        human_side: 0 if the person plays the first side name (``X``, ``red``), 1 otherwise.
        human_player: the person's rules player, 0 if they move first, 1 if second.
    """

    human_side: int
    human_player: int

    @property
    def x_player(self) -> int:
        """The rules player (0 moves first) holding the first side (``X``, ``red``)."""
        return self.human_player if self.human_side == 0 else 1 - self.human_player

    def side(self, player: int) -> int:
        """0 if rules ``player`` holds the first side name, 1 otherwise."""
        return 0 if player == self.x_player else 1


class BoardView(ABC):
    """How a person sees one game and names its moves; ``seats`` is set for each round.

    Subclasses say how moves are typed (``parse``, ``help``), named (``move_name``) and hinted
    (``hint_label``); drawing is ``envs.render``'s.
    """

    game = ""
    title = ""
    help = ""

    def __init__(self, rules: ModuleType) -> None:
        self.rules = rules
        self.seats = Seats(0, 0)

    def side_name(self, player: int) -> str:
        """The side name of rules ``player`` (``X``, ``O``, ``red``, ``black``)."""
        return SIDES[self.game][self.seats.side(player)]

    def planes(self, state: Any) -> np.ndarray:
        """The board as planes ``(2, rows, cols)``: the first side's stones, then the other's."""
        planes = render.first_player_planes(self.rules, state)
        return planes if self.seats.x_player == 0 else planes[::-1]

    def text(self, state: Any, hints: bool = False) -> str:
        """The text board; with ``hints``, the legal moves marked on their empty cells."""
        labels = {self.cell(state, a): self.hint_label(a) for a in self.legal(state)} if hints \
            else {}
        return render.ansi_labelled(self.game, self.planes(state), labels)

    def score_text(self, state: Any) -> str:
        """A score line for games that count stones; empty for the others."""
        return ""

    def legal(self, state: Any) -> list[int]:
        """The legal actions of the side to move."""
        return np.flatnonzero(self.rules.legal_mask(state)).tolist()

    def cell(self, state: Any, action: int) -> int:
        """The board cell (``row * cols + col``) where ``action`` puts a stone."""
        return action

    def action_at(self, state: Any, cell: int) -> int:
        """The action a person means by clicking board cell ``cell``."""
        return cell

    def hint_label(self, action: int) -> str:
        """The character marking legal ``action`` on the text board when hints are on."""
        return "."

    @abstractmethod
    def move_name(self, action: int) -> str:
        """How a person names ``action``."""

    @abstractmethod
    def parse(self, text: str, state: Any) -> int:
        """The legal action that ``text`` names.

        Raises:
            BadMove: malformed or illegal; the message explains the format.
        """


class ReversiView(BoardView):
    """Reversi: squares typed column then row, ``53`` or ``e3``."""

    game = "reversi"
    title = "Reversi"
    help = ("Type a move as column then row, 1-8 each, like 53 or e3 (the numbers around the "
            "board); 'hints' shows the legal moves, 'quit' ends the game.")

    def score_text(self, state: Any) -> str:
        """Disc counts, ``X: 3  O: 2``."""
        counts = self.rules.score(state)
        return "  ".join(f"{self.side_name(p)}: {counts[p]}" for p in sorted(
            (0, 1), key=self.seats.side))

    def move_name(self, action: int) -> str:
        """``e3`` style: column letter, row number."""
        row, col = divmod(action, self.rules.SIZE)
        return f"{COLUMN_LETTERS[col]}{row + 1}"

    def parse(self, text: str, state: Any) -> int:
        """The square typed as ``53`` or ``e3`` (column, then row), if legal."""
        size = self.rules.SIZE
        digits = "".join(str(n + 1) for n in range(size))
        if len(text) != 2 or text[1] not in digits or text[0] not in digits + COLUMN_LETTERS:
            raise BadMove(f"{text!r} is not a move. {self.help}")
        col = digits.index(text[0]) if text[0] in digits else COLUMN_LETTERS.index(text[0])
        action = (int(text[1]) - 1) * size + col
        if action not in self.legal(state):
            other = self.side_name(1 - state.to_move)
            raise BadMove(f"{self.move_name(action)} is not a legal move: it must be an empty "
                          f"square that flips at least one {other} disc. Type 'hints' to see "
                          "the legal moves.")
        return action


class FourInARowView(BoardView):
    """Four-in-a-row: a column number, 1 on the left."""

    game = "four_in_a_row"
    title = "Four-in-a-row"

    def columns(self, state: Any) -> int:
        """The number of columns of the board."""
        return int(state.geom.columns)

    help = ("Type a column number (the numbers above the board); 'hints' marks where tokens "
            "would land, 'quit' ends the game.")

    def cell(self, state: Any, action: int) -> int:
        """The lowest empty cell of column ``action``."""
        occupied = self.planes(state).sum(axis=0)[:, action]
        rows = occupied.shape[0]
        return (rows - 1 - int(occupied.sum())) * self.columns(state) + action

    def action_at(self, state: Any, cell: int) -> int:
        """The column of ``cell``."""
        return cell % self.columns(state)

    def hint_label(self, action: int) -> str:
        """``+`` where a token would land."""
        return "+"

    def move_name(self, action: int) -> str:
        """``column 4`` (1 on the left)."""
        return f"column {action + 1}"

    def parse(self, text: str, state: Any) -> int:
        """The column typed as its number, if it has room."""
        columns = self.columns(state)
        if not text.isdigit() or not 1 <= int(text) <= columns:
            raise BadMove(f"{text!r} is not a column. Type a column number from 1 to "
                          f"{columns}; 'hints' marks where tokens would land, 'quit' ends.")
        action = int(text) - 1
        if action not in self.legal(state):
            raise BadMove(f"Column {text} is full; choose another column.")
        return action


class TicTacToeView(BoardView):
    """Tic-tac-toe: cells numbered 1-9, 1 2 3 on the top row, or 7 8 9 with ``numpad``."""

    game = "tictactoe"
    title = "Tic-tac-toe"

    def __init__(self, rules: ModuleType, numpad: bool = False) -> None:
        super().__init__(rules)
        size = rules.SIZE
        rows = [[r * size + c + 1 for c in range(size)] for r in range(size)]
        self.numbers = np.array(rows[::-1] if numpad else rows).ravel()
        """The number a person types for each cell."""
        top = " ".join(str(n) for n in self.numbers[:size])
        self.help = (f"Type a cell number from 1 to {rules.CELLS} ({top} is the top row); "
                     "'hints' shows the free cells' numbers, 'quit' ends the game.")

    def hint_label(self, action: int) -> str:
        """The cell's number."""
        return str(self.numbers[action])

    def move_name(self, action: int) -> str:
        """``cell 5``."""
        return f"cell {self.numbers[action]}"

    def parse(self, text: str, state: Any) -> int:
        """The cell typed as its number, if free."""
        if not text.isdigit() or int(text) not in self.numbers:
            raise BadMove(f"{text!r} is not a cell. {self.help}")
        action = int(np.flatnonzero(self.numbers == int(text))[0])
        if action not in self.legal(state):
            raise BadMove(f"Cell {text} is taken; choose a free cell.")
        return action


def make_view(game: str, rules: ModuleType, numpad: bool = False) -> BoardView:
    """The ``BoardView`` of ``game``; ``numpad`` (tic-tac-toe only) numbers 7 8 9 on top."""
    name = canonical_name(game)
    if name == "tictactoe":
        return TicTacToeView(rules, numpad)
    if numpad:
        raise ValueError(f"--numpad is a tic-tac-toe option; drop it for {name}")
    return ReversiView(rules) if name == "reversi" else FourInARowView(rules)


class TerminalHuman:
    """An agent whose moves a person types at a terminal.

    Besides moves it understands ``hints`` (toggle legal moves on the board), ``help`` and
    ``quit`` (raises ``QuitGame``). A malformed or illegal move is explained and asked again.
    End of input raises ``EOFError`` and Ctrl-C ``KeyboardInterrupt``, for the caller to end on.
    """

    def __init__(self, view: BoardView, read: Callable[[str], str] = input,
                 write: Callable[[str], None] = print) -> None:
        self.view, self.read, self.write = view, read, write
        self.hints = False

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """The move the person types (``rng`` is unused: people bring their own chance)."""
        prompt = f"Your move ({self.view.side_name(state.to_move)}): "
        while True:
            text = self.read(prompt).strip().lower()
            if text == QUIT:
                raise QuitGame
            if text == HINTS:
                self.hints = not self.hints
                self.write(f"Hints {'on' if self.hints else 'off'}.")
                self.write(self.view.text(state, self.hints).rstrip("\n"))
            elif text == HELP:
                self.write(self.view.help)
            else:
                try:
                    return self.view.parse(text, state)
                except BadMove as error:
                    self.write(str(error))


@dataclass(frozen=True)
class Layout:
    """Where things are in the pygame window, in pixels.

    Attributes:
        cell: pixels per board cell.
        rows, cols: board size in cells.
        top: height of the strip above the board (four-in-a-row's tokens hover there).
        panel: width of the panel right of the board (four-in-a-row's token piles).
        status: height of the status bar below the board.
    """

    cell: int
    rows: int
    cols: int
    top: int
    panel: int
    status: int

    @property
    def size(self) -> tuple[int, int]:
        """Window ``(width, height)``."""
        return (self.cols * self.cell + self.panel,
                self.top + self.rows * self.cell + self.status)

    @property
    def board_bottom(self) -> int:
        """The y pixel just below the board."""
        return self.top + self.rows * self.cell

    def cell_at(self, pos: tuple[int, int], allow_strip: bool = False) -> int | None:
        """The board cell under pixel ``pos``, or None (the strip above counts as row 0 when
        ``allow_strip``)."""
        x, y = pos
        col, row = x // self.cell, (y - self.top) // self.cell
        if allow_strip and 0 <= y < self.top:
            row = 0
        if 0 <= col < self.cols and 0 <= row < self.rows and y >= 0:
            return int(row * self.cols + col)
        return None

    def cell_corner(self, cell: int) -> tuple[int, int]:
        """The top-left pixel of board cell ``cell``."""
        row, col = divmod(cell, self.cols)
        return col * self.cell, self.top + row * self.cell

    @property
    def human_pile(self) -> tuple[int, int]:
        """Top-left pixel of the person's token pile (bottom of the right panel)."""
        return self.cols * self.cell, self.board_bottom - self.cell

    @property
    def computer_pile(self) -> tuple[int, int]:
        """Top-left pixel of the computer's token pile (top of the right panel)."""
        return self.cols * self.cell, 0


class PygameHuman:
    """An agent whose moves a person makes with the mouse in a pygame window.

    Click a cell (Reversi, tic-tac-toe) or a column (four-in-a-row); in four-in-a-row the
    token can also be dragged from the pile right of the board and released above a column.
    Feed it the window's events with ``handle``; ``poll`` returns the chosen legal action once.
    """

    def __init__(self, view: BoardView, layout: Layout, draggable: bool) -> None:
        self.view, self.layout, self.draggable = view, layout, draggable
        self.dragging: tuple[int, int] | None = None
        """Pixel where a dragged token is, while the person drags one."""
        self._pressed: int | None = None
        self._chosen: int | None = None

    def handle(self, event: Any, state: Any) -> None:
        """Take one pygame event while the person is to move in ``state``."""
        pygame = render.import_pygame()
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            if self.draggable and self._on_pile(event.pos):
                self.dragging = event.pos
            self._pressed = self.layout.cell_at(event.pos)
        elif event.type == pygame.MOUSEMOTION and self.dragging is not None:
            self.dragging = event.pos
        elif event.type == pygame.MOUSEBUTTONUP and event.button == 1:
            self._release(event.pos, state)

    def poll(self, state: Any) -> int | None:
        """The legal action the person chose in ``state``, once; None until they choose."""
        chosen, self._chosen = self._chosen, None
        return chosen if chosen in self.view.legal(state) else None

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """Wait for the person's move, keeping the window's events flowing.

        Raises:
            QuitGame: the window was closed or Esc pressed.
        """
        pygame = render.import_pygame()
        clock = pygame.time.Clock()
        while True:
            for event in pygame.event.get():
                if is_quit(event):
                    raise QuitGame
                self.handle(event, state)
            action = self.poll(state)
            if action is not None:
                return action
            clock.tick(MOVE_FPS)

    def _on_pile(self, pos: tuple[int, int]) -> bool:
        x, y = self.layout.human_pile
        return x <= pos[0] < x + self.layout.cell and y <= pos[1] < y + self.layout.cell

    def _release(self, pos: tuple[int, int], state: Any) -> None:
        """A drag released over the board, or a press and release on the same move, chooses."""
        dragged, self.dragging = self.dragging is not None, None
        pressed, self._pressed = self._pressed, None
        cell = self.layout.cell_at(pos, allow_strip=self.draggable)
        if cell is None:
            return
        action = self.view.action_at(state, cell)
        if dragged or (pressed is not None and self.view.action_at(state, pressed) == action):
            self._chosen = action


def is_quit(event: Any) -> bool:
    """True for a window close or an Esc key press."""
    pygame = render.import_pygame()
    return bool(event.type == pygame.QUIT
                or (event.type == pygame.KEYDOWN and event.key == pygame.K_ESCAPE))
