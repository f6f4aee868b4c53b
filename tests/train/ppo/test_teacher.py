"""Kickstarting (config key ``teacher``): an az network or a named player distilled into the
PPO learner; and ``BoardCNN``'s feature layer (``features_activation``, ``head_planes``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from boardgym import agents
from boardgym.agents.az.checkpoint import load_network as load_az_network
from boardgym.agents.ppo.planes import BoardCNN
from boardgym.agents.ppo.policy import load_network, masked_logits, read_metadata
from boardgym.envs.games import game
from boardgym.envs.games.core import join
from boardgym.train.ppo import trainer as ppo
from boardgym.train.ppo.config import load_config
from boardgym.train.ppo.environments import make_vec_env
from boardgym.train.ppo.teacher import (
    Kickstart,
    PlayerTeacher,
    Targets,
    distillation_loss,
    load_teacher,
    teacher_weight,
)
from boardgym.train.quality.agreement import default_positions, load_positions
from tests.paths import ROOT
from tests.runs import NO_BAR

TEACHER = ROOT / "checkpoints" / "tictactoe_az.zip"
TINY = ["--no-progress", "--set", "n_envs=8", "--set", "n_steps=64", "--set", "batch_size=128",
        "--set", "n_epochs=1", "--set", "channels=16", "--set", "blocks=1",
        "--set", "features_dim=64", "--set", "net_arch=[32]", "--set", "eval_games=4",
        "--set", "eval_opponents=[random]", "--set", "opponents=[random]", *NO_BAR,
        "--set", "init_from=null", "--set", "pretrain_positions=null",
        "--set", "opponent_weights=null", "--set", "learning_rate=0.003",
        "--set", "features_activation=tanh"]
STEPS = 8192


def train_tiny(tmp_path: Path, *extra: str) -> Path:
    """The last checkpoint of a tiny tic-tac-toe run with the ``extra`` arguments."""
    folder = tmp_path / str(len(list(tmp_path.iterdir())))
    assert ppo.main(["tictactoe", "--timesteps", str(STEPS), "--runs-dir", str(folder),
                     *TINY, *extra]) == 0
    (run,) = folder.iterdir()
    return run / "checkpoints" / "last.zip"


def kl_to_teacher(checkpoint: Path) -> float:
    """Mean KL divergence from the teacher's policy to the checkpoint's over the legal moves
    of the labelled tic-tac-toe positions."""
    record = game("tictactoe")
    module = record.rules
    states = [module.parse(position.text) for position in
              load_positions(default_positions(record), record)]
    observations = np.stack([module.observation(state) for state in states]).astype(np.float32)
    masks = np.stack([module.legal_mask(state) for state in states])
    teacher, _ = load_az_network(TEACHER)
    with torch.no_grad():
        teacher_logits = teacher(torch.as_tensor(observations))[0].numpy()
    learner_logits = masked_logits(load_network(checkpoint)[0], observations, masks)
    teacher_logp = np.where(masks, log_softmax(np.where(masks, teacher_logits, -np.inf)), 0.0)
    learner_logp = np.where(masks, log_softmax(learner_logits), 0.0)
    gap = np.where(masks, np.exp(teacher_logp) * (teacher_logp - learner_logp), 0.0)
    return float(gap.sum(axis=1).mean())


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-probabilities of logits that are ``-inf`` at illegal moves."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def test_the_teacher_pulls_the_learner_toward_its_policy(tmp_path: Path) -> None:
    plain = kl_to_teacher(train_tiny(tmp_path))
    taught = kl_to_teacher(train_tiny(tmp_path, "--set", f"teacher={TEACHER}",
                                      "--set", "teacher_epochs=8",
                                      "--set", f"teacher_steps={2 * STEPS}"))
    assert taught < 0.5 * plain


def best_move_rate(checkpoint: Path) -> float:
    """The share of the labelled tic-tac-toe positions where the checkpoint's move is a best
    one."""
    record = game("tictactoe")
    positions = load_positions(default_positions(record), record)
    states = [record.rules.parse(position.text) for position in positions]
    observations = np.stack([record.rules.observation(state) for state in states])
    masks = np.stack([record.rules.legal_mask(state) for state in states])
    moves = masked_logits(load_network(checkpoint)[0], observations.astype(np.float32),
                          masks).argmax(axis=1)
    return float(np.mean([position.is_best(int(move))
                          for position, move in zip(positions, moves, strict=True)]))


def test_a_player_teacher_pulls_the_learner_toward_its_moves(tmp_path: Path) -> None:
    plain = best_move_rate(train_tiny(tmp_path))
    taught = best_move_rate(train_tiny(tmp_path, "--set", "teacher=perfect",
                                       "--set", "teacher_epochs=8",
                                       "--set", f"teacher_steps={2 * STEPS}"))
    assert taught > plain + 0.1


def test_the_teacher_weight_falls_linearly_to_zero() -> None:
    config = load_config("tictactoe", overrides={"teacher_coef": 2.0, "teacher_steps": 1000})
    weights = [teacher_weight(config, step) for step in (0, 250, 1000, 5000)]
    assert weights == [2.0, 1.5, 0.0, 0.0]


def assert_targets_are_of(targets: Targets, searched: object) -> None:
    """``targets`` are on the positions of the batched tic-tac-toe state ``searched``: their
    observations and legal moves."""
    rules = game("tictactoe").rules
    assert np.array_equal(rules.observation(searched), targets.obs.numpy())
    assert np.array_equal(rules.legal_mask(searched), targets.masks.numpy())


class CheckedKickstart(Kickstart):
    """``Kickstart`` that checks each rollout's targets against the rollout."""

    checked = 0

    def targets(self) -> Targets:
        targets = super().targets()
        buffer = self.rollout()
        assert len(targets.obs) == buffer.buffer_size * buffer.n_envs
        rows = np.concatenate([step * buffer.n_envs + index for step, index, _ in self.picked])
        assert len(rows) == buffer.buffer_size * 3  # ceil(40 / 16) a step
        searched = join([states for _, _, states in self.picked])
        assert_targets_are_of(targets.pick(rows), searched)
        found = self.teacher.search_batch(searched)
        assert np.allclose(found.policy, targets.policy[rows].numpy(), atol=1e-6)
        assert np.allclose(found.value, targets.values[rows].numpy(), atol=1e-6)
        policy = targets.policy.numpy()
        assert np.allclose(policy.sum(axis=1), 1.0, atol=1e-5)
        assert not policy[~targets.masks.numpy()].any()
        CheckedKickstart.checked += 1
        return targets


