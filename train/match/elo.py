"""Elo ratings of a round robin: the maximum-likelihood fit and its bootstrap intervals.

Ratings are the maximum-likelihood Bradley-Terry (Elo) fit of the whole table, a draw counting
as half a win, with one virtual draw added to every pairing so that a player who wins every
game still gets a finite rating; they are anchored so that one player is at 0. The 95%
intervals are percentile bootstrap intervals: each pairing's games are resampled with
replacement and the fit redone.

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
        samples: bootstrap resamples (each pairing's games drawn with replacement).
        rng: the source of the resampling.

    Returns:
        ``(ratings (n,), intervals (n, 2))``.
    """
    ratings = fit_elo(*tables(counts.astype(float), n), anchor)
    totals = counts.sum(axis=1)
    resampled = np.stack([rng.multinomial(total, row / total, size=samples)
                          for total, row in zip(totals, counts, strict=True)], axis=1)
    boot = fit_elo(*tables(resampled.astype(float), n), anchor)
    tail = (1 - CONFIDENCE) / 2 * 100
    intervals = np.percentile(boot, [tail, 100 - tail], axis=0).T
    return ratings, intervals
