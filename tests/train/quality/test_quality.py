"""The labelled position sets (``boardgym positions``) and ``boardgym quality``."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from boardgym.envs.games import game as game_record
from boardgym.train.common.backends import Backend
from boardgym.train.quality import agreement as quality_command
from boardgym.train.quality import positions as positions_command
from boardgym.train.quality.agreement import (
    POSITION_SETS,
    Position,
    default_positions,
    judge,
    labelled_file,
    load_positions,
    part_of,
    selection_positions,
    split,
)
from boardgym.train.quality.positions import LABELLERS, position_lines, stones

TICTACTOE_LIVE_POSITIONS = 4520
"""Reachable tic-tac-toe positions that are not over (5,478 legal positions, 958 finished)."""
SEED = 0
"""The seed the shipped sets were made with (train/quality/data/README.md)."""


def shipped(game: str) -> list[str]:
    return default_positions(game_record(game)).read_text(encoding="utf-8").splitlines()


# -- the sets ----------------------------------------------------------------------------------


def test_tictactoe_set_is_every_live_position() -> None:
    lines = shipped("tictactoe")
    assert len(lines) == TICTACTOE_LIVE_POSITIONS == len(set(lines))
    assert position_lines("tictactoe") == lines


@pytest.mark.parametrize(("game", "count"), [("four_in_a_row", 3), ("reversi", 2)])
def test_sampled_sets_reproduce_from_their_seed(game: str, count: int) -> None:
    assert position_lines(game, count, SEED) == shipped(game)[:count]


def test_workers_draw_the_same_set() -> None:
    assert position_lines("reversi", 2, seed=5, backend=Backend(workers=2)) == \
        position_lines("reversi", 2, seed=5)


@pytest.mark.parametrize("game", ["four_in_a_row", "reversi"])
def test_sampled_sets_are_legal_distinct_and_in_their_window(game: str) -> None:
    record = game_record(game)
    fewest, most = LABELLERS[game].stones
    lines = shipped(game)
    assert len({json.loads(text)["position"] for text in lines}) == len(lines)
    for text in lines:
        item = json.loads(text)
        state = record.rules.parse(item["position"])
        assert not record.rules.is_terminal(state)
        assert fewest <= stones(state) <= most
        legal = np.flatnonzero(record.rules.legal_mask(state)).tolist()
        assert sorted(int(action) for action in item["moves"]) == legal


def test_tictactoe_values_are_known() -> None:
    first = json.loads(shipped("tictactoe")[0])
    assert first["position"] == "---------"
    assert set(first["moves"].values()) == {0}  # every first move draws
    corner = {json.loads(text)["position"]: json.loads(text)["moves"]
              for text in shipped("tictactoe")}["XO-------"]
    assert max(corner.values()) > 0  # X wins after O's edge reply to a corner


# -- quality -----------------------------------------------------------------------------------


class WorstPlayer:
    """Plays a move of the lowest exact value (tic-tac-toe)."""

    def act(self, state, rng: np.random.Generator) -> int:  # type: ignore[no-untyped-def]
        from boardgym.agents.tictactoe import move_values

        values = move_values(int(state.me), int(state.opp))
        return min(values, key=values.__getitem__)


@pytest.fixture(scope="module")
def tictactoe_positions() -> list[quality_command.Position]:
    return load_positions("shipped:tictactoe", game_record("tictactoe"))


def test_perfect_play_scores_full_marks(tictactoe_positions) -> None:  # type: ignore[no-untyped-def]
    result = judge("tictactoe", "perfect", tictactoe_positions)
    assert result.decisive > 0 and result.kept == result.decisive
    assert result.contested > result.decisive and result.best == result.contested


def test_bad_players_score_lower(tictactoe_positions) -> None:  # type: ignore[no-untyped-def]
    worst = judge("tictactoe", WorstPlayer(), tictactoe_positions)
    assert worst.kept == 0 and worst.best == 0
    random = judge("tictactoe", "random", tictactoe_positions)
    assert 0 < random.kept < random.decisive
    assert random.kept_ci95()[1] < 1


def test_solver_plays_perfectly_on_four_in_a_row() -> None:
    positions = load_positions("shipped:four_in_a_row", game_record("four_in_a_row"))
    result = judge("four_in_a_row", "solver", positions[:30])
    assert result.kept == result.decisive and result.best == result.contested > 0


def quality_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:  # type: ignore[type-arg]
    assert quality_command.main(["tictactoe", "random", "rules", "--json", *args]) == 0
    report = json.loads(capsys.readouterr().out)
    for player in report["players"]:
        player.pop("ms_per_move")  # a time: the only field that may differ
    return report


def test_workers_give_the_same_json(capsys: pytest.CaptureFixture[str]) -> None:
    one = quality_json(capsys, "--limit", "300", "--seed", "3")
    two = quality_json(capsys, "--limit", "300", "--seed", "3", "--workers", "2")
    assert one == two
    assert one["positions"] == 300 and [p["player"] for p in one["players"]] == ["random",
                                                                                  "rules"]


def test_table_and_png(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    png = tmp_path / "quality.png"
    assert quality_command.main(["tictactoe", "perfect", "--limit", "50", "--png",
                                 str(png)]) == 0
    out = capsys.readouterr().out
    assert "perfect" in out and "100.0%" in out
    assert png.read_bytes().startswith(b"\x89PNG")


# -- bad arguments -----------------------------------------------------------------------------


def broken_file(tmp_path: Path) -> str:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"position": "XXXXXXXXXX", "moves": {"0": 1}}\n', encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("args", [
    ["chess", "random"],
    ["tictactoe", "nobody"],
    ["tictactoe"],
    ["tictactoe", "random", "--workers", "0"],
    ["tictactoe", "random", "--positions", "no/such/file.jsonl"],
    ["tictactoe", "random", "--positions", "BROKEN"],
    ["tictactoe", "random", "--png", "no/such/dir/out.png"],
])
def test_quality_bad_arguments_are_one_line(args: list[str], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    args = [broken_file(tmp_path) if arg == "BROKEN" else arg for arg in args]
    with pytest.raises(SystemExit) as exit_info:
        quality_command.main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


@pytest.mark.parametrize("args", [
    ["four_in_a_row", "--out", "OUT"],  # sampled: --count is required
    ["chess", "--count", "2", "--out", "OUT"],
    ["tictactoe", "--count", "0", "--out", "OUT"],
    ["tictactoe", "--out", "no/such/dir/set.jsonl"],
    ["tictactoe", "--stones", "2", "4", "--out", "OUT"],  # enumerated, not sampled
    ["reversi", "--count", "2", "--stones", "50", "48", "--out", "OUT"],  # fewest first
    ["reversi", "--count", "2", "--stones", "4", "10", "--out", "OUT"],  # the start has 4
    ["reversi", "--count", "2", "--stones", "50", "64", "--out", "OUT"],  # a full board
    ["reversi", "--count", "2", "--stones", "50", "52", "--player", "random", "--out", "OUT"],
])
def test_positions_bad_arguments_are_one_line(args: list[str], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(tmp_path / "set.jsonl") if arg == "OUT" else arg for arg in args]
    with pytest.raises(SystemExit) as exit_info:
        positions_command.main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


def test_positions_command_writes_a_set(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "set.jsonl"
    assert positions_command.main(["tictactoe", "--count", "5", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").splitlines() == shipped("tictactoe")[:5]
    assert "wrote 5" in capsys.readouterr().out


def test_a_stones_window_draws_its_samples_inside_it() -> None:
    record = game_record("reversi")
    lines = position_lines("reversi", 4, seed=5, window=(52, 54))
    states = [record.rules.parse(json.loads(text)["position"]) for text in lines]
    assert len(states) == 4 and all(52 <= stones(state) <= 54 for state in states)
    assert lines == position_lines("reversi", 4, seed=5, window=[52, 54])


# -- held-apart parts --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["tictactoe", "four_in_a_row", "reversi"])
def test_parts_are_disjoint_cover_the_set_and_are_about_a_fifth(name: str) -> None:
    record = game_record(name)
    positions = load_positions(default_positions(record), record)
    selection, report = split(positions, "selection"), split(positions, "report")
    texts = {part: {position.text for position in chosen}
             for part, chosen in (("selection", selection), ("report", report))}
    assert not texts["selection"] & texts["report"]
    assert len(selection) + len(report) == len(positions) == len(split(positions, "all"))
    assert texts["selection"] | texts["report"] == {position.text for position in positions}
    assert 0.1 < len(selection) / len(positions) < 0.3


def test_a_position_part_depends_on_its_text_alone_and_is_stable() -> None:
    # crc32 of the text, not Python's salted hash: the same split on every machine and run
    empty = Position("---------", {4: 0})
    assert part_of(empty) == part_of(Position("---------", {0: 1, 4: -1}))
    known = {"-X-------": "selection", "4": "selection", "X--------": "report", "44": "report"}
    assert {text: part_of(Position(text, {0: 0})) for text in known} == known
    script = ("from boardgym.train.quality.agreement import Position, part_of; "
              f"print([part_of(Position(t, {{0: 0}})) for t in {list(known)}])")
    outputs = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed},
                              check=True).stdout for seed in ("1", "2")}
    assert outputs == {f"{list(known.values())}\n"}


def test_part_option_judges_that_part(capsys: pytest.CaptureFixture[str]) -> None:
    record = game_record("tictactoe")
    positions = load_positions(default_positions(record), record)
    counts = {part: quality_json(capsys, "--part", part)["positions"]
              for part in ("all", "report", "selection")}
    assert counts == {part: len(split(positions, part)) for part in counts}
    assert counts["all"] == len(positions) == counts["report"] + counts["selection"]
    assert quality_command.main(["tictactoe", "perfect", "--part", "selection", "--limit",
                                 "20"]) == 0
    assert "20 positions (selection part)" in capsys.readouterr().out


def test_selection_positions_refuse_more_than_there_are_and_other_boards(
        tmp_path: Path) -> None:
    record = game_record("four_in_a_row")
    assert len(selection_positions(record, 10)) == 10
    with pytest.raises(ValueError, match="--eval-quality 181 or fewer"):
        selection_positions(record, 10_000)
    own = tmp_path / "own.jsonl"
    own.write_text("".join(default_positions(record).read_text(encoding="utf-8")
                           .splitlines(keepends=True)[:3]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"\(eval_quality_positions\) has 3 positions"):
        selection_positions(record, 10, path=own)
    with pytest.raises(ValueError, match="board differs"):
        selection_positions(record, 10, {"rows": 5, "columns": 6})


# -- the shipped sets, by name ------------------------------------------------------------------


def test_shipped_sets_are_named_by_their_stem_and_read_from_any_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert {"tictactoe", "reversi", "four_in_a_row", "four_in_a_row_solved",
            "four_in_a_row_selection"} <= set(POSITION_SETS.names())
    record = game_record("four_in_a_row")
    assert default_positions(record) == POSITION_SETS.file("four_in_a_row")
    solved = POSITION_SETS.file("four_in_a_row_solved")
    assert solved.name.endswith(".jsonl.gz")
    assert len(load_positions("shipped:four_in_a_row_solved", record)) == 89_590
    assert labelled_file("shipped:four_in_a_row_selection", "key", record).is_file()


def test_a_gzip_set_reads_as_its_plain_text(tmp_path: Path) -> None:
    record = game_record("tictactoe")
    text = "".join(shipped("tictactoe")[i] + "\n" for i in range(5))
    (tmp_path / "set.jsonl.gz").write_bytes(gzip.compress(text.encode("utf-8")))
    (tmp_path / "set.jsonl").write_text(text, encoding="utf-8")
    assert load_positions(tmp_path / "set.jsonl.gz", record) == \
        load_positions(tmp_path / "set.jsonl", record)
    (tmp_path / "broken.jsonl.gz").write_bytes(b"not gzip")
    with pytest.raises(ValueError, match=r"broken\.jsonl\.gz: unreadable"):
        load_positions(tmp_path / "broken.jsonl.gz", record)


def test_unknown_or_missing_sets_say_where_they_looked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    record = game_record("tictactoe")
    with pytest.raises(FileNotFoundError, match=r"no shipped position set 'nothing'; .*"
                                                r"shipped:four_in_a_row_solved"):
        load_positions("shipped:nothing", record)
    with pytest.raises(ValueError, match="pretrain_positions: no shipped position set"):
        labelled_file("shipped:nothing", "pretrain_positions", record)
    with pytest.raises(ValueError, match=re.escape(
            f"no file {tmp_path / 'tictactoe.jsonl'}; shipped:tictactoe is the shipped")):
        load_positions("tictactoe.jsonl", record)
