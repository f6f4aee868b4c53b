"""Drawing boards: ``ansi`` text like the classic console programs, ``rgb_array`` images, and a
``human`` pygame window (pygame imported only when a window is opened).

Every renderer takes ``board``: uint8 planes ``(2, rows, cols)`` from the *first* player's
view (plane 0 the first player's stones), as ``first_player_planes`` builds them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class Style:
    """How one game looks: text symbols and the image sprites' sizes and colours."""

    symbols: str  # empty, first player, second player
    cell: int  # pixels per cell
    background: RGB
    grid: RGB
    colours: tuple[RGB, RGB]
    shape: str  # "disc", "token" (disc in a hole), or "marks" (X and O)


STYLES = {
    "reversi": Style(" XO", 64, (0, 120, 48), (0, 70, 28), ((20, 20, 20), (240, 240, 240)), "disc"),
    "four_in_a_row": Style(".XO", 72, (0, 70, 200), (0, 70, 200),
                           ((220, 30, 30), (245, 205, 0)), "token"),
    "tictactoe": Style(" XO", 120, (250, 250, 245), (30, 30, 30),
                       ((200, 40, 40), (30, 80, 200)), "marks"),
}
HOLE = (235, 235, 235)
HINT_RADIUS = 0.1
"""Radius of a hint dot, in cell widths."""


def first_player_planes(rules: ModuleType, state: Any) -> np.ndarray:
    """The board as planes ``(2, rows, cols)``: first player's stones, then the second's."""
    planes = rules.observation(state)
    return planes if state.to_move == 0 else planes[::-1]


def ansi(game: str, board: np.ndarray) -> str:
    """The board as text, with the labels of that game's classic console program."""
    return ansi_labelled(game, board, {})


def ansi_labelled(game: str, board: np.ndarray, labels: Mapping[int, str]) -> str:
    """Like ``ansi``, with one character drawn on some empty cells (hints, cell numbers).

    Args:
        game: the canonical game name.
        board: first-player planes ``(2, rows, cols)``.
        labels: cell index ``row * cols + col`` -> the one character to show there when the
            cell is empty (occupied cells keep their stone).
    """
    symbols = STYLES[game].symbols
    codes = board[0] + 2 * board[1]
    cols = board.shape[2]
    cells = [[symbols[c] if c or r * cols + k not in labels else labels[r * cols + k]
              for k, c in enumerate(row)] for r, row in enumerate(codes)]
    rows = ["".join(row) for row in cells]
    if game == "tictactoe":
        return "\n---+---+---\n".join(" " + " | ".join(row) for row in rows) + "\n"
    ruler = "".join(str((c + 1) % 10) for c in range(cols))
    border = " +" + "-" * cols + "+"
    if game == "reversi":
        body = [f"{r + 1}|{row}|{r + 1}" for r, row in enumerate(rows)]
        return "\n".join(["  " + ruler, border, *body, border, "  " + ruler]) + "\n"
    return "\n".join(["  " + ruler, *(f" |{row}|" for row in rows), border]) + "\n"


