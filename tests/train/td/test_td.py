"""``boardgym td`` through its command: a tiny run learns tic-tac-toe, a resumed run is the
same run, bad input is one line, and the run folder holds what the docs say."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boardgym.agents.ntuple import checkpoint
from boardgym.envs.games import game as game_record
from boardgym.train import cli
from boardgym.train.quality.agreement import default_positions, judge, load_positions, split
from boardgym.train.td import run
from tests.commands import usage_error

TINY = ["--set", "chunk_games=5000", "--set", "eval_every=30000", "--set", "eval_positions=200",
        "--set", "eval_opponents=[rules]", "--no-progress"]


def run_folder(runs: Path) -> Path:
    (folder,) = runs.iterdir()
    return folder


def test_a_tiny_run_learns_tictactoe_to_perfect_quality(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["td", "tictactoe", "--games", "60000", "--runs-dir", str(tmp_path),
                     *TINY]) == 0
    out = capsys.readouterr().out
    assert "done:" in out and "ntuple:0@" in out
    folder = run_folder(tmp_path)
    names = {path.name for path in (folder / "checkpoints").iterdir()}
    assert {"last.zip", "model.zip", "best.zip"} <= names
    history = json.loads((folder / "eval.json").read_text())
    assert [record["step"] for record in history] == [30000, 60000]
    assert (folder / "best.json").is_file() and (folder / "progress.csv").is_file()
    record = game_record("tictactoe")
    report = split(load_positions(default_positions(record), record), "report")
    quality = judge("tictactoe", f"ntuple:0@{folder / 'checkpoints' / 'model.zip'}", report)
    assert quality.kept == quality.decisive
    assert checkpoint.load(folder / "checkpoints" / "model.zip").games == 60000
    assert cli.main(["plot", str(folder)]) == 0
    assert (folder / "learning_curve.png").stat().st_size > 0


def test_a_run_stopped_by_ctrl_c_resumes_as_the_same_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    settings = ["--games", "40000", "--set", "tcl=tcl", "--set", "trace_decay=0.5", "--set",
                "layout=lines", "--set", "stages=2", "--set", "checkpoint_every=10000", *TINY]
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    assert cli.main(["td", "tictactoe", "--runs-dir", str(straight), *settings]) == 0
    chunks = []
    play_chunk = run.play_chunk

    def interrupted(*args: object) -> dict:
        if len(chunks) == 5:
            raise KeyboardInterrupt
        chunks.append(1)
        return play_chunk(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(run, "play_chunk", interrupted)
    assert cli.main(["td", "tictactoe", "--runs-dir", str(stopped), *settings]) == 130
    monkeypatch.undo()
    folder = run_folder(stopped)
    assert checkpoint.load(folder / "checkpoints" / "last.zip").games == 20000
    assert cli.main(["td", "--resume", str(folder / "checkpoints" / "last.zip"),
                     "--no-progress"]) == 0
    one, two = (run_folder(straight) / "checkpoints" / "last.zip",
                folder / "checkpoints" / "last.zip")
    assert checkpoint.load(one).weights.tobytes() == checkpoint.load(two).weights.tobytes()
    for name in checkpoint.TRAINER_ENTRIES:
        assert np.array_equal(checkpoint.read_array(one, name), checkpoint.read_array(two, name))


@pytest.mark.parametrize("argv", [
    ["td", "tictactoe", "--set", "layout=bogus"],
    ["td", "tictactoe", "--set", "tcl=maybe"],
    ["td", "tictactoe", "--set", "values=4"],
    ["td", "tictactoe", "--set", "eval_games=3"],
    ["td", "tictactoe", "--set", "eval_positions=5000"],
    ["td", "tictactoe", "--set", "eval_noisy_opponents=[rules]"],
    ["td", "four_in_a_row", "--set", "env_kwargs={rows: 5}"],
    ["td", "reversi", "--set", "layout=snakes:1001:4:0"],
    ["td", "chess"],
    ["td"],
])
def test_bad_input_is_one_line_and_leaves_no_folder(argv: list[str], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    usage_error([*argv, "--runs-dir", str(tmp_path / "runs")], capsys)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_resume_cannot_change_the_network(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["td", "tictactoe", "--games", "5000", "--runs-dir", str(tmp_path),
                     *TINY]) == 0
    folder = run_folder(tmp_path)
    before = (folder / "config.yaml").read_text()
    err = usage_error(["td", "--resume", str(folder), "--set", "layout=lines"], capsys)
    assert "layout" in err
    assert (folder / "config.yaml").read_text() == before
