"""The wheel as a user installs it: everything a command reads by default travels inside.

The wheel is built from the checkout and installed with its ``train`` and ``solvers`` extras
into a fresh venv outside the checkout (no system site-packages, so a missing dependency
shows; torch from the pin of ``constraints.txt``). From an empty folder the venv then runs
``boardgym quality tictactoe perfect`` (the shipped labelled set), ``boardgym evaluate``
against each shipped checkpoint by its ``shipped:`` name, and a few steps of every default
training config (``train``, ``selfplay``, ``az``, ``td``) of every game: their ``init_from``
weights, opponents and position sets are shipped names. The commands after the first run in one
process of the venv (``DRIVER``), so that torch is imported once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.paths import ROOT

pytestmark = pytest.mark.slow

GAMES = ("tictactoe", "four_in_a_row", "reversi")
INSTALL_SECONDS = 900
"""A first install downloads the dependencies (pip's cache keeps them for the next)."""
RUN_SECONDS = 900
PPO_TINY = ["--timesteps", "32", "--n-envs", "2", "--set", "n_steps=16", "--set",
            "batch_size=32", "--set", "n_epochs=1", "--set", "eval_every=32", "--set",
            "checkpoint_every=32", "--set", "eval_games=2", "--set", "eval_start=false",
            "--set", "league_games=2", "--eval-quality", "4", "--no-progress", "--seed", "0"]
"""Two evaluation games, four judged positions, one rollout of 32 steps."""
PPO_GAME_TINY = {
    "four_in_a_row": ["--set", "pretrain_positions=shipped:four_in_a_row_development",
                      "--set", "pretrain_epochs=1", "--set", "pretrain_children=false",
                      "--set", "members=1", "--set", "blocks=1", "--set", "channels=8"],
    "reversi": ["--set", "bar_games=2"],
}
"""Per game: a smaller shipped set to pretrain on (the default's 89,590 positions take a
minute to read; the quality command below reads it) and a smaller network; a shorter bar."""
AZ_TINY = ["--iterations", "1", "--set", "games_per_iteration=2", "--set", "simulations=2",
           "--set", "considered=2", "--set", "batch_size=8", "--set", "train_steps=1",
           "--set", "eval_every=1", "--set", "eval_positions=4", "--set", "eval_games=2",
           "--no-progress", "--seed", "0"]
TD_TINY = ["--games", "2000", "--set", "chunk_games=1000", "--set", "eval_every=2000",
           "--set", "eval_games=2", "--set", "eval_positions=20", "--no-progress"]
DRIVER = """
import contextlib, io, json, sys
from boardgym.train.cli import main
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
        except Exception as error:
            code = 1
            err.write(f"{type(error).__name__}: {error}")
    print(json.dumps({"argv": argv, "code": code, "stderr": err.getvalue()[-2000:]}), flush=True)
"""
"""Runs ``boardgym`` commands (a JSON list of argument lists) one after another in this
process; prints one JSON line each: the arguments, the exit code, the end of stderr."""


def shipped_checkpoints() -> list[tuple[str, str]]:
    """``(game, shipped name)`` of every checkpoint in the checkout's ``checkpoints/``."""
    return [(next(game for game in GAMES if path.stem.startswith(game)), path.stem)
            for path in sorted((ROOT / "checkpoints").glob("*.zip"))]


def commands() -> list[list[str]]:
    """What the venv runs after ``quality``: an evaluate per shipped checkpoint, the shipped
    pretraining set read, then a few steps of every trainer on every game."""
    runs = [["evaluate", game, f"shipped:{name}", "random", "--games", "2", "--seed", "0"]
            for game, name in shipped_checkpoints()]
    runs.append(["quality", "four_in_a_row", "lookahead:1", "--positions",
                 "shipped:four_in_a_row_solved", "--limit", "2"])
    for game in GAMES:
        ppo = [*PPO_TINY, *PPO_GAME_TINY.get(game, [])]
        runs += [["train", game, *ppo], ["selfplay", game, *ppo], ["az", game, *AZ_TINY],
                 ["td", game, *TD_TINY]]
    return runs


def user_env(venv: Path) -> dict[str, str]:
    """The environment of a user of ``venv``: its ``bin`` first, nothing of the checkout."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return {**env, "PYTHONNOUSERSITE": "1", "MPLBACKEND": "Agg"}


def run(args: list[str], cwd: Path, timeout: int, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    """``args`` run to the end in ``cwd``; its output captured."""
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv outside the checkout with the wheel and its ``train`` and ``solvers``
    extras (the outer venv's pip installs into it: ``pip --python``)."""
    wheels, venv = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("venv")
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                 "-q", "-w", str(wheels), str(ROOT)], wheels, INSTALL_SECONDS)
    assert built.returncode == 0, built.stderr
    made = run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(venv)],
               wheels, INSTALL_SECONDS)
    assert made.returncode == 0, made.stderr
    wheel = next(wheels.glob("boardgym-*.whl"))
    installed = run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                     "install", "-q", "--no-compile", "-c", str(ROOT / "constraints.txt"),
                     f"{wheel}[train]"], wheels, INSTALL_SECONDS)
    assert installed.returncode == 0, installed.stderr
    return venv


def test_the_installed_package_runs_its_defaults_from_an_empty_folder(
        venv: Path, tmp_path: Path) -> None:
    env = user_env(venv)
    where = run([str(venv / "bin" / "python"), "-c", "import boardgym, torch; "
                 "print(boardgym.__file__); print(torch.__version__)"], tmp_path, RUN_SECONDS,
                env)
    assert where.returncode == 0, where.stderr
    package, torch_version = where.stdout.split()
    assert Path(package).is_relative_to(venv) and torch_version.startswith("2.13.0")
    quality = run(["boardgym", "quality", "tictactoe", "perfect"], tmp_path, RUN_SECONDS, env)
    assert quality.returncode == 0, quality.stderr
    assert "100.0%" in quality.stdout
    driven = run([str(venv / "bin" / "python"), "-c", DRIVER, json.dumps(commands())],
                 tmp_path, RUN_SECONDS, env)
    assert driven.returncode == 0, driven.stderr
    results: list[dict[str, Any]] = [json.loads(line) for line in driven.stdout.splitlines()]
    assert [result["argv"] for result in results] == commands()
    failed = [f"{' '.join(result['argv'][:3])}: {result['stderr']}" for result in results
              if result["code"] != 0]
    assert not failed, "\n".join(failed)
    for game in GAMES:
        for kind in ("maskableppo", "selfplay", "az", "td"):
            assert len(list((tmp_path / "runs").glob(f"{game}__{kind}__0__*"))) == 1, \
                (game, kind, sorted(path.name for path in (tmp_path / "runs").iterdir()))