def learn_three_rollouts(tmp_path: Path, kickstart: type[Kickstart], *extra: str) -> None:
    """Three rollouts of a tiny tic-tac-toe run with a teacher searching 40 positions a
    rollout (the ``az:4`` player unless ``extra`` sets another), distilled by ``kickstart``;
    ``extra``: more arguments."""
    run, _, _ = ppo.prepare(ppo.build_parser().parse_args(
        ["tictactoe", "--runs-dir", str(tmp_path), *TINY[1:], "--set", "n_steps=16",
         "--set", f"teacher={TEACHER}", "--set", "teacher_simulations=4",
         "--set", "teacher_positions=40", *extra]),
        ppo.ALGO, ppo.default_pool)
    teacher = load_teacher(run.config)
    assert teacher is not None
    model = ppo.build_model(run.config, make_vec_env(run.config, run.pool), None)
    model.learn(3 * 8 * 16, callback=kickstart(run.config, teacher))


def test_a_search_teacher_searches_the_positions_the_learner_saw(tmp_path: Path) -> None:
    learn_three_rollouts(tmp_path, CheckedKickstart, "--set", "opening_plies=[0,4]")
    assert CheckedKickstart.checked == 3


def test_a_search_teacher_needs_the_batched_env() -> None:
    with pytest.raises(ValueError, match="vectorization=dummy"):
        load_config("tictactoe", overrides={"teacher_simulations": 8,
                                            "vectorization": "dummy"})
    with pytest.raises(ValueError, match="vectorization=dummy"):
        load_teacher(load_config("tictactoe", overrides={"teacher": "perfect",
                                                         "vectorization": "dummy"}))


class PlayerCheckedKickstart(Kickstart):
    """``Kickstart`` that checks a player teacher's targets: the recorded positions only,
    all the probability on the player's move there, no value."""

    checked = 0

    def targets(self) -> Targets:
        assert isinstance(self.teacher, PlayerTeacher) and self.network is None
        targets = super().targets()
        self.teacher.reseed(self.config.seed, self.model.num_timesteps)  # the same draws
        searched = join([states for _, _, states in self.picked])
        assert len(targets.obs) == self.rollout().buffer_size * 3  # ceil(40 / 16) a step
        assert_targets_are_of(targets, searched)
        assert np.array_equal(self.teacher.search_batch(searched).policy, targets.policy.numpy())
        policy = targets.policy.numpy()
        assert np.array_equal(policy.max(axis=1), np.ones(len(policy)))
        assert np.array_equal(policy.sum(axis=1), np.ones(len(policy)))
        assert not policy[~targets.masks.numpy()].any()
        assert bool(torch.isnan(targets.values).all())
        PlayerCheckedKickstart.checked += 1
        return targets


