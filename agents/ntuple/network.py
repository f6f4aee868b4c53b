"""The n-tuple value function every game shares, and its compiled kernels (numba).

An n-tuple network values a position as ``tanh`` of a sum of table entries: each *tuple* is
a short list of cells, and the contents of those cells (each a code below) index the tuple's
lookup table (LUT). A tuple's symmetric images (the same cells under each symmetry of the
board, in the mapped order) read the same LUT, so every symmetric image of a position gets
the same value. Optional *stages* give each band of filled cells its own set of LUTs.

The position is an *afterstate* seen from its owner, the side that has just moved: ``own``
and ``other`` are the two sides' cells as bits of the game's bitboard, ``marks`` the empty
cells a game marks (four-in-a-row: where the next token of each column lands; 0 when the
network has 3 values). A cell's code is:

- 3 values: empty 0, own 1, other 2;
- 4 values: empty 0, marked empty 1, own 2, other 3.

The kernels take the network as one tuple of arrays, ``NetArrays`` (built by
``NTupleNet.arrays`` in ``agents.ntuple.model``):

- ``cells``: ``(images, longest)`` int64, each image's bit positions (padded);
- ``lengths``: ``(images,)`` int64, each image's length;
- ``offsets``: ``(images,)`` int64, where its tuple's LUT starts within a stage;
- ``weights``: float32, ``stages * stride`` entries;
- ``shape``: int64 ``[values, stride, stages, first, span]``: the stage of a position with
  ``n`` filled cells is ``(n - first) // span``, clamped to ``[0, stages - 1]``.

``learn`` is the TD step of every game's learner: a horizon of the last afterstates
(eligibility traces truncated where ``lambda ** k`` drops under the cut) moved toward a
target, with a step size per active entry of ``alpha / images`` (an entry shared by several
images moves once per image), optionally scaled per weight by temporal coherence (TCL).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from boardgym.envs.games.compiled import ONE, entry, popcount

VALUES, STRIDE, STAGES, FIRST, SPAN = range(5)
"""Indices of the ``shape`` array."""
NET_TYPE = types.Tuple((types.Array(types.int64, 2, "C"), types.Array(types.int64, 1, "C"),
                        types.Array(types.int64, 1, "C"), types.Array(types.float32, 1, "C"),
                        types.Array(types.int64, 1, "C")))
"""The numba type of ``NetArrays``."""
NO_TCL, TCL, TCL_EXP = range(3)
"""Step-size modes of ``learn``: the plain step; TCL (rate ``|N| / A``); TCL-EXP (rate
``exp(TCL_EXP_BETA * (|N| / A - 1))``)."""
TCL_EXP_BETA = 2.7
MAX_MOVES = 64
"""The most legal moves of a position in any game (``new_afterstates``)."""
TRAINER_TYPE = types.Tuple((types.Array(types.float32, 1, "C"),
                            types.Array(types.float32, 1, "C")))
"""The numba type of the TCL accumulators ``(N, A)`` (empty arrays without TCL)."""
TRACE_TYPE = types.Tuple((types.Array(types.int64, 2, "C"), types.Array(types.float64, 1, "C"),
                          types.Array(types.int64, 1, "C")))
"""The numba type of a trace (``learn``, ``new_trace``)."""


@njit(cache=True, inline="always")
def stage_base(own: np.uint64, other: np.uint64, shape: np.ndarray) -> int:
    """Where the LUTs of the position's stage start in ``weights``."""
    stage = (popcount(own | other) - shape[FIRST]) // shape[SPAN]
    stage = min(max(stage, 0), shape[STAGES] - 1)
    return stage * shape[STRIDE]


@njit(cache=True, inline="always")
def image_index(own: np.uint64, other: np.uint64, marks: np.uint64, net: tuple,  # type: ignore[type-arg]
                image: int) -> int:
    """The entry of ``image``'s LUT that the position reads (within its stage): the cell
    codes as digits of base ``values``, the image's first cell the lowest digit."""
    cells, lengths, values = net[0], net[1], net[4][VALUES]
    own_code, other_code = np.uint64(values - 2), np.uint64(values - 1)
    index = np.uint64(0)
    for k in range(lengths[image] - 1, -1, -1):
        bit = np.uint64(cells[image, k])
        code = (((own >> bit) & ONE) * own_code + ((other >> bit) & ONE) * other_code
                + ((marks >> bit) & ONE))
        index = index * np.uint64(values) + code
    return int(index)


