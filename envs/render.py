"""Drawing boards: ``ansi`` text like the classic console programs, ``rgb_array`` images, a
``human`` pygame window (pygame imported only when a window is opened), and ``svg`` vector
drawings (``envs.svg``).

How a game looks comes from its record's ``Style`` (``record.style``): text symbols, the text
frame and column labels, cell size, colours and piece shape. Functions take the game as a
name (or alias) or as its ``Game`` record. Every renderer takes ``board``: uint8 planes
``(2, rows, cols)`` from the *first* player's view (plane 0 the first player's stones), as
``first_player_planes`` builds them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache
from types import ModuleType
from typing import Any, TypeAlias

import numpy as np

from boardgym.envs.games import GAMES, game
from boardgym.envs.games.core import RGB, Game, Style

HOLE = (235, 235, 235)
"""The empty hole of a ``"token"`` board."""
HINT_RADIUS = 0.1
"""Radius of a hint dot, in cell widths."""
PIECE_RADIUS = 0.4
"""Radius of a disc or token, in cell widths."""
MARK_HALF_WIDTH, MARK_REACH = 0.08, 0.32
"""An ``X`` mark: half the width of its strokes and how far they reach from the centre."""
RING_RADIUS, RING_HALF_WIDTH = 0.27, 0.055
"""An ``O`` mark: the ring's radius and half its width."""
HINT_COLOUR = (250, 210, 60)
"""The dot on a legal move's cell when hints are shown."""
LAST_MOVE_COLOUR = (255, 64, 192)
"""The frame around the last move's cell."""
LAST_MOVE_WIDTH_DIVISOR = 16
"""The last move's frame is ``cell // LAST_MOVE_WIDTH_DIVISOR`` pixels wide."""
GRID_LINE_DIVISOR = 32
"""Grid lines are ``cell // GRID_LINE_DIVISOR`` pixels wide (at least 1)."""
DIGITS = 10
GridText = Callable[[list[str], str], list[str]]
"""``(rows of cell characters, column ruler) -> lines``: one way of framing a text board."""
GameRef: TypeAlias = "str | Game"
"""A game given by name, alias or record."""


class _Styles(Mapping[str, Style]):
    """Each registered game's ``Style`` by name or alias, read from the records (no table)."""

    def __getitem__(self, name: str) -> Style:
        return game(name).style

    def __iter__(self) -> Iterator[str]:
        return iter(GAMES)

    def __len__(self) -> int:
        return len(GAMES)


STYLES: Mapping[str, Style] = _Styles()
"""``STYLES["reversi"]`` is ``game("reversi").style``."""


def style_of(name: GameRef) -> Style:
    """The ``Style`` of a game given by name, alias or record."""
    return game(name).style


def first_player_planes(rules: Any, state: Any) -> np.ndarray:
    """The board as planes ``(2, rows, cols)``: the first player's stones, then the second's."""
    return np.asarray(rules.observation(state, 0))


def ansi(name: GameRef, board: np.ndarray) -> str:
    """The board as text, framed and labelled as the game's ``Style`` says."""
    return ansi_labelled(name, board, {})


def ansi_labelled(name: GameRef, board: np.ndarray, labels: Mapping[int, str]) -> str:
    """Like ``ansi``, with one character drawn on some empty cells (hints, cell numbers).

    Args:
        name: the game (name, alias or record).
        board: first-player planes ``(2, rows, cols)``.
        labels: cell index ``row * cols + col`` -> the one character to show there when the
            cell is empty (occupied cells keep their stone).

    Raises:
        ValueError: the style's ``text_frame`` is not one of ``TEXT_FRAMES``.
    """
    style = style_of(name)
    frame = TEXT_FRAMES.get(style.text_frame)
    if frame is None:
        raise ValueError(f"unknown text_frame {style.text_frame!r} in the style of {name!r}; "
                         f"choose one of {', '.join(TEXT_FRAMES)}")
    codes = board[0] + 2 * board[1]
    cols = board.shape[2]
    rows = ["".join(style.symbols[c] if c or r * cols + k not in labels
                    else labels[r * cols + k] for k, c in enumerate(row))
            for r, row in enumerate(codes)]
    ruler = style.column_labels or "".join(str((c + 1) % DIGITS) for c in range(cols))
    return "\n".join(frame(rows, ruler)) + "\n"


def _boxed(rows: list[str], ruler: str) -> list[str]:
    """A border, the ruler above and below, row numbers on both sides (Reversi)."""
    border = " +" + "-" * len(ruler) + "+"
    body = [f"{r + 1}|{row}|{r + 1}" for r, row in enumerate(rows)]
    return ["  " + ruler, border, *body, border, "  " + ruler]


def _racked(rows: list[str], ruler: str) -> list[str]:
    """The ruler above, sides and a bottom, open at the top (a four-in-a-row rack)."""
    return ["  " + ruler, *(f" |{row}|" for row in rows), " +" + "-" * len(ruler) + "+"]


