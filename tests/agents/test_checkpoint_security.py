"""A crafted checkpoint runs nothing, on every path that loads one (issue 23, point 1).

Each malicious file carries a pickle whose ``__reduce__`` creates a marker file when it is
unpickled. A control proves each payload is live (the unpickling loaders run it); then every
loading path (``agents.make``, ``gym.make``/``gym.make_vec`` with the file as opponent,
``boardgym evaluate``, ``play --opponent``, ``tournament`` and ``train --resume``) must refuse
the file with one line and leave no marker.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import pickle
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
import torch
from stable_baselines3.common.save_util import load_from_zip_file

import boardgym  # noqa: F401  (registers the envs)
from boardgym import agents
from boardgym.agents.checkpoint import METADATA_TYPES, CheckpointError
from boardgym.train.common.runs import save_config
from boardgym.train.ppo.config import load_config
from tests.paths import ROOT

SHIPPED = ROOT / "checkpoints" / "tictactoe.zip"
EXIT_USAGE = 2


class Payload:
    """Pickles as a call of ``open(marker, "w")``: unpickling it creates ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[str, str]]:
        return open, (str(self.marker), "w")


def shipped_entries() -> dict[str, bytes]:
    """The entries of the shipped tic-tac-toe checkpoint (a valid file to tamper with)."""
    with zipfile.ZipFile(SHIPPED) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def write_zip(path: Path, entries: dict[str, bytes]) -> Path:
    """A zip at ``path`` holding ``entries``."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def pickled_data(marker: Path) -> bytes:
    """An SB3 ``data`` entry whose ``policy_class`` is a pickled payload."""
    serialized = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    return json.dumps({"policy_class": {":type:": "<class 'abc.ABCMeta'>",
                                        ":serialized:": serialized}}).encode()


def pickled_tensors(marker: Path) -> bytes:
    """A ``.pth`` entry that is a pickled payload, as ``torch.save`` writes one."""
    buffer = io.BytesIO()
    torch.save(Payload(marker), buffer)
    return buffer.getvalue()


def old_style(path: Path, marker: Path) -> Path:
    """A checkpoint as boardgym wrote them before format 2 (record version 1), whose
    ``data`` entry carries the payload."""
    entries = shipped_entries()
    record = json.loads(entries["boardgym.json"])
    del record["policy"]
    record["format_version"] = 1
    return write_zip(path, {**entries, "boardgym.json": json.dumps(record).encode(),
                            "data": pickled_data(marker)})


def data_added(path: Path, marker: Path) -> Path:
    """A checkpoint of today's format with the payload in an added SB3 ``data`` entry."""
    return write_zip(path, {**shipped_entries(), "data": pickled_data(marker)})


def pickled_weights(path: Path, marker: Path) -> Path:
    """A checkpoint of today's format whose ``policy.pth`` is the payload."""
    return write_zip(path, {**shipped_entries(), "policy.pth": pickled_tensors(marker)})


def pickled_optimizer(path: Path, marker: Path) -> Path:
    """A checkpoint of today's format whose ``policy.optimizer.pth`` (read by ``--resume``)
    is the payload."""
    return write_zip(path, {**shipped_entries(),
                            "policy.optimizer.pth": pickled_tensors(marker)})


REFUSED_BY_AGENTS = {"old_style": old_style, "data_added": data_added,
                     "pickled_weights": pickled_weights}
"""Crafted files that every agent-loading path must refuse."""


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "PWNED"


