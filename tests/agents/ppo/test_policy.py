"""Checkpoint-backed agents: the shipped checkpoints play well, bad checkpoints fail clearly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

import boardgym  # noqa: F401
from boardgym import agents
from boardgym.agents.checkpoint import FORMAT_VERSION, CheckpointError, read_tensors
from boardgym.agents.ppo import convert
from boardgym.agents.ppo.architecture import policy_arguments
from boardgym.agents.ppo.planes import BoardCNN
from boardgym.agents.ppo.policy import (
    PolicyAgent,
    load_network,
    load_policy,
    masked_logits,
    read_metadata,
    write_checkpoint,
)
from boardgym.envs.games import four_in_a_row, reversi, tictactoe
from boardgym.train.match.evaluate import play_match
from tests.paths import ROOT
from tests.records import rewrite_policy_record

CHECKPOINTS = ROOT / "checkpoints"
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
    assert metadata["format_version"] == FORMAT_VERSION
    assert metadata["policy"]["features_extractor"] == "BoardCNN"
    assert read_metadata(SHIPPED["reversi"])["policy"] == {
        "class": "TowerPolicy", "channels": 64, "blocks": 6, "hidden": 128}


@pytest.mark.parametrize("game", sorted(SHIPPED))
def test_shipped_checkpoints_hold_no_pickle_and_load_from_any_directory(
        game: str, tmp_path: Path) -> None:
    with zipfile.ZipFile(SHIPPED[game]) as archive:
        assert set(archive.namelist()) <= {"boardgym.json", "policy.pth", "policy.optimizer.pth",
                                           "boardgym_train.json"}
    code = ("import numpy as np, sys\n"
            "from boardgym import agents\n"
            f"agent = agents.make({game!r}, sys.argv[1])\n"
            "print(type(agent).__name__)")
    out = subprocess.run([sys.executable, "-c", code, str(SHIPPED[game])], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "PolicyAgent"


def test_stable_baselines3_takes_the_weights_without_unpickling() -> None:
    from sb3_contrib import MaskablePPO

    metadata = read_metadata(SHIPPED["tictactoe"])
    policy_class, kwargs = policy_arguments(metadata["policy"], "shipped")
    model = MaskablePPO(policy_class, gym.make("TicTacToe-v0"), policy_kwargs=kwargs, n_steps=8)
    model.set_parameters(str(SHIPPED["tictactoe"]))
    network, _ = load_network(SHIPPED["tictactoe"])
    boards = np.stack([tictactoe.observation(tictactoe.initial_state())] * 2)
    masks = np.ones((2, 9), dtype=bool)
    assert np.array_equal(masked_logits(model.policy, boards, masks),
                          masked_logits(network, boards, masks))


def rewrite_record(source: Path, target: Path, change: dict[str, object]) -> Path:
    """A copy of ``source`` whose architecture record has ``change`` applied."""
    shutil.copy(source, target)
    rewrite_policy_record(target, change)
    return target


@pytest.mark.parametrize(("change", "message"), [
    ({"class": "os.system"}, "names class 'os.system', which boardgym does not build"),
    ({"features_extractor": "NatureCNN"}, "names features_extractor 'NatureCNN'"),
    ({"activation": "builtins.eval"}, "names activation 'builtins.eval'"),
    ({"features_extractor_kwargs": {"channels": 10 ** 9}}, "channels=1000000000 is not an"),
    ({"features_extractor_kwargs": {"channels": "32"}}, "is not int"),
    ({"features_extractor_kwargs": {"observation_space": 1}}, "takes no argument"),
    ({"features_extractor_kwargs": {"features_activation": "os.system"}},
     "features_activation must be one of ['relu', 'tanh']"),
    ({"features_extractor_kwargs": {"threats": 5}}, "threats is a line length from 2 to 3"),
    ({"net_arch": {"pi": [64], "vf": [64], "x": []}}, "net_arch must be"),
    ({"share_features_extractor": "yes"}, "not bool"),
    ({"extra": 1}, "unknown keys ['extra']"),
])
def test_an_architecture_off_the_allow_lists_is_refused(change: dict[str, object], message: str,
                                                        tmp_path: Path) -> None:
    bad = rewrite_record(SHIPPED["tictactoe"], tmp_path / "bad.zip", change)
    with pytest.raises(CheckpointError) as error:
        agents.make("tictactoe", str(bad))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_weights_of_another_architecture_are_refused(tmp_path: Path) -> None:
    bad = rewrite_record(SHIPPED["tictactoe"], tmp_path / "bad.zip",
                         {"net_arch": {"pi": [7], "vf": [7]}})
    with pytest.raises(CheckpointError, match=r"policy\.pth does not fit the architecture"):
        load_network(bad)


def old_format_checkpoint(path: Path) -> object:
    """A trusted checkpoint in the pickled format boardgym wrote before format 2 (an SB3
    ``model.save`` zip plus ``boardgym.json`` version 1); returns its model."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", gym.make("TicTacToe-v0"), n_steps=8, seed=0,
                        policy_kwargs={"net_arch": [16], "features_extractor_class": BoardCNN,
                                       "features_extractor_kwargs": {"channels": 4,
                                                                     "blocks": 0,
                                                                     "features_dim": 16}})
    model.save(path)
    record = {"format_version": 1, "game": "tictactoe", "env_kwargs": {},
              "observation_shape": [2, 3, 3], "n_actions": 9, "algo": "MaskablePPO",
              "num_timesteps": 0}
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("boardgym.json", json.dumps(record))
    return model


