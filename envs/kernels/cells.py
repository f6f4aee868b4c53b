"""The byte writer the small boards' env kernels share: bits of each sub-env, one byte a cell,
into a fresh output array.

A step's observations and masks are ``uint8`` / ``bool`` arrays of one byte a cell (0 or 1),
sub-env after sub-env. A kernel appends each sub-env's cells as bits (``put``; bit ``k`` is
the next cell ``k``), and the writer turns every eight of them into one 64-bit word of eight
bytes (``SPREAD``), written into the output seen as words; the last ``size % 8`` cells go in
byte by byte (``finish``). Rows of a sub-env need not start on a word: four-in-a-row's 84
cells of the default board, tic-tac-toe's 18, all run on from the sub-env before.

A writer's state is ``(pending, count, at)``: the cells not yet written (``count`` < 8 of
them, in the low bits of ``pending``) and the index of the next word.
"""

from __future__ import annotations

import numpy as np
from numba import njit

BYTE_BITS = 8
BYTE = np.uint64(0xFF)
HALF = 32
"""``put_wide`` appends more than ``MAX_PUT`` bits as two halves of this many and the rest."""
MAX_PUT = 56
"""The most bits one ``put`` appends (with up to 7 pending, they fit a word)."""
SPREAD = np.array([sum(((value >> k) & 1) << (BYTE_BITS * k) for k in range(BYTE_BITS))
                   for value in range(256)], dtype=np.uint64)
"""By byte value ``v``: the little-endian word whose byte ``k`` is bit ``k`` of ``v`` (0 or
1): eight cells at once."""


@njit(cache=True, inline="always")
def words_of(cells: np.ndarray) -> np.ndarray:
    """The whole words of the flat byte array ``cells`` (its first ``size // 8 * 8`` bytes
    seen as ``uint64``), what ``put`` writes into."""
    return cells[:cells.shape[0] // BYTE_BITS * BYTE_BITS].view(np.uint64)


@njit(cache=True, inline="always")
def put(words: np.ndarray, pending: np.uint64, count: int, at: int, bits: np.uint64,
        width: int) -> tuple[np.uint64, int, int]:
    """The writer's state after appending the ``width`` (<= ``MAX_PUT``) low bits of ``bits``
    (nothing above them set): each full eight cells written as the word ``words[at]``.

    Branch-free for a given ``width``: it writes every word the append may complete, the
    last ones possibly partial (the next appends write them again), none past the end.
    """
    pending |= np.uint64(bits) << np.uint64(count)
    count += width
    for k in range((BYTE_BITS - 1 + width) // BYTE_BITS):
        if at + k < words.shape[0]:
            words[at + k] = SPREAD[(pending >> np.uint64(BYTE_BITS * k)) & BYTE]
    full = count // BYTE_BITS
    return pending >> np.uint64(BYTE_BITS * full), count - BYTE_BITS * full, at + full


@njit(cache=True, inline="always")
def put_wide(words: np.ndarray, pending: np.uint64, count: int, at: int, bits: np.uint64,
             width: int) -> tuple[np.uint64, int, int]:
    """``put`` of up to 64 bits (``width`` > ``MAX_PUT`` in two pieces)."""
    if width <= MAX_PUT:
        return put(words, pending, count, at, bits, width)
    low = np.uint64(bits) & np.uint64((1 << HALF) - 1)
    pending, count, at = put(words, pending, count, at, low, HALF)
    return put(words, pending, count, at, np.uint64(bits) >> np.uint64(HALF), width - HALF)


@njit(cache=True, inline="always")
def finish(cells: np.ndarray, pending: np.uint64, count: int, at: int) -> None:
    """Write the ``count`` pending cells into the bytes after word ``at`` of ``cells`` (the
    flat array ``words`` is part of): the end of the output."""
    start = at * BYTE_BITS
    for k in range(count):
        cells[start + k] = np.uint8((pending >> np.uint64(k)) & np.uint64(1))


@njit(cache=True, inline="always")
def copy_into(target: np.ndarray, source: np.ndarray) -> None:
    """``target[:] = source`` (equal flat byte arrays)."""
    for k in range(source.shape[0]):
        target[k] = source[k]


__all__ = ["SPREAD", "copy_into", "finish", "put", "put_wide", "words_of"]
