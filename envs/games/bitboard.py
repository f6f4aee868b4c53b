"""Bit helpers shared by every game, written once for Python ints and numpy uint64 arrays.

A *bitboard* is a set of board cells stored as the bits of an integer. The rules of each game
are written against the small set of operators that Python ints and ``np.uint64`` arrays
share (``& | ^ << >>``, comparisons), so one function serves the fast single env (ints) and
the batched vector env (arrays of shape ``(N,)``). The helpers here cover the few places
where the two kinds differ: counting bits, choosing between two values, and unpacking bits
into cell planes.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

FULL64 = 0xFFFF_FFFF_FFFF_FFFF
"""All 64 bits set. Use ``FULL64 ^ x`` for complement: ``~x`` is negative on Python ints."""

Bits = int | np.ndarray
"""A bitboard: a Python int (one game) or a ``uint64`` array (a batch of games)."""

T = TypeVar("T")
BYTE_BITS = 8
WORD_BITS = 64
WORD_BYTES = WORD_BITS // BYTE_BITS
_POSITIONS = np.arange(WORD_BITS)
MEMO_CELLS = 12
"""Boards of at most this many cells keep their single-game arrays (masks, planes) by
position: at most ``2 ** (2 * MEMO_CELLS)`` small entries, far fewer in practice."""


state_from_fields = tuple.__new__
"""``state_from_fields(State, fields)``: a NamedTuple ``State`` from the tuple of its fields,
without the NamedTuple's Python-level ``__new__`` (the rules build a state once or twice per
ply)."""


def popcount(bits: Bits) -> Bits:
    """Number of set bits, elementwise for arrays."""
    if isinstance(bits, np.ndarray):
        return np.bitwise_count(bits).astype(np.int64)
    return bits.bit_count()


def _set_bits_table(width: int) -> tuple[tuple[int, ...], ...]:
    """The positions of the set bits of every value below ``2 ** width``, lowest first."""
    table: tuple[tuple[int, ...], ...] = ((),)
    for bit in range(width):  # the values with bit ``bit`` set follow those below it
        table += tuple((*positions, bit) for positions in table)
    return table


_SET_BITS = _set_bits_table(MEMO_CELLS)


def nth_set_bit(bits: Bits, k: Any) -> Any:
    """The position of the ``k``-th lowest set bit of ``bits`` (``k`` from 0, below the bit
    count), e.g. the ``k``-th legal action of a legal-action bitboard; elementwise for a
    ``uint64`` array and an int array ``k`` (there a word 0 with ``k`` 0 gives 0; where ``k``
    is otherwise not below the bit count the result is some position in 0..63)."""
    if isinstance(bits, np.ndarray):
        return _nth_set_bit_array(bits, k)
    if bits < len(_SET_BITS):
        return _SET_BITS[bits][k]
    for _ in range(k):
        bits &= bits - 1  # drop the lowest set bit
    return (bits & -bits).bit_length() - 1


_SMALL_SELECT = np.array([positions + (0,) * (MEMO_CELLS - len(positions))
                          for positions in _SET_BITS], dtype=np.int64).reshape(-1)
"""At ``value * MEMO_CELLS + k``: ``_SET_BITS[value][k]`` (0 past the set bits)."""
_EVERY_BYTE = np.uint64(0x0101_0101_0101_0101)
"""1 in every byte: multiplying byte counts by it gives their running (prefix) sums."""
_HIGH_BITS = np.uint64(0x8080_8080_8080_8080)
"""The top bit of every byte (the per-byte comparison flags of the SWAR steps below)."""
_LOG2_BYTE_BITS = np.uint64(3)
_LAST_BYTE = np.uint64(WORD_BYTES - 1)
_U8 = np.uint64(BYTE_BITS)
_BYTE_MASK64 = np.uint64((1 << BYTE_BITS) - 1)
_ROW = np.uint64(MEMO_CELLS)


def _nth_set_bit_array(bits: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``nth_set_bit`` of a ``uint64`` array. Words below ``2 ** MEMO_CELLS`` (the legal
    actions of small boards): one lookup in ``_SMALL_SELECT``. Others: per word the byte
    holding the bit (from per-byte prefix counts in one word), then ``_SMALL_SELECT`` for
    the bit inside that byte."""
    words = np.ascontiguousarray(bits, dtype=np.uint64)
    rank = np.asarray(k).astype(np.uint64, copy=False)
    if words.size and words.max() < len(_SET_BITS):
        return _SMALL_SELECT.take(words * _ROW + rank, mode="clip")
    byte_counts = np.bitwise_count(words.view(np.uint8)).view(np.uint64).reshape(words.shape)
    through = byte_counts * _EVERY_BYTE  # byte j: set bits in bytes 0..j
    # bytes whose running count is <= rank lie wholly below the wanted bit; count them
    at_most = ((rank * _EVERY_BYTE) | _HIGH_BITS) - through
    byte = np.bitwise_count(at_most & _HIGH_BITS).astype(np.uint64) & _LAST_BYTE
    shift = byte << _LOG2_BYTE_BITS
    before = ((through << _U8) >> shift) & _BYTE_MASK64
    octet = (words >> shift) & _BYTE_MASK64
    rank_in_octet = (rank - before) & _LAST_BYTE
    inside = _SMALL_SELECT.take((octet * _ROW + rank_in_octet).astype(np.intp))
    return shift.astype(np.int64) + inside


