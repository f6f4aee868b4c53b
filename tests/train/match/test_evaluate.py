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
from boardgym.train.match.evaluate import main, play_match
from boardgym.train.match.results import wilson_interval
from tests.paths import ROOT

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
    (["reversi", "random", "random", "--backend", "spark"], "invalid choice: 'spark'"),
    (["reversi", "random", "random", "--address", "127.0.0.1:6379"], "add --backend ray"),
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
    checkpoint = str(ROOT / "checkpoints" / "tictactoe.zip")
    greedy = play_match("tictactoe", checkpoint, "random", games=200, seed=0)
    sampled = play_match("tictactoe", checkpoint, "random", games=200, seed=0, stochastic=True)
    again = play_match("tictactoe", checkpoint, "random", games=200, seed=0, stochastic=True,
                       workers=2)
    assert sampled.outcomes != greedy.outcomes, "sampling changes some games"
    assert sampled.outcomes == again.outcomes


# -- fair matches (--openings) ---------------------------------------------------------------

FAIR_KEYS = ["openings", "pairs", "distinct_games", "a_pair_score", "a_pair_ci95"]
SUITE = "shipped:reversi_8ply"


class Extreme:
    """A deterministic player: always the lowest (or the highest) legal action."""

    def __init__(self, lowest: bool) -> None:
        self.pick = 0 if lowest else -1

    def act(self, state: tictactoe.State, rng: np.random.Generator) -> int:
        return int(np.flatnonzero(tictactoe.legal_mask(state))[self.pick])


class Recorder:
    """A random tic-tac-toe player that logs each position it is asked about, with its name
    and the first player's and second player's marks."""

    def __init__(self, name: str, log: list[tuple[str, int, int, int]]) -> None:
        self.name, self.log = name, log
        self.random = agents.make("tictactoe", "random")

    def act(self, state: tictactoe.State, rng: np.random.Generator) -> int:
        first, second = (state.me, state.opp) if state.to_move == 0 else (state.opp, state.me)
        self.log.append((self.name, int(state.to_move), int(first), int(second)))
        return self.random.act(state, rng)


def _games_of(log: list[tuple[str, int, int, int]]) -> list[list[tuple[str, int, int, int]]]:
    """The log cut into games: a game starts when the marks on the board stop growing."""
    games: list[list[tuple[str, int, int, int]]] = []
    marks = -1
    for entry in log:
        count = (entry[2] | entry[3]).bit_count()
        if not games or count <= marks:
            games.append([])
        games[-1].append(entry)
        marks = count
    return games


def test_each_opening_is_played_twice_with_the_seats_swapped() -> None:
    log: list[tuple[str, int, int, int]] = []
    plies, pairs = 3, 10
    play_match("tictactoe", Recorder("A", log), Recorder("B", log), games=2 * pairs, seed=2,
               openings=str(plies))
    games = _games_of(log)
    assert len(games) == 2 * pairs
    starts = [game[0][2:] for game in games]
    assert all((first | second).bit_count() == plies for first, second in starts)
    for k in range(pairs):
        assert starts[2 * k] == starts[2 * k + 1]
        first_player = {name for game in games[2 * k:2 * k + 2] for name, side, *_ in game
                        if side == 0}
        assert first_player == {"A", "B"}  # each seat once
        assert all(name == "A" for name, side, *_ in games[2 * k] if side == 0)
    assert len(set(starts)) > 1


def test_fair_json_adds_the_pair_keys(capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(run(capsys, "tictactoe", "rules", "random", "--games", "20",
                            "--openings", "2", "--json"))
    assert list(report) == JSON_KEYS[:-1] + FAIR_KEYS + ["seconds"]
    assert report["openings"] == 2 and report["pairs"] == 10
    assert report["distinct_games"] <= 20
    low, high = report["a_pair_ci95"]
    assert 0 <= low <= report["a_pair_score"] <= high <= 1


def test_pair_scores_count_a_tie_half_and_identical_games_once(tmp_path: Path) -> None:
    suite = tmp_path / "one.txt"
    suite.write_text("cell 5, cell 1\n")  # tic-tac-toe: centre, then a corner
    result = play_match("tictactoe", Extreme(lowest=True), Extreme(lowest=False), games=10,
                        seed=0, openings=str(suite))
    assert result.pairs == 5 and result.distinct_games == 2  # one game per seating
    points = (np.array(result.outcomes) + 1) / 2
    assert result.a_pair_score == pytest.approx(points.mean())
    assert result.a_pair_ci95 == wilson_interval(points.sum() / 2, 5)


@pytest.mark.parametrize(("game", "openings"), [("tictactoe", "3"),
                                                ("four_in_a_row", "4"),
                                                ("reversi", str(SUITE))])
def test_fair_matches_are_identical_with_two_workers(game: str, openings: str) -> None:
    one = play_match(game, "random", "random", games=60, seed=1, openings=openings)
    two = play_match(game, "random", "random", games=60, seed=1, openings=openings, workers=2)
    assert two.outcomes == one.outcomes
    assert two.to_dict() | {"seconds": 0} == one.to_dict() | {"seconds": 0}


def test_fair_report_line(capsys: pytest.CaptureFixture[str]) -> None:
    lines = run(capsys, "reversi", "corner_best", "random", "--games", "6", "--openings",
                str(SUITE)).splitlines()
    assert lines[-1].startswith(f"3 pairs from the openings of {SUITE}, ")
    assert "corner_best pair score" in lines[-1] and "95% interval over pairs" in lines[-1]


@pytest.mark.parametrize(("argv", "message"), [
    (["tictactoe", "random", "random", "--games", "5", "--openings", "2"], "must be even"),
    (["tictactoe", "random", "random", "--openings", "9"], "use fewer --openings plies"),
    (["tictactoe", "random", "random", "--openings", "0"], "plies >= 1"),
    (["reversi", "random", "random", "--openings", "missing.txt"], "cannot read the opening"),
    (["tictactoe", "random", "random", "--openings", str(SUITE)], "is not a Tic-tac-toe move"),
])
def test_bad_openings_are_a_usage_error(capsys: pytest.CaptureFixture[str], argv: list[str],
                                        message: str) -> None:
    err = usage_error(capsys, *argv)
    assert message in err and err.count("\n") == 1