def test_the_old_pickled_format_is_refused_and_converts_when_trusted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old.zip"
    model = old_format_checkpoint(old)
    with pytest.raises(CheckpointError, match=r"python -m boardgym\.agents\.ppo\.convert OLD"):
        agents.make("tictactoe", str(old))
    new = tmp_path / "new.zip"
    assert convert.main([str(old), str(new)]) == 0
    assert "plays as" in capsys.readouterr().out
    network, metadata = load_network(new)
    assert metadata["policy"]["class"] == "MaskableActorCriticPolicy"
    boards = np.stack([tictactoe.observation(tictactoe.initial_state())])
    masks = np.ones((1, 9), dtype=bool)
    assert np.array_equal(masked_logits(network, boards, masks),
                          masked_logits(model.policy, boards, masks))  # type: ignore[attr-defined]
    assert set(read_tensors(new, "policy.optimizer.pth")) == {"state", "param_groups"}
    with pytest.raises(SystemExit) as exit_info:
        convert.main([str(new), str(tmp_path / "again.zip")])
    assert exit_info.value.code == 2
    assert "already in format 2" in capsys.readouterr().err


def test_writes_are_atomic_and_leave_no_temporary_file(tmp_path: Path) -> None:
    network, metadata = load_network(SHIPPED["tictactoe"])
    target = tmp_path / "copy.zip"
    write_checkpoint(target, network, "tictactoe", {}, metadata["num_timesteps"])
    assert [p.name for p in tmp_path.iterdir()] == ["copy.zip"]
    before = target.read_bytes()
    network.activation_fn = torch.nn.Hardtanh  # off the allow-list: nothing is written
    with pytest.raises(ValueError, match="cannot name the activation"):
        write_checkpoint(target, network, "tictactoe", {}, 0)
    assert target.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["copy.zip"]


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


def test_az_network_given_as_a_policy_checkpoint_names_the_az_spec() -> None:
    az_file = CHECKPOINTS / "tictactoe_az.zip"
    with pytest.raises(CheckpointError, match=r"is an az network .* az:N@"):
        load_policy(az_file, "tictactoe")


def test_checkpoint_of_another_game_is_refused() -> None:
    with pytest.raises(CheckpointError, match="trained for 'tictactoe'"):
        load_policy(SHIPPED["tictactoe"], "reversi")
    with pytest.raises(CheckpointError, match="trained for 'reversi'"):
        gym.make("FourInARow-v0", opponent=str(SHIPPED["reversi"]))
    with pytest.raises(CheckpointError, match="trained for 'four_in_a_row'"):
        load_network(SHIPPED["four_in_a_row"], "tictactoe")
    network, metadata = load_network(SHIPPED["tictactoe"], "tic_tac_toe")
    assert metadata["game"] == "tictactoe" and not network.training


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


@pytest.mark.parametrize("make", [
    lambda path: gym.make("FourInARow-v0", rows=7, opponent=path),
    lambda path: gym.make_vec("FourInARow-v0", num_envs=2, rows=7, opponent=path,
                              vectorization_mode="vector_entry_point"),
    lambda path: agents.make("four_in_a_row", path, options={"rows": 7}),
])
def test_a_checkpoint_for_another_board_is_refused_at_load(make: Any) -> None:
    """The board is checked when the opponent is built, not at its first move."""
    with pytest.raises(CheckpointError, match="trained on a four_in_a_row board"):
        make(str(SHIPPED["four_in_a_row"]))


@pytest.mark.parametrize("game", ["reversi", "four_in_a_row", "tictactoe"])
def test_a_checkpoints_batched_twin_plays_its_moves_in_all_games_at_once(game: str) -> None:
    """The vector env's checkpoint opponents move through one forward pass: the same moves
    as the single agent (greedy), legal samples reproducible from the draws (stochastic)."""
    from boardgym.envs.games import game as game_record
    from boardgym.envs.games import players
    from boardgym.envs.games.core import batch_of, unbatch

    record = game_record(game)
    path = str(ROOT / "checkpoints" / f"{game}.zip")
    rng = np.random.default_rng(0)
    states = []
    state = record.rules.initial_state()
    while len(states) < 12:
        states.append(state)
        state = record.rules.apply(state, int(rng.choice(np.flatnonzero(
            record.rules.legal_mask(state)))))
        if record.rules.is_terminal(state):
            state = record.rules.initial_state()
    batch = batch_of(states[0])
    for one in states[1:]:
        batch = type(batch)(*(np.concatenate([a, b]) if isinstance(a, np.ndarray) else a
                              for a, b in zip(batch, batch_of(one), strict=True)))
    twin = players.make_batched(record, path)
    assert twin is not None
    greedy = agents.make(game, path)
    expected = [greedy.act(unbatch(batch, i), rng) for i in range(len(states))]
    assert twin.act(batch, np.zeros(len(states), dtype=np.uint64)).tolist() == expected
    sampler = load_policy(path, game, stochastic=True).batched()
    draws = np.random.default_rng(1).integers(0, 2**63, len(states), dtype=np.uint64) * 2
    picked = sampler.act(batch, draws)
    masks = record.rules.legal_mask(batch)
    assert masks[np.arange(len(states)), picked].all()
    assert sampler.act(batch, draws).tolist() == picked.tolist()
