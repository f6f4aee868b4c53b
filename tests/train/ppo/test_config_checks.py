"""``boardgym train`` and ``boardgym selfplay`` check their whole config before anything
runs: each bad ``--set`` value or ``--config`` file is one line on stderr naming the fix,
exit code 2, no traceback, no run folder. A run says what each long phase does, and
``--resume`` takes the checkpoint it prints."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from boardgym.train.ppo import selfplay
from boardgym.train.ppo import trainer as ppo
from tests.commands import usage_error
from tests.runs import TINY_RUN

Main = Callable[[Sequence[str] | None], int]
LABELS = "".join(line + "\n" for line in (
    '{"position": "3521511642", "moves": {"0": -2, "1": 3, "2": 4, "3": 6, "4": 4, "5": -1, '
    '"6": -2}}',
    '{"position": "53554643446", "moves": {"0": -6, "1": -6, "2": 5, "3": 1, "4": -6, '
    '"5": -6, "6": -15}}',
    '{"position": "6321626413443655", "moves": {"0": -2, "1": 1, "2": 3, "3": 3, "4": -2, '
    '"5": -2, "6": -2}}'))
"""Three four-in-a-row positions the exact solver labelled (``boardgym positions``)."""
TINY = [*TINY_RUN, "--set", "eval_quality=0", "--set", "teacher=null",
        "--set", "opening_plies=null", "--set", "eval_every=256", "--set", "threats=0",
        "--set", "windows=false", "--set", "landing=false", "--set", "head_planes=0",
        "--set", "members=1", "--set", "average_symmetries=false", "--set", "gated=false",
        "--set", "pretrain_children=false", "--set", "eval_start=false",
        "--set", "checkpoint_every=256"]
"""A run of a second or two on any game's config (no pretraining unless set)."""


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in an empty folder (run folders go to ``runs/`` there), as in CI."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")


def refusal(capsys: pytest.CaptureFixture[str], *argv: str, main: Main = ppo.main) -> str:
    """The one line ``main(argv)`` refuses ``argv`` with (exit 2, no run folder)."""
    err = usage_error(argv, capsys, main)
    assert not Path("runs").exists()
    return err.strip()


def test_set_learning_rate_negative_refused(capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(capsys, "tictactoe", "--timesteps", "100", "--set", "learning_rate=-1")
    assert "learning_rate must be a number in [0, 1], got -1.0; fix it with --set " \
           "learning_rate=" in err


def test_gamma_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(capsys, "tictactoe", "--set", "gamma=2")
    assert "gamma must be a number in (0, 1], got 2.0; fix it with --set gamma=0.99" in err
    assert "got nan" in refusal(capsys, "tictactoe", "--set", "gae_lambda=.nan")


def test_set_malformed_yaml_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(capsys, "tictactoe", "--set", "net_arch=[64,64")
    assert "--set net_arch: '[64,64' is not valid YAML" in err
    assert "--set 'net_arch=...'" in err


def test_set_batch_size_that_leaves_one_position_refused(capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    err = refusal(capsys, "tictactoe", "--set", "batch_size=3")  # 32 x 32 = 3 * 341 + 1
    assert "batch_size=3 leaves a last minibatch of 1 of the 1024 positions" in err
    assert "--set batch_size=2" in err
    assert "batch_size must be an integer in [2, " in refusal(capsys, "tictactoe", "--set",
                                                               "batch_size=1")


def test_set_env_kwargs_unknown_key(capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(capsys, "four_in_a_row", "--set", "env_kwargs={rows:5}")
    assert "Four-in-a-row has no key 'rows:5'" in err
    assert "valid keys: rows, columns, connect, first_player, illegal_action, reward" in err
    assert "--set 'env_kwargs={rows: 5}'" in err


def test_huge_values_are_capped(capsys: pytest.CaptureFixture[str]) -> None:
    assert "n_envs must be a positive integer, at most 4096, got 100000000" in refusal(
        capsys, "tictactoe", "--set", "n_envs=100000000")
    assert "n_steps * n_envs = 4194304 positions per rollout" in refusal(
        capsys, "tictactoe", "--set", "n_envs=4096", "--set", "n_steps=1024")


def test_opponents_names_checked_before_weights(capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(capsys, "tictactoe", "--set", "opponents=[perfect,bogus]", main=selfplay.main)
    assert err.startswith("boardgym selfplay: error: opponents: unknown tictactoe player "
                          "'bogus'")


def test_config_file_binary_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with zipfile.ZipFile("last.zip", "w") as archive:
        archive.writestr("policy.pth", bytes(range(256)))
    err = refusal(capsys, "tictactoe", "--config", "last.zip")
    assert "config file last.zip is not a text file" in err


def test_config_file_bad_yaml(capsys: pytest.CaptureFixture[str]) -> None:
    Path("mine.yaml").write_text("gamma: 0.9\nopponents: [random\n")
    err = refusal(capsys, "tictactoe", "--config", "mine.yaml")
    assert "config file mine.yaml is not valid YAML" in err and "line 3" in err


def test_resume_from_printed_checkpoint(capsys: pytest.CaptureFixture[str]) -> None:
    assert ppo.main(["tictactoe", "--timesteps", "256", *TINY]) == 0
    last = re.search(r"^done: (\S+) ", capsys.readouterr().out, re.MULTILINE)
    assert last is not None and last.group(1).endswith("checkpoints/last.zip")
    assert ppo.main(["--resume", last.group(1), "--timesteps", "512", "--no-progress"]) == 0
    assert f"done: {last.group(1)} " in capsys.readouterr().out
    assert "boardgym train --resume" in Path(last.group(1)).parents[1].joinpath(
        "command.txt").read_text()


def test_pretraining_announces_phase(capsys: pytest.CaptureFixture[str]) -> None:
    Path("labels.jsonl").write_text(LABELS)
    assert ppo.main(["four_in_a_row", "--timesteps", "256", *TINY, "--set",
                     "pretrain_positions=labels.jsonl", "--set", "pretrain_epochs=2",
                     "--set", "pretrain_batch_size=2"]) == 0
    out = capsys.readouterr().out.splitlines()
    phases = ["reading the pretraining positions labels.jsonl ...",
              "making the targets of 3 positions ...", "run folder: ",
              "pretraining on 3 labelled positions of labels.jsonl: 2 passes of 1 minibatches "
              "of 2 ...", "pretrain pass 1/2 on 3 positions", "pretrain pass 2/2",
              "PPO: 256 steps in rollouts of 64 steps x 4 envs; an evaluation every 256 steps "
              "(4 games against each of random)"]
    starts = [next(i for i, line in enumerate(out) if line.startswith(phase))
              for phase in phases]
    assert starts == sorted(starts), out
