"""``positions --out`` and ``quality --png``: the command's own earlier output is
overwritten, anything else only with ``--force``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from boardgym.train.cli import main
from tests.commands import usage_error
from tests.paths import ROOT

CHECKPOINT = ROOT / "checkpoints" / "tictactoe.zip"
COUNT = ["--count", "3"]



def test_positions_out_refuses_foreign_file(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "model.zip"
    shutil.copy(CHECKPOINT, out)
    before = out.read_bytes()
    err = usage_error(["positions", "tictactoe", *COUNT, "--out", str(out)], capsys)
    assert "not a position set this command wrote" in err and "--force" in err
    assert out.read_bytes() == before
    assert main(["positions", "tictactoe", *COUNT, "--out", str(out), "--force"]) == 0
    assert out.read_text().count("\n") == 3
    assert "is a folder" in usage_error(["positions", "tictactoe", "--out", str(tmp_path)], capsys)


def test_positions_out_overwrites_own_output(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "set.jsonl"
    assert main(["positions", "tictactoe", "--count", "5", "--out", str(out)]) == 0
    assert main(["positions", "tictactoe", *COUNT, "--out", str(out)]) == 0
    assert out.read_text().count("\n") == 3
    assert main(["positions", "tictactoe", *COUNT, "--player", "random", "--out",
                 str(out)]) == 0, "a move set is the command's own output too"
    assert main(["positions", "tictactoe", *COUNT, "--out", str(out)]) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["set.jsonl"]


def test_quality_png_refuses_foreign_file(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "chart.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n someone's")
    argv = ["quality", "tictactoe", "random", "--limit", "5", "--png", str(png)]
    assert "--force" in usage_error(argv, capsys) and png.read_bytes().endswith(b"someone's")
    assert main([*argv, "--force"]) == 0
    assert main(argv) == 0, "its own chart is overwritten"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["chart.png"]
