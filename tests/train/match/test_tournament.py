"""Round-robin tournaments and Elo ratings."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boardgym.train.match import tournament
from boardgym.train.match.tournament import run_tournament

TTT_PLAYERS = ("random", "rules", "perfect")


def test_results_are_identical_for_any_number_of_workers() -> None:
    one = run_tournament("tictactoe", TTT_PLAYERS, games=12, seed=3, workers=1, bootstrap=50)
    two = run_tournament("tictactoe", TTT_PLAYERS, games=12, seed=3, workers=2, bootstrap=50)
    np.testing.assert_array_equal(one.counts, two.counts)
    np.testing.assert_array_equal(one.ratings, two.ratings)
    np.testing.assert_array_equal(one.intervals, two.intervals)
    assert one.counts.sum() == 3 * 12
    perfect_vs_others = one.counts[[1, 2]]  # pairs (0, 2) and (1, 2): perfect is second
    assert perfect_vs_others[:, 0].sum() == 0  # perfect never loses
    assert one.ranking()[0] == 2 and one.players[one.anchor] == "random"


def test_command_line_prints_and_saves_the_ratings(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    prefix = tmp_path / "ladder"
    code = tournament.main(["tictactoe", "random", "rules_center", "--games", "4",
                            "--bootstrap", "20", "--out", str(prefix)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "rules_center" in printed and "95% interval" in printed
    saved = json.loads(prefix.with_suffix(".json").read_text())
    assert saved["anchor"] == "random" and saved["games_per_pair"] == 4
    assert [r["player"] for r in saved["ratings"]][-1] == "random"
    assert saved["pairs"][0]["a_wins"] + saved["pairs"][0]["b_wins"] + saved["pairs"][0][
        "ties"] == 4
    assert "| rank | player |" in prefix.with_suffix(".md").read_text()
    assert prefix.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("argv", "message"), [
    (["tictactoe", "random"], "two or more distinct"),
    (["tictactoe", "random", "random"], "two or more distinct"),
    (["tictactoe", "random", "nobody"], "built-in players"),
    (["chess", "random", "rules"], "unknown game"),
    (["tictactoe", "random", "rules", "--games", "0"], "must be >= 1"),
    (["tictactoe", "random", "rules", "--anchor", "perfect"], "not one of the players"),
    (["tictactoe", "random", "rules", "--address", "127.0.0.1:6379"], "add --backend ray"),
])
def test_bad_input_is_a_usage_error(argv: list[str], message: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        tournament.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_fair_tournaments_pair_the_games_and_match_with_two_workers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = run_tournament("tictactoe", TTT_PLAYERS, games=8, seed=1, bootstrap=50,
                         openings="2")
    two = run_tournament("tictactoe", TTT_PLAYERS, games=8, seed=1, workers=2, bootstrap=50,
                         openings="2")
    np.testing.assert_array_equal(one.counts, two.counts)
    assert one.to_dict() | {"seconds": 0} == two.to_dict() | {"seconds": 0}
    pair = one.to_dict()["pairs"][2]  # rules against perfect
    assert pair["pairs"] == 4 and 1 <= pair["distinct_games"] <= 8
    assert 0 <= pair["a_pair_ci95"][0] <= pair["a_pair_score"] <= pair["a_pair_ci95"][1] <= 1
    prefix = tmp_path / "fair"
    assert tournament.main(["tictactoe", "random", "perfect", "--games", "4", "--openings", "3",
                            "--bootstrap", "20", "--out", str(prefix)]) == 0
    assert "Pairs of games" in capsys.readouterr().out
    assert json.loads(prefix.with_suffix(".json").read_text())["openings"] == 3
    assert "seats swapped" in prefix.with_suffix(".md").read_text()


def test_fair_tournament_needs_an_even_number_of_games(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        tournament.main(["tictactoe", "random", "rules", "--games", "3", "--openings", "2"])
    assert "must be even" in capsys.readouterr().err
