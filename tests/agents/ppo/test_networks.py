"""The networks' symmetries (``board_symmetries``, ``SymmetricPolicy``, ``AveragedPolicy``),
ensembles (``EnsemblePolicy``) and computed input planes, through their API."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from boardgym.agents.checkpoint import CheckpointError
from boardgym.agents.layers import board_symmetries
from boardgym.agents.ppo.planes import (
    BoardCNN,
    landing_features,
    parity_plane,
    threat_planes,
    window_counts,
)
from boardgym.agents.ppo.policies import (
    MAX_MEMBERS,
    AveragedPolicy,
    EnsemblePolicy,
    SymmetricPolicy,
    action_logits,
    logits_and_values,
    members_of,
)
from boardgym.agents.ppo.policy import load_network, masked_logits, write_checkpoint
from boardgym.envs.games import GAMES, four_in_a_row, reversi, tictactoe
from tests.boards import random_position
from tests.records import rewrite_policy_record

Transform = Callable[[np.ndarray], np.ndarray]
IDENTITY: Transform = np.asarray
SQUARE: list[Transform] = [
    IDENTITY, np.flipud, np.fliplr, lambda b: np.rot90(b, 2),
    np.transpose, lambda b: np.rot90(b, 1), lambda b: np.rot90(b, 3),
    lambda b: np.rot90(b, 2).T,
]
MIRROR: list[Transform] = [IDENTITY, np.fliplr]


def make_policy(rules: ModuleType, kind: type[MaskableActorCriticPolicy] = SymmetricPolicy
                ) -> MaskableActorCriticPolicy:
    """An untrained policy of class ``kind`` for ``rules``' default board (random weights)."""
    torch.manual_seed(0)
    state = rules.initial_state()
    shape = rules.observation(state).shape
    policy = kind(
        gym.spaces.Box(0, 1, shape, np.uint8), gym.spaces.Discrete(rules.legal_mask(state).size),
        lambda _: 1e-3, features_extractor_class=BoardCNN,
        features_extractor_kwargs={"channels": 8, "blocks": 1, "features_dim": 32},
        net_arch=[16])
    policy.set_training_mode(False)
    return policy


def action_map(rules: ModuleType, state: object, transform: Transform) -> np.ndarray:
    """For each action on the transformed board, the same move on the original board."""
    rows, cols = rules.observation(state).shape[1:]
    cells = transform(np.arange(rows * cols).reshape(rows, cols)).reshape(-1)
    return cells if rules.legal_mask(state).size == rows * cols else cells[:cols] % cols


@pytest.mark.parametrize(("rows", "cols", "actions", "count"), [
    (8, 8, 64, 8), (3, 3, 9, 8), (6, 7, 42, 4), (6, 7, 7, 2)])
def test_board_symmetries_are_those_of_the_rectangle(rows: int, cols: int, actions: int,
                                                     count: int) -> None:
    cells, moves = board_symmetries(rows, cols, actions)
    assert cells.shape == (count, rows * cols) and moves.shape == (count, actions)
    assert (cells[0] == torch.arange(rows * cols)).all()
    assert len({tuple(row.tolist()) for row in cells}) == count
    assert all(sorted(row.tolist()) == list(range(actions)) for row in moves)


def test_board_symmetries_refuse_other_action_spaces() -> None:
    with pytest.raises(ValueError, match="symmetric=false"):
        board_symmetries(6, 7, 13)