def _gridded(rows: list[str], ruler: str) -> list[str]:
    """Cells apart with ``|``, ``---+---`` lines between rows (tic-tac-toe)."""
    line = "+".join(["---"] * len(ruler))
    lines: list[str] = []
    for r, row in enumerate(rows):
        lines += ([line] if r else []) + [" " + " | ".join(row)]
    return lines


TEXT_FRAMES: dict[str, GridText] = {"box": _boxed, "rack": _racked, "grid": _gridded}
"""The text frames a ``Style.text_frame`` may name."""


def _grid(cell: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel centre offsets ``(y, x)`` of a cell, in cell units from its centre."""
    ticks = (np.arange(cell) + 0.5) / cell - 0.5
    return ticks[:, None], ticks[None, :]


def _shape_mask(shape: str, player: int, cell: int, squeeze: float = 1.0) -> np.ndarray:
    """Bool mask of one player's piece in a cell; discs narrowed to ``squeeze`` of their width."""
    y, x = _grid(cell)
    radius = np.hypot(y, x / max(squeeze, 1e-3))
    if shape != "marks":
        return radius < PIECE_RADIUS
    if player == 0:  # X: two thick diagonals inside a margin
        near = np.minimum(np.abs(y - x), np.abs(y + x)) < MARK_HALF_WIDTH
        return near & (np.maximum(np.abs(y), np.abs(x)) < MARK_REACH)
    return np.abs(radius - RING_RADIUS) < RING_HALF_WIDTH  # O: a ring


@cache
def _sprites(style: Style) -> np.ndarray:
    """Cell images ``(3, cell, cell, 3)`` uint8: empty, first player, second player."""
    cell = style.cell
    empty = np.empty((cell, cell, 3), np.uint8)
    empty[:] = style.background
    line = max(1, cell // GRID_LINE_DIVISOR)
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


def rgb(name: GameRef, board: np.ndarray) -> np.ndarray:
    """The board as an RGB image ``(rows * cell, cols * cell, 3)`` uint8."""
    codes = board[0] + 2 * board[1]
    tiles = _sprites(style_of(name))[codes]  # (rows, cols, cell, cell, 3)
    rows, cols, cell = tiles.shape[:3]
    return tiles.transpose(0, 2, 1, 3, 4).reshape(rows * cell, cols * cell, 3)


def piece(name: GameRef, player: int, squeeze: float = 1.0) -> np.ndarray:
    """One player's piece alone, as an RGBA image ``(cell, cell, 4)`` uint8 (transparent around).

    For pieces off the board or in motion: a dragged or falling token, a disc turning over
    (``squeeze`` < 1 narrows a disc to that fraction of its width, as seen edge-on).
    """
    style = style_of(name)
    image = np.zeros((style.cell, style.cell, 4), np.uint8)
    mask = _shape_mask(style.shape, player, style.cell, squeeze)
    image[mask] = (*style.colours[player], 255)
    return image


def highlight(name: GameRef, frame: np.ndarray, cells: Iterable[int], colour: RGB) -> np.ndarray:
    """A copy of ``frame`` (an ``rgb`` image of the game) with a small dot on each of ``cells``."""
    cell = style_of(name).cell
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


class FrameWindow:
    """A pygame window that shows RGB frames; opened on the first ``show``. A pickled or
    copied window is closed (the copy opens its own on its first ``show``)."""

    def __init__(self, title: str, fps: int) -> None:
        self.title, self.fps = title, fps
        self._screen: Any = None
        self._clock: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"title": self.title, "fps": self.fps, "_screen": None, "_clock": None}

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

    Args:
        record: the game.
        mode: ``"ansi"``, ``"rgb_array"``, ``"human"`` or ``"svg"``.
        title: the window's title.
        fps: frames per second in the window.
    """

    def __init__(self, record: Game, mode: str, title: str, fps: int) -> None:
        self.record, self.mode = record, mode
        self.window = FrameWindow(title, fps) if mode == "human" else None

    def __call__(self, state: Any, hints: bool = False) -> str | np.ndarray | None:
        """``state`` as text (``ansi``), an image (``rgb_array``), an ``Svg`` document
        (``svg``; with ``hints``, the side to move's legal moves dotted), or shown in the
        window (``human``, returns None)."""
        if self.mode == "svg":
            from boardgym.envs.svg import state_svg  # envs.svg draws with this module

            return state_svg(self.record, state, hints=hints)
        board = first_player_planes(self.record.rules, state)
        if self.mode == "ansi":
            return ansi(self.record, board)
        frame = rgb(self.record, board)
        if self.window is None:
            return frame
        self.window.show(frame)
        return None

    def close(self) -> None:
        """Close the window, if one is open."""
        if self.window is not None:
            self.window.close()


__all__ = ["HINT_COLOUR", "HOLE", "LAST_MOVE_COLOUR", "LAST_MOVE_WIDTH_DIVISOR", "STYLES",
           "TEXT_FRAMES", "FrameWindow", "Renderer", "ansi", "ansi_labelled",
           "first_player_planes", "highlight", "import_pygame", "piece", "rgb", "style_of"]
