"""Game records through the public API: the notation of each game, passes, round trips of
played games, and every way a record can be wrong refused with one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardgym import agents
from boardgym.envs.games import game
from boardgym.envs.games.records import (
    PASS,
    RECORD_FORMAT,
    GameRecord,
    RecordError,
    RecordWriter,
    is_record_file,
    parse_records,
    read_records,
)
from boardgym.train.match.evaluate import game_rng, play_moves

PLAYERS = {"reversi": ("corner_best", "random"), "four_in_a_row": ("lookahead:2", "random"),
           "tictactoe": ("rules", "random")}


def played(name: str, index: int, options: dict[str, int] | None = None) -> GameRecord:
    """Game ``index`` of a seeded match of the game's two ``PLAYERS``, as a record."""
    a, b = (agents.make(name, spec) for spec in PLAYERS[name])
    _, moves = play_moves(name, a, b, game_rng(0, index), True, options)
    return GameRecord(name, moves, PLAYERS[name], options or {}, seed=0, index=index)


def reversi_with_pass() -> GameRecord:
    """The first seeded Reversi game of ``played`` in which a side passes."""
    return next(record for index in range(50)
                if PASS in (record := played("reversi", index)).notation())


def line(record: GameRecord, **changes: object) -> str:
    """``record``'s JSON line with some keys changed (a key set to None is removed)."""
    data = record.to_dict()
    data.update(changes)
    return json.dumps({key: value for key, value in data.items() if value is not None})


def test_each_game_writes_its_community_notation() -> None:
    reversi = GameRecord("othello", (19, 18), ("a", "b"))  # d3 then c3
    assert reversi.game == "reversi"
    assert reversi.notation() == ["d3", "c3"]
    connect = GameRecord("connect_four", (3, 3, 4, 2), ("a", "b"))
    assert connect.to_dict()["moves"] == "4 4 5 3" and connect.to_dict()["start"] == ""
    ttt = GameRecord("tictactoe", (4, 0, 8), ("a", "b"))
    assert ttt.to_dict()["moves"] == "5 1 9" and ttt.to_dict()["start"] == "---------"


def test_a_finished_tictactoe_game_has_its_result() -> None:
    won = GameRecord("tictactoe", (0, 3, 1, 4, 2), ("X player", "O player"))
    assert won.finished and won.result == "1-0" and won.winner() == 0
    lost = GameRecord("tictactoe", (3, 0, 4, 1, 8, 2), ("a", "b"))
    assert lost.result == "0-1" and lost.winner() == 1
    unfinished = GameRecord("tictactoe", (4,), ("a", "b"))
    assert unfinished.result == "*" and not unfinished.finished and unfinished.winner() is None


def test_passes_are_written_where_the_side_to_move_has_no_move() -> None:
    record = reversi_with_pass()
    rules = game("reversi").rules
    tokens, states = record.notation(), record.states()
    moves_before = 0
    for position, token in enumerate(tokens):
        if token == PASS:
            before, after = states[moves_before - 1], states[moves_before]
            assert after.to_move == before.to_move and not rules.is_terminal(after)
            assert tokens[position - 1] != PASS
        else:
            moves_before += 1
    assert moves_before == len(record.moves)


@pytest.mark.parametrize("name", list(PLAYERS))
@settings(max_examples=5, deadline=None)
@given(index=st.integers(0, 10_000))
def test_played_games_read_back_equal(name: str, index: int) -> None:
    record = played(name, index)
    assert parse_records(record.to_json()) == [record]
    assert record.finished


def test_a_four_in_a_row_board_size_is_kept() -> None:
    options = {"rows": 5, "columns": 8, "connect": 4}
    record = played("four_in_a_row", 3, options)
    back = parse_records(record.to_json())[0]
    assert back.options == options and back.moves == record.moves
    assert game("four_in_a_row").rules.is_terminal(back.final_state())


def test_a_game_from_a_start_position() -> None:
    record = GameRecord("tictactoe", (2, 3, 6), ("a", "b"), start="XO--X---O")
    assert record.notation() == ["3", "4", "7"] and record.result == "1-0"
    assert parse_records(record.to_json()) == [record]
    with pytest.raises(RecordError, match="move 1: 9 is not legal here"):
        parse_records(line(record, moves="9"))


