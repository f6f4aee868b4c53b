"""Elo ratings of a round robin: the maximum-likelihood fit and its bootstrap intervals.

Ratings are the maximum-likelihood Bradley-Terry (Elo) fit of the whole table, a draw counting
as half a win, with one virtual draw added to every pairing so that a player who wins every
game still gets a finite rating; they are anchored so that one player is at 0. The 95%
intervals are percentile bootstrap intervals: each pairing's games are resampled with
replacement and the fit redone.

A bootstrap can only show the variation its sample has: a pairing whose games all went one
way (all won, all lost or all drawn) is the same in every resample. A player all of whose
pairings are such has no interval: it is undefined (NaN; ``None`` in JSON), not the point
``[r, r]`` the resamples would give (``no_variation``). The anchor's interval is ``[0, 0]``.

Results come per pairing ``(i, j)``, ``i < j``, in ``pairings(n)`` order (that of
``np.triu_indices(n, 1)``): a ``(pairs, 3)`` table of the first-listed player's wins, ties
and losses.
"""

from __future__ import annotations

import numpy as np

ELO_SCALE = 400.0
"""Elo points per factor of 10 in the odds of winning."""
PRIOR_DRAWS = 1.0
"""Virtual draws added to every pairing before fitting (keeps ratings finite)."""
CONFIDENCE = 0.95
FIT_TOLERANCE = 1e-10
"""Stop the fit when no strength changes by more than this fraction in one iteration."""
MAX_FIT_ITERATIONS = 100_000
MAX_BOOTSTRAP = 100_000
"""The most bootstrap resamples (``tournament --bootstrap``): the 95 % bounds move by well
under an Elo point beyond 10 000, and the resamples' ratings take 8 bytes per player each."""
BOOTSTRAP_CHUNK = 1000
"""Resamples fitted at a time, so memory stays that of ``BOOTSTRAP_CHUNK`` fits."""


def pairings(n: int) -> list[tuple[int, int]]:
    """The pairings ``(i, j)``, ``i < j``, of ``n`` players in ``np.triu_indices`` order."""
    return [(int(i), int(j)) for i, j in zip(*np.triu_indices(n, 1), strict=True)]


def fit_elo(points: np.ndarray, games: np.ndarray, anchor: int,
            prior_draws: float = PRIOR_DRAWS) -> np.ndarray:
    """Maximum-likelihood Elo ratings of a results table (batched over leading axes).

    The model: player i scores against j with probability ``1 / (1 + 10 ** ((r_j - r_i) /
    400))``. The fit is Hunter's minorisation-maximisation iteration for Bradley-Terry.

    Args:
        points: ``(..., n, n)``: points of row player against column player (win 1, draw 0.5).
        games: ``(..., n, n)``: games between them, symmetric, zero diagonal.
        anchor: index of the player rated 0.
        prior_draws: virtual draws added to every pairing that played.

    Returns:
        ``(..., n)`` ratings with ``ratings[..., anchor] == 0``.

    Raises:
        ValueError: some player has no games, or (without a prior) scored no points at all.
    """
    played = games > 0
    points = points + played * prior_draws / 2
    games = games + played * prior_draws
    wins = points.sum(axis=-1)
    if np.any(games.sum(axis=-1) == 0) or np.any(wins <= 0):
        raise ValueError("every player needs games and, without a prior, at least one point "
                         "scored: add games or use prior_draws > 0")
    strength = np.ones(wins.shape)
    for _ in range(MAX_FIT_ITERATIONS):
        pair_sums = strength[..., :, None] + strength[..., None, :]
        updated = wins / (games / pair_sums).sum(axis=-1)
        updated /= updated[..., anchor:anchor + 1]
        converged = np.max(np.abs(updated / strength - 1)) < FIT_TOLERANCE
        strength = updated
        if converged:
            break
    return ELO_SCALE * np.log10(strength)


def tables(counts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Points and games tables ``(..., n, n)`` (row player against column player) from
    per-pairing counts ``(..., pairs, 3)`` in ``pairings(n)`` order."""
    shape = counts.shape[:-2]
    points, games = np.zeros((*shape, n, n)), np.zeros((*shape, n, n))
    for p, (i, j) in enumerate(pairings(n)):
        won, tied, lost = counts[..., p, 0], counts[..., p, 1], counts[..., p, 2]
        points[..., i, j], points[..., j, i] = won + tied / 2, lost + tied / 2
        games[..., i, j] = games[..., j, i] = won + tied + lost
    return points, games


def bootstrap_elo(counts: np.ndarray, n: int, anchor: int, samples: int,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Elo ratings and their percentile bootstrap 95% intervals.

    Args:
        counts: ``(pairs, 3)`` wins, ties, losses of the first-listed player of each pairing,
            pairings in ``pairings(n)`` order.
        n: number of players.
        anchor: index of the player rated 0.
        samples: bootstrap resamples (each pairing's games drawn with replacement), in
            ``[1, MAX_BOOTSTRAP]``; fitted ``BOOTSTRAP_CHUNK`` at a time.
        rng: the source of the resampling.

    Returns:
        ``(ratings (n,), intervals (n, 2))``; a player's interval is NaN where
        ``no_variation`` says the bootstrap cannot give one.

    Raises:
        ValueError: ``samples`` outside ``[1, MAX_BOOTSTRAP]``.
    """
    if not 1 <= samples <= MAX_BOOTSTRAP:
        raise ValueError(f"bootstrap must be in [1, {MAX_BOOTSTRAP}] (MAX_BOOTSTRAP), got "
                         f"{samples}")
    ratings = fit_elo(*tables(counts.astype(float), n), anchor)
    totals = counts.sum(axis=1)
    boot = np.concatenate([
        fit_elo(*tables(_resamples(counts, totals, size, rng).astype(float), n), anchor)
        for size in np.diff([*range(0, samples, BOOTSTRAP_CHUNK), samples])])
    tail = (1 - CONFIDENCE) / 2 * 100
    intervals = np.percentile(boot, [tail, 100 - tail], axis=0).T
    intervals[no_variation(counts, n, anchor)] = np.nan
    return ratings, intervals


def _resamples(counts: np.ndarray, totals: np.ndarray, size: int,
               rng: np.random.Generator) -> np.ndarray:
    """``(size, pairs, 3)``: each pairing's games drawn with replacement ``size`` times."""
    return np.stack([rng.multinomial(total, row / total, size=size)
                     for total, row in zip(totals, counts, strict=True)], axis=1)


def no_variation(counts: np.ndarray, n: int, anchor: int) -> np.ndarray:
    """``(n,)`` bool: the players other than ``anchor`` whose every pairing went one way (a
    single kind of result in all its games), whose bootstrap interval is undefined."""
    one_way = np.count_nonzero(counts, axis=1) <= 1
    undefined = np.ones(n, dtype=bool)
    for (i, j), fixed in zip(pairings(n), one_way, strict=True):
        undefined[[i, j]] &= fixed
    undefined[anchor] = False
    return undefined
