"""What a checkpoint that cannot be read is reported as: missing (where it looked, and the
shipped name), a folder (its checkpoints), bytes that are no zip, entries that are no torch
data (not blamed on unpickling)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from boardgym import agents
from boardgym.agents.checkpoint import CheckpointError
from tests.commands import usage_error
from tests.paths import ROOT

SHIPPED = ROOT / "checkpoints"



def test_missing_checkpoint_names_shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # outside the checkout
    err = usage_error(["evaluate", "reversi", "checkpoints/reversi.zip", "random"], capsys)
    assert f"no file {tmp_path / 'checkpoints' / 'reversi.zip'}" in err
    assert "shipped:reversi is the shipped checkpoint of that name" in err


def with_random_entries(source: Path, target: Path) -> Path:
    """A copy of ``source`` whose tensor entries are random bytes."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            new.writestr(name, os.urandom(2000) if name.endswith(".pth") else old.read(name))
    return target


@pytest.mark.parametrize("name", ["tictactoe.zip", "tictactoe_az.zip"])
def test_checkpoint_random_bytes_message(name: str, tmp_path: Path) -> None:
    damaged = with_random_entries(SHIPPED / name, tmp_path / name)
    with pytest.raises(CheckpointError, match="is not torch tensor data") as error:
        agents.make("tictactoe", str(damaged))
    assert "unpickling" not in str(error.value) and "convert" not in str(error.value)
    noise = tmp_path / "noise.pt"
    noise.write_bytes(os.urandom(4000))
    with pytest.raises(CheckpointError, match=r"is not a readable zip file.*not a boardgym "
                                              r"checkpoint"):
        agents.make("tictactoe", str(noise))


def test_checkpoint_directory_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "myrun"
    (run / "checkpoints").mkdir(parents=True)
    err = usage_error(["evaluate", "tictactoe", "myrun", "random"], capsys)
    assert "myrun is a folder" in err and "no checkpoint in it" in err
    for name in ("best.zip", "last.zip"):
        (run / "checkpoints" / name).write_bytes((SHIPPED / "tictactoe.zip").read_bytes())
    err = usage_error(["evaluate", "tictactoe", "./myrun", "random"], capsys)
    assert "is a folder, not a checkpoint file" in err
    assert "myrun/checkpoints/best.zip, myrun/checkpoints/last.zip" in err
    assert "not found" not in err
    with pytest.raises(CheckpointError, match="is a folder"):
        agents.make("tictactoe", "az:0@myrun")
