"""Boards as SVG vector drawings: for notebooks (an ``Svg`` shows itself as the picture), the
web page and ``render_mode="svg"``.

How a board looks comes from the game's ``Style`` alone, as for the ``rgb_array`` images
(``envs.render``): the background and grid colours, the piece colours and the shape
(``"disc"``: filled circles; ``"token"``: tokens in the holes of a panel; ``"marks"``: X
strokes and O rings). The coordinate labels follow the style's ``text_frame`` as the text
board does: ``"box"`` puts the column labels (``column_labels``, else 1, 2, ...) above and
below and the row numbers on both sides, ``"rack"`` the column numbers above, ``"grid"``
faint cell numbers (1, 2, ... row by row) in the empty cells.

The drawing, in order: the cells, each a ``<rect class="cell" data-cell="K">`` (``K = row *
cols + col``) that is also the board's square, so a click anywhere on a cell hits an element
carrying ``data-cell``; then, in one group that takes no pointer events, the holes, the
stones (``class="stone first"`` / ``"stone second"``), the marks of stones the last move
turned over (``"turned"``), the hint dots (``"hint"``), the last move's frame (``"last"``)
and the labels. Units are the style's pixels (``Style.cell`` per cell). The same input gives
the same string.
"""

from __future__ import annotations

from collections.abc import Iterable
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import RGB, Style
from boardgym.envs.render import (
    GRID_LINE_DIVISOR,
    HINT_COLOUR,
    HINT_RADIUS,
    HOLE,
    LAST_MOVE_COLOUR,
    LAST_MOVE_WIDTH_DIVISOR,
    MARK_HALF_WIDTH,
    MARK_REACH,
    PIECE_RADIUS,
    RING_HALF_WIDTH,
    RING_RADIUS,
    GameRef,
    first_player_planes,
)

SVG_NAMESPACE = "http://www.w3.org/2000/svg"
LABEL_MARGIN = 0.45
"""The band holding coordinate labels beside the board, in cell widths."""
LABEL_SIZE = 0.3
"""The font size of coordinate labels, in cell widths."""
CELL_NUMBER_SIZE, CELL_NUMBER_INSET = 0.22, 0.08
"""A ``"grid"`` board's faint cell numbers: font size, and inset from the cell's top left
corner, in cell widths."""
CELL_NUMBER_OPACITY = 0.4
LABEL_COLOUR = (60, 60, 60)
TURNED_RADIUS, TURNED_WIDTH = 0.15, 0.04
"""The mark on a stone the last move turned over: a ring's radius and width, in cell widths."""
DECIMALS = 2
"""Coordinates are written rounded to this many decimals (a deterministic string)."""
FONT = "sans-serif"


class Svg(str):
    """An SVG document; notebooks (IPython/Jupyter) display it as the picture: ``_repr_svg_``
    returns itself."""

    __slots__ = ()

    def _repr_svg_(self) -> str:
        """The document itself (what IPython shows as an SVG image)."""
        return str(self)


def _num(value: float) -> str:
    """``value`` as a short, deterministic SVG number."""
    return f"{round(float(value), DECIMALS):g}"


def _colour(rgb: RGB) -> str:
    """``(r, g, b)`` as ``#rrggbb``."""
    return "#" + "".join(f"{int(c):02x}" for c in rgb)


def _element(tag: str, **attributes: object) -> str:
    """An empty element; attribute names use ``_`` for ``-`` (``class_`` for ``class``),
    floats are rounded (``_num``)."""
    written = " ".join(f"{name.rstrip('_').replace('_', '-')}="
                       f"{quoteattr(_num(v) if isinstance(v, float) else str(v))}"
                       for name, v in attributes.items())
    return f"<{tag} {written}/>"


def _text(content: str, x: float, y: float, size: float, **attributes: object) -> str:
    """A text element centred on ``(x, y)``."""
    element = _element("text", x=float(x), y=float(y), font_size=float(size),
                       font_family=FONT, text_anchor="middle", dominant_baseline="central",
                       **attributes)
    return element[:-2] + f">{escape(content)}</text>"


