"""``boardgym bench``: a tiny run in-process, its opponents, caps and its --markdown file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boardgym.bench.throughput import (
    MAX_REPEATS,
    MAX_SECONDS,
    MAX_SIZE,
    bench_opponents,
    random_actions,
)
from boardgym.envs.games import GAMES, players
from boardgym.train.cli import main
from tests.commands import usage_error

TINY = ["bench", "--seconds", "0.01", "--repeats", "1", "--no-peers", "--no-search", "--sizes",
        "1"]


def test_bench_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "table.md"
    assert main([*TINY, "--games", "tictactoe", "--markdown", str(table)]) == 0
    out = capsys.readouterr().out.splitlines()
    measured = {line.split()[4] for line in out if "vector env" in line}
    assert measured == set(bench_opponents(GAMES["tictactoe"])) and "az" not in measured
    assert "| tictactoe | vector env N=1 | random |" in table.read_text()
    assert main([*TINY, "--games", "tictactoe", "--markdown", str(table)]) == 0, "its own table"


def test_bench_opponents_play_batched_as_bare_names() -> None:
    for record in GAMES.values():
        names = bench_opponents(record)
        assert "random" in names and "az" not in names
        assert all(players.make_batched(record, name) is not None for name in names)


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--seconds", "nan", f"at most {MAX_SECONDS:g}"), ("--seconds", "0", "> 0"),
    ("--seconds", "1e300", "MAX_SECONDS"), ("--repeats", str(MAX_REPEATS + 1), "MAX_REPEATS"),
    ("--sizes", str(MAX_SIZE + 1), "MAX_SIZE"), ("--repeats", "0", ">= 1"),
])
def test_bench_refuses_bad_input_in_one_line(option: str, value: str, message: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert message in usage_error([*TINY, option, value], capsys, main)


def test_bench_markdown_refuses_foreign_file(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n")
    with pytest.raises(SystemExit) as done:
        main([*TINY, "--games", "tictactoe", "--markdown", str(notes)])
    assert done.value.code == 2 and "--force" in capsys.readouterr().err
    assert notes.read_text() == "# my notes\n"


def test_the_bench_agent_plays_uniformly_among_legal_moves() -> None:
    masks = np.zeros((3000, 9), dtype=bool)
    masks[:, [1, 4, 8]] = True
    masks[::3] = False
    actions, moved = random_actions(masks, np.random.default_rng(0))
    assert moved == 2000
    assert set(actions[::3]) == {0}
    played = np.delete(actions, np.s_[::3])
    counts = np.bincount(played, minlength=9)
    assert set(np.flatnonzero(counts)) == {1, 4, 8}
    assert counts[[1, 4, 8]].min() > 600
