"""``boardgym play --gui``: the game in a pygame window (the ``gui`` extra).

Click a cell, or a column in a game whose stones drop (four-in-a-row), where a token can also
be dragged from the pile right of the board. ``H`` toggles hints, a click after a game starts
the next, ``Esc`` or closing the window quits. Moves are animated from what they do on the
board: stones that turn over flip, dropped stones fall (the computer's slide over first); the
last move's cell is then framed. The computer thinks in a thread so that the window stays
responsive. Without a display (no ``DISPLAY`` or ``WAYLAND_DISPLAY`` on Linux, or SDL falling
back to a window nobody sees) the window refuses to open with ``NoDisplayError``, unless
``SDL_VIDEODRIVER`` asks for such a driver (``dummy`` in tests and for screenshots).
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from boardgym import agents
from boardgym.envs import render
from boardgym.play.flow import (
    BoardView,
    Move,
    Options,
    QuitGame,
    Round,
    Scoreboard,
    Seats,
    first_player,
    outcome_text,
    verdict,
)

FPS = 30
FRAME_SECONDS = 1 / FPS
MOVE_FPS = 30
"""Frame rate cap while a ``PygameHuman`` waits for a move in ``act``."""
FLIP_SECONDS = 0.4
SLIDE_SECONDS = 0.35
GRAVITY = 40.0
"""Falling tokens' acceleration, in cells per second squared."""
NOTICE_SECONDS = 2.0
STATUS_HEIGHT = 56
STATUS_MARGIN = 8
FONT_SIZE = 24
BANNER_FONT_SIZE = 40
BANNER_LINE_OFFSETS = (-10, 22)
"""Vertical offsets of the banner's two lines from its centre, in pixels."""
BACKGROUND = (32, 32, 40)
TEXT = (240, 240, 240)
HINT_COLOUR = (250, 210, 60)
LAST_MOVE_COLOUR = (255, 64, 192)
"""The frame around the last move's cell."""
LAST_MOVE_WIDTH_DIVISOR = 16
"""The last move's frame is ``cell // LAST_MOVE_WIDTH_DIVISOR`` pixels wide."""
WIN_LINE = (60, 200, 60)
WIN_LINE_WIDTH = 10
BANNER = (0, 0, 0, 180)
MIN_WIN_LINE = 3
"""The fewest stones in a row drawn as a winning line."""
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
"""Row and column steps of the lines on a board: across, down and both diagonals."""


NO_DISPLAY = "no display found to open a window on; play in the terminal instead: drop --gui"
HEADLESS_DRIVERS = ("offscreen", "dummy")
"""SDL video drivers that draw where nobody sees (SDL falls back to ``offscreen``)."""
DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY")
"""Environment variables naming the display on X11 and Wayland systems."""
DISPLAYLESS_PLATFORMS = ("darwin", "win32")
"""Platforms whose windows need none of ``DISPLAY_VARIABLES``."""


class NoDisplayError(RuntimeError):
    """pygame found no display to open a window on."""


def check_display_named(environ: Mapping[str, str], platform: str) -> None:
    """Refuse at once, before SDL probes (and prints), when an X11 / Wayland system names no
    display and ``SDL_VIDEODRIVER`` asks for no driver.

    Raises:
        NoDisplayError: no display named.
    """
    if environ.get("SDL_VIDEODRIVER") or platform.startswith(DISPLAYLESS_PLATFORMS):
        return
    if not any(environ.get(name) for name in DISPLAY_VARIABLES):
        raise NoDisplayError(NO_DISPLAY)


def check_driver(driver: str, requested: str | None) -> None:
    """Refuse a headless SDL ``driver`` that SDL fell back to (not the ``requested`` one).

    Raises:
        NoDisplayError: SDL opened no visible display.
    """
    if driver in HEADLESS_DRIVERS and driver != (requested or "").lower():
        raise NoDisplayError(NO_DISPLAY)


@contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence the process's standard error (file descriptor 2) for a while: SDL prints its
    failed display probes there, and a failure is reported as one ``NoDisplayError`` line."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def is_quit(event: Any) -> bool:
    """True for a window close or an Esc key press."""
    pygame = render.import_pygame()
    return bool(event.type == pygame.QUIT
                or (event.type == pygame.KEYDOWN and event.key == pygame.K_ESCAPE))


@dataclass(frozen=True)
class Layout:
    """Where things are in the pygame window, in pixels.

    Attributes:
        cell: pixels per board cell.
        rows, cols: board size in cells.
        top: height of the strip above the board (dropped tokens hover there).
        panel: width of the panel right of the board (the token piles).
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

    Click a cell (or, where stones drop, a column); where stones drop the token can also be
    dragged from the pile right of the board and released above a column. Feed it the
    window's events with ``handle``; ``poll`` returns the chosen legal action once.
    """

    def __init__(self, view: BoardView, layout: Layout) -> None:
        self.view, self.layout = view, layout
        self.dragging: tuple[int, int] | None = None
        """Pixel where a dragged token is, while the person drags one."""
        self._pressed: int | None = None
        self._chosen: int | None = None

    def handle(self, event: Any, state: Any) -> None:
        """Take one pygame event while the person is to move in ``state``."""
        pygame = render.import_pygame()
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            if self.view.drops and self._on_pile(event.pos):
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
        cell = self.layout.cell_at(pos, allow_strip=self.view.drops)
        if cell is None:
            return
        action = self.view.action_at(state, cell)
        if dragged or (pressed is not None and self.view.action_at(state, pressed) == action):
            self._chosen = action


@dataclass
class Animation:
    """A move being shown on screen.

    Attributes:
        move: the move.
        human: True when the person made it.
        turned: ``(rows, cols)`` 0/1 array of the stones the move turned over.
        duration: seconds it takes.
        elapsed: seconds shown so far.
    """

    move: Move
    human: bool
    turned: np.ndarray
    duration: float
    elapsed: float = 0.0

    @property
    def progress(self) -> float:
        """0 at the start, 1 at the end."""
        return min(1.0, self.elapsed / self.duration) if self.duration else 1.0


class Thinker:
    """Runs a (possibly slow) agent in a thread so the window stays responsive."""

    def __init__(self, agent: agents.Agent, rng: np.random.Generator) -> None:
        self.agent, self.rng = agent, rng
        self._state: Any = None
        self._outcome: list[int | BaseException] = []
        self._thread: threading.Thread | None = None

    def poll(self, state: Any) -> int | None:
        """The agent's move in ``state`` once it has one; starts thinking on the first call.

        Raises:
            Exception: whatever the agent raised while thinking.
        """
        if self._state is not state:
            self._state, self._outcome = state, []
            self._thread = threading.Thread(target=self._think, args=(state, self._outcome),
                                            daemon=True)
            self._thread.start()
        if not self._outcome:
            return None
        if isinstance(self._outcome[0], BaseException):
            raise self._outcome[0]
        return self._outcome[0]

    def _think(self, state: Any, outcome: list[int | BaseException]) -> None:
        try:
            outcome.append(self.agent.act(state, self.rng))
        except Exception as error:  # handed to the window's thread by poll
            outcome.append(error)


def winning_line(plane: np.ndarray) -> tuple[int, int] | None:
    """The end cells of the longest straight run of stones on ``plane`` (``(rows, cols)``), if
    it has at least ``MIN_WIN_LINE`` stones."""
    rows, cols = plane.shape
    best: tuple[int, int, int] | None = None
    for row, col in zip(*np.nonzero(plane), strict=True):
        for dr, dc in DIRECTIONS:
            length = 1
            while 0 <= row + length * dr < rows and 0 <= col + length * dc < cols \
                    and plane[row + length * dr, col + length * dc]:
                length += 1
            if length >= MIN_WIN_LINE and (best is None or length > best[0]):
                end = (row + (length - 1) * dr) * cols + col + (length - 1) * dc
                best = (length, int(row * cols + col), int(end))
    return None if best is None else best[1:]


