"""Noisy matches (``random_moves``, ``--random-moves P``): each side plays a uniformly random
legal move instead of its own with chance P before each of its moves, drawn from the game's
generator; P = 0 plays the games of before."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from boardgym import agents
from boardgym.envs.games import game as game_record
from boardgym.train.match import evaluate, tournament
from boardgym.train.match.evaluate import game_rng, play_match, play_moves
from boardgym.train.match.tournament import run_tournament

USAGE_ERROR = 2
JSON_KEYS = ["game", "a", "b", "games", "a_wins", "b_wins", "ties", "a_win_rate", "a_win_ci95",
             "seconds"]
REVERSI_GAME = (-1, (19, 18, 44, 29, 9, 42, 30, 11, 49, 0, 3, 20, 12, 37, 17, 56, 46, 45, 43, 16,
                     25, 47, 1, 10, 55, 34, 33, 52, 41, 40, 51, 2, 57, 63, 53, 54, 26, 58, 38,
                     13, 4, 39, 8, 60, 62, 48, 24, 5, 32, 23, 6, 14, 15, 22, 31, 21, 50, 59, 61,
                     7))
"""``corner_best`` (first) against ``random``, game 0 of seed 3, as played before noisy
matches existed."""
CONNECT_GAME = (1, (3, 3, 2, 1, 5, 4, 0, 6, 4, 1, 3, 6, 6, 2, 1, 0))
"""``lookahead:1`` (second) against ``random`` in four-in-a-row, game 2 of seed 1, likewise."""
REVERSI_OUTCOMES = (1, 1, 1, -1, 1, 1, 1, -1, 1, -1, 1, -1)
"""``play_match("reversi", "corner_best", "random", games=12, seed=3)``'s outcomes, likewise."""
BAD_CHANCES = ["1", "1.5", "-0.1", "nan", "inf", "-inf"]


class FirstLegal:
    """A player that draws nothing: the lowest legal action."""

    def __init__(self, game: str) -> None:
        self.rules = game_record(game).rules

    def act(self, state: Any, rng: np.random.Generator) -> int:
        return int(np.flatnonzero(self.rules.legal_mask(state))[0])


def reference_game(game: str, seed: int, chance: float, opening: tuple[int, ...]) -> list[int]:
    """The moves of two ``FirstLegal`` players with random moves, played plainly: before each
    move after the opening one ``random()``, and below ``chance`` one ``integers(count)``
    over the legal actions in increasing order."""
    rules, rng = game_record(game).rules, game_rng(seed, 0)
    state, moves = rules.initial_state(), list(opening)
    for action in opening:
        state = rules.apply(state, action)
    while not rules.is_terminal(state):
        legal = np.flatnonzero(rules.legal_mask(state))
        noisy = rng.random() < chance
        moves.append(int(legal[rng.integers(len(legal))]) if noisy else int(legal[0]))
        state = rules.apply(state, moves[-1])
    return moves


def run(capsys: pytest.CaptureFixture[str], module: Any, *argv: str) -> str:
    """Stdout of ``module.main(argv)``, which must succeed."""
    assert module.main(list(argv)) == 0
    return capsys.readouterr().out


def test_no_random_moves_plays_the_games_of_before() -> None:
    reversi = [agents.make("reversi", spec) for spec in ("corner_best", "random")]
    for chance in ({}, {"random_moves": 0.0}):
        assert play_moves("reversi", *reversi, game_rng(3, 0), True, **chance) == REVERSI_GAME
    connect = [agents.make("four_in_a_row", spec) for spec in ("lookahead:1", "random")]
    assert play_moves("four_in_a_row", *connect, game_rng(1, 2), False,
                      random_moves=0) == CONNECT_GAME
    result = play_match("reversi", "corner_best", "random", games=12, seed=3, random_moves=0)
    assert result.outcomes == REVERSI_OUTCOMES


@pytest.mark.parametrize(("game", "opening"), [("tictactoe", ()), ("tictactoe", (4, 0)),
                                               ("reversi", (19, 18))])
def test_random_moves_are_drawn_from_the_games_generator(game: str,
                                                         opening: tuple[int, ...]) -> None:
    players = (FirstLegal(game), FirstLegal(game))
    for chance in (0.3, 0.9):
        _, moves = play_moves(game, *players, game_rng(5, 0), True, opening=opening,
                              random_moves=chance)
        assert list(moves) == reference_game(game, 5, chance, opening)
    assert list(play_moves(game, *players, game_rng(5, 0), True, opening=opening)[1]) \
        != reference_game(game, 5, 0.9, opening)