class _Board:
    """Where things go on one board: the cell size, the label margins and the cell centres."""

    def __init__(self, style: Style, rows: int, cols: int, labels: bool) -> None:
        self.style, self.rows, self.cols, self.cell = style, rows, cols, float(style.cell)
        sides = LABEL_SIDES.get(style.text_frame)
        if sides is None:
            raise ValueError(f"unknown text_frame {style.text_frame!r} in the style; choose "
                             f"one of {', '.join(LABEL_SIDES)}")
        self.sides = sides if labels else ""
        margin = LABEL_MARGIN * self.cell
        self.left = margin if "l" in self.sides else 0.0
        self.top = margin if "t" in self.sides else 0.0
        self.width = self.left + cols * self.cell + (margin if "r" in self.sides else 0.0)
        self.height = self.top + rows * self.cell + (margin if "b" in self.sides else 0.0)

    def corner(self, index: int) -> tuple[float, float]:
        """The top left corner of cell ``index``."""
        row, col = divmod(index, self.cols)
        return self.left + col * self.cell, self.top + row * self.cell

    def centre(self, index: int) -> tuple[float, float]:
        """The centre of cell ``index``."""
        x, y = self.corner(index)
        return x + self.cell / 2, y + self.cell / 2


LABEL_SIDES: dict[str, str] = {"box": "tblr", "rack": "t", "grid": ""}
"""For each ``Style.text_frame``, the sides of the board with coordinate labels (``t``op,
``b``ottom, ``l``eft, ``r``ight), as the text board has them; ``"grid"`` numbers its empty
cells instead (``CELL_NUMBERED``)."""
CELL_NUMBERED = frozenset({"grid"})
"""The text frames whose drawing numbers the empty cells (1, 2, ... row by row)."""


def _cells(board: _Board) -> list[str]:
    """The cell squares, each carrying its ``data-cell`` index (the click targets). Each
    outlines itself in the grid colour ``cell / GRID_LINE_DIVISOR`` wide on its inner side,
    as the ``rgb_array`` cells are (the outline's outer half lies on the neighbour's)."""
    style, cell = board.style, board.cell
    return [_element("rect", class_="cell", data_cell=k, x=board.corner(k)[0],
                     y=board.corner(k)[1], width=cell, height=cell,
                     fill=_colour(style.background), stroke=_colour(style.grid),
                     stroke_width=2 * cell / GRID_LINE_DIVISOR)
            for k in range(board.rows * board.cols)]


def _circle(board: _Board, index: int, radius: float, **attributes: object) -> str:
    """A circle of ``radius`` cell widths on the centre of cell ``index``."""
    x, y = board.centre(index)
    return _element("circle", cx=x, cy=y, r=radius * board.cell, **attributes)


def _holes(board: _Board) -> list[str]:
    """A ``"token"`` panel's holes, one per cell."""
    if board.style.shape != "token":
        return []
    return [_circle(board, k, PIECE_RADIUS, class_="hole", fill=_colour(HOLE))
            for k in range(board.rows * board.cols)]


def _x_mark(board: _Board, index: int, colour: str) -> str:
    """An X: two strokes across the cell's centre."""
    x, y = board.centre(index)
    reach = MARK_REACH * board.cell
    path = (f"M{_num(x - reach)} {_num(y - reach)}L{_num(x + reach)} {_num(y + reach)}"
            f"M{_num(x - reach)} {_num(y + reach)}L{_num(x + reach)} {_num(y - reach)}")
    return _element("path", class_="stone first", d=path, fill="none", stroke=colour,
                    stroke_width=2 * MARK_HALF_WIDTH * board.cell, stroke_linecap="butt")


def _stone(board: _Board, index: int, player: int) -> str:
    """Player ``player``'s stone on cell ``index``, in the style's shape."""
    style = board.style
    colour = _colour(style.colours[player])
    side = STONE_CLASSES[player]
    if style.shape != "marks":
        return _circle(board, index, PIECE_RADIUS, class_=side, fill=colour)
    if player == 0:
        return _x_mark(board, index, colour)
    return _circle(board, index, RING_RADIUS, class_=side, fill="none", stroke=colour,
                   stroke_width=2 * RING_HALF_WIDTH * board.cell)


STONE_CLASSES = ("stone first", "stone second")


def _stones(board: _Board, codes: np.ndarray) -> list[str]:
    """Every stone of the board, row by row."""
    return [_stone(board, k, int(code) - 1) for k, code in enumerate(codes.flat) if code]


def _turned(board: _Board, cells: Iterable[int]) -> list[str]:
    """A small ring on each stone the last move turned over."""
    return [_circle(board, k, TURNED_RADIUS, class_="turned", fill="none",
                    stroke=_colour(LAST_MOVE_COLOUR), stroke_width=TURNED_WIDTH * board.cell)
            for k in cells]