class GameWindow:
    """The pygame game: a board, a status bar, banners; one ``frame`` per tick of ``run``.

    Tests drive it with ``frame(pygame.event.get())`` after posting events and look at
    ``round`` (the current ``Round``) and ``screen`` (the drawn surface).

    Raises:
        ImportError: pygame is not installed (the message says how to install it).
        NoDisplayError: no display to open the window on.
    """

    def __init__(self, options: Options, agent: agents.Agent, rng: np.random.Generator) -> None:
        self.pygame = render.import_pygame()
        self.options, self.rng = options, rng
        self.record = options.record
        self.view = BoardView(self.record, options.config, options.numpad)
        self.side = options.side or 0
        self.round = self.new_round()
        cell = self.record.style.cell
        margin = cell if self.view.drops else 0
        self.layout = Layout(cell, self.view.rows, self.view.cols, margin, margin,
                             STATUS_HEIGHT)
        self.human = PygameHuman(self.view, self.layout)
        self.computer = Thinker(agent, rng)
        self.scoreboard = Scoreboard()
        self.hints = False
        self.animation: Animation | None = None
        self.notice = ("", 0.0)
        self.screen = self._open()
        self.font = self.pygame.font.Font(None, FONT_SIZE)
        self.banner_font = self.pygame.font.Font(None, BANNER_FONT_SIZE)

    def _open(self) -> Any:
        """Open the window; its surface.

        Raises:
            NoDisplayError: no display to show it on (``check_display_named``,
                ``check_driver``).
        """
        pygame = self.pygame
        check_display_named(os.environ, sys.platform)
        try:
            with quiet_stderr():
                pygame.display.init()
            check_driver(pygame.display.get_driver(), os.environ.get("SDL_VIDEODRIVER"))
            pygame.font.init()
            pygame.display.set_caption(f"boardgym: {self.record.title} against "
                                       f"{self.options.opponent}")
            return pygame.display.set_mode(self.layout.size)
        except (pygame.error, NoDisplayError) as error:
            pygame.display.quit()
            raise NoDisplayError(NO_DISPLAY if isinstance(error, NoDisplayError)
                                 else f"{NO_DISPLAY} ({error})") from error

    def new_round(self) -> Round:
        """A fresh round with the first player drawn (or as ``--first`` says)."""
        seats = Seats(self.side, first_player(self.options.first, self.rng))
        self.view.seats = seats
        return Round(self.record, self.options.config, seats)

    def run(self) -> None:
        """Frames at a capped rate until the person quits."""
        clock = self.pygame.time.Clock()
        try:
            while self.frame(self.pygame.event.get()):
                self.pygame.display.flip()
                clock.tick(FPS)
        finally:
            self.pygame.display.quit()

    def frame(self, events: list[Any]) -> bool:
        """Handle ``events``, advance the game by one frame and draw it; False once quit."""
        for event in events:
            if is_quit(event):
                return False
            self.handle(event)
        self.advance()
        self.draw()
        return True

    def handle(self, event: Any) -> None:
        """One event: H toggles hints; a click after the end starts the next round; others go
        to the person while it is their turn."""
        pygame = self.pygame
        if event.type == pygame.KEYDOWN and event.key == pygame.K_h:
            self.hints = not self.hints
        elif self.round.over and self.animation is None:
            if event.type == pygame.MOUSEBUTTONUP:
                self.round = self.new_round()
        elif self.round.human_to_move and self.animation is None:
            self.human.handle(event, self.round.state)

    def advance(self) -> None:
        """Move the animation on, or get the next move from whoever is to move."""
        self.notice = (self.notice[0], self.notice[1] - FRAME_SECONDS)
        if self.animation is not None:
            self.animation.elapsed += FRAME_SECONDS
            if self.animation.progress >= 1:
                self.finish(self.animation.move)
            return
        if self.round.over:
            return
        human = self.round.human_to_move
        player = self.human if human else self.computer
        action = player.poll(self.round.state)
        if action is not None:
            move = self.round.play(action)
            turned = self.view.turned(move)
            self.animation = Animation(move, human, turned, self.duration(move, human, turned))

    def finish(self, move: Move) -> None:
        """A move has been shown: announce a pass, score the round if it ended."""
        self.animation = None
        if move.passed is not None:
            text = f"{self.view.side_name(move.passed)} has no legal move and passes"
            self.notice = (text, NOTICE_SECONDS)
        if self.round.over:
            self.scoreboard.record(self.round)

    def duration(self, move: Move, human: bool, turned: np.ndarray) -> float:
        """Seconds the animation of ``move`` lasts: turning stones over, or a stone falling
        (the computer's slides over to its column first)."""
        if turned.any():
            return FLIP_SECONDS
        if self.view.drops:
            row = self.view.cell(move.before, move.action) // self.layout.cols
            return math.sqrt(2 * (row + 1) / GRAVITY) + (0 if human else SLIDE_SECONDS)
        return 0.0

    # ---- drawing

    def draw(self) -> None:
        """Draw the whole window for the current frame on ``screen``."""
        self.screen.fill(BACKGROUND)
        self.draw_board()
        if self.view.drops:
            self.draw_piles()
        if self.animation is not None:
            self.draw_animation(self.animation)
        settled = self.round.over and self.animation is None
        if settled:
            self.draw_win_line()
        self.draw_status()
        if settled:
            self.draw_banner()

    def draw_board(self) -> None:
        """The board: during an animation without the moving stones, with hint dots if on."""
        animation = self.animation
        state = self.round.state
        planes = self.view.planes(state)
        if animation is not None and animation.turned.any():
            planes = planes * (1 - animation.turned)[None]
        elif animation is not None:
            planes = self.view.planes(animation.move.before)
        frame = render.rgb(self.record, planes)
        if self.hints and self.round.human_to_move and animation is None and not self.round.over:
            cells = [self.view.cell(state, a) for a in self.view.legal(state)]
            frame = render.highlight(self.record, frame, cells, HINT_COLOUR)
        self.blit_array(frame, (0, self.layout.top))
        if animation is None:
            self.draw_last_move()

    def draw_last_move(self) -> None:
        """A frame around the cell of the round's last move (none before the first)."""
        last = self.round.last
        if last is None:
            return
        cell = self.layout.cell
        corner = self.layout.cell_corner(self.view.cell(last.before, last.action))
        self.pygame.draw.rect(self.screen, LAST_MOVE_COLOUR, (*corner, cell, cell),
                              max(1, cell // LAST_MOVE_WIDTH_DIVISOR))

    def draw_animation(self, animation: Animation) -> None:
        """The moving stones: turning over (seen edge-on halfway), or a token falling."""
        move, t = animation.move, animation.progress
        side = self.view.seats.side(move.before.to_move)
        if animation.turned.any():
            squeeze = abs(math.cos(math.pi * t))
            colour = 1 - side if t < 0.5 else side
            for cell in np.flatnonzero(animation.turned):
                self.blit_piece(colour, self.layout.cell_corner(int(cell)), squeeze)
        elif self.view.drops:
            self.blit_piece(side, self.token_position(animation))

    def token_position(self, animation: Animation) -> tuple[int, int]:
        """Where a dropped token is: sliding from the computer's pile, then falling."""
        cell = self.layout.cell
        target = self.view.cell(animation.move.before, animation.move.action)
        x, y_end = self.layout.cell_corner(target)
        elapsed = animation.elapsed
        if not animation.human:
            start = self.layout.computer_pile[0]
            if elapsed < SLIDE_SECONDS:
                return int(start + (x - start) * elapsed / SLIDE_SECONDS), 0
            elapsed -= SLIDE_SECONDS
        y = 0.5 * GRAVITY * elapsed ** 2 * cell
        return x, int(min(y, y_end))

    def draw_piles(self) -> None:
        """The token piles right of the board, and the dragged token."""
        human_side = self.view.seats.human_side
        self.blit_piece(human_side, self.layout.human_pile)
        self.blit_piece(1 - human_side, self.layout.computer_pile)
        if self.human.dragging is not None:
            half = self.layout.cell // 2
            x, y = self.human.dragging
            self.blit_piece(human_side, (x - half, y - half))

    def draw_win_line(self) -> None:
        """A line through the winner's stones in a row (games not won on a disc count)."""
        winner = self.round.winner()
        if self.record.scored or winner is None:
            return
        plane = self.view.planes(self.round.state)[self.view.seats.side(winner)]
        ends = winning_line(plane)
        if ends is None:
            return
        half = self.layout.cell // 2
        points = [(x + half, y + half) for x, y in map(self.layout.cell_corner, ends)]
        self.pygame.draw.line(self.screen, WIN_LINE, *points, WIN_LINE_WIDTH)

    def status_text(self) -> str:
        """The status bar's first line: a notice (a pass), whose turn it is, or the result."""
        if self.notice[1] > 0:
            return self.notice[0]
        if self.round.over:
            return outcome_text(self.view, self.round, self.options.opponent)
        if self.round.human_to_move:
            side = self.view.side_name(self.round.seats.human_player)
            return f"Your move ({side}), H: hints"
        return f"{self.options.opponent} is thinking..."

    def draw_status(self) -> None:
        """The status bar: the status line with the score (scored games), the scoreboard."""
        board, width = self.scoreboard, self.layout.size[0]
        first, second = (self.layout.board_bottom + STATUS_HEIGHT * k // 4 for k in (1, 3))
        self.blit_text(self.font, self.status_text(), (STATUS_MARGIN, first), "midleft")
        self.blit_text(self.font, self.view.score_text(self.round.state),
                       (width - STATUS_MARGIN, second), "midright")
        tally = f"you {board.wins}, {self.options.opponent} {board.losses}, ties {board.ties}"
        self.blit_text(self.font, tally, (STATUS_MARGIN, second), "midleft")

    def draw_banner(self) -> None:
        """The result across the board, with how to play again."""
        width = self.layout.size[0]
        band = self.pygame.Surface((width, BANNER_FONT_SIZE * 2), self.pygame.SRCALPHA)
        band.fill(BANNER)
        centre_y = self.layout.board_bottom // 2
        self.screen.blit(band, (0, centre_y - BANNER_FONT_SIZE))
        verdict_y, hint_y = (centre_y + offset for offset in BANNER_LINE_OFFSETS)
        self.blit_text(self.banner_font, verdict(self.round, self.options.opponent),
                       (width // 2, verdict_y), "center")
        self.blit_text(self.font, "click to play again, Esc to quit", (width // 2, hint_y),
                       "center")

    def blit_text(self, font: Any, text: str, at: tuple[int, int], anchor: str) -> None:
        """Draw ``text`` with its ``anchor`` point (a pygame Rect attribute) at ``at``."""
        image = font.render(text, True, TEXT)
        self.screen.blit(image, image.get_rect(**{anchor: at}))

    def blit_array(self, frame: np.ndarray, at: tuple[int, int]) -> None:
        """Draw an RGB image ``(H, W, 3)`` with its top-left corner at ``at``."""
        self.screen.blit(self.pygame.surfarray.make_surface(frame.swapaxes(0, 1)), at)

    def blit_piece(self, side: int, at: tuple[int, int], squeeze: float = 1.0) -> None:
        """Draw side ``side``'s piece (0: the first side name) with its corner at ``at``."""
        image = render.piece(self.record, side, squeeze)
        surface = self.pygame.image.frombuffer(image.tobytes(), image.shape[1::-1], "RGBA")
        self.screen.blit(surface, at)