@pytest.mark.parametrize("kind", [SymmetricPolicy, AveragedPolicy])
@pytest.mark.parametrize(("rules", "transforms"), [
    pytest.param(reversi, SQUARE, id="reversi"),
    pytest.param(tictactoe, SQUARE, id="tictactoe"),
    pytest.param(four_in_a_row, MIRROR, id="four_in_a_row"),
])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_symmetric_policy_mirrors_moves_and_keeps_values(
        rules: ModuleType, transforms: list[Transform], kind: type[MaskableActorCriticPolicy],
        seed: int) -> None:
    policy = make_policy(rules, kind)
    rng = np.random.default_rng(seed)
    state = random_position(rules, rng, int(rng.integers(0, 40)))
    board, mask = rules.observation(state), rules.legal_mask(state)
    logits = masked_logits(policy, board[None], mask[None])[0]
    value = policy.predict_values(torch.as_tensor(board[None], dtype=torch.float32))
    images = [np.stack([transform(plane) for plane in board]) for transform in transforms]
    self_symmetric = any((image == board).all() for image in images[1:])
    for transform, image in zip(transforms, images, strict=True):
        moves = action_map(rules, state, transform)
        image_logits = masked_logits(policy, image[None], mask[moves][None])[0]
        if not self_symmetric:  # else which of the equal moves gets which logit is free
            np.testing.assert_allclose(image_logits, logits[moves], atol=1e-5)
        image_value = policy.predict_values(torch.as_tensor(image[None], dtype=torch.float32))
        torch.testing.assert_close(image_value, value)


@pytest.mark.parametrize(("rules", "transforms"), [
    pytest.param(reversi, SQUARE, id="reversi"),
    pytest.param(four_in_a_row, MIRROR, id="four_in_a_row"),
])
def test_averaged_policy_is_the_mean_of_the_plain_network_over_the_images(
        rules: ModuleType, transforms: list[Transform]) -> None:
    """With the same weights, ``AveragedPolicy``'s logits and value are the plain policy's on
    each image, mapped back to the board's moves, averaged; its masked moves are legal."""
    averaged = make_policy(rules, AveragedPolicy)
    plain = make_policy(rules, MaskableActorCriticPolicy)
    plain.load_state_dict(averaged.state_dict())
    plain.set_training_mode(False)
    rng = np.random.default_rng(3)
    for _ in range(5):
        state = random_position(rules, rng, int(rng.integers(0, 30)))
        board, mask = rules.observation(state), rules.legal_mask(state)
        logits = np.zeros(mask.size)
        value = torch.zeros(1, 1)
        for transform in transforms:
            image = torch.as_tensor(np.stack([transform(plane) for plane in board])[None],
                                    dtype=torch.float32)
            with torch.inference_mode():
                moves = action_map(rules, state, transform)
                logits[moves] += action_logits(plain, image)[0].numpy()
                value += plain.predict_values(image)
        with torch.inference_mode():
            obs = torch.as_tensor(board[None], dtype=torch.float32)
            np.testing.assert_allclose(action_logits(averaged, obs)[0].numpy(),
                                       logits / len(transforms), atol=1e-5)
            torch.testing.assert_close(averaged.predict_values(obs), value / len(transforms))
            both = logits_and_values(averaged, obs)
            torch.testing.assert_close(both[0], action_logits(averaged, obs))
            torch.testing.assert_close(both[1], averaged.predict_values(obs).reshape(-1))
            actions, _, _ = averaged.forward(obs, deterministic=True, action_masks=mask[None])
        assert mask[int(actions[0])]


@pytest.mark.parametrize("game", ["reversi", "four_in_a_row"])
def test_logits_and_values_are_the_actor_and_the_critic_in_one_pass(game: str) -> None:
    """On the shipped checkpoints (a ``SymmetricPolicy`` for Reversi, an ``AveragedPolicy`` for
    four-in-a-row): ``logits_and_values`` equals ``action_logits`` and ``predict_values``."""
    policy, _ = load_network(f"checkpoints/{game}.zip")
    rules = GAMES[game].rules
    rng = np.random.default_rng(0)
    boards = np.stack([rules.observation(random_position(rules, rng, int(rng.integers(0, 30))))
                       for _ in range(16)])
    obs = torch.as_tensor(boards, dtype=torch.float32)
    with torch.inference_mode():
        logits, values = logits_and_values(policy, obs)
        torch.testing.assert_close(logits, action_logits(policy, obs))
        torch.testing.assert_close(values, policy.predict_values(obs).reshape(-1))


