"""Checkpoint-backed agents: the shipped checkpoints play well, bad checkpoints fail clearly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import boardgym  # noqa: F401
from boardgym import agents
from boardgym.agents.policy import CheckpointError, PolicyAgent, load_policy, read_metadata
from boardgym.envs.games import four_in_a_row, reversi, tictactoe
from boardgym.train.evaluate import play_match

CHECKPOINTS = Path(__file__).resolve().parent.parent / "checkpoints"
SHIPPED = {"reversi": CHECKPOINTS / "reversi.zip",
           "four_in_a_row": CHECKPOINTS / "four_in_a_row.zip",
           "tictactoe": CHECKPOINTS / "tictactoe.zip"}
MAX_SIZE_BYTES = 20 * 1024 * 1024
SHORT_MATCH = 30
MIN_WIN_RATE_VS_RANDOM = 0.8


@pytest.mark.parametrize("game", sorted(SHIPPED))
def test_shipped_checkpoint_loads_and_beats_random(game: str) -> None:
    path = SHIPPED[game]
    assert path.stat().st_size < MAX_SIZE_BYTES
    assert path.with_suffix(".md").is_file(), "every shipped checkpoint has a model card"
    result = play_match(game, str(path), "random", games=SHORT_MATCH, seed=1)
    assert result.a_win_rate >= MIN_WIN_RATE_VS_RANDOM, result.report()
    if game == "tictactoe":
        assert result.b_wins == 0, result.report()


def test_metadata_names_game_board_and_observation() -> None:
    metadata = read_metadata(SHIPPED["four_in_a_row"])
    assert metadata["game"] == "four_in_a_row"
    assert metadata["env_kwargs"] == {"rows": 6, "columns": 7, "connect": 4}
    assert metadata["observation_shape"] == [2, 6, 7]
    assert metadata["n_actions"] == 7


def test_checkpoint_path_works_as_spec_and_env_opponent() -> None:
    agent = agents.make("tictactoe", str(SHIPPED["tictactoe"]))
    state = tictactoe.initial_state()
    action = agent.act(state, np.random.default_rng(0))
    assert tictactoe.legal_mask(state)[action]
    env = gym.make("TicTacToe-v0", opponent=str(SHIPPED["tictactoe"]), first_player="opponent")
    _, info = env.reset(seed=0)
    assert info["opponent_action"] is not None


def test_argmax_is_deterministic_and_sampling_follows_the_rng() -> None:
    greedy = load_policy(SHIPPED["reversi"], "reversi")
    sampler = load_policy(SHIPPED["reversi"], "reversi", stochastic=True)
    position = reversi.initial_state()
    moves = {greedy.act(position, np.random.default_rng(seed)) for seed in range(5)}
    assert len(moves) == 1
    first = [sampler.act(position, np.random.default_rng(7)) for _ in range(3)]
    assert len(set(first)) == 1 and reversi.legal_mask(position)[first[0]]


def test_missing_checkpoint_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="boardgym train"):
        load_policy(tmp_path / "nothing.zip", "reversi")


def test_corrupt_checkpoint_gives_a_clear_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"this is not a zip file" * 10)
    with pytest.raises(CheckpointError, match="corrupt"):
        load_policy(garbage, "reversi")
    truncated = tmp_path / "truncated.zip"
    data = SHIPPED["tictactoe"].read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="corrupt"):
        agents.make("tictactoe", str(truncated))


def test_foreign_zip_is_not_a_boardgym_checkpoint(tmp_path: Path) -> None:
    other = tmp_path / "other"
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "data.txt").write_text("hello")
    archive = shutil.make_archive(str(other), "zip", tmp_path / "content")
    with pytest.raises(CheckpointError, match="not a boardgym checkpoint"):
        load_policy(archive, "tictactoe")


def test_checkpoint_of_another_game_is_refused() -> None:
    with pytest.raises(CheckpointError, match="trained for 'tictactoe'"):
        load_policy(SHIPPED["tictactoe"], "reversi")
    with pytest.raises(CheckpointError, match="trained for 'reversi'"):
        gym.make("FourInARow-v0", opponent=str(SHIPPED["reversi"]))


def test_checkpoint_on_another_board_size_is_refused() -> None:
    agent = load_policy(SHIPPED["four_in_a_row"], "connect_four")
    small = four_in_a_row.initial_state(rows=5, columns=7)
    with pytest.raises(CheckpointError, match="trained on a four_in_a_row board"):
        agent.act(small, np.random.default_rng(0))
    other_connect = four_in_a_row.initial_state(connect=5)
    with pytest.raises(CheckpointError, match="connect 5"):
        agent.act(other_connect, np.random.default_rng(0))


def test_loading_a_checkpoint_needs_nothing_from_train() -> None:
    """Dependencies point one way (DESIGN.md): agents load checkpoints without ``train``."""
    code = ("import sys; sys.modules['boardgym.train'] = None\n"
            "import numpy as np\n"
            "from boardgym import agents\n"
            "from boardgym.envs.games import tictactoe\n"
            "agent = agents.make('tictactoe', 'checkpoints/tictactoe.zip')\n"
            "print(agent.act(tictactoe.initial_state(), np.random.default_rng(0)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=CHECKPOINTS.parent,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert 0 <= int(out.stdout) < 9


def test_a_file_named_like_a_builtin_player_is_never_loaded(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("random", "rules", "alphabeta:2"):
        (tmp_path / name).write_bytes(b"not a checkpoint")
        assert not isinstance(agents.make("tictactoe", name), PolicyAgent)
    with pytest.raises(CheckpointError, match="corrupt"):
        agents.make("tictactoe", "./random")  # a path: the file is read (and refused)
    assert agents.is_checkpoint_spec("runs/a/best") and agents.is_checkpoint_spec("net.pt")
    assert not agents.is_checkpoint_spec("random") and not agents.is_checkpoint_spec("best")
    with pytest.raises(ValueError, match="unknown tictactoe player 'best'"):
        agents.make("tictactoe", "best")


def test_a_checkpoint_is_loaded_once_per_process_until_it_changes(tmp_path: Path) -> None:
    copy = tmp_path / "ttt.zip"
    shutil.copy(SHIPPED["tictactoe"], copy)
    first = agents.make("tictactoe", str(copy))
    assert agents.make("tictactoe", str(copy)) is first is load_policy(copy, "tictactoe")
    assert load_policy(copy, "tictactoe", stochastic=True) is not first
    copy.write_bytes(SHIPPED["tictactoe"].read_bytes())  # rewritten: read again
    os.utime(copy, ns=(0, 0))
    assert agents.make("tictactoe", str(copy)) is not first
