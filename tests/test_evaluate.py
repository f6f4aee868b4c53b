"""``boardgym evaluate`` and ``play_match``: counts, seeding, workers, output, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from boardgym import agents
from boardgym.envs.games import tictactoe
from boardgym.train.evaluate import main, play_match, wilson_interval

ROOT = Path(__file__).resolve().parents[1]
JSON_KEYS = ["game", "a", "b", "games", "a_wins", "b_wins", "ties", "a_win_rate", "a_win_ci95",
             "seconds"]
USAGE_ERROR = 2


class FirstMoveCounter:
    """A random tic-tac-toe player that counts the games in which it moved first."""

    def __init__(self) -> None:
        self.random = agents.make("tictactoe", "random")
        self.first_moves = 0

    def act(self, state: tictactoe.State, rng: np.random.Generator) -> int:
        self.first_moves += state.me == 0 and state.opp == 0
        return self.random.act(state, rng)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Stdout of ``boardgym evaluate argv`` (which must succeed)."""
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Stderr of ``boardgym evaluate argv``, which must exit with a usage error."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    assert exit_info.value.code == USAGE_ERROR
    return capsys.readouterr().err


@pytest.mark.parametrize(("successes", "trials", "low", "high"), [
    (5, 10, 0.2366, 0.7634),
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (80, 100, 0.7112, 0.8666),
])
def test_wilson_interval_known_values(successes: int, trials: int, low: float,
                                      high: float) -> None:
    assert wilson_interval(successes, trials) == pytest.approx((low, high), abs=1e-4)


def test_counts_add_up_and_a_stronger_player_wins_more() -> None:
    result = play_match("tictactoe", "rules", "random", games=200, seed=0)
    assert result.a_wins + result.b_wins + result.ties == result.games == 200
    assert result.a_wins > result.b_wins
    assert result.a_win_ci95[0] < result.a_win_rate < result.a_win_ci95[1]


def test_same_seed_same_games_and_another_seed_other_games() -> None:
    first = play_match("four_in_a_row", "lookahead:1", "random", games=30, seed=4)
    again = play_match("four_in_a_row", "lookahead:1", "random", games=30, seed=4)
    other = play_match("four_in_a_row", "lookahead:1", "random", games=30, seed=5)
    assert first.outcomes == again.outcomes
    assert first.outcomes != other.outcomes


def test_workers_give_the_same_results_as_one_process() -> None:
    one = play_match("tictactoe", "rules_center", "random", games=120, seed=9)
    two = play_match("tictactoe", "rules_center", "random", games=120, seed=9, workers=2)
    assert two.outcomes == one.outcomes


def test_first_player_alternates_or_is_drawn_per_game() -> None:
    counter = FirstMoveCounter()
    play_match("tictactoe", counter, "random", games=100, seed=0, alternate=True)
    assert counter.first_moves == 50
    counter = FirstMoveCounter()
    play_match("tictactoe", counter, "random", games=400, seed=0)
    assert 150 < counter.first_moves < 250


def test_the_classic_lines(capsys: pytest.CaptureFixture[str]) -> None:
    lines = run(capsys, "tictactoe", "perfect", "random", "--games", "50").splitlines()
    assert lines[0].startswith("perfect wins: ")
    assert lines[1].startswith("random wins: 0 (0.0%)")
    assert lines[2].startswith("Ties: ")
    assert "95% Wilson interval" in lines[3]


def test_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "connect_four", "lookahead:1", "random", "--games", "20", "--seed", "3",
              "--json", "--rows", "5", "--columns", "5", "--connect", "4")
    report = json.loads(out)
    assert list(report) == JSON_KEYS
    assert report["game"] == "four_in_a_row"
    assert report["a_wins"] + report["b_wins"] + report["ties"] == report["games"] == 20
    assert report["a_win_rate"] == report["a_wins"] / 20
    low, high = report["a_win_ci95"]
    assert low <= report["a_win_rate"] <= high


def test_same_names_are_told_apart(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "tictactoe", "random", "random", "--games", "10")
    assert "random (A) wins" in out and "random (B) wins" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["chess", "random", "random"], "four_in_a_row, othello, reversi, tic_tac_toe, tictactoe"),
    (["reversi", "best", "random"], "corner_best, corner_side_best"),
    (["reversi", "best", "random"], "random, worst"),
    (["tictactoe", "random", "minimax"], "perfect, random, rules, rules_center"),
    (["reversi", "random", "random", "--games", "0"], "--games: must be >= 1"),
    (["reversi", "random", "random", "--seed", "-1"], "--seed: must be >= 0"),
    (["reversi", "random", "random", "--games", "ten"], "expected an integer"),
    (["reversi", "random", "random", "--workers", "0"], "--workers: must be >= 1"),
    (["reversi", "random", "random", "--rows", "5"], "Reversi has no option 'rows'"),
    (["four_in_a_row", "random", "random", "--rows", "3"], "rows and columns must"),
    (["four_in_a_row", "lookahead:x", "random"], "positive integer"),
])
def test_bad_input_is_a_usage_error(capsys: pytest.CaptureFixture[str], argv: list[str],
                                    message: str) -> None:
    assert message in usage_error(capsys, *argv)


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_counts_games_not_batches(workers: int) -> None:
    finished: list[int] = []
    play_match("tictactoe", "random", "random", games=53, seed=0, workers=workers,
               progress=finished.append)
    assert sum(finished) == 53 and all(n > 0 for n in finished)


def test_a_checkpoint_for_another_board_fails_before_any_game(
        capsys: pytest.CaptureFixture[str]) -> None:
    checkpoint = str(ROOT / "checkpoints" / "four_in_a_row.zip")
    err = usage_error(capsys, "four_in_a_row", checkpoint, "random", "--rows", "5",
                      "--columns", "5")
    assert "trained on a four_in_a_row board" in err and err.count("\n") == 1


def test_python_dash_m() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "boardgym", "evaluate", "tictactoe", "rules", "random",
         "--games", "20", "--json"], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(completed.stdout)["games"] == 20
    assert completed.stderr == ""  # no progress bar when not on a terminal


def test_stochastic_checkpoints_sample_reproducibly_with_any_workers() -> None:
    checkpoint = str(Path(__file__).resolve().parents[1] / "checkpoints" / "tictactoe.zip")
    greedy = play_match("tictactoe", checkpoint, "random", games=200, seed=0)
    sampled = play_match("tictactoe", checkpoint, "random", games=200, seed=0, stochastic=True)
    again = play_match("tictactoe", checkpoint, "random", games=200, seed=0, stochastic=True,
                       workers=2)
    assert sampled.outcomes != greedy.outcomes, "sampling changes some games"
    assert sampled.outcomes == again.outcomes