def _grid(cell: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel centre offsets ``(y, x)`` of a cell, in cell units from its centre."""
    ticks = (np.arange(cell) + 0.5) / cell - 0.5
    return ticks[:, None], ticks[None, :]


def _shape_mask(shape: str, player: int, cell: int, squeeze: float = 1.0) -> np.ndarray:
    """Bool mask of one player's piece in a cell; discs narrowed to ``squeeze`` of their width."""
    y, x = _grid(cell)
    radius = np.hypot(y, x / max(squeeze, 1e-3))
    if shape != "marks":
        return radius < 0.4
    if player == 0:  # X: two thick diagonals inside a margin
        near = np.minimum(np.abs(y - x), np.abs(y + x)) < 0.08
        return near & (np.maximum(np.abs(y), np.abs(x)) < 0.32)
    return np.abs(radius - 0.27) < 0.055  # O: a ring


@cache
def _sprites(game: str) -> np.ndarray:
    """Cell images ``(3, cell, cell, 3)`` uint8: empty, first player, second player."""
    style = STYLES[game]
    cell = style.cell
    empty = np.empty((cell, cell, 3), np.uint8)
    empty[:] = style.background
    line = max(1, cell // 32)
    for edge in (slice(0, line), slice(cell - line, cell)):
        empty[edge, :] = style.grid
        empty[:, edge] = style.grid
    if style.shape == "token":
        empty[_shape_mask("token", 0, cell)] = HOLE
    sprites = np.stack([empty, empty.copy(), empty.copy()])
    for player, colour in enumerate(style.colours):
        sprites[player + 1][_shape_mask(style.shape, player, cell)] = colour
    sprites.setflags(write=False)
    return sprites


def rgb(game: str, board: np.ndarray) -> np.ndarray:
    """The board as an RGB image ``(rows * cell, cols * cell, 3)`` uint8."""
    codes = board[0] + 2 * board[1]
    tiles = _sprites(game)[codes]  # (rows, cols, cell, cell, 3)
    rows, cols, cell = tiles.shape[:3]
    return tiles.transpose(0, 2, 1, 3, 4).reshape(rows * cell, cols * cell, 3)


def piece(game: str, player: int, squeeze: float = 1.0) -> np.ndarray:
    """One player's piece alone, as an RGBA image ``(cell, cell, 4)`` uint8 (transparent around).

    For pieces off the board or in motion: a dragged or falling token, a disc turning over
    (``squeeze`` < 1 narrows a disc to that fraction of its width, as seen edge-on).
    """
    style = STYLES[game]
    image = np.zeros((style.cell, style.cell, 4), np.uint8)
    mask = _shape_mask(style.shape, player, style.cell, squeeze)
    image[mask] = (*style.colours[player], 255)
    return image


def highlight(game: str, frame: np.ndarray, cells: Iterable[int], colour: RGB) -> np.ndarray:
    """A copy of ``frame`` (an ``rgb`` image of ``game``) with a small dot on each of ``cells``."""
    cell = STYLES[game].cell
    cols = frame.shape[1] // cell
    dot = np.hypot(*_grid(cell)) < HINT_RADIUS
    out = frame.copy()
    for index in cells:
        row, col = divmod(int(index), cols)
        out[row * cell:(row + 1) * cell, col * cell:(col + 1) * cell][dot] = colour
    return out


def import_pygame() -> ModuleType:
    """pygame, or an ImportError that says how to install it."""
    try:
        import pygame
    except ImportError as error:
        raise ImportError("this needs pygame: install the gui extra, "
                          "pip install 'boardgym[gui]' (it brings pygame-ce)") from error
    return pygame


class Window:
    """A pygame window that shows RGB frames; opened on the first ``show``."""

    def __init__(self, title: str, fps: int) -> None:
        self.title, self.fps = title, fps
        self._screen: Any = None
        self._clock: Any = None

    def show(self, frame: np.ndarray) -> None:
        """Draw ``frame`` (H, W, 3) and keep the window responsive."""
        pygame = import_pygame()
        if self._screen is None:
            pygame.display.init()
            pygame.display.set_caption(self.title)
            self._screen = pygame.display.set_mode(frame.shape[1::-1])
            self._clock = pygame.time.Clock()
        pygame.event.pump()
        self._screen.blit(pygame.surfarray.make_surface(frame.swapaxes(0, 1)), (0, 0))
        pygame.display.flip()
        self._clock.tick(self.fps)

    def close(self) -> None:
        """Close the window if it is open."""
        if self._screen is not None:
            pygame = import_pygame()
            pygame.display.quit()
            self._screen = None


class Renderer:
    """Draws one game's states in one render mode; owns the window of ``"human"`` mode.

    Shared by the Gymnasium and PettingZoo faces of the games, so both draw alike.
    """

    def __init__(self, game: str, rules: ModuleType, mode: str, title: str, fps: int) -> None:
        self.game, self.rules, self.mode = game, rules, mode
        self.window = Window(title, fps) if mode == "human" else None

    def __call__(self, state: Any) -> str | np.ndarray | None:
        """``state`` as text (``ansi``), an image (``rgb_array``), or shown in the window
        (``human``, returns None)."""
        board = first_player_planes(self.rules, state)
        if self.mode == "ansi":
            return ansi(self.game, board)
        frame = rgb(self.game, board)
        if self.window is None:
            return frame
        self.window.show(frame)
        return None

    def close(self) -> None:
        """Close the window, if one is open."""
        if self.window is not None:
            self.window.close()
