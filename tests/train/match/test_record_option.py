"""``--record FILE`` on evaluate and tournament: every game, in game order, reproducible from
the seed, counts equal to the printed result, the same for any number of workers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boardgym import agents
from boardgym.envs.games.records import GameRecord, read_records
from boardgym.train.cli import main
from boardgym.train.match.evaluate import game_rng, play_moves
from tests.commands import usage_error


def a_wins(records: list[GameRecord]) -> tuple[int, int, int]:
    """A's wins, B's wins and the ties counted from the records' seats and results."""
    a = sum(record.winner() == record.a for record in records)
    ties = sum(record.winner() is None for record in records)
    return a, len(records) - a - ties, ties


def evaluate(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    """``boardgym evaluate ... --json``: its JSON object."""
    assert main(["evaluate", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_file_counts_what_evaluate_prints(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.jsonl"
    result = evaluate(capsys, "tictactoe", "rules", "random", "--games", "40", "--seed", "3",
                      "--record", str(path))
    records = read_records(path)
    assert [record.index for record in records] == list(range(40))
    assert a_wins(records) == (result["a_wins"], result["b_wins"], result["ties"])
    assert {record.players[record.a] for record in records} == {"rules"}
    assert {record.a for record in records} == {0, 1}
    assert all(record.seed == 3 and record.source == "evaluate" for record in records)


def test_a_record_is_reproduced_from_its_seed(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.jsonl"
    evaluate(capsys, "four_in_a_row", "lookahead:2", "random", "--games", "6",
             "--rows", "5", "--columns", "6", "--record", str(path))
    a, b = agents.make("four_in_a_row", "lookahead:2"), agents.make("four_in_a_row", "random")
    for record in read_records(path):
        assert record.options == {"rows": 5, "columns": 6}
        rng = game_rng(record.seed, record.index)
        a_first = bool(rng.integers(2))  # evaluate's seat draw comes first
        assert a_first == (record.a == 0)
        _, moves = play_moves("four_in_a_row", a, b, rng, a_first, dict(record.options))
        assert moves == record.moves


def test_workers_write_the_same_file(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    common = ["tictactoe", "random", "rules", "--games", "60", "--seed", "5"]
    evaluate(capsys, *common, "--record", str(one))
    evaluate(capsys, *common, "--workers", "2", "--record", str(two))
    assert one.read_text() == two.read_text()


def test_fair_games_record_their_openings(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "fair.jsonl"
    evaluate(capsys, "tictactoe", "rules", "random", "--games", "8", "--openings", "2",
             "--record", str(path))
    records = read_records(path)
    assert all(record.opening == 2 for record in records)
    for first, second in zip(records[::2], records[1::2], strict=True):
        assert first.moves[:2] == second.moves[:2] and (first.a, second.a) == (0, 1)


def test_tournament_records_every_pairing(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "round.jsonl"
    assert main(["tournament", "tictactoe", "random", "rules", "perfect", "--games", "4",
                 "--out", str(tmp_path / "t"), "--record", str(path)]) == 0
    capsys.readouterr()
    records = read_records(path)
    assert len(records) == 3 * 4 and [r.index for r in records] == list(range(12))
    table = json.loads((tmp_path / "t.json").read_text())
    pairs = [(0, 1), (0, 2), (1, 2)]
    for k, (i, j) in enumerate(pairs):
        games = records[4 * k:4 * k + 4]
        assert {r.players[r.a] for r in games} == {table["players"][i]}
        assert {r.players[1 - r.a] for r in games} == {table["players"][j]}
        assert all(r.source == "tournament" for r in games)


def test_another_file_is_kept_without_force(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("keep me\n")
    argv = ["evaluate", "tictactoe", "random", "rules", "--games", "2", "--record", str(other)]
    assert "--force" in usage_error(argv, capsys) and other.read_text() == "keep me\n"
    assert main([*argv, "--force"]) == 0
    assert len(read_records(other)) == 2


@pytest.mark.parametrize("where", ["folder", "no/such/folder/games.jsonl"])
def test_a_record_path_that_cannot_be_written(where: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path if where == "folder" else tmp_path / where
    err = usage_error(["tournament", "tictactoe", "random", "rules", "--games", "2", "--out",
                       str(tmp_path / "t"), "--record", str(target)], capsys)
    assert err.startswith("boardgym tournament: error: --record")
    assert not (tmp_path / "t.json").exists()