def run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m boardgym ARGS`` in ``cwd``, no stdin."""
    return subprocess.run([sys.executable, "-m", "boardgym", *args], cwd=cwd,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)


def assert_refused_in_one_line(out: subprocess.CompletedProcess[str]) -> None:
    assert out.returncode == EXIT_USAGE, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr


def run_folder(directory: Path, last: Path) -> Path:
    """A run folder whose ``checkpoints/last.zip`` is ``last``."""
    (directory / "checkpoints").mkdir(parents=True)
    save_config(load_config("tictactoe"), directory / "config.yaml")
    (directory / "checkpoints" / "last.zip").write_bytes(last.read_bytes())
    return directory


def test_the_payloads_are_live(tmp_path: Path, marker: Path) -> None:
    """Control: the unpickling loaders do run each payload (so the tests below can fail)."""
    with contextlib.suppress(Exception):  # the loader may fail after the payload ran
        load_from_zip_file(old_style(tmp_path / "a.zip", marker), device="cpu")
    assert marker.is_file()
    marker.unlink()
    with zipfile.ZipFile(pickled_weights(tmp_path / "b.zip", marker)) as archive:
        torch.load(io.BytesIO(archive.read("policy.pth")), weights_only=False)
    assert marker.is_file()


@pytest.mark.parametrize("craft", sorted(REFUSED_BY_AGENTS))
def test_python_loading_paths_run_nothing(craft: str, tmp_path: Path, marker: Path) -> None:
    path = str(REFUSED_BY_AGENTS[craft](tmp_path / f"{craft}.zip", marker))
    loaders: list[Callable[[], Any]] = [
        lambda: agents.make("tictactoe", path),
        lambda: agents.make("tictactoe", path, stochastic=True),
        lambda: gym.make("TicTacToe-v0", opponent=path),
        lambda: gym.make_vec("TicTacToe-v0", num_envs=2, vectorization_mode="vector_entry_point",
                             opponent=path),
    ]
    for load in loaders:
        with pytest.raises(CheckpointError) as error:
            load()
        assert "\n" not in str(error.value)
        assert not marker.exists()


@pytest.mark.slow
@pytest.mark.parametrize("craft", sorted(REFUSED_BY_AGENTS))
def test_commands_run_nothing_and_refuse_in_one_line(craft: str, tmp_path: Path,
                                                     marker: Path) -> None:
    path = str(REFUSED_BY_AGENTS[craft](tmp_path / f"{craft}.zip", marker))
    run = run_folder(tmp_path / "run", Path(path))
    for args in (["evaluate", "tictactoe", path, "random", "--games", "2"],
                 ["play", "tictactoe", "--opponent", path],
                 ["tournament", "tictactoe", path, "random", "--games", "2"],
                 ["train", "--resume", str(run), "--no-progress"]):
        out = run_cli(args, tmp_path)
        assert_refused_in_one_line(out)
        assert not marker.exists(), args
    assert not (run / "checkpoints" / ".last.zip.tmp").exists()


@pytest.mark.slow
def test_resume_reads_the_optimizer_without_unpickling(tmp_path: Path, marker: Path) -> None:
    path = pickled_optimizer(tmp_path / "optimizer.zip", marker)
    agents.make("tictactoe", str(path))  # agents never read the optimizer state
    run = run_folder(tmp_path / "run", path)
    config = (run / "config.yaml").read_bytes()
    out = run_cli(["train", "--resume", str(run), "--no-progress"], tmp_path)
    assert_refused_in_one_line(out)
    assert "policy.optimizer.pth holds objects that only load by unpickling" in out.stderr
    assert not marker.exists()
    assert (run / "config.yaml").read_bytes() == config


@pytest.mark.parametrize("key", sorted(METADATA_TYPES))
def test_a_record_missing_a_key_is_refused_at_load(key: str, tmp_path: Path) -> None:
    entries = shipped_entries()
    record = json.loads(entries["boardgym.json"])
    del record[key]
    path = write_zip(tmp_path / "missing.zip",
                     {**entries, "boardgym.json": json.dumps(record).encode()})
    with pytest.raises(CheckpointError) as error:
        agents.make("tictactoe", str(path))
    assert f"lacks {key!r}" in str(error.value) and "\n" not in str(error.value)


@pytest.mark.slow
def test_a_record_missing_a_key_is_one_line_on_the_command_line(tmp_path: Path) -> None:
    entries = shipped_entries()
    record = json.loads(entries["boardgym.json"])
    del record["n_actions"]
    path = write_zip(tmp_path / "missing.zip",
                     {**entries, "boardgym.json": json.dumps(record).encode()})
    out = run_cli(["evaluate", "tictactoe", str(path), "random", "--games", "2"], tmp_path)
    assert_refused_in_one_line(out)
    assert "lacks 'n_actions'" in out.stderr


@pytest.mark.parametrize("craft", sorted(REFUSED_BY_AGENTS))
def test_converting_a_crafted_file_runs_nothing(craft: str, tmp_path: Path, marker: Path) -> None:
    """The converter reads the old format without unpickling too: a payload stays inert,
    whether the file is refused or converted."""
    from boardgym.agents.ppo.convert import convert

    path = REFUSED_BY_AGENTS[craft](tmp_path / f"{craft}.zip", marker)
    try:
        convert(path, tmp_path / "converted.zip")
    except CheckpointError as error:
        assert "\n" not in str(error)
    assert not marker.exists()