def _hints(board: _Board, cells: Iterable[int]) -> list[str]:
    """A dot on each hinted cell."""
    return [_circle(board, k, HINT_RADIUS, class_="hint", fill=_colour(HINT_COLOUR))
            for k in cells]


def _last(board: _Board, last: int | None) -> list[str]:
    """The frame around the last move's cell (none without one)."""
    if last is None:
        return []
    cell = board.cell
    width = cell / LAST_MOVE_WIDTH_DIVISOR
    x, y = board.corner(last)
    return [_element("rect", class_="last", x=x + width / 2, y=y + width / 2,
                     width=cell - width, height=cell - width, fill="none",
                     stroke=_colour(LAST_MOVE_COLOUR), stroke_width=width)]


def column_labels(style: Style, cols: int) -> list[str]:
    """The columns' labels: the style's ``column_labels``, else 1, 2, ..."""
    if len(style.column_labels) >= cols:
        return list(style.column_labels[:cols])
    return [str(c + 1) for c in range(cols)]


def _rulers(board: _Board) -> list[str]:
    """The coordinate labels on the board's labelled sides."""
    cell, size, colour = board.cell, LABEL_SIZE * board.cell, _colour(LABEL_COLOUR)
    band = LABEL_MARGIN * cell / 2
    out: list[str] = []
    for c, label in enumerate(column_labels(board.style, board.cols)):
        x = board.left + (c + 0.5) * cell
        for side, y in (("t", band), ("b", board.height - band)):
            if side in board.sides:
                out.append(_text(label, x, y, size, class_="label", fill=colour))
    for r in range(board.rows):
        y = board.top + (r + 0.5) * cell
        for side, x in (("l", band), ("r", board.width - band)):
            if side in board.sides:
                out.append(_text(str(r + 1), x, y, size, class_="label", fill=colour))
    return out


def _cell_numbers(board: _Board, codes: np.ndarray, labels: bool) -> list[str]:
    """Faint cell numbers in the top left corner of the empty cells (``CELL_NUMBERED``)."""
    if not labels or board.style.text_frame not in CELL_NUMBERED:
        return []
    cell, inset = board.cell, CELL_NUMBER_INSET * board.cell
    size = CELL_NUMBER_SIZE * cell
    out = []
    for k, code in enumerate(codes.flat):
        if not code:
            x, y = board.corner(k)
            out.append(_text(str(k + 1), x + inset + size / 2, y + inset + size / 2, size,
                             class_="label", fill=_colour(LABEL_COLOUR),
                             opacity=_num(CELL_NUMBER_OPACITY)))
    return out


def _checked_cells(what: str, cells: Iterable[int], n: int) -> list[int]:
    """``cells`` as ints, sorted and without repeats.

    Raises:
        ValueError: a cell outside ``[0, n)``.
    """
    out = sorted({int(k) for k in cells})
    bad = [k for k in out if not 0 <= k < n]
    if bad:
        raise ValueError(f"{what} cell {bad[0]} is off the board; cells are 0..{n - 1} "
                         "(row * cols + col)")
    return out


def _codes(board: np.ndarray) -> np.ndarray:
    """``(rows, cols)`` codes 0 empty, 1 first player, 2 second player.

    Raises:
        ValueError: ``board`` is not planes ``(2, rows, cols)``.
    """
    planes = np.asarray(board)
    if planes.ndim != 3 or planes.shape[0] != 2:
        raise ValueError(f"board must be first-player planes (2, rows, cols), got shape "
                         f"{planes.shape}; build them with render.first_player_planes")
    return (planes[0] != 0).astype(np.uint8) + 2 * (planes[1] != 0).astype(np.uint8)