def brute_force_threats(board: np.ndarray, length: int) -> np.ndarray:
    """For each side's plane of ``board`` ``(2, rows, cols)``, the empty cells where one more
    stone of that side makes ``length`` in a line, found by trying every cell."""
    rows, cols = board.shape[1:]
    empty = board.sum(axis=0) == 0
    steps = [(0, 1), (1, 0), (1, 1), (1, -1)]

    def completes(stones: np.ndarray, r: int, c: int) -> bool:
        for dr, dc in steps:
            run = 1
            for sign in (1, -1):
                rr, cc = r + sign * dr, c + sign * dc
                while 0 <= rr < rows and 0 <= cc < cols and stones[rr, cc]:
                    run, rr, cc = run + 1, rr + sign * dr, cc + sign * dc
            if run >= length:
                return True
        return False

    return np.array([[[bool(empty[r, c]) and completes(plane, r, c) for c in range(cols)]
                      for r in range(rows)] for plane in board])


def test_threat_planes_of_a_known_position() -> None:
    """After 445566 (columns, 1-based), X to move has three in the bottom row and O three
    in the row above: each side's threats are the two cells beside its three."""
    board = four_in_a_row.observation(four_in_a_row.parse("445566"))
    planes = threat_planes(torch.as_tensor(board[None], dtype=torch.float32), 4)[0].numpy()
    mine, theirs = (np.argwhere(plane).tolist() for plane in planes)
    assert mine == [[5, 2], [5, 6]] and theirs == [[4, 2], [4, 6]]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(6, 7, 4), (5, 4, 5), (4, 9, 3)]))
def test_threat_planes_are_the_cells_that_complete_a_line(
        seed: int, shape: tuple[int, int, int]) -> None:
    rows, columns, connect = shape
    rng = np.random.default_rng(seed)
    state = random_position(four_in_a_row, rng, int(rng.integers(0, rows * columns)),
                            rows=rows, columns=columns, connect=connect)
    board = four_in_a_row.observation(state)
    planes = threat_planes(torch.as_tensor(board[None], dtype=torch.float32), connect)[0]
    assert (planes.numpy() > 0).tolist() == brute_force_threats(board, connect).tolist()


def brute_force_windows(board: np.ndarray, length: int, filled: int) -> np.ndarray:
    """For each side's plane of ``board`` ``(2, rows, cols)``, per empty cell, the lines of
    ``length`` cells on the board through it with ``filled`` of that side's stones and none
    of the other's, counted by walking every line."""
    rows, cols = board.shape[1:]
    counts = np.zeros(board.shape, dtype=int)
    for side in (0, 1):
        for dr, dc in [(0, 1), (1, 0), (1, 1), (1, -1)]:
            for r in range(rows):
                for c in range(cols):
                    cells = [(r + k * dr, c + k * dc) for k in range(length)]
                    if not all(0 <= rr < rows and 0 <= cc < cols for rr, cc in cells):
                        continue
                    mine = sum(int(board[side][cell]) for cell in cells)
                    theirs = sum(int(board[1 - side][cell]) for cell in cells)
                    if mine == filled and theirs == 0:
                        for cell in cells:
                            counts[side][cell] += not board[:, cell[0], cell[1]].any()
    return counts


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(6, 7, 4), (5, 4, 5), (4, 9, 3)]),
       filled=st.integers(0, 4))
def test_window_counts_are_the_open_lines_through_each_empty_cell(
        seed: int, shape: tuple[int, int, int], filled: int) -> None:
    rows, columns, connect = shape
    filled = min(filled, connect - 1)
    rng = np.random.default_rng(seed)
    state = random_position(four_in_a_row, rng, int(rng.integers(0, rows * columns)),
                            rows=rows, columns=columns, connect=connect)
    board = four_in_a_row.observation(state)
    counts = window_counts(torch.as_tensor(board[None], dtype=torch.float32), connect, filled)
    assert counts[0].numpy().astype(int).tolist() == brute_force_windows(
        board, connect, filled).tolist()