HALF_WORD = np.uint64(WORD_BITS // 2)
EXACT_FLOAT_BITS = 52
FLOAT_WEIGHTS = 2.0 ** np.arange(EXACT_FLOAT_BITS)
"""``2 ** a`` as float64: a bool mask times these sums to its bits exactly."""
GATHER_LOW_BITS = np.uint64(0x0102_0408_1020_4080)
"""Multiplier moving bit 0 of byte ``k`` of a word to bit ``56 + k`` (no carries collide)."""
TOP_BYTE = np.uint64(WORD_BITS - BYTE_BITS)


def bits_from_mask(mask: np.ndarray) -> np.ndarray:
    """``(N, A)`` bool mask (A <= 64) -> ``(N,)`` uint64 with bit ``a`` set where ``mask[:, a]``."""
    n, width = mask.shape
    if width <= EXACT_FLOAT_BITS:  # a sum of distinct powers of two below 2**53 is exact
        return (mask @ FLOAT_WEIGHTS[:width]).astype(np.uint64)
    octets = np.zeros((n, WORD_BITS), dtype=np.uint8)
    octets[:, :width] = mask
    # each uint64 holds 8 mask bytes of 0/1; one multiply packs them into its top byte
    packed = (octets.view(np.uint64) * GATHER_LOW_BITS) >> TOP_BYTE
    return packed.astype(np.uint8).view(np.uint64).reshape(n)


WORD64_GENERATORS = (np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64)
"""Bit generators whose raw words are uniform 64-bit words."""


def random_draws(rng: np.random.Generator, n: int | None = None) -> Bits:
    """Uniform 64-bit words from ``rng``, the draws ``choose`` takes: ``n`` of them as a
    ``uint64`` array, or one Python int when ``n`` is None (the bit generator's next raw
    word where the bit generator makes 64-bit words: ~20x cheaper than ``rng.integers`` for
    one draw; MT19937's raw words have 32 bits, so it draws through ``rng.integers``)."""
    if n is None:
        if isinstance(rng.bit_generator, WORD64_GENERATORS):
            return int(rng.bit_generator.random_raw())
        return int(rng.integers(0, 2 ** WORD_BITS, dtype=np.uint64))
    return rng.integers(0, 2 ** WORD_BITS, size=n, dtype=np.uint64)


def choose(candidates: Bits, draws: Bits) -> Bits:
    """One action per game, uniformly among its candidate bits: with ``c`` candidates and a
    uniform 64-bit draw, the one of rank ``c * (draw >> 32) >> 32`` (from the lowest bit;
    each of the ``c`` ranks gets ``2**32 / c`` of the draws, rounded down or up).
    Elementwise for ``uint64`` arrays; one int for a Python int (one game).

    Games without candidates (finished games) get action 0.
    """
    counts: Any
    half: Any
    if isinstance(candidates, np.ndarray):  # uint8 counts: the products stay exact uint64
        counts, half = np.bitwise_count(candidates), HALF_WORD
    elif candidates:
        counts, half = candidates.bit_count(), WORD_BITS // 2
    else:
        return 0
    rank = ((draws >> half) * counts) >> half  # below counts
    return nth_set_bit(candidates, rank)  # a word 0 of an array: rank 0, action 0


def select(cond: bool | np.ndarray, if_true: T, if_false: T) -> T:
    """``if_true`` where ``cond`` holds else ``if_false``; elementwise when ``cond`` is an array."""
    if isinstance(cond, np.ndarray):
        result: Any = np.where(cond, if_true, if_false)  # type: ignore[call-overload]
        return result  # type: ignore[no-any-return]
    return if_true if cond else if_false


BYTE_VALUES = 1 << BYTE_BITS
BYTE_MASK = BYTE_VALUES - 1


def _byte_tables(positions: np.ndarray, n_bytes: int) -> np.ndarray:
    """``(n_bytes, 256)`` uint64: entry ``[k, v]`` has bit ``i`` set when byte ``k`` of a word
    equals ``v`` and ``positions[i]`` is one of that byte's set bits.

    OR-ing the entries of a word's bytes moves its bits at ``positions`` to bits 0, 1, ...
    """
    values = np.arange(BYTE_VALUES, dtype=np.uint64)
    tables = np.zeros((n_bytes, BYTE_VALUES), dtype=np.uint64)
    for index, position in enumerate(positions.tolist()):
        byte, bit = divmod(position, BYTE_BITS)
        tables[byte] |= ((values >> np.uint64(bit)) & np.uint64(1)) << np.uint64(index)
    return tables


def _spaced_multiplier(cells: list[int]) -> tuple[int, int] | None:
    """``(multiplier, shift)`` such that ``((x & cells) * multiplier >> shift)`` holds the bits
    of ``x`` at ``cells`` in bits 0, 1, ... (and garbage above them), when ``cells`` are evenly
    spaced, ascending, and no two partial products meet (so nothing carries into the result);
    else None.

    Cell ``k`` at ``first + k * step`` is moved by ``(n - 1 - k) * (step - 1)``: each lands on
    ``first + (n - 1) * (step - 1) + k``. The other partial products must fall outside those
    ``n`` bits and on distinct bits (those past bit 63 drop out of a ``uint64`` harmlessly).
    """
    n = len(cells)
    if n < 2:
        return None
    first, step = cells[0], cells[1] - cells[0]
    if step < 2 or cells != list(range(first, first + n * step, step)):
        return None
    moves = [(n - 1 - k) * (step - 1) for k in range(n)]
    shift = first + moves[0]
    landed = [cell + move for cell in cells for move in moves]
    inside = sum(shift <= bit < shift + n for bit in landed)  # n: the wanted products only
    if len(set(landed)) != len(landed) or inside != n or shift + n > WORD_BITS:
        return None
    return sum(1 << move for move in moves), shift


class _CellPlan:
    """How to read the bit positions ``cells`` out of words, worked out once."""

    def __init__(self, cells: np.ndarray) -> None:
        self.cells = cells  # held, so the id this plan is filed under stays unique
        self.used_bytes = int(cells.max()) // BYTE_BITS + 1 if cells.size else 1
        flat = cells.reshape(-1)
        self.count = flat.size
        self.is_prefix = bool(np.array_equal(flat, _POSITIONS[:flat.size]))
        self.tables = None if self.is_prefix or flat.size > WORD_BITS else \
            _byte_tables(flat, self.used_bytes)
        """Byte tables gathering the cells into bits 0.. (None when they are there already)."""

        self.int_tables = None if self.tables is None else \
            [[int(v) for v in table] for table in self.tables]
        """The same tables as lists of Python ints (single games)."""
        self.low_cells = (1 << self.count) - 1
        self.spaced = None if self.is_prefix else _spaced_multiplier(flat.tolist())
        """``(multiplier, shift)`` of evenly spaced cells (see ``_spaced_multiplier``)."""
        self.cell_mask = sum(1 << int(cell) for cell in set(flat.tolist()))
        self.small = self.count <= MEMO_CELLS
        self.gathered: dict[int, int] | None = \
            {} if self.int_tables is not None and self.small else None
        """``gather_int`` results by the bits at the cells, for small boards."""
        self._rows: np.ndarray | None = None
        self._row_views: tuple[np.ndarray, ...] | None = None
        """``value_rows()`` row by row (indexing a tuple is cheaper for one game)."""
        self.shapes = (cells.shape, (2, *cells.shape))
        self.pair_memo: dict[int, np.ndarray] | None = {} if self.small else None
        """Small boards: read-only two-plane arrays of single games by their cell bits."""

    def gather(self, words: np.ndarray) -> np.ndarray:
        """``words`` with the bits at ``cells`` moved to bits 0, 1, ... in ``cells`` order."""
        assert self.tables is not None
        octets = words.view(np.uint8).reshape((*words.shape, WORD_BYTES))
        result = self.tables[0].take(octets[..., 0])
        for k in range(1, self.used_bytes):
            result |= self.tables[k].take(octets[..., k])
        return result

    def gather_int(self, value: int) -> int:
        """``gather`` of one Python int."""
        assert self.int_tables is not None
        memo = self.gathered
        if memo is not None:
            value &= self.cell_mask
            found = memo.get(value)
            if found is not None:
                return found
        key, result = value, 0
        for table in self.int_tables:
            result |= table[value & BYTE_MASK]
            value >>= BYTE_BITS
        if memo is not None:
            memo[key] = result
        return result

    def int_planes(self, me: int, opp: int | None = None) -> np.ndarray:
        """A fresh uint8 array of one game: the cells of ``me`` (shaped as the cells) or,
        with ``opp``, both planes ``(2, *shape)``; memoized as read-only arrays on small
        boards. Only for plans whose cells are a prefix or can be gathered."""
        low = self.low_cells
        if opp is None:
            cells, planes = self.gather_int(me) if self.int_tables else me & low, 1
        elif self.int_tables:
            cells, planes = self.gather_int(me) | self.gather_int(opp) << self.count, 2
        else:
            cells, planes = (me & low) | (opp & low) << self.count, 2
        if planes == 1 and self.small:
            if self._row_views is None:
                self._row_views = tuple(self.value_rows())
            return self._row_views[cells].copy()
        memo = self.pair_memo if planes == 2 else None
        if memo is not None:
            found = memo.get(cells)
            if found is not None:
                return found.copy()
        array = _bits_array(cells, self.count * planes, self.shapes[planes - 1])
        if memo is None:
            return array
        array.flags.writeable = False
        memo[cells] = array
        return array.copy()

    def value_rows(self) -> np.ndarray:
        """Small boards: row ``v`` holds the uint8 cells of the gathered value ``v``, for every
        ``v`` below ``2 ** count`` (built on first use; one ``take`` unpacks a batch)."""
        if self._rows is None:
            values = np.arange(1 << self.count, dtype=np.uint64).reshape(-1, 1).view(np.uint8)
            flat = np.unpackbits(values, axis=-1, count=self.count, bitorder="little")
            self._rows = flat.reshape((-1, *self.cells.shape))
            self._rows.flags.writeable = False
        return self._rows


_PLANS: dict[int, _CellPlan] = {}
_MAX_PLANS = 256


def _plan(cells: np.ndarray) -> _CellPlan:
    """The cached ``_CellPlan`` of ``cells`` (board maps are module or geometry constants)."""
    plan = _PLANS.get(id(cells))
    if plan is None or plan.cells is not cells:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        plan = _PLANS[id(cells)] = _CellPlan(cells)
    return plan


_BIT_BYTES = bytes.maketrans(b"01", b"\x00\x01")
"""Translates the digits of ``bin`` into bytes 0 and 1."""


def _bits_array(value: int, count: int, shape: tuple[int, ...]) -> np.ndarray:
    """The low ``count`` bits of ``value`` as a fresh uint8 0/1 array of ``shape``, bit 0
    first (``bin`` of ``value`` with a marker bit above them, read backwards)."""
    digits = bin(value & ((1 << count) - 1) | 1 << count).encode()[:2:-1]
    return np.ndarray(shape, np.uint8, bytearray(digits.translate(_BIT_BYTES)))


def _int_cells(value: int, plan: _CellPlan) -> np.ndarray:
    """The bits of one Python int at ``plan``'s cells, as a fresh uint8 array of its shape."""
    if plan.is_prefix or plan.int_tables is not None:
        return plan.int_planes(value)
    # more than 64 cells (some repeat): read them one by one
    return np.array([(value >> cell) & 1 for cell in plan.cells.reshape(-1).tolist()],
                    dtype=np.uint8).reshape(plan.cells.shape)


def compress(bits: Bits, cells: np.ndarray) -> Bits:
    """The bits at positions ``cells`` (at most 64, in flattened order) moved to bits 0, 1, ...

    E.g. the top cells of the columns of a board, as one bit per column.
    """
    plan = _plan(cells)
    if plan.is_prefix:
        return bits & ((1 << plan.count) - 1) if isinstance(bits, int) else \
            bits & np.uint64((1 << plan.count) - 1)
    if plan.spaced is not None:
        multiplier, shift = plan.spaced
        if isinstance(bits, int):
            return ((bits & plan.cell_mask) * multiplier >> shift) & plan.low_cells
        moved = (bits & np.uint64(plan.cell_mask)) * np.uint64(multiplier)  # wraps mod 2**64
        return (moved >> np.uint64(shift)) & np.uint64(plan.low_cells)
    if isinstance(bits, int):
        return plan.gather_int(bits)
    return plan.gather(np.ascontiguousarray(bits, dtype="<u8"))


def unpack(bits: Bits, cells: np.ndarray) -> np.ndarray:
    """The bits at positions ``cells`` as a uint8 0/1 array.

    Args:
        bits: one bitboard (int) or a ``(...)`` array of them.
        cells: integer array of bit positions (any shape), e.g. a ``(rows, cols)`` board map.

    Returns:
        ``bits.shape + cells.shape`` uint8 array: 1 where the bit at that position is set.
    """
    if isinstance(bits, int):
        plan = _PLANS.get(id(cells))
        if plan is None or plan.cells is not cells:
            plan = _plan(cells)
        return plan.int_planes(bits) if plan.is_prefix or plan.int_tables else \
            _int_cells(bits, plan)
    plan = _plan(cells)
    words = np.ascontiguousarray(bits, dtype="<u8")
    shape = words.shape
    if plan.tables is None and not plan.is_prefix:
        flat = np.unpackbits(words.reshape((*shape, 1)).view(np.uint8), axis=-1,
                             bitorder="little")
        return np.take(flat, cells, axis=-1)
    if plan.tables is not None:
        words = plan.gather(words)
    if plan.small:
        return plan.value_rows().take((words & np.uint64(plan.low_cells)).astype(np.intp), axis=0)
    octets = words.reshape((*shape, 1)).view(np.uint8)
    flat = np.unpackbits(octets, axis=-1, count=plan.count, bitorder="little")
    return flat.reshape(shape + cells.shape)


def pack(values: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """The inverse of ``unpack`` for arrays: ``(..., *cells.shape)`` 0/1 values as uint64 words
    (shape ``(...)``) with the bit at position ``cells[i]`` set where value ``i`` is 1."""
    values = np.asarray(values)
    flat = values.astype(np.uint64).reshape(*values.shape[:values.ndim - cells.ndim], cells.size)
    return np.bitwise_or.reduce(flat << cells.reshape(-1).astype(np.uint64), axis=-1)


def planes(me: Bits, opp: Bits, cells: np.ndarray) -> np.ndarray:
    """Two uint8 planes, ``me`` then ``opp``, on the board map ``cells``.

    Returns ``(2, *cells.shape)`` for ints and ``(N, 2, *cells.shape)`` for ``(N,)`` arrays
    (C-contiguous either way).
    """
    if isinstance(me, int) and isinstance(opp, int):
        plan = _PLANS.get(id(cells))
        if plan is None or plan.cells is not cells:
            plan = _plan(cells)
        if plan.is_prefix or plan.int_tables:
            return plan.int_planes(me, opp)
        return np.stack((_int_cells(me, plan), _int_cells(opp, plan)))
    pair = np.stack((np.asarray(me, dtype=np.uint64), np.asarray(opp, dtype=np.uint64)), axis=-1)
    return unpack(pair, cells)


DE_BRUIJN = np.uint64(0x03F7_9D71_B4CB_0A89)
"""A de Bruijn sequence B(2, 6): the top 6 bits of ``(1 << b) * DE_BRUIJN`` differ for each
``b`` in 0..63."""
SLOT_SHIFT = np.uint64(WORD_BITS - 6)


def single_bit_slot(words: np.ndarray) -> np.ndarray:
    """For words with at most one bit set: a slot in ``0..63`` (intp) that differs for each
    bit position, so a 64-entry table indexed by it maps a single-bit word to anything about
    its bit (the top 6 bits of a de Bruijn product). A word 0 gets the slot of bit 0."""
    return ((words * DE_BRUIJN) >> SLOT_SHIFT).astype(np.intp)


def bit_of(index: int | np.ndarray) -> Bits:
    """The bitboard with only bit ``index`` set (elementwise for an int array)."""
    if isinstance(index, np.ndarray):
        return np.left_shift(np.uint64(1), index.astype(np.uint64))
    return 1 << int(index)
