"""The Ray backend, ``boardgym tune`` and the RLlib examples (skipped without the ray extra).

One local Ray (2 CPUs) serves the whole module; commands that must find no Ray in their
process (bad addresses) run as subprocesses.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.usefixtures("local_ray")

from boardgym import agents  # noqa: E402
from boardgym.train.common.backends import Backend, parallel_map  # noqa: E402
from boardgym.train.match import (  # noqa: E402
    evaluate,
    tournament,
)
from boardgym.train.ppo import tune  # noqa: E402
from boardgym.train.ppo.config import load_config  # noqa: E402
from boardgym.train.quality import positions  # noqa: E402
from tests.paths import ROOT  # noqa: E402

EXAMPLES = ROOT / "examples"
USAGE_ERROR = 2
TIMEOUT = 30
"""Seconds within which a bad address must be reported."""
TINY_RUN = {"opponents": ["random"], "eval_opponents": ["random"], "total_timesteps": 64,
            "n_envs": 2, "n_steps": 16, "batch_size": 32, "n_epochs": 1, "channels": 4,
            "blocks": 1, "features_dim": 16, "net_arch": [16], "eval_every": 32,
            "eval_games": 4, "checkpoint_every": 64, "eval_quality": 20}
TICTACTOE_SHORTEST_GAME = 5
"""Moves of the shortest tic-tac-toe game (an illegal move would end one sooner)."""


def without_seconds(report: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in report.items() if key != "seconds"}


def evaluate_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert evaluate.main([*argv, "--json"]) == 0
    return without_seconds(json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("argv", [
    ("tictactoe", "rules", "random", "--games", "60", "--seed", "3"),
    ("four_in_a_row", "lookahead:1", "random", "--games", "40", "--openings", "4"),
])
def test_evaluate_gives_the_same_json_on_both_backends(capsys: pytest.CaptureFixture[str],
                                                       argv: tuple[str, ...]) -> None:
    local = evaluate_json(capsys, *argv)
    assert evaluate_json(capsys, *argv, "--backend", "ray") == local
    assert evaluate_json(capsys, *argv, "--backend", "ray", "--workers", "1") == local


def test_tournament_gives_the_same_json_on_both_backends() -> None:
    specs = ["random", "rules", "rules_center"]
    local = tournament.run_tournament("tictactoe", specs, games=12, seed=2, bootstrap=50)
    remote = tournament.run_tournament("tictactoe", specs, games=12, seed=2, bootstrap=50,
                                       backend="ray")
    assert without_seconds(remote.to_dict()) == without_seconds(local.to_dict())


def test_positions_are_the_same_on_both_backends() -> None:
    local = positions.position_lines("four_in_a_row", 2, seed=1)
    assert positions.position_lines("four_in_a_row", 2, seed=1,
                                    backend=Backend("ray")) == local


def play_once(marker: Path, crash_at: int, players: tuple[Any, Any],
              index: int) -> tuple[int, tuple[int, ...]]:
    """Game ``index`` of a seeded match; the worker process dies the first time it is
    asked for game ``crash_at`` (``marker`` records that it did)."""
    if index == crash_at and not marker.exists():
        marker.touch()
        os._exit(1)
    return evaluate.play_moves("tictactoe", *players, evaluate.game_rng(7, index),
                               index % 2 == 0)


def tictactoe_players() -> tuple[Any, Any]:
    return agents.make("tictactoe", "rules"), agents.make("tictactoe", "random")


def test_a_task_whose_worker_dies_is_retried_with_the_same_result(tmp_path: Path) -> None:
    marker = tmp_path / "crashed"
    games = range(12)
    run = functools.partial(play_once, marker, 5)
    remote = list(parallel_map(run, games, tictactoe_players, Backend("ray", workers=2)))
    assert marker.exists()
    assert remote == list(parallel_map(run, games, tictactoe_players))


def write_sweep(tmp_path: Path) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(json.dumps({**TINY_RUN, tune.SEARCH_KEY: {
        "learning_rate": {"loguniform": [1e-4, 1e-3]}, "n_epochs": {"choice": [1, 2]}}}))
    return path


def test_tune_sweep_runs_two_tiny_trials(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    assert tune.main(["tictactoe", "--samples", "2", "--config", str(write_sweep(tmp_path)),
                      "--runs-dir", str(runs)]) == 0
    (folder,) = runs.iterdir()
    assert (folder / tune.BEST_JSON).is_file(), (folder / tune.RESULTS_MD).read_text()
    rows = (folder / tune.RESULTS_CSV).read_text().splitlines()
    assert len(rows) == 3 and "win_rate" in rows[0]
    best = json.loads((folder / tune.BEST_JSON).read_text())
    assert 0 <= best["win_rate"] <= 1 and best["step"] == TINY_RUN["total_timesteps"]
    assert 0 <= best["quality"] <= 1 and best["quality/positions"] == TINY_RUN["eval_quality"]
    config = load_config("tictactoe", folder / tune.BEST_CONFIG)
    assert config.n_epochs == best["n_epochs"]
    assert config.learning_rate == pytest.approx(best["learning_rate"])
    assert "best trial" in capsys.readouterr().out


@pytest.mark.parametrize(("space", "message"), [
    ({"learning_rate": {"lognormal": [1, 2]}}, "must be one distribution"),
    ({"speed": {"choice": [1, 2]}}, "unknown config key 'speed'"),
    ({"gamma": {"uniform": [0.9]}}, "takes 2 numbers"),
    ({"n_epochs": {"choice": [1, -1]}}, "n_epochs must be a positive integer"),
])
def test_a_bad_search_space_is_a_usage_error(tmp_path: Path, space: dict[str, Any],
                                             message: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps({**TINY_RUN, tune.SEARCH_KEY: space}))
    with pytest.raises(SystemExit) as exit_info:
        tune.main(["tictactoe", "--samples", "1", "--config", str(path),
                   "--runs-dir", str(tmp_path / "runs")])
    assert exit_info.value.code == USAGE_ERROR
    assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def example(name: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The example script ``examples/{name}.py`` as a module."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return __import__(name)


def test_rllib_self_play_example_trains_with_masks(monkeypatch: pytest.MonkeyPatch) -> None:
    (result,) = example("rllib_multiagent", monkeypatch).main(["--iterations", "1"])
    runners = result["env_runners"]
    assert runners["num_episodes"] > 0
    assert runners["episode_len_min"] >= TICTACTOE_SHORTEST_GAME


def test_rllib_vector_example_trains(monkeypatch: pytest.MonkeyPatch) -> None:
    (result,) = example("rllib_vector", monkeypatch).main(["--iterations", "1",
                                                           "--num-envs", "4"])
    runners = result["env_runners"]
    assert runners["num_episodes"] > 0
    assert -1 <= runners["episode_return_mean"] <= 1


# -- bad input -------------------------------------------------------------------------------


def test_without_ray_the_backend_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main(["tictactoe", "random", "random", "--backend", "ray"])
    assert exit_info.value.code == USAGE_ERROR
    assert 'pip install -e ".[ray]"' in capsys.readouterr().err


def closed_port() -> int:
    """A local port that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class NotRay(socketserver.BaseRequestHandler):
    """Answers like a web server, not a gRPC one."""

    def handle(self) -> None:
        self.request.recv(1024)
        self.request.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")


