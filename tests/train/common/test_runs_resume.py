"""Run folders (``train.common.runs``): ``--resume`` takes what the trainers print (the
folder or its ``checkpoints/last.zip``), and an interrupted write leaves the old file and no
temporary one."""

from __future__ import annotations

from pathlib import Path

import pytest

from boardgym import files
from boardgym.train.common.runs import (
    CHECKPOINTS,
    CONFIG_FILE,
    LAST,
    run_directory,
    write_atomic,
)


@pytest.fixture
def run_folder(tmp_path: Path) -> Path:
    """A run folder with its config and a last checkpoint."""
    folder = tmp_path / "runs" / "tictactoe__az__0__20250101-120000"
    (folder / CHECKPOINTS).mkdir(parents=True)
    (folder / CONFIG_FILE).write_text("game: tictactoe\n")
    (folder / CHECKPOINTS / LAST).write_bytes(b"")
    return folder


def test_resume_takes_the_folder_or_its_last_checkpoint(run_folder: Path) -> None:
    assert run_directory(run_folder) == run_folder
    assert run_directory(run_folder / CHECKPOINTS / LAST) == run_folder


def test_resume_from_another_checkpoint_names_the_folder_and_init_from(run_folder: Path
                                                                       ) -> None:
    best = run_folder / CHECKPOINTS / "best.zip"
    with pytest.raises(ValueError) as error:
        run_directory(best)
    message = str(error.value)
    assert f"pass --resume {run_folder} " in message and f"--set init_from={best}" in message


def test_a_checkpoint_outside_a_run_folder_is_left_to_the_run_folder_check(tmp_path: Path
                                                                           ) -> None:
    stray = tmp_path / CHECKPOINTS / LAST
    assert run_directory(stray) == stray


def test_an_interrupted_write_keeps_the_old_file_and_no_temporary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "eval.json"
    write_atomic(path, "old")

    def interrupted(source: Path, target: Path) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, "new")
    assert path.read_text() == "old"
    assert [item.name for item in tmp_path.iterdir()] == ["eval.json"]
