"""The drawing of ``boardgym play --gui``'s window: the board, the moving stones, the token
piles, the winning line, the status bar and the banner (``Painter``), and where things are on
screen (``Layout``). The window's event loop and players are ``play.window``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from boardgym.envs import render
from boardgym.play.flow import BoardView, Move, verdict

if TYPE_CHECKING:
    from boardgym.play.window import GameWindow

FLIP_SECONDS = 0.4
SLIDE_SECONDS = 0.35
"""How long the computer's dropped token slides over to its column."""
GRAVITY = 40.0
"""Falling tokens' acceleration, in cells per second squared."""
STATUS_HEIGHT = 56
STATUS_MARGIN = 8
FONT_SIZE = 24
BANNER_FONT_SIZE = 40
BANNER_LINE_OFFSETS = (-10, 22)
"""Vertical offsets of the banner's two lines from its centre, in pixels."""
BACKGROUND = (32, 32, 40)
TEXT = (240, 240, 240)
WIN_LINE = (60, 200, 60)
WIN_LINE_WIDTH = 10
BANNER = (0, 0, 0, 180)
MIN_WIN_LINE = 3
"""The fewest stones in a row drawn as a winning line."""
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
"""Row and column steps of the lines on a board: across, down and both diagonals."""


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


def animation_of(view: BoardView, layout: Layout, move: Move, human: bool) -> Animation:
    """How ``move`` is shown: the stones it turned over flip, or (where stones drop) the
    stone falls from above the board, the computer's sliding over to its column first; any
    other move shows at once."""
    turned = view.turned(move)
    if turned.any():
        duration = FLIP_SECONDS
    elif view.drops:
        row = view.cell(move.before, move.action) // layout.cols
        duration = math.sqrt(2 * (row + 1) / GRAVITY) + (0 if human else SLIDE_SECONDS)
    else:
        duration = 0.0
    return Animation(move, human, turned, duration)


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


class Painter:
    """Draws a ``GameWindow``'s current frame on its ``screen``: what the window's state
    (its round, animation, hints, notice and scoreboard) shows.

    Args:
        window: the window to draw (its display is open).
    """

    def __init__(self, window: GameWindow) -> None:
        self.window = window
        self.pygame = window.pygame
        self.record, self.view, self.layout = window.record, window.view, window.layout
        self.screen = window.screen
        self.font = self.pygame.font.Font(None, FONT_SIZE)
        self.banner_font = self.pygame.font.Font(None, BANNER_FONT_SIZE)

    def draw(self) -> None:
        """Draw the whole window for the current frame on ``screen``."""
        self.screen.fill(BACKGROUND)
        self.draw_board()
        if self.view.drops:
            self.draw_piles()
        animation = self.window.animation
        if animation is not None:
            self.draw_animation(animation)
        settled = self.window.round.over and animation is None
        if settled:
            self.draw_win_line()
        self.draw_status()
        if settled:
            self.draw_banner()

    def draw_board(self) -> None:
        """The board: during an animation without the moving stones, with hint dots if on."""
        window, animation = self.window, self.window.animation
        state = window.round.state
        planes = self.view.planes(state)
        if animation is not None and animation.turned.any():
            planes = planes * (1 - animation.turned)[None]
        elif animation is not None:
            planes = self.view.planes(animation.move.before)
        frame = render.rgb(self.record, planes)
        if window.hints and window.round.human_to_move and animation is None \
                and not window.round.over:
            cells = [self.view.cell(state, a) for a in self.view.legal(state)]
            frame = render.highlight(self.record, frame, cells, render.HINT_COLOUR)
        self.blit_array(frame, (0, self.layout.top))
        if animation is None:
            self.draw_last_move()

    def draw_last_move(self) -> None:
        """A frame around the cell of the round's last move (none before the first)."""
        last = self.window.round.last
        if last is None:
            return
        cell = self.layout.cell
        corner = self.layout.cell_corner(self.view.cell(last.before, last.action))
        self.pygame.draw.rect(self.screen, render.LAST_MOVE_COLOUR, (*corner, cell, cell),
                              max(1, cell // render.LAST_MOVE_WIDTH_DIVISOR))

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
        if self.window.human.dragging is not None:
            half = self.layout.cell // 2
            x, y = self.window.human.dragging
            self.blit_piece(human_side, (x - half, y - half))

    def draw_win_line(self) -> None:
        """A line through the winner's stones in a row (games not won on a disc count)."""
        winner = self.window.round.winner()
        if self.record.scored or winner is None:
            return
        plane = self.view.planes(self.window.round.state)[self.view.seats.side(winner)]
        ends = winning_line(plane)
        if ends is None:
            return
        half = self.layout.cell // 2
        points = [(x + half, y + half) for x, y in map(self.layout.cell_corner, ends)]
        self.pygame.draw.line(self.screen, WIN_LINE, *points, WIN_LINE_WIDTH)

    def draw_status(self) -> None:
        """The status bar: the status line with the score (scored games), the scoreboard."""
        window, width = self.window, self.layout.size[0]
        board, opponent = window.scoreboard, window.options.opponent
        first, second = (self.layout.board_bottom + STATUS_HEIGHT * k // 4 for k in (1, 3))
        self.blit_text(self.font, window.status_text(), (STATUS_MARGIN, first), "midleft")
        self.blit_text(self.font, self.view.score_text(window.round.state),
                       (width - STATUS_MARGIN, second), "midright")
        tally = f"you {board.wins}, {opponent} {board.losses}, ties {board.ties}"
        self.blit_text(self.font, tally, (STATUS_MARGIN, second), "midleft")

    def draw_banner(self) -> None:
        """The result across the board, with how to play again."""
        width = self.layout.size[0]
        band = self.pygame.Surface((width, BANNER_FONT_SIZE * 2), self.pygame.SRCALPHA)
        band.fill(BANNER)
        centre_y = self.layout.board_bottom // 2
        self.screen.blit(band, (0, centre_y - BANNER_FONT_SIZE))
        verdict_y, hint_y = (centre_y + offset for offset in BANNER_LINE_OFFSETS)
        result = verdict(self.window.round, self.window.options.opponent)
        self.blit_text(self.banner_font, result, (width // 2, verdict_y), "center")
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


__all__ = ["Animation", "Layout", "Painter", "animation_of", "winning_line"]