@pytest.fixture
def web_server() -> Iterator[int]:
    """The port of a local server that is not a Ray cluster."""
    with socketserver.TCPServer(("127.0.0.1", 0), NotRay) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield int(server.server_address[1])
        server.shutdown()


def boardgym(*argv: str, address: str) -> subprocess.CompletedProcess[str]:
    """``boardgym argv`` in a fresh process with ``RAY_ADDRESS`` set (no Ray started)."""
    environment = {**os.environ, "RAY_ADDRESS": address}
    return subprocess.run([sys.executable, "-m", "boardgym", *argv], capture_output=True,
                          text=True, env=environment, timeout=TIMEOUT, check=False)


def assert_one_line(done: subprocess.CompletedProcess[str], message: str) -> None:
    assert done.returncode == USAGE_ERROR
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


@pytest.mark.parametrize("command", [
    ("evaluate", "tictactoe", "random", "random", "--backend", "ray"),
    ("tournament", "tictactoe", "random", "rules", "--backend", "ray"),
    ("positions", "four_in_a_row", "--count", "1", "--out", "x.jsonl", "--backend", "ray"),
])
def test_an_unreachable_cluster_is_one_line(command: tuple[str, ...]) -> None:
    assert_one_line(boardgym(*command, address=f"127.0.0.1:{closed_port()}"),
                    "cannot reach the Ray cluster")


def test_a_server_that_is_not_ray_is_one_line(web_server: int) -> None:
    done = boardgym("evaluate", "tictactoe", "random", "random", "--backend", "ray",
                    address=f"127.0.0.1:{web_server}")
    assert_one_line(done, "is not a Ray cluster")


def test_tune_with_an_unreachable_cluster_leaves_no_folder(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    done = boardgym("tune", "tictactoe", "--samples", "1", "--config",
                    str(write_sweep(tmp_path)), "--runs-dir", str(runs),
                    address=f"127.0.0.1:{closed_port()}")
    assert_one_line(done, "cannot reach the Ray cluster")
    assert not runs.exists()
