"""Every command-line error of every subcommand: one line on stderr, exit code 2, no
traceback, and no run folder left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from boardgym.train.cli import main

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = str(ROOT / "checkpoints" / "tictactoe.zip")
USAGE_ERROR = 2
MAKES_RUNS = ("train", "selfplay")

BAD_ARGUMENTS = [
    [],
    ["no_such_command"],
    ["evaluate"],
    ["evaluate", "chess", "random", "random"],
    ["evaluate", "tictactoe", "random", "nobody"],
    ["evaluate", "tictactoe", "random", "random", "--games", "0"],
    ["evaluate", "tictactoe", "random", "random", "--seed", "-1"],
    ["evaluate", "tictactoe", "random", "random", "--workers", "many"],
    ["evaluate", "tictactoe", "random", "random", "--bogus"],
    ["evaluate", "reversi", "random", "random", "--rows", "5"],
    ["evaluate", "four_in_a_row", "random", "random", "--connect", "9"],
    ["evaluate", "tictactoe", "missing/model.zip", "random"],
    ["evaluate", "reversi", CHECKPOINT, "random"],
    ["play"],
    ["play", "chess"],
    ["play", "tictactoe", "--seed", "-1"],
    ["play", "tictactoe", "--side", "green"],
    ["play", "tictactoe", "--first", "never"],
    ["play", "reversi", "--numpad"],
    ["play", "tictactoe", "--opponent", "missing/model.zip"],
    ["train"],
    ["train", "chess"],
    ["train", "tictactoe", "--seed", "-1"],
    ["train", "tictactoe", "--timesteps", "0"],
    ["train", "tictactoe", "--set", "n_steps=banana"],
    ["train", "tictactoe", "--set", "torch_threads=100000"],
    ["train", "tictactoe", "--set", "no_such_key=1"],
    ["train", "tictactoe", "--set", "novalue"],
    ["train", "tictactoe", "--set", "mobility=true"],
    ["train", "tictactoe", "--set", "threats=4"],
    ["train", "tictactoe", "--set", "threats=-2"],
    ["train", "tictactoe", "--set", "net_arch=[64, -1]"],
    ["train", "tictactoe", "--opponent", "nobody"],
    ["train", "tictactoe", "--opponent", str(ROOT / "checkpoints" / "reversi.zip")],
    ["train", "tictactoe", "--config", "missing.yaml"],
    ["train", "--resume", "no/such/run"],
    ["selfplay", "tictactoe", "--seed", "-1"],
    ["selfplay", "tictactoe", "--set", "snapshot_margin=2"],
    ["tournament", "tictactoe", "random"],
    ["tournament", "chess", "random", "rules"],
    ["tournament", "tictactoe", "random", "rules", "--games", "-3"],
    ["tournament", "tictactoe", "random", "rules", "--anchor", "perfect"],
    ["plot"],
    ["plot", "no/such/run"],
]


@pytest.mark.parametrize("argv", BAD_ARGUMENTS, ids=" ".join)
def test_a_bad_argument_is_one_line_and_exit_code_2(argv: list[str], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    if argv[:1] and argv[0] in MAKES_RUNS:
        argv = [*argv, "--runs-dir", str(runs)]
    try:
        code = main(argv)
    except SystemExit as exit_info:
        code = exit_info.code
    err = capsys.readouterr().err
    assert code == USAGE_ERROR
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "error" in err and "Traceback" not in err
    assert not runs.exists() or not any(runs.iterdir()), "a run folder was left behind"
