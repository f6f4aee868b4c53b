"""Match results: Wilson intervals and the scores of pairs of games."""

from __future__ import annotations

import pytest

from boardgym.train.match.results import (
    A_WON,
    B_WON,
    TIE,
    MatchResult,
    pair_fields,
    pair_scores,
    player_label,
    wilson_interval,
)


@pytest.mark.parametrize(("successes", "trials", "low", "high"), [
    (5, 10, 0.2366, 0.7634),
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (80, 100, 0.7112, 0.8666),
])
def test_wilson_interval_known_values(successes: int, trials: int, low: float,
                                      high: float) -> None:
    assert wilson_interval(successes, trials) == pytest.approx((low, high), abs=1e-4)


def test_a_pair_scores_the_mean_of_its_two_games_and_an_odd_last_game_is_left_out() -> None:
    outcomes = [A_WON, A_WON, A_WON, TIE, A_WON, B_WON, TIE, TIE, B_WON, B_WON, A_WON]
    assert pair_scores(outcomes).tolist() == [1.0, 0.75, 0.5, 0.5, 0.0]


def test_pair_fields_give_the_pairs_their_mean_and_its_interval_over_pairs() -> None:
    fields = pair_fields([A_WON, TIE, B_WON, B_WON], distinct_games=3)
    assert fields == {"pairs": 2, "distinct_games": 3, "a_pair_score": 0.375,
                      "a_pair_ci95": list(wilson_interval(0.75, 2))}


def test_a_match_without_openings_reports_three_lines_and_no_pair_keys() -> None:
    result = MatchResult("tictactoe", "rules", "rules", 4, 1, 1, 2, 0.5,
                         (A_WON, TIE, B_WON, TIE))
    assert result.pairs == 0 and "pairs" not in result.to_dict()
    lines = result.report().splitlines()
    assert lines[:3] == ["rules (A) wins: 1 (25.0%)", "rules (B) wins: 1 (25.0%)",
                         "Ties: 2 (50.0%)"]
    assert lines[3].startswith("rules (A) win rate 25.0%, 95% Wilson interval [")


def test_a_player_is_named_by_its_spec_or_its_class() -> None:
    class Player:
        pass

    assert player_label("alphabeta:4") == "alphabeta:4"
    assert player_label(Player()) == "Player"  # type: ignore[arg-type]
