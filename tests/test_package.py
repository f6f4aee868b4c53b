"""The installed package: one ``boardgym`` namespace, the command, and the wheel's contents."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HYPERPARAMS = ("reversi", "four_in_a_row", "tictactoe", "az_reversi", "az_four_in_a_row",
               "az_tictactoe")
SHIPPED_FILES = (("train/quality/data", "*.jsonl*"), ("train/match/data", "*.txt"),
                 ("checkpoints", "*.zip"))
"""The checkout's folders of files the commands read by default, and the files' pattern."""
WHEEL_FOLDERS = {"train/quality/data": "boardgym/train/quality/data",
                 "train/match/data": "boardgym/train/match/data",
                 "checkpoints": "boardgym/checkpoints"}
"""Where each lands in the wheel."""


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in ``cwd`` (which is then first on ``sys.path``, as for a user)."""
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_users_own_train_envs_and_agents_live_beside_boardgym(tmp_path: Path) -> None:
    """The most common names in RL projects stay the user's: nothing of ours is shadowed by
    them, and nothing of theirs by ours."""
    (tmp_path / "train.py").write_text("WHOSE = 'user train'\n")
    (tmp_path / "agents.py").write_text("WHOSE = 'user agents'\n")
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "__init__.py").write_text("WHOSE = 'user envs'\n")
    code = ("import train, agents, envs, boardgym, gymnasium as gym\n"
            "from boardgym import agents as ours\n"
            "assert (train.WHOSE, agents.WHOSE, envs.WHOSE) == "
            "('user train', 'user agents', 'user envs')\n"
            "env = gym.make('Reversi-v0'); env.reset(seed=0)\n"
            "assert ours.make('tictactoe', 'perfect') is not None\n"
            "print('ok')")
    completed = run_python(code, tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"


def test_make_without_importing_boardgym(tmp_path: Path) -> None:
    completed = run_python("import gymnasium as gym; e = gym.make('boardgym:TicTacToe-v0'); "
                           "print(e.reset(seed=0)[0].shape)", tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "(2, 3, 3)"


def test_python_dash_m_boardgym_help(tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, "-m", "boardgym", "--help"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    for command in ("evaluate", "play", "train", "tournament"):
        assert f"  {command}" in completed.stdout


def test_unknown_command_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, "-m", "boardgym", "no-such-command"],
                               cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    assert len(completed.stderr.strip().splitlines()) == 1
    assert "unknown command" in completed.stderr


@pytest.mark.slow
def test_wheel_holds_one_top_level_package_with_data_and_types(tmp_path: Path) -> None:
    """Only ``boardgym/`` (and the dist-info) lands in site-packages; with it travels what
    the commands read by default: the hyperparameter YAML files, the labelled sets, the
    opening suites, the shipped checkpoints (not their model cards), and ``py.typed``."""
    completed = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr
    wheel = next(tmp_path.glob("boardgym-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"boardgym"}
    for expected in ("boardgym/py.typed", "boardgym/__main__.py",
                     "boardgym/envs/games/core.py", "boardgym/agents/__init__.py",
                     "boardgym/agents/shipped.py", "boardgym/train/cli.py",
                     *(f"boardgym/train/hyperparams/{name}.yaml" for name in HYPERPARAMS)):
        assert expected in names
    for source, pattern in SHIPPED_FILES:
        files = {f"{WHEEL_FOLDERS[source]}/{path.name}" for path in (ROOT / source).glob(pattern)}
        assert files and files <= set(names), source
    assert "boardgym/train/quality/data/four_in_a_row_solved.jsonl.gz" in names
    assert not any(name.endswith(".md") for name in names)
    assert not any(name.startswith("boardgym/tests/") for name in names)