@njit(cache=True, inline="always")
def raw_value(own: np.uint64, other: np.uint64, marks: np.uint64,
              net: tuple) -> float:  # type: ignore[type-arg]
    """The sum of the entries the position reads (the value before ``tanh``)."""
    offsets, weights = net[2], net[3]
    base = stage_base(own, other, net[4])
    total = 0.0
    for image in range(offsets.shape[0]):
        total += weights[base + offsets[image] + image_index(own, other, marks, net, image)]
    return total


@njit(cache=True, inline="always")
def value(own: np.uint64, other: np.uint64, marks: np.uint64,
          net: tuple) -> float:  # type: ignore[type-arg]
    """The network's value of the afterstate for its owner, in ``(-1, 1)``."""
    return float(np.tanh(raw_value(own, other, marks, net)))


@njit(cache=True, inline="always")
def fill_entries(own: np.uint64, other: np.uint64, marks: np.uint64, net: tuple,  # type: ignore[type-arg]
                 out: np.ndarray) -> None:
    """Write into ``out`` the index in ``weights`` of every entry the position reads."""
    offsets = net[2]
    base = stage_base(own, other, net[4])
    for image in range(offsets.shape[0]):
        out[image] = base + offsets[image] + image_index(own, other, marks, net, image)


@entry(types.float64[::1](types.uint64[::1], types.uint64[::1], types.uint64[::1], NET_TYPE))
def values_batch(own: np.ndarray, other: np.ndarray, marks: np.ndarray,
                 net: tuple) -> np.ndarray:  # type: ignore[type-arg]
    """``value`` of each position of a batch."""
    out = np.empty(own.shape[0])
    for i in range(own.shape[0]):
        out[i] = value(own[i], other[i], marks[i], net)
    return out


@njit(cache=True, inline="always")
def _step_entry(weights: np.ndarray, trainer: tuple, entry_index: int, change: float,  # type: ignore[type-arg]
                step: float, mode: int) -> None:
    """Move one weight by ``step * change`` (scaled by its TCL rate, whose accumulators
    then take ``change``)."""
    if mode == NO_TCL:
        weights[entry_index] += step * change
        return
    numerator, absolute = trainer[0], trainer[1]
    rate = 1.0
    if absolute[entry_index] > 0.0:
        rate = abs(numerator[entry_index]) / absolute[entry_index]
        if mode == TCL_EXP:
            rate = np.exp(TCL_EXP_BETA * (rate - 1.0))
    weights[entry_index] += step * rate * change
    numerator[entry_index] += change
    absolute[entry_index] += abs(change)


@njit(cache=True, inline="always")
def learn(trace: tuple, length: int, target: float, alpha: float, lam: float,  # type: ignore[type-arg]
          net: tuple, trainer: tuple, mode: int) -> float:  # type: ignore[type-arg]
    """One TD step: the newest afterstate of the trace moves toward ``target`` (a value for
    its owner), each of the ``length`` afterstates of the horizon by ``lambda ** k`` of that
    error (``k`` steps back; the sign flips for the other side's afterstates). Returns the
    error ``target - V``.

    ``trace`` is ``(entries (horizon, images) int64, values (horizon,), owners (horizon,)
    int64)``, newest first, as ``push`` leaves it; ``V`` and the gradient ``1 - V**2`` are
    the values recorded when each afterstate was pushed.
    """
    entries, values, owners = trace
    weights = net[3]
    images = entries.shape[1]
    step = alpha / images
    error = target - values[0]
    factor = 1.0
    for h in range(length):
        sign = 1.0 if owners[h] == owners[0] else -1.0
        change = error * (1.0 - values[h] * values[h]) * factor * sign
        for image in range(images):
            _step_entry(weights, trainer, entries[h, image], change, step, mode)
        factor *= lam
    return error


@njit(cache=True, inline="always")
def push(trace: tuple, length: int, own: np.uint64, other: np.uint64, marks: np.uint64,  # type: ignore[type-arg]
         position_value: float, owner: int, net: tuple) -> int:  # type: ignore[type-arg]
    """Put an afterstate (its entries, ``position_value``, ``owner``) at the front of
    ``trace``, the oldest falling off past the horizon; returns the new length."""
    entries, values, owners = trace
    horizon = values.shape[0]
    for h in range(min(length, horizon - 1), 0, -1):
        entries[h, :] = entries[h - 1, :]
        values[h] = values[h - 1]
        owners[h] = owners[h - 1]
    fill_entries(own, other, marks, net, entries[0])
    values[0] = position_value
    owners[0] = owner
    return min(length + 1, horizon)


