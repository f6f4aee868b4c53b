"""Caps of evaluate and tournament, the Elo interval a bootstrap cannot give, and the files a
tournament may overwrite."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boardgym.train.cli import main
from boardgym.train.common.commands import MAX_GAMES
from boardgym.train.match.elo import MAX_BOOTSTRAP, bootstrap_elo
from boardgym.train.match.evaluate import play_match
from boardgym.train.match.results import A_WON, B_WON, Tally
from boardgym.train.match.tournament import UNDEFINED, run_tournament
from tests.commands import usage_error


def test_games_cap(capsys: pytest.CaptureFixture[str]) -> None:
    huge = str(MAX_GAMES + 1)
    for argv in (["evaluate", "tictactoe", "random", "random", "--games", huge],
                 ["tournament", "tictactoe", "random", "rules", "--games", huge]):
        assert f"must be at most {MAX_GAMES} (MAX_GAMES" in usage_error(argv, capsys)
    with pytest.raises(ValueError, match=f"games must be at most {MAX_GAMES}"):
        play_match("tictactoe", "random", "random", games=MAX_GAMES + 1)
    with pytest.raises(ValueError, match=f"games must be at most {MAX_GAMES}"):
        run_tournament("tictactoe", ["random", "rules"], games=MAX_GAMES + 1)


def test_bootstrap_cap(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tournament", "tictactoe", "random", "rules", "--bootstrap", "100000000"]
    assert f"must be at most {MAX_BOOTSTRAP} (MAX_BOOTSTRAP)" in usage_error(argv, capsys)
    with pytest.raises(ValueError, match=f"bootstrap must be at most {MAX_BOOTSTRAP}"):
        run_tournament("tictactoe", ["random", "rules"], games=2, bootstrap=MAX_BOOTSTRAP + 1)
    counts = np.array([[3, 1, 2]])
    with pytest.raises(ValueError, match="MAX_BOOTSTRAP"):
        bootstrap_elo(counts, 2, 0, MAX_BOOTSTRAP + 1, np.random.default_rng(0))
    small = bootstrap_elo(counts, 2, 0, 2500, np.random.default_rng(0))[1]  # in 3 chunks
    assert small[1, 0] < 0 < small[1, 1]


def test_elo_interval_without_variation(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """4-0: every resample is 4-0 too, so the bootstrap has no interval to give."""
    sweep = np.array([[0, 0, 4]])  # the anchor lost all four games
    ratings, intervals = bootstrap_elo(sweep, 2, 0, 200, np.random.default_rng(0))
    assert ratings[1] > 300 and list(intervals[0]) == [0, 0] and np.isnan(intervals[1]).all()
    varied = bootstrap_elo(np.array([[0, 1, 3]]), 2, 0, 200, np.random.default_rng(0))[1]
    assert varied[1, 0] < varied[1, 1]
    three = np.array([[0, 0, 4], [0, 0, 4], [2, 1, 1]])  # 0 loses always; 1 and 2 vary
    assert np.isnan(bootstrap_elo(three, 3, 1, 50, np.random.default_rng(0))[1][0]).all()
    prefix = tmp_path / "draws"  # perfect and rules_center draw every game
    assert main(["tournament", "tictactoe", "perfect", "rules_center", "--games", "4",
                 "--bootstrap", "20", "--out", str(prefix)]) == 0
    out = capsys.readouterr().out
    assert UNDEFINED in out and "[0, 0]" in out
    ratings_json = json.loads(prefix.with_suffix(".json").read_text())["ratings"]
    assert {rating["player"]: rating["ci95"] for rating in ratings_json} == {
        "perfect": [0.0, 0.0], "rules_center": None}
    assert UNDEFINED in prefix.with_suffix(".md").read_text()


def test_tournament_out_refuses_foreign_files(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    prefix = tmp_path / "ladder"
    argv = ["tournament", "tictactoe", "random", "rules", "--games", "2", "--bootstrap", "5",
            "--out", str(prefix)]
    picture = prefix.with_suffix(".png")
    picture.write_bytes(b"someone's picture")
    assert "--force" in usage_error(argv, capsys)
    assert picture.read_bytes() == b"someone's picture"
    assert main([*argv, "--force"]) == 0
    assert main(argv) == 0, "the tournament's own files are overwritten"
    prefix.with_suffix(".json").unlink()
    assert main(argv) == 0, "the Markdown and the picture are recognised on their own"
    prefix.with_suffix(".json").unlink()
    prefix.with_suffix(".md").write_text("# my notes\n")
    assert "ladder.md" in usage_error(argv, capsys)


def test_a_match_keeps_outcomes_not_moves() -> None:
    tally = Tally()
    for outcome, moves in ((A_WON, (0, 1, 2)), (B_WON, (0, 1, 2)), (A_WON, (2, 1))):
        tally.add(outcome, moves)
    assert tally.outcomes == (A_WON, B_WON, A_WON) and tally.distinct_games == 2
    result = play_match("tictactoe", "random", "random", games=30, seed=2)
    assert len(result.outcomes) == 30 and 2 < result.distinct_games <= 30
