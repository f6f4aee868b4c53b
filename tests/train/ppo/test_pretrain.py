"""Pretraining (config key ``pretrain_positions``): a new run first learns the exact best moves
of a labelled set; the positions that judge play quality are never trained on, and a file
that cannot be used is refused in one line naming the fix, before any run folder is made."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from boardgym.agents.ppo.policies import action_logits, members_of
from boardgym.agents.ppo.policy import load_network, read_metadata
from boardgym.envs.games import game as game_record
from boardgym.train.ppo import trainer as ppo
from boardgym.train.ppo.config import TrainConfig
from boardgym.train.ppo.pretrain import symmetric_images, targets_of, training_positions
from boardgym.train.ppo.teacher import as_targets, distillation_loss, masked_log_softmax
from boardgym.train.quality.agreement import default_positions
from boardgym.train.quality.moves import move_lines
from boardgym.train.quality.positions import position_lines
from tests.runs import NO_BAR

GAME = "four_in_a_row"
TINY = ["--no-progress", "--set", "n_envs=4", "--set", "n_steps=32", "--set", "batch_size=16",
        "--set", "n_epochs=1", "--set", "eval_games=4", "--set", "eval_opponents=[random]",
        "--set", "opponents=[random]", *NO_BAR, "--set", "opponent_weights=null",
        "--set", "eval_every=128", "--set", "checkpoint_every=128", "--set", "eval_quality=0",
        "--set", "teacher=null", "--set", "init_from=null", "--set", "pretrain_positions=null",
        "--set", "pretrain_symmetries=false", "--set", "pretrain_children=false",
        "--set", "opening_plies=null",
        "--set", "channels=8", "--set", "blocks=1", "--set", "features_dim=32",
        "--set", "windows=false",
        "--set", "net_arch=[16]", "--set", "learning_rate=1e-9", "--set", "lr_schedule=constant"]
STEPS = 128

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """24 solver-labelled four-in-a-row positions drawn apart from the shipped set."""
    path = tmp_path_factory.mktemp("labelled") / "positions.jsonl"
    path.write_text("\n".join(position_lines(GAME, 24, seed=11)) + "\n", encoding="utf-8")
    return path


def train_tiny(runs_dir: Path, *extra: str) -> Path:
    """The last checkpoint of a tiny four-in-a-row run (PPO's learning rate ~0)."""
    assert ppo.main([GAME, "--timesteps", str(STEPS), "--runs-dir", str(runs_dir), *TINY,
                     *extra]) == 0
    (run,) = runs_dir.iterdir()
    return run / "checkpoints" / "last.zip"


def kl_to_labels(labels: Path, **checkpoints: Path) -> dict[str, float]:
    """Each checkpoint's KL from the targets of ``labels`` to its policy, by name."""
    config = TrainConfig(game=GAME, pretrain_positions=str(labels))
    targets = targets_of(config, training_positions(config))
    with torch.no_grad():
        return {name: distillation_loss(load_network(path)[0], targets, 0.5)[1].item()
                for name, path in checkpoints.items()}


def refusal(capsys: pytest.CaptureFixture[str], runs_dir: Path, *extra: str) -> str:
    """The one-line error of a run that must be refused before its folder is made."""
    with pytest.raises(SystemExit) as stop:
        ppo.main([GAME, "--runs-dir", str(runs_dir), *TINY, *extra])
    error = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(error.splitlines()) == 1
    assert not runs_dir.exists() or not list(runs_dir.iterdir())
    return error


def test_pretraining_pulls_the_policy_to_the_best_moves(labelled: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    taught = train_tiny(tmp_path / "taught", "--set", f"pretrain_positions={labelled}",
                        "--set", "pretrain_epochs=40", "--set", "pretrain_lr=3e-3")
    assert "pretrain pass 40/40 on 24 positions" in capsys.readouterr().out
    plain = train_tiny(tmp_path / "plain")
    start = taught.with_name("start.zip")  # the pretrained policy, before PPO's ~0 steps
    kl = kl_to_labels(labelled, taught=taught, plain=plain, start=start)
    assert kl["taught"] < 0.8 * kl["plain"], kl
    assert kl["start"] == pytest.approx(kl["taught"], abs=1e-4)
    assert not plain.with_name("start.zip").exists()


def test_smaller_pretraining_minibatches_take_more_steps(labelled: Path, tmp_path: Path
                                                        ) -> None:
    """``pretrain_batch_size`` sets the pretraining's minibatches apart from PPO's
    ``batch_size`` (16 here: one step a pass over the 24 labels): minibatches of 2 take
    twelve steps a pass, so the same passes end nearer the labels."""
    alike = ["--set", f"pretrain_positions={labelled}", "--set", "pretrain_epochs=20",
             "--set", "pretrain_lr=3e-3"]
    small = train_tiny(tmp_path / "small", *alike, "--set", "pretrain_batch_size=2")
    ppo_sized = train_tiny(tmp_path / "ppo_sized", *alike)
    kl = kl_to_labels(labelled, small=small, ppo_sized=ppo_sized)
    assert kl["small"] < 0.8 * kl["ppo_sized"], kl


def test_the_targets_are_the_best_moves_and_the_outcome(labelled: Path) -> None:
    config = TrainConfig(game=GAME, pretrain_positions=str(labelled))
    positions = training_positions(config)
    targets = targets_of(config, positions)
    for row, position in enumerate(positions):
        best = {action for action in position.values if position.is_best(action)}
        chosen = set(torch.nonzero(targets.policy[row]).flatten().tolist())
        assert chosen == best
        assert abs(float(targets.policy[row].sum()) - 1.0) < 1e-6
        assert targets.masks[row].nonzero().flatten().tolist() == sorted(position.values)
        assert float(targets.values[row]) == (position.best > 0) - (position.best < 0)


def test_the_children_teach_the_value_one_move_on(labelled: Path) -> None:
    """Each non-terminal position one move after a label (its text: one more column) follows
    the labels with the exact outcome for its mover and no policy target."""
    config = TrainConfig(game=GAME, pretrain_positions=str(labelled))
    positions = training_positions(config)
    rules = game_record(GAME).rules
    expected = []
    for position in positions:
        for action, value in position.values.items():
            child = rules.parse(position.text + str(action + 1))
            if not rules.is_terminal(child):
                expected.append((rules.observation(child).tobytes(), -int(np.sign(value))))
    plain = targets_of(config, positions)
    both = targets_of(TrainConfig(game=GAME, pretrain_positions=str(labelled),
                                  pretrain_children=True), positions)
    count = len(positions)
    assert len(both.values) == count + len(expected) and expected
    for field, head in zip(both, plain, strict=True):
        assert torch.equal(field[:count], head)
    assert not both.policy[count:].any()
    children = [(obs.to(torch.uint8).numpy().tobytes(), int(value))
                for obs, value in zip(both.obs[count:], both.values[count:], strict=True)]
    assert sorted(children) == sorted(expected)


def test_the_positions_that_judge_quality_are_dropped(labelled: Path, tmp_path: Path) -> None:
    judged = default_positions(game_record(GAME)).read_text(encoding="utf-8").splitlines()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join(judged[:5]) + "\n" + labelled.read_text(encoding="utf-8"),
                     encoding="utf-8")
    config = TrainConfig(game=GAME, pretrain_positions=str(mixed))
    mine = TrainConfig(game=GAME, pretrain_positions=str(labelled))
    assert training_positions(config) == training_positions(mine)
    selecting = tmp_path / "selecting.jsonl"
    selecting.write_text("\n".join(labelled.read_text(encoding="utf-8").splitlines()[:4]) + "\n",
                         encoding="utf-8")
    apart = TrainConfig(game=GAME, pretrain_positions=str(mixed), eval_quality=4,
                        eval_quality_positions=str(selecting))
    assert training_positions(apart) == training_positions(mine)[4:]


def test_a_move_set_targets_the_players_moves_and_results(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    """A move set (``boardgym positions GAME --player SPEC``) pretrains too: each target is
    the player's move and the result of its game; shipped positions are dropped likewise."""
    judged = default_positions(game_record(GAME)).read_text(encoding="utf-8").splitlines()
    moves = tmp_path / "moves.jsonl"
    lines = move_lines(GAME, "lookahead:1", 20, seed=5)
    shipped = json.loads(judged[0])["position"]
    moves.write_text("\n".join([json.dumps({"position": shipped, "move": int(next(iter(
        json.loads(judged[0])["moves"]))), "result": 0}), *lines]) + "\n", encoding="utf-8")
    config = TrainConfig(game=GAME, pretrain_positions=str(moves))
    labels = training_positions(config)
    assert [label.line() for label in labels] == lines  # type: ignore[union-attr]
    targets = targets_of(config, labels)
    for row, item in enumerate(json.loads(text) for text in lines):
        assert torch.nonzero(targets.policy[row]).flatten().tolist() == [item["move"]]
        assert float(targets.policy[row].sum()) == 1.0
        assert float(targets.values[row]) == item["result"]
    train_tiny(tmp_path / "runs", "--set", f"pretrain_positions={moves}",
               "--set", "pretrain_epochs=2")
    assert "pretrain pass 2/2 on 20 positions: KL to the labels" in capsys.readouterr().out


def test_rehearsal_keeps_the_labels_in_view_during_ppo(labelled: Path, tmp_path: Path) -> None:
    """``pretrain_rehearsal``: steps on the labels after every rollout, with PPO's optimizer;
    two runs alike but for it (pretraining all but off), the rehearsing one ends nearer."""
    alike = ["--set", f"pretrain_positions={labelled}", "--set", "pretrain_epochs=1",
             "--set", "pretrain_lr=1e-9", "--set", "learning_rate=3e-3"]
    rehearsed = train_tiny(tmp_path / "rehearsed", *alike, "--set", "pretrain_rehearsal=25")
    plain = train_tiny(tmp_path / "plain", *alike)
    kl = kl_to_labels(labelled, rehearsed=rehearsed, plain=plain)
    assert kl["rehearsed"] < 0.8 * kl["plain"], kl


def kl_to_start(origin: Path, labels: Path, **checkpoints: Path) -> dict[str, float]:
    """Each checkpoint's KL from ``origin``'s policy to its own on the positions of
    ``labels``, by name."""
    config = TrainConfig(game=GAME, pretrain_positions=str(labels))
    targets = targets_of(config, training_positions(config))
    with torch.no_grad():
        start_logp = masked_log_softmax(
            action_logits(load_network(origin)[0], targets.obs), targets.masks)
        pulled = targets._replace(policy=start_logp.exp())
        return {name: distillation_loss(load_network(path)[0], pulled, 0.5)[1].item()
                for name, path in checkpoints.items()}


def test_the_pretrained_teacher_keeps_ppo_near_the_start(labelled: Path, tmp_path: Path
                                                          ) -> None:
    """``teacher: pretrained``: the run keeps its policy as PPO starts (``start.zip``, the
    pretrained weights) and pulls the learner back toward it after each rollout; two runs
    alike but for it, the anchored one ends nearer its start."""
    alike = ["--timesteps", str(6 * STEPS), "--set", f"pretrain_positions={labelled}",
             "--set", "pretrain_epochs=3", "--set", "pretrain_lr=3e-3",
             "--set", "learning_rate=3e-3"]
    anchored = train_tiny(tmp_path / "anchored", *alike, "--set", "teacher=pretrained",
                          "--set", "teacher_epochs=8")
    plain = train_tiny(tmp_path / "plain", *alike)
    start = anchored.with_name("start.zip")
    assert read_metadata(start)["num_timesteps"] == 0
    kl = kl_to_start(start, labelled, anchored=anchored, plain=plain, start=start)
    assert kl["start"] < 1e-6 and kl["anchored"] < 0.5 * kl["plain"], kl


def test_a_resumed_anchored_run_reads_its_start(labelled: Path, tmp_path: Path) -> None:
    last = train_tiny(tmp_path, "--set", f"pretrain_positions={labelled}",
                      "--set", "pretrain_epochs=1", "--set", "teacher=pretrained")
    start = last.with_name("start.zip").read_bytes()
    assert ppo.main(["--resume", str(last.parent.parent), "--timesteps", str(2 * STEPS),
                     "--no-progress"]) == 0
    assert read_metadata(last)["num_timesteps"] == 2 * STEPS
    assert last.with_name("start.zip").read_bytes() == start


@pytest.mark.parametrize(("extra", "message"), [
    ([], "--set pretrain_positions=FILE or --set init_from"),
    (["--set", "init_from=checkpoints/four_in_a_row.zip", "--set", "teacher_simulations=8"],
     "teacher_simulations=0"),
])
def test_an_unusable_pretrained_teacher_is_refused(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   extra: list[str], message: str) -> None:
    error = refusal(capsys, tmp_path / "runs", "--set", "teacher=pretrained", *extra)
    assert message in error and "teacher" in error


def test_rehearsal_without_labels_is_refused(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    error = refusal(capsys, tmp_path / "runs", "--set", "pretrain_rehearsal=4")
    assert "pretrain_positions" in error


@pytest.mark.parametrize(("contents", "extra", "message"), [
    (None, [], "no file"),
    ("not json\n", [], ":1: not a labelled four_in_a_row position"),
    ("shipped", [], "which judges play quality"),
    ("labelled", ["--set", "env_kwargs={rows: 5}"], "pretrain_positions=null"),
])
def test_an_unusable_file_is_refused_in_one_line(labelled: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  contents: str | None, extra: list[str],
                                                  message: str) -> None:
    path = tmp_path / "positions.jsonl"
    if contents == "shipped":
        path = default_positions(game_record(GAME))
    elif contents == "labelled":
        path = labelled
    elif contents is not None:
        path.write_text(contents, encoding="utf-8")
    error = refusal(capsys, tmp_path / "runs", "--set", f"pretrain_positions={path}", *extra)
    assert message in error and "pretrain_positions" in error


def test_a_learning_rate_that_is_not_positive_is_refused(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    error = refusal(capsys, tmp_path / "runs", "--set", "pretrain_lr=0")
    assert "--set pretrain_lr=" in error


def test_symmetric_images_are_the_mirrored_positions(labelled: Path, tmp_path: Path) -> None:
    """With ``pretrain_symmetries`` a four-in-a-row position also counts as its mirror image:
    the targets of the mirrored position texts, moves and values mapped column for column."""
    columns = game_record(GAME).rules.legal_mask(game_record(GAME).rules.parse("")).size
    mirrored = tmp_path / "mirrored.jsonl"
    lines = []
    for line in labelled.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        lines.append(json.dumps({
            "position": "".join(str(columns + 1 - int(c)) for c in item["position"]),
            "moves": {str(columns - 1 - int(a)): v for a, v in item["moves"].items()}}))
    mirrored.write_text("\n".join(lines) + "\n", encoding="utf-8")
    both = TrainConfig(game=GAME, pretrain_positions=str(labelled), pretrain_symmetries=True)
    plain = TrainConfig(game=GAME, pretrain_positions=str(labelled))
    mirror = TrainConfig(game=GAME, pretrain_positions=str(mirrored))
    images = targets_of(both, training_positions(both))
    count = len(training_positions(plain))
    expected = [targets_of(plain, training_positions(plain)),
                targets_of(mirror, training_positions(mirror))]
    assert len(images.values) == 2 * count
    for half, want in enumerate(expected):
        for got, field in zip(images.pick(np.arange(half * count, (half + 1) * count)), want,
                              strict=True):
            assert torch.equal(got, field)


def test_every_image_of_a_square_board_keeps_its_moves_on_its_stones() -> None:
    """Tic-tac-toe has 8 images per position; in each, the legal moves are the empty cells
    of the image board and the best moves stay among them."""
    rules = game_record("tictactoe").rules
    states = [rules.parse(text) for text in ("X--------", "XO-------", "X-O-X----")]
    masks = np.array([rules.legal_mask(state) for state in states])
    policy = np.zeros(masks.shape, np.float32)
    policy[:, 8] = 1.0
    images = symmetric_images(as_targets(np.array([rules.observation(s) for s in states]),
                                         masks, policy, np.array([1, 0, -1])))
    assert len(images.values) == 8 * len(states)
    empty = images.obs.sum(1).flatten(1) == 0
    assert torch.equal(images.masks, empty)
    assert bool((images.policy[~images.masks] == 0).all())
    assert torch.equal(images.values, torch.tensor([1.0, 0.0, -1.0]).repeat(8))
    assert len({tuple(row.tolist()) for row in images.obs[::3].flatten(1)}) == 4


def test_each_member_of_an_ensemble_is_pretrained_on_its_own(labelled: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    """With ``members: 2`` every member takes its own passes and ends near the labels, and
    the two stay apart (different starts and minibatch orders)."""
    ensemble = ["--set", "average_symmetries=true", "--set", "members=2"]
    taught = train_tiny(tmp_path / "taught", *ensemble, "--set", f"pretrain_positions={labelled}",
                        "--set", "pretrain_epochs=40", "--set", "pretrain_lr=3e-3")
    out = capsys.readouterr().out
    assert "member 1/2: pretrain pass 40/40" in out and "member 2/2: pretrain pass 40/40" in out
    plain = train_tiny(tmp_path / "plain", *ensemble)
    config = TrainConfig(game=GAME, pretrain_positions=str(labelled))
    targets = targets_of(config, training_positions(config))
    with torch.no_grad():
        kl = {name: [distillation_loss(member, targets, 0.5)[1].item()
                     for member in members_of(load_network(path)[0])]
              for name, path in (("taught", taught), ("plain", plain))}
        first, second = members_of(load_network(taught)[0])
        assert not torch.allclose(action_logits(first, targets.obs),
                                  action_logits(second, targets.obs))
    assert max(kl["taught"]) < 0.8 * min(kl["plain"]), kl


@pytest.mark.parametrize(("extra", "message"), [
    (["--set", "members=0"], "members must be a positive integer, at most 16, got 0"),
    (["--set", "average_symmetries=false", "--set", "members=2"],
     "--set average_symmetries=true, or --set members=1"),
])
def test_an_ensemble_that_cannot_be_is_refused(extra: list[str], message: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert message in refusal(capsys, tmp_path / "runs", *extra)
