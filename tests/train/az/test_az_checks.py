"""``boardgym az`` checks its whole config before anything runs (one line on stderr naming
the fix, exit code 2, no traceback, no run folder), says what its loop does as it starts,
and ``--resume`` takes the checkpoint it prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from boardgym.train.az.command import main
from tests.commands import usage_error

TINY = ["--no-progress", "--iterations", "1", "--set", "games_per_iteration=4",
        "--set", "simulations=4", "--set", "considered=2", "--set", "train_steps=1",
        "--set", "batch_size=8", "--set", "eval_positions=10", "--set", "eval_games=2",
        "--set", "eval_opponents=[random]"]
"""An az run of a second or two."""


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in an empty folder (run folders go to ``runs/`` there), as in CI."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")


@pytest.mark.parametrize(("argv", "message"), [
    (["--set", "simulations=100000"],
     "simulations must be a positive integer, at most 10000, got 100000; fix it with --set "
     "simulations=32"),
    (["--set", "games_per_iteration=4096", "--set", "simulations=2000"],
     "games_per_iteration * simulations = 8192000 search nodes"),
    (["--set", "buffer_size=1000000000"], "buffer_size must be a positive integer, at most"),
    (["--set", "learning_rate=0"], "learning_rate must be a number in (0, 1], got 0.0"),
    (["--set", "dirichlet_fraction=.inf"], "dirichlet_fraction must be a number in [0, 1]"),
    (["--set", "opening_plies=[0, 1000]"], "opening_plies items must each be 0 or a positive"),
    (["--set", "eval_opponents=[random, bogus]"], "eval_opponents: unknown tictactoe player"),
    (["--set", "env_kwargs={reward: win}"], "Tic-tac-toe has no key 'reward'; valid keys: "
                                            "none; fix it with --set 'env_kwargs={}'"),
    (["--set", "eval_opponents=[random"], "--set eval_opponents: '[random' is not valid YAML"),
])
def test_az_bad_set_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                                message: str) -> None:
    assert message in usage_error(["tictactoe", *argv], capsys, main)
    assert not Path("runs").exists()


def test_az_resume_from_printed_checkpoint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tictactoe", *TINY]) == 0
    out = capsys.readouterr().out
    assert "iteration 1: 4 self-play games each at 4 simulations a move, then 1 gradient " \
           "steps of 8 positions; an evaluation every 10 iterations (10 positions, 2 games " \
           "against each of random)" in out
    printed = re.search(r"resume from (\S+)\)$", out, re.MULTILINE)
    assert printed is not None
    assert main(["--resume", printed.group(1), "--iterations", "2", "--no-progress"]) == 0
    assert "[iteration    2," in capsys.readouterr().out
