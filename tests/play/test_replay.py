"""``boardgym replay FILE [--game N]`` and ``boardgym play --record FILE``, in process."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from boardgym import agents
from boardgym.envs.games.records import PASS, GameRecord, RecordWriter, read_records
from boardgym.play.flow import Options
from boardgym.play.terminal import Terminal
from boardgym.train.cli import main
from boardgym.train.match.evaluate import game_rng, play_moves
from tests.commands import usage_error


def reversi_records(path: Path, games: int = 6) -> list[GameRecord]:
    """Seeded corner_best-random Reversi games written to ``path``."""
    a, b = agents.make("reversi", "corner_best"), agents.make("reversi", "random")
    records = []
    for index in range(games):
        _, moves = play_moves("reversi", a, b, game_rng(1, index), index % 2 == 0)
        seats = ("corner_best", "random") if index % 2 == 0 else ("random", "corner_best")
        records.append(GameRecord("reversi", moves, seats, a=index % 2, seed=1, index=index,
                                  source="evaluate"))
    with RecordWriter(path) as out:
        for record in records:
            out.write(record)
    return records


def test_the_summary_counts_each_players_wins(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.jsonl"
    records = reversi_records(path)
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    wins = sum(record.players[record.winner()] == "corner_best" for record in records
               if record.winner() is not None)
    assert f"6 games in {path} (6 reversi)" in out
    assert f"corner_best wins: {wins}\n" in out
    assert "--game 0 shows game 0" in out


def test_a_game_is_shown_move_by_move(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.jsonl"
    records = reversi_records(path)
    shown = next(record for record in records if PASS in record.notation())
    assert main(["replay", str(path), "--game", str(shown.index)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"Game {shown.index}: {shown.players[0]} (X), {shown.players[1]} (O)"
    plies = [line for line in lines if line.split(".")[0].isdigit() and " plays " in line]
    assert len(plies) == len(shown.moves)
    assert plies[0].endswith(f"plays {shown.notation()[0]}")
    passes = shown.notation().count(PASS)
    assert out.count("has no legal move and passes.") == passes
    final = shown.final_state()
    counts = [bin(int(bits)).count("1") for bits in (final.me, final.opp)]
    assert lines[-1].startswith(f"X: {counts[final.to_move]}  O: {counts[1 - final.to_move]}")
    assert lines[-1].endswith("wins.") or lines[-1].endswith("tie.")


def test_pause_waits_for_enter_and_quit_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.jsonl"
    reversi_records(path, games=1)
    typed = iter(["", "", "quit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(typed))
    assert main(["replay", str(path), "--game", "0", "--pause"]) == 0
    out = capsys.readouterr().out
    assert "2. O plays" in out and "3. X plays" not in out


@pytest.mark.parametrize(("content", "message"), [
    (None, "No such file"),
    ("hello\n", "line 1: not JSON"),
    ('{"format": "boardgym-record/1"}\n', "line 1: no 'game'"),
])
def test_a_bad_file_is_one_line(content: str | None, message: str, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.jsonl"
    if content is not None:
        path.write_text(content)
    err = usage_error(["replay", str(path)], capsys)
    assert err.startswith("boardgym replay: error:") and message in err


def test_a_game_not_in_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.jsonl"
    reversi_records(path, games=3)
    assert "its games are numbered 0 to 2" in usage_error(["replay", str(path), "--game", "3"],
                                                          capsys)


def test_play_adds_each_finished_game(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    cells = itertools.cycle("123456789")  # a taken cell is refused and asked again
    again = iter(["yes", "no"])

    def answer(prompt: str) -> str:
        return next(again) if "again" in prompt else next(cells)

    options = Options("tictactoe", "perfect", 0, "you", {}, False, 2, record_file=str(path))
    Terminal(options, agents.make("tictactoe", "perfect"), np.random.default_rng(2),
             read=answer, write=lambda line: None).run()
    records = read_records(path)
    assert len(records) == 2
    assert all(r.players == ("human", "perfect") and r.finished and r.source == "play"
               and r.seed == 2 for r in records)


def test_play_refuses_a_file_of_something_else(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("keep me\n")
    err = usage_error(["play", "tictactoe", "--record", str(other)], capsys)
    assert "holds something other than game records" in err
    assert other.read_text() == "keep me\n"