def test_random_moves_change_the_games_and_repeat_by_seed() -> None:
    def moves(seed: int, chance: float) -> tuple[int, ...]:
        players = (FirstLegal("reversi"), FirstLegal("reversi"))
        return play_moves("reversi", *players, game_rng(seed, 0), True, random_moves=chance)[1]

    assert moves(0, 0.1) == moves(0, 0.1)
    assert len({moves(seed, 0.1) for seed in range(4)}) == 4
    assert len({moves(seed, 0.0) for seed in range(4)}) == 1  # the players draw nothing


def test_noisy_matches_are_identical_with_two_workers() -> None:
    one = play_match("tictactoe", "rules", "random", games=40, seed=2, random_moves=0.3)
    two = play_match("tictactoe", "rules", "random", games=40, seed=2, random_moves=0.3,
                     workers=2)
    assert one.outcomes == two.outcomes != play_match("tictactoe", "rules", "random", games=40,
                                                      seed=2).outcomes
    assert one.to_dict() | {"seconds": 0} == two.to_dict() | {"seconds": 0}
    fair = [play_match("tictactoe", "rules", "perfect", games=20, seed=2, openings="2",
                       random_moves=0.3, workers=workers) for workers in (1, 2)]
    assert fair[0].to_dict() | {"seconds": 0} == fair[1].to_dict() | {"seconds": 0}
    players = ("random", "rules", "perfect")
    rounds = [run_tournament("tictactoe", players, games=8, seed=1, workers=workers,
                             bootstrap=20, random_moves=0.3) for workers in (1, 2)]
    assert rounds[0].to_dict() | {"seconds": 0} == rounds[1].to_dict() | {"seconds": 0}
    np.testing.assert_array_equal(rounds[0].outcomes, rounds[1].outcomes)


def test_the_report_and_json_say_so(capsys: pytest.CaptureFixture[str]) -> None:
    base = ("tictactoe", "rules", "random", "--games", "10")
    assert "random moves" not in run(capsys, evaluate, *base)
    assert run(capsys, evaluate, *base, "--random-moves", "0.1").splitlines()[-1] == \
        "random moves: 10% of each side's moves"
    report = json.loads(run(capsys, evaluate, *base, "--random-moves", "0.1", "--json"))
    assert list(report) == [*JSON_KEYS[:-1], "random_moves", "seconds"]
    assert report["random_moves"] == 0.1
    assert list(json.loads(run(capsys, evaluate, *base, "--json"))) == JSON_KEYS


def test_a_noisy_tournament_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefix = tmp_path / "noisy"
    printed = run(capsys, tournament, "tictactoe", "random", "rules", "--games", "4",
                  "--bootstrap", "10", "--random-moves", "0.25", "--out", str(prefix))
    assert "random moves: 25% of each side's moves" in printed
    assert json.loads(prefix.with_suffix(".json").read_text())["random_moves"] == 0.25
    assert "random moves: 25%" in prefix.with_suffix(".md").read_text()
    plain = run_tournament("tictactoe", ("random", "rules"), games=4, bootstrap=10)
    assert "random_moves" not in plain.to_dict()


@pytest.mark.parametrize("value", [*BAD_CHANCES, "abc"])
def test_a_bad_chance_is_one_line_and_exit_2(value: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    prefix = tmp_path / "out"
    for module, argv in ((evaluate, ["tictactoe", "rules", "random"]),
                         (tournament, ["tictactoe", "rules", "random", "--out", str(prefix)])):
        with pytest.raises(SystemExit) as exit_info:
            module.main([*argv, f"--random-moves={value}"])
        assert exit_info.value.code == USAGE_ERROR
        captured = capsys.readouterr()
        assert captured.out == "" and len(captured.err.splitlines()) == 1
        assert "--random-moves" in captured.err and "[0, 1)" in captured.err
        assert "Traceback" not in captured.err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("chance", [1, 1.5, -0.1, math.nan, math.inf, True, "0.1"])
def test_the_library_refuses_a_bad_chance(chance: Any) -> None:
    with pytest.raises(ValueError, match=r"random_moves must be a chance in \[0, 1\)") as error:
        play_match("tictactoe", "rules", "random", games=2, random_moves=chance)
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match=r"random_moves must be a chance in \[0, 1\)"):
        run_tournament("tictactoe", ("random", "rules"), games=2, random_moves=chance)
    players = [agents.make("tictactoe", "random")] * 2
    with pytest.raises(ValueError, match=r"random_moves must be a chance in \[0, 1\)"):
        play_moves("tictactoe", *players, game_rng(0, 0), True, random_moves=chance)