def test_window_planes_need_threat_lines() -> None:
    with pytest.raises(ValueError, match="set threats to at least 3, or windows=false"):
        BoardCNN(gym.spaces.Box(0, 1, (2, 6, 7), np.uint8), windows=True)
    network = BoardCNN(gym.spaces.Box(0, 1, (2, 6, 7), np.uint8), threats=4, windows=True)
    assert network(torch.zeros(3, 2, 6, 7)).shape == (3, network.features_dim)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(6, 7, 4), (4, 5, 4), (7, 4, 4)]))
def test_landing_features_read_the_cell_each_move_fills(
        seed: int, shape: tuple[int, int, int]) -> None:
    """Each column's entry is the cell a move there fills (found by playing it), 0 when the
    column is full."""
    rows, columns, connect = shape
    rng = np.random.default_rng(seed)
    state = random_position(four_in_a_row, rng, int(rng.integers(0, rows * columns)),
                            rows=rows, columns=columns, connect=connect)
    board = four_in_a_row.observation(state)
    cell_numbers = torch.arange(1.0, rows * columns + 1).reshape(1, 1, rows, columns)
    read = landing_features(cell_numbers, torch.as_tensor(board[None], dtype=torch.float32))
    mask = four_in_a_row.legal_mask(state)
    for column in range(columns):
        if not mask[column]:
            assert read[0, 0, column] == 0
            continue
        after = four_in_a_row.observation(four_in_a_row.apply(state, column))
        filled = np.flatnonzero((after.sum(axis=0) - board.sum(axis=0)).ravel())
        assert filled.tolist() == [int(read[0, 0, column]) - 1]


def test_landing_features_widen_the_feature_layer_input() -> None:
    space = gym.spaces.Box(0, 1, (2, 6, 7), np.uint8)
    plain = BoardCNN(space, channels=8, head_planes=4, threats=4)
    landing = BoardCNN(space, channels=8, head_planes=4, threats=4, landing=True)
    assert landing.head.in_features == plain.head.in_features + 8 * 7
    board = torch.as_tensor(four_in_a_row.observation(four_in_a_row.parse("4444441"))[None],
                            dtype=torch.float32)
    assert landing(board).shape == (1, landing.features_dim)


@pytest.mark.parametrize(("moves", "marked"), [
    ("", [5, 3, 1]), ("4", [4, 2, 0]), ("4455", [5, 3, 1]), ("44556", [4, 2, 0])])
def test_parity_plane_marks_the_rows_that_favour_the_side_to_move(
        moves: str, marked: list[int]) -> None:
    """The first player to move (as many stones of each side) gets the odd rows from the
    bottom (row indices 5, 3, 1 from the top of six), the second the even ones."""
    board = four_in_a_row.observation(four_in_a_row.parse(moves))
    plane = parity_plane(torch.as_tensor(board[None], dtype=torch.float32))[0, 0].numpy()
    assert np.flatnonzero(plane[:, 0]).tolist() == sorted(marked)
    assert (plane == plane[:, :1]).all()


def test_board_cnn_takes_the_parity_plane() -> None:
    network = BoardCNN(gym.spaces.Box(0, 1, (2, 6, 7), np.uint8), threats=4, parity=True)
    assert network(torch.zeros(3, 2, 6, 7)).shape == (3, network.features_dim)


@pytest.mark.parametrize("threats", [-1, 1, 8])
def test_board_cnn_refuses_a_threat_line_that_cannot_be(threats: int) -> None:
    with pytest.raises(ValueError, match="threats is a line length from 2 to 7"):
        BoardCNN(gym.spaces.Box(0, 1, (2, 6, 7), np.uint8), threats=threats)


