"""Elo ratings: the maximum-likelihood fit, its bootstrap intervals and the pairing order."""

from __future__ import annotations

import numpy as np
import pytest

from boardgym.train.match.elo import bootstrap_elo, fit_elo, pairings, tables

TRUE_ELO = np.array([0.0, 150.0, 400.0, -100.0])


def _expected_table(ratings: np.ndarray, games: float) -> tuple[np.ndarray, np.ndarray]:
    """Points and games tables whose scores are exactly what ``ratings`` predict."""
    diff = ratings[None, :] - ratings[:, None]
    expected = 1 / (1 + 10 ** (diff / 400))
    table = np.full(diff.shape, games)
    np.fill_diagonal(table, 0)
    return expected * table, table


def test_fit_recovers_the_ratings_of_a_table_with_known_answer() -> None:
    points, games = _expected_table(TRUE_ELO, 1000)
    np.testing.assert_allclose(fit_elo(points, games, anchor=0, prior_draws=0), TRUE_ELO,
                               atol=1e-6)
    np.testing.assert_allclose(fit_elo(points, games, anchor=2, prior_draws=0),
                               TRUE_ELO - TRUE_ELO[2], atol=1e-6)


def test_equal_players_are_rated_equal_and_a_perfect_record_stays_finite() -> None:
    games = np.array([[0, 10.0], [10, 0]])
    assert fit_elo(np.array([[0, 5.0], [5, 0]]), games, anchor=0)[1] == pytest.approx(0)
    sweep = fit_elo(np.array([[0, 0.0], [10, 0]]), games, anchor=0)
    # 10 wins plus one virtual draw: score 10.5 / 11.
    assert sweep[1] == pytest.approx(400 * np.log10(10.5 / 0.5))
    with pytest.raises(ValueError, match="prior_draws"):
        fit_elo(np.array([[0, 0.0], [10, 0]]), games, anchor=0, prior_draws=0)


def test_bootstrap_intervals_contain_the_estimate_and_pin_the_anchor() -> None:
    counts = np.array([[30, 10, 10], [5, 0, 45], [20, 5, 25]])  # pairs (0,1) (0,2) (1,2)
    ratings, intervals = bootstrap_elo(counts, 3, anchor=1, samples=300,
                                       rng=np.random.default_rng(0))
    assert ratings[1] == 0 and list(intervals[1]) == [0, 0]
    assert np.all(intervals[:, 0] <= ratings) and np.all(ratings <= intervals[:, 1])
    assert ratings[2] > ratings[0] > ratings[1]  # 2 crushed 0, who beat 1


def test_pairings_follow_the_upper_triangle_and_tables_are_read_both_ways() -> None:
    assert pairings(3) == [(0, 1), (0, 2), (1, 2)]
    points, games = tables(np.array([[3, 2, 1], [0, 0, 4], [1, 1, 1]]), 3)
    assert points[0, 1] == 4 and points[1, 0] == 2 and points[2, 0] == 4
    assert games[1, 2] == games[2, 1] == 3 and np.all(np.diag(games) == 0)