def board_svg(game: GameRef, board: np.ndarray, *, last: int | None = None,
              hints: Iterable[int] = (), labels: bool = True,
              turned: Iterable[int] = ()) -> Svg:
    """The board drawn as an SVG document, in the game's ``Style``.

    Args:
        game: the game (name, alias or ``Game`` record).
        board: first-player planes ``(2, rows, cols)`` uint8, as
            ``render.first_player_planes`` builds them.
        last: the cell (``row * cols + col``) of the last move: framed (``class="last"``).
        hints: cells of legal moves: a small dot each (``class="hint"``).
        labels: the board's coordinate labels around it, or its faint cell numbers (as the
            style's ``text_frame`` says; see the module docstring).
        turned: cells of the stones the last move turned over: a small ring each
            (``class="turned"``).

    Every cell is a ``<rect class="cell" data-cell="K">`` under everything else, which takes
    no pointer events, so a click anywhere on a cell's square hits its rect. The root
    ``<svg>`` has a ``viewBox``, ``width``/``height`` (the style's pixels), ``role="img"``,
    an ``aria-label`` and a ``<title>`` naming the game. Stones are ``class="stone first"``
    and ``"stone second"``, one element each. Deterministic: the same input gives the same
    string.

    Raises:
        ValueError: ``board`` is not ``(2, rows, cols)`` planes, a cell is off the board, or
            the style's ``text_frame`` is unknown.
    """
    record = game_record(game)
    codes = _codes(board)
    rows, cols = codes.shape
    layout = _Board(record.style, rows, cols, labels)
    n = codes.size
    marked = _checked_cells("last", [] if last is None else [last], n)
    top = [*_holes(layout), *_stones(layout, codes),
           *_turned(layout, _checked_cells("turned", turned, n)),
           *_hints(layout, _checked_cells("hint", hints, n)),
           *_last(layout, marked[0] if marked else None),
           *_rulers(layout), *_cell_numbers(layout, codes, labels)]
    name = f"{record.title} board"
    width, height = _num(layout.width), _num(layout.height)
    head = (f'<svg xmlns="{SVG_NAMESPACE}" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label={quoteattr(name)}>'
            f"<title>{escape(name)}</title>")
    return Svg(head + "".join(_cells(layout)) + '<g pointer-events="none">' + "".join(top)
               + "</g></svg>")


def move_cell(game: GameRef, state: object, action: int) -> int:
    """The board cell (``row * cols + col``) that legal ``action`` fills in ``state``: the
    one cell empty before and occupied after ``rules.apply`` (four-in-a-row: the landing
    cell of the column).

    Raises:
        IllegalMoveError: ``action`` is not legal in ``state``.
        ValueError: the move fills no cell.
    """
    rules = game_record(game).rules
    before = first_player_planes(rules, state).any(axis=0)
    after = first_player_planes(rules, rules.apply(state, action)).any(axis=0)
    filled = np.flatnonzero(after & ~before)
    if not filled.size:
        raise ValueError(f"action {action} fills no cell of the board")
    return int(filled[0])


def turned_cells(game: GameRef, previous: object, state: object) -> list[int]:
    """The cells whose stone changed sides between ``previous`` and ``state`` (Reversi's
    flips; none in games where stones stay)."""
    rules = game_record(game).rules
    before = first_player_planes(rules, previous) != 0
    after = first_player_planes(rules, state) != 0
    changed = before.any(axis=0) & (before != after).any(axis=0)
    return np.flatnonzero(changed).tolist()


def state_svg(game: GameRef, state: object, *, last_action: int | None = None,
              previous: object = None, hints: bool = False, labels: bool = True) -> Svg:
    """The rules state ``state`` drawn (``board_svg`` of its first-player planes).

    Args:
        game: the game (name, alias or ``Game`` record).
        state: a rules state of the game.
        last_action: the move that led to ``state``, played in ``previous`` (the state
            before it): its cell is framed and the stones it turned over are marked.
        previous: the state before ``last_action``.
        hints: mark the cells of the side to move's legal moves (none once the game is over).
        labels: the coordinate labels (see ``board_svg``).

    Raises:
        ValueError: only one of ``last_action`` and ``previous`` given (give both or
            neither), or ``last_action`` is illegal in ``previous``.
    """
    record = game_record(game)
    rules = record.rules
    if (last_action is None) != (previous is None):
        raise ValueError("state_svg marks the last move from last_action and previous (the "
                         "state before it): give both or neither")
    last, turned = None, []
    if last_action is not None:
        last = move_cell(record, previous, last_action)
        turned = turned_cells(record, previous, state)
    cells = []
    if hints and not rules.is_terminal(state):
        cells = [move_cell(record, state, int(a)) for a in np.flatnonzero(rules.legal_mask(state))]
    return board_svg(record, first_player_planes(rules, state), last=last, hints=cells,
                     labels=labels, turned=turned)


__all__ = ["LABEL_SIDES", "Svg", "board_svg", "column_labels", "move_cell", "state_svg",
           "turned_cells"]
