"""Where an n-tuple network's tuples lie: boards, their symmetries, and named layouts.

Cells are numbered row-major from the top left (``row * columns + column``), as the
observation planes and Reversi's and tic-tac-toe's actions number them. A ``Board`` maps each
cell to its bit in the game's bitboard and lists the board's symmetries as cell
permutations; ``images`` turns a tuple into its symmetric images (as bit positions), which
share the tuple's lookup table.

A layout is named in a trainer's config: ``NAME`` for a game's own fixed layout (Reversi
``edax``, four-in-a-row ``thill70``, tic-tac-toe ``board`` and ``lines``), or
``snakes:N:L:SEED``, ``N`` random walks of ``L`` cells over neighbouring cells (any game).
The file of a trained network keeps the tuples themselves, so it never depends on a name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Tuples = list[list[int]]
"""A layout: each tuple's cells."""
MAX_TUPLE = 12
"""The longest tuple a layout may have (3**12 entries a table)."""
MAX_TUPLES = 1000
"""The most tuples a layout may have."""
NEIGHBOURS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]


@dataclass(frozen=True)
class Board:
    """A board as the n-tuple networks see it.

    Attributes:
        rows: rows of cells.
        columns: columns of cells.
        bits: each cell's bit in the game's bitboard words.
        symmetry: ``"d4"`` (the 8 rotations and reflections of a square board) or
            ``"mirror"`` (the left-right reflection).
    """

    rows: int
    columns: int
    bits: tuple[int, ...]
    symmetry: str

    @property
    def cells(self) -> int:
        """The number of cells."""
        return self.rows * self.columns

    def symmetries(self) -> list[tuple[int, ...]]:
        """Each symmetry as a cell permutation (``perm[cell]`` is the cell's image); the
        identity first."""
        maps: list[Callable[[int, int], tuple[int, int]]] = [lambda r, c: (r, c)]
        last_row, last_column = self.rows - 1, self.columns - 1
        maps.append(lambda r, c: (r, last_column - c))
        if self.symmetry == "d4":
            maps += [lambda r, c: (last_row - r, c), lambda r, c: (last_row - r, last_column - c),
                     lambda r, c: (c, r), lambda r, c: (last_column - c, r),
                     lambda r, c: (c, last_row - r), lambda r, c: (last_column - c, last_row - r)]
        return [tuple(self._cell(*mapped(*divmod(cell, self.columns)))
                      for cell in range(self.cells)) for mapped in maps]

    def _cell(self, row: int, column: int) -> int:
        return row * self.columns + column

    def images(self, cells: Sequence[int]) -> list[list[int]]:
        """The distinct symmetric images of a tuple, as bit positions, each in the order of
        ``cells`` (so they read one table); images equal in that order are kept once."""
        seen: set[tuple[int, ...]] = set()
        out = []
        for perm in self.symmetries():
            image = tuple(self.bits[perm[cell]] for cell in cells)
            if image not in seen:
                seen.add(image)
                out.append(list(image))
        return out

    def snakes(self, count: int, length: int, seed: int) -> Tuples:
        """``count`` random walks of ``length`` distinct neighbouring cells (8 directions),
        from seeded uniform starts; a walk that runs into itself starts again."""
        rng = np.random.default_rng([seed, count, length])
        tuples: Tuples = []
        while len(tuples) < count:
            walk = [int(rng.integers(self.cells))]
            while len(walk) < length:
                row, column = divmod(walk[-1], self.columns)
                steps = [self._cell(row + dr, column + dc) for dr, dc in NEIGHBOURS
                         if 0 <= row + dr < self.rows and 0 <= column + dc < self.columns
                         and self._cell(row + dr, column + dc) not in walk]
                if not steps:
                    break
                walk.append(steps[int(rng.integers(len(steps)))])
            if len(walk) == length:
                tuples.append(walk)
        return tuples


def squares(names: str, columns: int = 8) -> list[int]:
    """Cells of square names (``"a1 b2"``: column letter, row number from the top)."""
    return [(int(name[1:]) - 1) * columns + "abcdefghijkl".index(name[0]) for name in names.split()]


def parse_layout(text: str, board: Board, named: dict[str, Callable[[Board], Tuples]]) -> Tuples:
    """The tuples of the layout ``text`` on ``board``: one of ``named`` or
    ``snakes:N:L:SEED``.

    Raises:
        ValueError: an unknown name, a malformed ``snakes`` spec, or a layout outside the
            caps (``MAX_TUPLES`` tuples of at most ``MAX_TUPLE`` cells).
    """
    if text in named:
        return check_tuples(named[text](board), board)
    name, _, rest = text.partition(":")
    parts = rest.split(":")
    if name == "snakes" and len(parts) == 3 and all(part.isdecimal() for part in parts):
        count, length, seed = (int(part) for part in parts)
        if not (1 <= count <= MAX_TUPLES and 1 <= length <= min(MAX_TUPLE, board.cells)):
            raise ValueError(f"layout {text!r}: snakes:N:L:SEED needs 1 <= N <= {MAX_TUPLES} "
                             f"and 1 <= L <= {min(MAX_TUPLE, board.cells)}")
        return board.snakes(count, length, seed)
    raise ValueError(f"unknown layout {text!r}; use one of {sorted(named)} or snakes:N:L:SEED "
                     "(e.g. snakes:100:6:0)")


def check_tuples(tuples: Tuples, board: Board) -> Tuples:
    """``tuples`` if they fit ``board`` and the caps.

    Raises:
        ValueError: no tuple, too many, one too long or empty, a cell off the board or
            repeated within a tuple.
    """
    if not 1 <= len(tuples) <= MAX_TUPLES:
        raise ValueError(f"a layout has 1 to {MAX_TUPLES} tuples, not {len(tuples)}")
    for cells in tuples:
        if not isinstance(cells, list) or not all(
                isinstance(cell, int) and not isinstance(cell, bool) for cell in cells):
            raise ValueError(f"a tuple is a list of cell numbers, not {cells!r}")
        if not 1 <= len(cells) <= MAX_TUPLE or len(set(cells)) != len(cells) \
                or not all(0 <= cell < board.cells for cell in cells):
            raise ValueError(f"tuple {cells} does not fit a {board.rows}x{board.columns} board: "
                             f"1 to {MAX_TUPLE} distinct cells in 0..{board.cells - 1}")
    return tuples
