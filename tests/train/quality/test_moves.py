"""Move sets (``boardgym positions GAME --player SPEC``): positions of a player's own games,
each with the move the player chooses there and the game's result, for pretraining where no
exact solver reaches."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boardgym.agents.tictactoe import move_values
from boardgym.envs.games import game as game_record
from boardgym.train.common.backends import Backend
from boardgym.train.quality import positions as positions_command
from boardgym.train.quality.moves import MoveLabel, is_move_set, load_moves, move_lines
from boardgym.train.quality.positions import position_lines

TICTACTOE = game_record("tictactoe")


def labels_of(lines: list[str]) -> list[MoveLabel]:
    items = [json.loads(text) for text in lines]
    return [MoveLabel(item["position"], item["move"], item["result"]) for item in items]


def test_a_set_is_distinct_legal_positions_with_the_players_moves() -> None:
    labels = labels_of(move_lines("tictactoe", "perfect", 60, seed=3))
    assert len(labels) == 60 == len({label.text for label in labels})
    rules = TICTACTOE.rules
    for label in labels:
        state = rules.parse(label.text)
        assert not rules.is_terminal(state)
        values = move_values(int(state.me), int(state.opp))
        best = max(values.values())
        assert label.move in values and np.sign(values[label.move]) == np.sign(best)
        assert label.result in (-1, 0, 1)


def test_results_are_each_games_end_for_the_side_to_move() -> None:
    """A move that wins on the spot is played unless explored away (one time in ten), and
    then the mover has won: most such labels say so."""
    rules = TICTACTOE.rules
    winning = []
    for label in labels_of(move_lines("tictactoe", "rules", 200, seed=1)):
        child = rules.apply(rules.parse(label.text), label.move)
        if rules.is_terminal(child) and rules.result(child, 1 - child.to_move) == 1:
            winning.append(label.result)
    assert len(winning) >= 20 and winning.count(1) >= 0.8 * len(winning)


def test_a_set_reproduces_from_its_seed_on_any_number_of_workers() -> None:
    lines = move_lines("tictactoe", "rules", 30, seed=2)
    assert move_lines("tictactoe", "rules", 12, seed=2) == lines[:12]
    assert move_lines("tictactoe", "rules", 30, seed=2, backend=Backend("local", 2)) == lines
    assert move_lines("tictactoe", "rules", 30, seed=4) != lines


def test_the_command_writes_a_set_that_loads(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "moves.jsonl"
    assert positions_command.main(["four_in_a_row", "--player", "lookahead:1", "--count", "25",
                                   "--seed", "0", "--out", str(out)]) == 0
    assert "wrote 25 four_in_a_row moves of lookahead:1" in capsys.readouterr().out
    assert is_move_set(out)
    labels = load_moves(out, game_record("four_in_a_row"))
    assert [label.line() for label in labels] == out.read_text(encoding="utf-8").splitlines()


def test_an_exact_set_is_not_a_move_set(tmp_path: Path) -> None:
    exact = tmp_path / "exact.jsonl"
    exact.write_text("\n".join(position_lines("tictactoe", 3)) + "\n", encoding="utf-8")
    assert not is_move_set(exact)


@pytest.mark.parametrize(("line", "why"), [
    ('{"position": "X--------", "move": 0, "result": 1}', "illegal move"),
    ('{"position": "X--------", "move": 9, "result": 1}', "illegal move"),
    ('{"position": "XXX-OO---", "move": 3, "result": 1}', "finished game"),
    ('{"position": "X--------", "move": 4, "result": 2}', "result"),
    ('{"position": "X--------", "result": 1}', "move"),
    ('{"position": "Xx-------", "move": 4, "result": 0}', ""),
])
def test_a_bad_label_names_its_line(tmp_path: Path, line: str, why: str) -> None:
    path = tmp_path / "moves.jsonl"
    good = '{"position": "---------", "move": 4, "result": 0}'
    path.write_text(f"{good}\n{line}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f":2: not a tictactoe move label .*{why}"):
        load_moves(path, TICTACTOE)


@pytest.mark.parametrize("args", [
    ["tictactoe", "--player", "nosuch", "--count", "2", "--out", "OUT"],
    ["tictactoe", "--player", "rules", "--out", "OUT"],  # a move set needs --count
    ["tictactoe", "--player", "rules", "--count", "0", "--out", "OUT"],
    ["tictactoe", "--player", "no/such/checkpoint.zip", "--count", "2", "--out", "OUT"],
    ["tictactoe", "--player", "rules", "--count", "2", "--max-nodes", "9", "--out", "OUT"],
])
def test_bad_arguments_are_one_line(args: list[str], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "moves.jsonl"
    with pytest.raises(SystemExit) as exit_info:
        positions_command.main([str(out) if arg == "OUT" else arg for arg in args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err
    assert not out.exists()
