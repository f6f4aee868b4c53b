"""``plot --out`` and ``export OUT``: an earlier output is overwritten, anything else (a
checkpoint above all) only with ``--force``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from boardgym.train.cli import main
from tests.commands import usage_error
from tests.paths import ROOT

CHECKPOINT = ROOT / "checkpoints" / "tictactoe.zip"



def test_plot_out_refuses_foreign_file(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "eval.json").write_text(json.dumps([{"step": 64, "win_rates": {"random": 0.5}}]))
    other = tmp_path / "photo.png"
    other.write_bytes(b"someone's")
    assert "--force" in usage_error(["plot", str(run), "--out", str(other)], capsys)
    assert other.read_bytes() == b"someone's"
    assert main(["plot", str(run), "--out", str(other), "--force"]) == 0
    assert main(["plot", str(run), "--out", str(other)]) == 0, "its own picture"
    (run / "learning_curve.png").write_bytes(b"an older curve")
    assert main(["plot", str(run)]) == 0, "the run folder's own curve"
    assert (run / "learning_curve.png").read_bytes()[:4] == b"\x89PNG"


def test_export_refuses_to_overwrite_a_checkpoint(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("onnxruntime")
    model = tmp_path / "model.zip"
    shutil.copy(CHECKPOINT, model)
    before = model.read_bytes()
    err = usage_error(["export", str(model), str(model), "--check", "0"], capsys)
    assert "not an ONNX export this command wrote" in err and model.read_bytes() == before
    out = tmp_path / "model.onnx"
    assert main(["export", str(model), str(out), "--check", "0"]) == 0
    assert main(["export", str(model), str(out), "--check", "0"]) == 0, "its own export"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["model.onnx", "model.zip"]
