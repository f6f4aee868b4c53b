"""``boardgym export``: ONNX files of az and PPO checkpoints that pick torch's best moves."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from boardgym.agents.az.checkpoint import az_record, write_checkpoint
from boardgym.agents.az.network import Architecture, AzNet
from boardgym.envs.games import game
from boardgym.train.cli import main
from tests.paths import ROOT
from tests.runs import NO_BAR

pytest.importorskip("onnxruntime")

CHECKS = "1000"
SHIPPED = ROOT / "checkpoints"


def test_export_az_checkpoint_agrees_with_torch(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    record = game("four_in_a_row")
    torch.manual_seed(0)
    net = AzNet(Architecture.of(record.rules, record.rules.initial_state(), record.network))
    checkpoint = tmp_path / "c4_az.zip"
    write_checkpoint(checkpoint, net, az_record("four_in_a_row", {}, net.arch))
    out = tmp_path / "c4_az.onnx"
    assert main(["export", str(checkpoint), str(out), "--check", CHECKS]) == 0
    assert f"in {CHECKS} of {CHECKS} positions" in capsys.readouterr().out
    assert out.stat().st_size > 0


@pytest.mark.parametrize("name", ["tictactoe.zip", "four_in_a_row.zip"])  # the latter: threats
def test_export_ppo_checkpoint_agrees_with_torch(name: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "policy.onnx"
    assert main(["export", str(SHIPPED / name), str(out), "--check", CHECKS]) == 0
    assert f"in {CHECKS} of {CHECKS} positions" in capsys.readouterr().out


def test_export_refuses_a_non_checkpoint_in_one_line(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    bogus = tmp_path / "bogus.zip"
    bogus.write_text("not a zip")
    with pytest.raises(SystemExit) as done:
        main(["export", str(bogus), str(tmp_path / "out.onnx")])
    error = capsys.readouterr().err
    assert done.value.code == 2
    assert "corrupt" in error and len(error.strip().splitlines()) == 1


def test_export_refuses_planes_computed_outside_torch(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Reversi's mobility planes come from the rules core (numpy): a traced graph would hold
    them as constants, so the export refuses in one line and writes nothing."""
    runs = tmp_path / "runs"
    assert main(["train", "reversi", "--timesteps", "32", "--runs-dir", str(runs),
                 "--no-progress", "--set", "mobility=true", "--set", "init_from=null",
                 "--set", "tower=false", "--set", "teacher=null",
                 "--set", "n_envs=2", "--set", "n_steps=16", "--set", "batch_size=16",
                 "--set", "channels=4", "--set", "blocks=0", "--set", "features_dim=8",
                 "--set", "eval_every=1000", "--set", "eval_quality=0", "--set",
                 "eval_opponents=[random]", *NO_BAR]) == 0
    (checkpoint,) = runs.glob("*/checkpoints/last.zip")
    out = tmp_path / "policy.onnx"
    with pytest.raises(SystemExit) as done:
        main(["export", str(checkpoint), str(out)])
    error = capsys.readouterr().err
    assert done.value.code == 2 and len(error.strip().splitlines()) == 1
    assert "mobility false" in error and not out.exists()