def test_a_player_teacher_teaches_its_moves_on_the_recorded_positions(tmp_path: Path) -> None:
    learn_three_rollouts(tmp_path, PlayerCheckedKickstart, "--set", "teacher=perfect",
                         "--set", "opening_plies=[0,4]")
    assert PlayerCheckedKickstart.checked == 3


def test_positions_without_a_teacher_value_train_the_policy_alone() -> None:
    policy = load_network(ROOT / "checkpoints" / "tictactoe.zip")[0]
    rules = game("tictactoe").rules
    start = rules.initial_state()
    obs = torch.as_tensor(rules.observation(start)[None], dtype=torch.float32)
    masks = torch.as_tensor(rules.legal_mask(start)[None])
    centre = torch.zeros((1, 9))
    centre[0, 4] = 1.0
    loss, kl, value_error = distillation_loss(
        policy, Targets(obs, masks, centre, torch.tensor([float("nan")])), vf_coef=0.5)
    assert torch.isfinite(loss) and value_error.item() == 0.0 and torch.equal(loss, kl)
    with_value = distillation_loss(policy, Targets(obs, masks, centre, torch.tensor([1.0])), 0.5)
    assert with_value[2].item() > 0.0 and with_value[0].item() > kl.item()


def test_positions_without_a_policy_target_train_the_value_alone() -> None:
    """A row of zeros in the policy leaves the KL (a mean over the taught rows) as it was."""
    policy = load_network(ROOT / "checkpoints" / "tictactoe.zip")[0]
    rules = game("tictactoe").rules
    boards = [rules.initial_state(), rules.apply(rules.initial_state(), 4)]
    obs = torch.as_tensor(np.array([rules.observation(board) for board in boards]),
                          dtype=torch.float32)
    masks = torch.as_tensor(np.array([rules.legal_mask(board) for board in boards]))
    centre = torch.zeros((2, 9))
    centre[0, 4] = 1.0
    values = torch.tensor([0.0, 1.0])
    _, kl, _ = distillation_loss(policy, Targets(obs, masks, centre, values), 0.5)
    _, first_kl, _ = distillation_loss(policy, Targets(obs[:1], masks[:1], centre[:1],
                                                       values[:1]), 0.5)
    assert torch.allclose(kl, first_kl)
    untaught = distillation_loss(policy, Targets(obs[1:], masks[1:], centre[1:], values[1:]), 0.5)
    assert untaught[1].item() == 0.0 and untaught[2].item() > 0.0


@pytest.mark.parametrize(("teacher", "message"), [
    (str(ROOT / "checkpoints" / "reversi_az.zip"), "trained for 'reversi'"),
    (str(ROOT / "checkpoints" / "tictactoe.zip"), "not an az checkpoint"),
    (str(ROOT / "checkpoints" / "missing.zip"), "missing.zip"),
    ("perfekt", "unknown tictactoe player 'perfekt'"),
    ("az:16@checkpoints/tictactoe_az.zip",
     "--set teacher=checkpoints/tictactoe_az.zip --set teacher_simulations=16"),
])
def test_a_wrong_teacher_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                teacher: str, message: str) -> None:
    with pytest.raises(SystemExit) as stop:
        ppo.main(["tictactoe", "--runs-dir", str(tmp_path), "--no-progress",
                  "--set", f"teacher={teacher}"])
    error = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(error.splitlines()) == 1
    assert message in error and "teacher" in error
    assert not list(tmp_path.iterdir())


def test_a_teacher_of_another_board_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="board"):
        ppo.prepare(ppo.build_parser().parse_args(
            ["four_in_a_row", "--runs-dir", str(tmp_path), "--set", "env_kwargs={rows: 5}",
             "--set", f"teacher={ROOT / 'checkpoints' / 'four_in_a_row_az.zip'}"]),
            ppo.ALGO, ppo.default_pool)
    assert not list(tmp_path.iterdir())