def test_a_new_gated_tower_computes_its_stem_alone_and_its_gates_learn() -> None:
    """Gated blocks start switched off, even after SB3's orthogonal initialisation, so the
    features equal those of the same network without blocks; a training step opens them."""
    torch.manual_seed(0)
    space = gym.spaces.Box(0, 1, (2, 6, 7), np.uint8)
    kwargs = {"channels": 8, "features_dim": 32, "head_planes": 4, "threats": 4}
    policy = MaskableActorCriticPolicy(
        space, gym.spaces.Discrete(7), lambda _: 1e-2, features_extractor_class=BoardCNN,
        features_extractor_kwargs={**kwargs, "blocks": 3, "gated": True}, net_arch=[16])
    tower = policy.features_extractor
    stem_only = BoardCNN(space, blocks=0, **kwargs)
    stem_only.load_state_dict({name: value for name, value in tower.state_dict().items()
                               if not name.startswith("blocks.")})
    rng = np.random.default_rng(0)
    boards = torch.as_tensor(np.stack([
        four_in_a_row.observation(random_position(four_in_a_row, rng, moves=12))
        for _ in range(16)]), dtype=torch.float32)
    torch.testing.assert_close(tower(boards), stem_only(boards))
    values = policy.predict_values(boards)
    values.square().mean().backward()
    policy.optimizer.step()
    assert all(block.gate.item() != 0 for block in tower.blocks)


def make_ensemble(members: int) -> EnsemblePolicy:
    """An untrained four-in-a-row ``EnsemblePolicy`` of small members (random weights)."""
    torch.manual_seed(0)
    return EnsemblePolicy(
        gym.spaces.Box(0, 1, (2, 6, 7), np.uint8), gym.spaces.Discrete(7), lambda _: 1e-3,
        members=members, features_extractor_class=BoardCNN,
        features_extractor_kwargs={"channels": 8, "blocks": 1, "features_dim": 32},
        net_arch=[16])


def test_an_ensemble_plays_the_mean_of_its_members(tmp_path: Path) -> None:
    """``EnsemblePolicy``'s logits and values are its members' means; the members start apart
    and its optimizer trains them all; a checkpoint of it loads as the same policy."""
    ensemble = make_ensemble(3)
    members = members_of(ensemble)
    rng = np.random.default_rng(5)
    boards = np.stack([four_in_a_row.observation(random_position(four_in_a_row, rng, moves=10))
                       for _ in range(8)])
    obs = torch.as_tensor(boards, dtype=torch.float32)
    with torch.inference_mode():
        logits, values = logits_and_values(ensemble, obs)
        each = [logits_and_values(member, obs) for member in members]
        torch.testing.assert_close(logits, torch.stack([one for one, _ in each]).mean(0))
        torch.testing.assert_close(values, torch.stack([one for _, one in each]).mean(0))
        torch.testing.assert_close(action_logits(ensemble, obs), logits)
        torch.testing.assert_close(ensemble.predict_values(obs).reshape(-1), values)
    assert not torch.allclose(each[0][0], each[1][0])
    assert {id(p) for p in ensemble.optimizer.param_groups[0]["params"]} == \
        {id(p) for member in members for p in member.parameters()}
    path = tmp_path / "ensemble.zip"
    write_checkpoint(path, ensemble, "four_in_a_row", {}, 0)
    loaded, metadata = load_network(path, "four_in_a_row")
    assert metadata["policy"]["class"] == "EnsemblePolicy"
    assert metadata["policy"]["members"] == 3
    with torch.inference_mode():
        torch.testing.assert_close(logits_and_values(loaded, obs)[0], logits)


@pytest.mark.parametrize("members", [1, MAX_MEMBERS + 1, True])
def test_an_ensemble_has_two_to_max_members(members: Any) -> None:
    with pytest.raises(ValueError, match=f"EnsemblePolicy has 2 to {MAX_MEMBERS} members"):
        make_ensemble(members)


@pytest.mark.parametrize(("change", "message"), [
    ({"members": 1000}, "members=1000 is not in [2, 16]"),
    ({"members": "2"}, "has members='2', not int"),
    ({"members": None}, "lacks 'members'"),
    ({"class": "AveragedPolicy"}, "unknown keys ['members']"),
])
def test_a_damaged_ensemble_record_is_refused_in_one_line(change: dict[str, Any], message: str,
                                                          tmp_path: Path) -> None:
    path = tmp_path / "ensemble.zip"
    write_checkpoint(path, make_ensemble(2), "four_in_a_row", {}, 0)
    rewrite_policy_record(path, change)
    with pytest.raises(CheckpointError) as error:
        load_network(path, "four_in_a_row")
    assert message in str(error.value) and "\n" not in str(error.value)