@njit(cache=True, inline="always")
def new_afterstates() -> tuple:  # type: ignore[type-arg]
    """Room for the afterstates of one position's moves (``MAX_MOVES``): ``(moves, own,
    other, over, scores, marks)``, filled by a game's ``afterstates``: a finished game's
    score is +inf, 0 or -inf (its result for the mover), another's the network's sum."""
    return (np.empty(MAX_MOVES, dtype=np.int64), np.empty(MAX_MOVES, dtype=np.uint64),
            np.empty(MAX_MOVES, dtype=np.uint64), np.empty(MAX_MOVES, dtype=np.bool_),
            np.empty(MAX_MOVES), np.zeros(MAX_MOVES, dtype=np.uint64))


@njit(cache=True, inline="always")
def best_mask(found: tuple, count: int) -> np.uint64:  # type: ignore[type-arg]
    """The moves (as bits) of the highest score among the first ``count`` afterstates."""
    moves, scores = found[0], found[4]
    top = scores[:count].max()
    mask = np.uint64(0)
    for i in range(count):
        if scores[i] == top:
            mask |= ONE << np.uint64(moves[i])
    return mask


@njit(cache=True, inline="always")
def draw_best(found: tuple, count: int) -> int:  # type: ignore[type-arg]
    """The index of a highest-scoring afterstate among the first ``count``, drawn uniformly
    from numba's generator when several tie."""
    scores = found[4]
    top = scores[:count].max()
    ties = 0
    for i in range(count):
        ties += scores[i] == top
    pick = np.random.randint(ties) if ties > 1 else 0
    for i in range(count):
        if scores[i] == top:
            if pick == 0:
                return i
            pick -= 1
    return 0


@entry(types.float64(types.uint64, types.uint64, types.uint64, types.float64, types.float64,
                     NET_TYPE))
def update(own: np.uint64, other: np.uint64, marks: np.uint64, target: float, alpha: float,
           net: tuple) -> float:  # type: ignore[type-arg]
    """One TD(0) step of one afterstate toward ``target`` (``learn`` with a horizon of one,
    no TCL): each entry it reads moves by ``alpha / images`` times the error times the
    gradient ``1 - V**2``, so where its images read distinct entries the sum before
    ``tanh`` moves by ``alpha * (target - V) * (1 - V**2)``. Returns the error."""
    images = net[2].shape[0]
    trace = (np.zeros((1, images), dtype=np.int64), np.zeros(1), np.zeros(1, dtype=np.int64))
    push(trace, 0, own, other, marks, value(own, other, marks, net), 0, net)
    empty = (np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32))
    return learn(trace, 1, target, alpha, 0.0, net, empty, NO_TCL)


@njit(cache=True, inline="always")
def self_play_move(found: tuple, count: int, random_move: bool, trace: tuple,  # type: ignore[type-arg]
                   length: int, side: int, alpha: float, lam: float, net: tuple,  # type: ignore[type-arg]
                   trainer: tuple, mode: int) -> tuple[int, int, float]:  # type: ignore[type-arg]
    """One move of the learners' self-play among the ``count`` afterstates of ``found``
    (``side`` to move): a uniformly drawn one if ``random_move`` (the trace is cut), else
    the best (``draw_best``), toward whose value the trace's newest afterstate learns
    (negated when the other side owns it; a finished game's value is its result). The new
    afterstate goes on the trace unless the game is over. Returns ``(pick, length, |error|)``,
    the error -1 when nothing learned."""
    pick = np.random.randint(count) if random_move else draw_best(found, count)
    over = found[3][pick]
    after = np.sign(found[4][pick]) if over else np.tanh(found[4][pick])
    error = -1.0
    if random_move:
        length = 0
    elif length > 0:
        target = after if trace[2][0] == side else -after
        error = abs(learn(trace, length, target, alpha, lam, net, trainer, mode))
    if not over:
        length = push(trace, length, found[1][pick], found[2][pick], found[5][pick], after,
                      side, net)
    return pick, length, error


def horizon(lam: float, cut: float) -> int:
    """The afterstates a trace keeps: 1 for TD(0), else ``1 + floor(log cut / log lambda)``
    (the last ``k`` with ``lambda ** k >= cut``)."""
    if lam <= 0.0:
        return 1
    return 1 + int(np.floor(np.log(cut) / np.log(lam) + 1e-9))


def new_trace(horizon_length: int, images: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An empty trace of ``horizon_length`` afterstates for ``images`` lookups."""
    return (np.zeros((horizon_length, images), dtype=np.int64),
            np.zeros(horizon_length), np.zeros(horizon_length, dtype=np.int64))