def test_tanh_features_stay_in_range_and_unknown_activations_are_refused() -> None:
    space = gym.spaces.Box(0, 1, (2, 3, 3), np.uint8)
    features = BoardCNN(space, channels=8, blocks=1, features_dim=16,
                        features_activation="tanh")(torch.full((4, 2, 3, 3), 1.0))
    assert features.shape == (4, 16) and bool((features.abs() < 1).all())
    assert bool((features < 0).any())  # relu features never are
    with pytest.raises(ValueError, match="features_activation"):
        BoardCNN(space, features_activation="sigmoid")
    with pytest.raises(ValueError, match="features_activation"):
        load_config("tictactoe", overrides={"features_activation": "sigmoid"})


def test_a_squeezed_feature_layer_round_trips_through_a_checkpoint(tmp_path: Path) -> None:
    last = train_tiny(tmp_path, "--set", "head_planes=2")
    kwargs = read_metadata(last)["policy"]["features_extractor_kwargs"]
    assert kwargs["head_planes"] == 2 and kwargs["features_activation"] == "tanh"
    policy = load_network(last)[0]
    squeeze = policy.features_extractor.squeeze
    assert isinstance(squeeze, torch.nn.Conv2d) and squeeze.out_channels == 2
    assert agents.make("tictactoe", str(last)).act(game("tictactoe").rules.initial_state(),
                                                   np.random.default_rng(0)) in range(9)


class SkipCheckedKickstart(Kickstart):
    """``Kickstart`` that checks that the positions of games against ``teacher_skip``
    opponents get no targets and no search."""

    checked = 0

    def record(self) -> None:
        if self.step_in_rollout == 0:
            self.seen: list[list[str]] = []
        env = self.training_env.unwrapped
        self.seen.append(list(env.venv.opponents))  # type: ignore[attr-defined]
        super().record()

    def targets(self) -> Targets:
        targets = super().targets()
        against = np.array(self.seen).reshape(-1)
        assert 0 < len(targets.obs) == int((against == "perfect").sum()) < len(against)
        buffer = self.rollout()
        for step, index, _ in self.picked:
            assert all(self.seen[step][game] == "perfect" for game in index)
        obs = buffer.observations.reshape(-1, *buffer.obs_shape)[against == "perfect"]
        assert np.array_equal(obs, targets.obs.numpy())
        assert self.network_rows == [len(obs)]  # the network sees the taught positions only
        taught = np.flatnonzero(against == "perfect")
        rows = np.concatenate([step * buffer.n_envs + index for step, index, _ in self.picked])
        found = self.teacher.search_batch(join([states for _, _, states in self.picked]))
        assert np.allclose(found.policy, targets.policy[np.searchsorted(taught, rows)].numpy(),
                           atol=1e-6)
        SkipCheckedKickstart.checked += 1
        return targets

    def _on_rollout_end(self) -> None:
        self.network_rows: list[int] = []
        assert self.network is not None
        network_result = self.network.network_result

        def counted(observations: np.ndarray, masks: np.ndarray) -> Any:
            self.network_rows.append(len(observations))
            return network_result(observations, masks)

        self.network.network_result = counted  # type: ignore[method-assign]
        try:
            super()._on_rollout_end()
        finally:
            del self.network.network_result


def test_games_against_skipped_opponents_are_not_distilled(tmp_path: Path) -> None:
    learn_three_rollouts(tmp_path, SkipCheckedKickstart, "--set", "opponents=[random, perfect]",
                         "--set", "teacher_skip=[random]")
    assert SkipCheckedKickstart.checked == 3


def test_skipping_every_opponent_is_plain_ppo(tmp_path: Path) -> None:
    plain = load_network(train_tiny(tmp_path))[0].state_dict()
    skipped = load_network(train_tiny(tmp_path, "--set", f"teacher={TEACHER}",
                                      "--set", "teacher_skip=[random]"))[0].state_dict()
    assert all(torch.equal(plain[key], skipped[key]) for key in plain)


def test_teacher_skip_names_players() -> None:
    with pytest.raises(ValueError, match="teacher_skip: unknown tictactoe player 'perfekt'"):
        load_config("tictactoe", overrides={"opponents": ["random"], "opponent_weights": None,
                                            "teacher_skip": ["perfekt"]})
    config = load_config("tictactoe", overrides={"opponents": ["random"],
                                                 "opponent_weights": None,
                                                 "teacher_skip": ["perfect"]})
    assert config.teacher_skip == ["perfect"]  # not in the league: no games to skip