BAD_LINES = {
    "not JSON": ("{nope", "line 2: not JSON"),
    "not an object": ("[1, 2]", "a record is a JSON object"),
    "missing key": (None, "no 'moves'"),
    "other format": ("format", "format 'other/9' is not"),
    "unknown game": ("game", "chess"),
    "bad option": ("options", "has no option"),
    "bad start": ("start", "the start position"),
    "unknown move": ("unknown", "move 3: 'z9' is not a Reversi move"),
    "illegal move": ("illegal", "move 1: a1 is not legal here"),
    "stray pass": ("stray", "move 2: 'pass' but the side to move has a legal move"),
    "missing pass": ("missing", "write 'pass' first"),
    "truncated": ("truncated", "the result is"),
    "wrong type": ("players", "'players'"),
}


def bad_line(case: str, record: GameRecord) -> str:
    """A record line made wrong in the way ``case`` says."""
    kind = BAD_LINES[case][0]
    tokens = record.notation()
    moves = {"unknown": " ".join([*tokens[:2], "z9", *tokens[3:]]),
             "illegal": " ".join(["a1", *tokens[1:]]),
             "stray": " ".join([tokens[0], PASS, *tokens[1:]]),
             "missing": " ".join(tokens[:tokens.index(PASS)] + tokens[tokens.index(PASS) + 1:]),
             "truncated": " ".join(tokens[:-1])}
    if kind in moves:
        return line(record, moves=moves[kind])
    values = {"format": "other/9", "game": "chess", "options": {"rows": 5},
              "start": "XX", "players": ["one"]}
    if kind in values:
        return line(record, **{kind: values[kind]})
    return kind if kind is not None else line(record, moves=None)


@pytest.mark.parametrize("case", list(BAD_LINES))
def test_a_bad_record_is_refused_with_one_line(case: str) -> None:
    record = reversi_with_pass()
    text = "\n" + bad_line(case, record)  # the record is on line 2
    with pytest.raises(RecordError) as error:
        parse_records(text, "games.jsonl")
    message = str(error.value)
    assert "\n" not in message and message.startswith("games.jsonl, line 2")
    assert BAD_LINES[case][1] in message, message
    if case not in ("not JSON", "not an object"):
        assert f"(game {record.index})" in message


def test_an_empty_file_has_no_records(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="has no game records"):
        parse_records("\n\n")
    binary = tmp_path / "x.bin"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(RecordError, match="not a text file"):
        read_records(binary)


def test_the_writer_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    records = [played("tictactoe", index) for index in range(3)]
    with RecordWriter(path) as out:
        for record in records:
            out.write(record)
        assert not path.exists()
    assert read_records(path) == records and is_record_file(path)
    with pytest.raises(KeyboardInterrupt), RecordWriter(path) as out:
        out.write(records[0])
        raise KeyboardInterrupt
    assert read_records(path) == records
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.jsonl"]


def test_record_files_are_recognised(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    assert not is_record_file(other) and not is_record_file(tmp_path / "missing")
    mine = tmp_path / "mine.jsonl"
    mine.write_text(json.dumps({"format": RECORD_FORMAT}) + "\n")
    assert is_record_file(mine)


def test_records_of_the_same_moves_are_equal_and_carry_the_match() -> None:
    record = played("tictactoe", 4)
    data = record.to_dict()
    assert data["seed"] == 0 and data["index"] == 4 and "a" not in data
    assert np.array_equal(record.moves, parse_records(record.to_json())[0].moves)


def test_a_notebook_shows_the_final_position() -> None:
    import xml.etree.ElementTree as ElementTree

    record = GameRecord("tictactoe", (4, 0, 8), ("a", "b"))
    root = ElementTree.fromstring(record._repr_svg_())
    classes = [element.get("class", "") for element in root.iter()]
    assert sum(c.startswith("stone first") for c in classes) == 2
    assert sum(c.startswith("stone second") for c in classes) == 1
    assert any(c.split()[0] == "last" for c in classes if c)
