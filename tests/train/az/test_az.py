"""AlphaZero-style search, players, checkpoints and training (``agents.az``, ``boardgym az``)."""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
import yaml

from boardgym import agents
from boardgym.agents.az.checkpoint import (
    MODEL_ENTRY,
    RECORD_ENTRY,
    CheckpointError,
    az_record,
    load_network,
    write_checkpoint,
)
from boardgym.agents.az.network import Architecture, AzNet, Evaluator, Symmetries
from boardgym.agents.az.search import SearchConfig, considered_visits, draw_noise, search
from boardgym.agents.solvers import four_in_a_row as c4_solver
from boardgym.envs.games import game
from boardgym.envs.games.core import batch_of, take
from boardgym.train.az.config import AzConfig
from boardgym.train.az.learn import learning_rate_at, new_learner
from boardgym.train.az.run import new_run, open_run, train
from boardgym.train.az.selfplay import self_play, starting_positions
from boardgym.train.cli import main
from boardgym.train.common.config import load_config
from boardgym.train.quality.agreement import default_positions, judge, load_positions
from tests.boards import random_position

SEARCH_SIMULATIONS = 200


@pytest.fixture(autouse=True)
def one_torch_thread() -> object:
    """One torch thread: small forwards are fastest so, and the test workers share 2 cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def zero_network(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A network that knows nothing: uniform legal logits, value 0. Only the exact values
    of finished games guide the search."""
    return np.where(masks, 0.0, -np.inf), np.zeros(len(observations))


def random_net(name: str, seed: int = 0) -> AzNet:
    """A randomly initialised network of the game's default size."""
    record = game(name)
    torch.manual_seed(seed)
    return AzNet(Architecture.of(record.rules, record.rules.initial_state(), record.network))


def save_net(path: Path, name: str, net: AzNet) -> Path:
    """``net`` as an az checkpoint at ``path``."""
    write_checkpoint(path, net, az_record(name, {}, net.arch))
    return path


# Positions (``rules.parse`` text) and the moves that keep the side to move's best outcome.
# Reversi: a labelled endgame (tests/data/reversi.jsonl) played on at random to 5 empty
# squares; exact values from ``agents.solvers.reversi.move_scores``: b1 -8, c1 -10, b2 -10,
# g5 +6: only g5 (38) wins.
FORCED = [
    ("tictactoe", "XX-OO----", {2}),  # X completes the top row
    ("tictactoe", "XX-O-----", {2}),  # O must block the top row
    ("four_in_a_row", "121212", {0}),  # red completes column 1
    ("four_in_a_row", "12121", {0}),  # yellow must block column 1
    ("four_in_a_row", "445566", {2, 6}),  # red completes the bottom row, either end
    ("reversi", "O--OXXXXO-OXXXXXOOXOXOXXOXOXXXXXOOOOXO-XOOXOOXOXOOOOOOXXOOOOOOOX X", {38}),
]


@pytest.mark.parametrize("method", ["gumbel", "puct"])
@pytest.mark.parametrize(("name", "text", "keeping"), FORCED)
def test_search_with_exact_leaf_values_finds_wins_and_blocks(name: str, text: str,
                                                             keeping: set[int],
                                                             method: str) -> None:
    rules = game(name).rules
    roots = batch_of(rules.parse(text))
    config = SearchConfig(simulations=SEARCH_SIMULATIONS, method=method)
    noise = draw_noise(config, np.random.default_rng(0), rules.legal_mask(roots))
    found = search(rules, roots, zero_network, config, noise)
    assert int(found.action[0]) in keeping
    assert found.visits.sum() == SEARCH_SIMULATIONS
    assert found.policy[0].sum() == pytest.approx(1.0)
    assert not found.policy[0][~rules.legal_mask(roots)[0]].any()


@pytest.mark.parametrize("method", ["gumbel", "puct"])
@pytest.mark.parametrize("name", ["tictactoe", "four_in_a_row", "reversi"])
def test_batched_search_visits_as_one_game_search(name: str, method: str) -> None:
    record = game(name)
    rules = record.rules
    rng = np.random.default_rng(7)
    state = rules.initial_batch(6)
    for _ in range(3):  # three random plies: six different positions
        masks = rules.legal_mask(state)
        state = rules.apply_batch(state, [rng.choice(np.flatnonzero(row)) for row in masks])
    config = SearchConfig(simulations=24, method=method)
    masks = rules.legal_mask(state)
    noise = np.concatenate([draw_noise(config, np.random.default_rng(seed), masks[i:i + 1])
                            for seed, i in enumerate(range(len(masks)))])
    evaluate = Evaluator(random_net(name))
    together = search(rules, state, evaluate, config, noise)
    for i in range(len(masks)):
        alone = search(rules, take(state, np.array([i])), evaluate, config, noise[i:i + 1])
        np.testing.assert_array_equal(alone.visits[0], together.visits[i])
        assert alone.action[0] == together.action[i]


def test_sequential_halving_schedule_spends_every_simulation() -> None:
    schedule = considered_visits(4, 16)
    assert len(schedule) == 16
    assert schedule[:4] == (0, 0, 0, 0)  # every considered action once first
    assert considered_visits(1, 5) == (0, 1, 2, 3, 4)


def permuted_text(text: str, cells: np.ndarray) -> str:
    """A tic-tac-toe position's text under a symmetry (image cell i = board cell cells[i])."""
    return "".join(text[cell] for cell in cells)


def test_symmetries_map_positions_and_best_moves_tictactoe() -> None:
    rules = game("tictactoe").rules
    text, best = "XX-OO----", 2
    state = rules.parse(text)
    arch = random_net("tictactoe").arch
    symmetries = Symmetries(arch.rows, arch.cols, arch.n_actions)
    assert len(symmetries) == 8
    target = np.eye(9)[best][None]
    for g in range(len(symmetries)):
        image, mask, policy = symmetries.apply(np.array([g]), rules.observation(state)[None],
                                               rules.legal_mask(state)[None], target)
        transformed = rules.parse(permuted_text(text, symmetries.cells[g]))
        np.testing.assert_array_equal(image[0], rules.observation(transformed))
        np.testing.assert_array_equal(mask[0], rules.legal_mask(transformed))
        after = rules.apply(transformed, int(policy[0].argmax()))
        assert rules.is_terminal(after) and rules.result(after, transformed.to_move) == 1


def test_symmetries_mirror_four_in_a_row() -> None:
    rules = game("four_in_a_row").rules
    state = rules.parse("4455661")  # red: 4 5 6 and 1; yellow must block at 3 or 7
    mirrored = rules.parse("4433227")  # the same position, columns mirrored (c -> 8 - c)
    arch = random_net("four_in_a_row").arch
    symmetries = Symmetries(arch.rows, arch.cols, arch.n_actions)
    assert len(symmetries) == 2
    policy = np.zeros((1, 7))
    policy[0, 2] = 1.0  # yellow blocks column 3
    image, mask, moved = symmetries.apply(np.array([1]), rules.observation(state)[None],
                                          rules.legal_mask(state)[None], policy)
    np.testing.assert_array_equal(image[0], rules.observation(mirrored))
    np.testing.assert_array_equal(mask[0], rules.legal_mask(mirrored))
    assert int(moved[0].argmax()) == 4  # column 5 of the mirrored board


def test_checkpoint_round_trip_without_pickle(tmp_path: Path) -> None:
    net = random_net("four_in_a_row", seed=3)
    path = save_net(tmp_path / "c4.zip", "four_in_a_row", net)
    loaded, record = load_network(path)
    assert record["game"] == "four_in_a_row"
    planes = torch.rand(5, 2, 6, 7)
    for mine, theirs in zip(net.eval()(planes), loaded(planes), strict=True):
        torch.testing.assert_close(mine, theirs)
    with zipfile.ZipFile(path) as archive:
        assert set(archive.namelist()) == {RECORD_ENTRY, MODEL_ENTRY}


class Payload:
    """Anything that only loads by unpickling."""


def test_pickled_weights_are_refused_in_one_line(tmp_path: Path) -> None:
    good = save_net(tmp_path / "good.zip", "tictactoe", random_net("tictactoe"))
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(bad, "w") as target:
        target.writestr(RECORD_ENTRY, source.read(RECORD_ENTRY))
        buffer = io.BytesIO()
        torch.save({"weights": Payload()}, buffer)
        target.writestr(MODEL_ENTRY, buffer.getvalue())
    with pytest.raises(CheckpointError, match="unpickling") as error:
        load_network(bad)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(("spec", "message"), [
    ("az", "SIMULATIONS@CHECKPOINT"),
    ("az:x@model.zip", "SIMULATIONS@CHECKPOINT"),
    ("az:-1@model.zip", "SIMULATIONS@CHECKPOINT"),
    ("az:3", "SIMULATIONS@CHECKPOINT"),
    ("az:3@missing.zip", "not found"),
    ("az:0@README.md", "corrupt"),
])
def test_bad_az_specs_fail_in_one_line(spec: str, message: str) -> None:
    with pytest.raises((ValueError, FileNotFoundError), match=message) as error:
        agents.make("tictactoe", spec)
    assert "\n" not in str(error.value)


def test_az_checkpoint_of_another_game_is_refused(tmp_path: Path) -> None:
    path = save_net(tmp_path / "ttt.zip", "tictactoe", random_net("tictactoe"))
    with pytest.raises(CheckpointError, match="trained for 'tictactoe'"):
        agents.make("four_in_a_row", f"az:0@{path}")
    with pytest.raises(CheckpointError, match="trained for 'tictactoe'"):
        agents.make("four_in_a_row", str(path))


def test_az_players_play_legal_deterministic_moves(tmp_path: Path) -> None:
    path = save_net(tmp_path / "c4.zip", "four_in_a_row", random_net("four_in_a_row"))
    rules = game("four_in_a_row").rules
    state = rules.parse("4453")
    for spec in (f"az:0@{path}", f"az:8@{path}", str(path)):
        player = agents.make("four_in_a_row", spec)
        moves = {player.act(state, np.random.default_rng(seed)) for seed in range(3)}
        assert len(moves) == 1 and rules.legal_mask(state)[moves.pop()]


def test_az_search_settles_the_end_of_the_game_with_the_exact_solver(tmp_path: Path) -> None:
    """An untrained network searched with the solver near the end (az:N) keeps the outcome
    in every labelled position whose moves all lead within the solver's reach; the same
    network's raw policy (az:0) does not."""
    record = game("four_in_a_row")
    path = save_net(tmp_path / "c4.zip", record.name, random_net(record.name))
    cells = record.rules.initial_state().geom.rows * record.rules.initial_state().geom.columns
    near_end = [position for position in load_positions(default_positions(record), record)
                if cells - len(position.text) < c4_solver.LEAF_EMPTIES]
    searched = judge(record.name, f"az:{SEARCH_SIMULATIONS}@{path}", near_end)
    raw = judge(record.name, f"az:0@{path}", near_end)
    assert searched.decisive > 10 and searched.kept == searched.decisive
    assert raw.kept < raw.decisive


def test_az_opponent_in_the_vector_env(tmp_path: Path) -> None:
    path = save_net(tmp_path / "ttt.zip", "tictactoe", random_net("tictactoe"))
    env = gym.make_vec("boardgym:TicTacToe-v0", num_envs=3,
                       vectorization_mode="vector_entry_point", opponent=f"az:4@{path}")
    _, info = env.reset(seed=0)
    for _ in range(5):
        masks = info["action_mask"]
        _, _, _, _, info = env.step(masks.argmax(axis=1))  # a legal cell (any, after an end)
    env.close()


def tiny_config(**changes: object) -> AzConfig:
    """A training config of seconds: a few small iterations, a short final evaluation."""
    settings: dict[str, object] = {
        "iterations": 2, "games_per_iteration": 16, "simulations": 4, "train_steps": 2,
        "batch_size": 32, "buffer_size": 2000, "eval_every": 100, "eval_positions": 20,
        "eval_games": 2, "eval_opponents": ["random"], **changes}
    return load_config(AzConfig, "tictactoe", None, settings)


def test_training_improves_the_tictactoe_policy(tmp_path: Path) -> None:
    record = game("tictactoe")
    positions = load_positions(default_positions(record), record)[:500]
    config = tiny_config(iterations=10, games_per_iteration=64, simulations=16,
                         train_steps=16, batch_size=128, learning_rate=0.003)
    run = new_run(config, tmp_path)
    before = judge("tictactoe", f"az:0@{save_net(tmp_path / 'start.zip', 'tictactoe', run.net)}",
                   positions)
    train(run, progress=False)
    after = judge("tictactoe", f"az:0@{run.model}", positions)
    assert after.kept / after.decisive > before.kept / before.decisive + 0.15
    assert run.history and run.history[-1]["iteration"] == config.iterations


def test_bfloat16_evaluator_agrees_with_float32() -> None:
    """``precision="bfloat16"``: the same network's values within a few hundredths and its
    best moves almost everywhere, both outputs float32."""
    rules = game("reversi").rules
    rng = np.random.default_rng(5)
    state = rules.initial_batch(64)
    for _ in range(12):
        masks = rules.legal_mask(state)
        state = rules.apply_batch(state, [rng.choice(np.flatnonzero(row)) for row in masks])
    observations, masks = rules.observation(state), rules.legal_mask(state)
    net = random_net("reversi", seed=3)
    logits, values = Evaluator(net)(observations, masks)
    low_logits, low_values = Evaluator(net, "bfloat16")(observations, masks)
    assert low_values.dtype == np.float64 and np.isinf(low_logits[~masks]).all()
    np.testing.assert_allclose(low_values, values, atol=0.05)
    assert (low_logits.argmax(axis=1) == logits.argmax(axis=1)).mean() >= 0.9


def test_training_in_bfloat16_changes_the_weights_and_saves_them_in_float32(
        tmp_path: Path) -> None:
    config = tiny_config(iterations=4, games_per_iteration=32, simulations=8,
                         train_steps=8, batch_size=64, precision="bfloat16")
    run = new_run(config, tmp_path)
    before = [weight.clone() for weight in run.net.state_dict().values()]
    train(run, progress=False)
    saved, _ = load_network(run.model)
    assert all(weight.dtype == torch.float32 for weight in saved.state_dict().values())
    assert any(not torch.equal(old, new) for old, new in
               zip(before, saved.state_dict().values(), strict=True))
    with open(run.directory / "progress.csv") as rows:
        losses = [float(row["loss"]) for row in csv.DictReader(rows)]
    assert len(losses) == config.iterations and np.isfinite(losses).all()
    assert yaml.safe_load((run.directory / "config.yaml").read_text())["precision"] == "bfloat16"


def test_self_play_starts_from_random_unfinished_openings() -> None:
    record = game("tictactoe")
    config = tiny_config(games_per_iteration=32, opening_plies=[2, 4])
    state = starting_positions(record, config, np.random.default_rng(3))
    again = starting_positions(record, config, np.random.default_rng(3))
    stones = np.bitwise_count(state.me | state.opp)
    assert ((stones >= 2) & (stones <= 4)).all()
    assert not np.asarray(record.rules.is_terminal(state)).any()
    assert all(np.array_equal(a, b) for a, b in zip(state, again, strict=True)
               if isinstance(a, np.ndarray))
    assert len({(int(m), int(o)) for m, o in zip(state.me, state.opp, strict=True)}) > 5


@pytest.mark.parametrize("text", ["XX-OO----", "OO-XX-X--"], ids=["X to move", "O to move"])
def test_search_values_a_winning_move_as_a_win_for_the_side_to_move(text: str) -> None:
    rules = game("tictactoe").rules
    state = batch_of(rules.parse(text))
    found = search(rules, state, zero_network, SearchConfig(simulations=SEARCH_SIMULATIONS),
                   np.zeros((1, 9)))
    assert found.action[0] == 2 and found.action_value[0] == 1.0
    assert found.value[0] < 1.0  # the root's mean also holds the weaker moves' visits


def test_value_targets_mix_the_outcome_with_the_search() -> None:
    record, net = game("tictactoe"), random_net("tictactoe")
    played = {mix: self_play(record, tiny_config(value_mix=mix), net,
                                         np.random.default_rng(5))[0]
              for mix in (0.0, 0.5, 1.0)}
    outcomes, searched = played[0.0].values, played[1.0].values
    np.testing.assert_array_equal(played[0.0].policies, played[1.0].policies)
    assert set(np.unique(outcomes)) <= {-1.0, 0.0, 1.0}
    assert (np.abs(searched) <= 1).all() and not np.array_equal(searched, outcomes)
    np.testing.assert_allclose(played[0.5].values, (outcomes + searched) / 2, atol=1e-6)


def test_resumed_run_matches_an_uninterrupted_one(tmp_path: Path) -> None:
    straight = train(new_run(tiny_config(iterations=3),
                                                     tmp_path / "a"), progress=False)
    first = train(new_run(tiny_config(iterations=2), tmp_path / "b"),
                              progress=False)
    resumed = open_run(first.directory, {"iterations": 3}, None)
    train(resumed, progress=False)
    for mine, theirs in zip(straight.net.state_dict().values(),
                            resumed.net.state_dict().values(), strict=True):
        torch.testing.assert_close(mine, theirs)
    assert resumed.positions == straight.positions


def test_linear_learning_rate_falls_over_the_iterations(tmp_path: Path) -> None:
    """``lr_schedule="linear"``: iteration i trains at ``learning_rate * (1 - i / iterations)``;
    the same seed at a constant rate ends with other weights."""
    linear = tiny_config(iterations=4, learning_rate=0.01, lr_schedule="linear")
    rates = [learning_rate_at(linear, i) for i in range(linear.iterations)]
    assert rates == pytest.approx([0.01, 0.0075, 0.005, 0.0025])
    falling = train(new_run(linear, tmp_path / "linear"),
                                progress=False)
    constant = train(new_run(
        tiny_config(iterations=4, learning_rate=0.01), tmp_path / "constant"), progress=False)
    assert falling.optimizer.param_groups[0]["lr"] == pytest.approx(0.0025)
    assert constant.optimizer.param_groups[0]["lr"] == pytest.approx(0.01)
    assert any(not torch.equal(mine, theirs) for mine, theirs in zip(
        falling.net.state_dict().values(), constant.net.state_dict().values(), strict=True))


def test_run_started_from_a_checkpoint_begins_with_its_weights(tmp_path: Path) -> None:
    """``init_from``: a new run (fresh optimizer, empty buffer) on a shipped network."""
    shipped, _ = load_network("checkpoints/tictactoe_az.zip")
    run = new_run(tiny_config(init_from="checkpoints/tictactoe_az.zip"),
                              tmp_path)
    for mine, theirs in zip(run.net.state_dict().values(), shipped.state_dict().values(),
                            strict=True):
        torch.testing.assert_close(mine, theirs)
    assert run.buffer.size == 0 and run.iteration == 0


def grown_config(**sizes: int) -> AzConfig:
    """A tiny run from the shipped tic-tac-toe network, at least as large in every size."""
    shipped = game("tictactoe").network
    return tiny_config(init_from="checkpoints/tictactoe_az.zip",
                       **{"channels": shipped.channels, "blocks": shipped.blocks,
                          "hidden": shipped.hidden, **sizes})


def tictactoe_planes(count: int) -> torch.Tensor:
    """The observations of ``count`` random unfinished tic-tac-toe positions (0-7 moves)."""
    rules = game("tictactoe").rules
    rng = np.random.default_rng(0)
    states = [random_position(rules, rng, moves=int(rng.integers(0, 8))) for _ in range(count)]
    return torch.as_tensor(np.stack([rules.observation(state) for state in states]),
                           dtype=torch.float32)


@pytest.mark.parametrize("sizes", [{"channels": 48}, {"blocks": 3}, {"hidden": 96},
                                   {"channels": 40, "blocks": 3, "hidden": 80}])
def test_run_from_a_smaller_network_grows_it_and_plays_as_it_did(tmp_path: Path,
                                                                 sizes: dict[str, int]) -> None:
    """``init_from`` a smaller network: the run's network is larger and, before any
    training, gives the file's logits and values on every position."""
    shipped, _ = load_network("checkpoints/tictactoe_az.zip")
    run = new_run(grown_config(**sizes), tmp_path)
    assert all(getattr(run.net.arch, key) == size for key, size in sizes.items())
    planes = tictactoe_planes(64)
    with torch.no_grad():
        for mine, theirs in zip(run.net(planes), shipped(planes), strict=True):
            torch.testing.assert_close(mine, theirs, rtol=1e-4, atol=1e-5)


def test_a_grown_network_learns_with_every_weight() -> None:
    """The weights growth zeroes (new units into old ones, the new blocks' second
    convolutions) do not stay zero: after one training step every weight has a gradient, so
    the larger network can move past the smaller one."""
    net, _ = new_learner(grown_config(channels=40, blocks=3, hidden=80))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    planes = tictactoe_planes(32)
    for _ in range(2):
        optimizer.zero_grad()
        logits, values = net(planes)
        (logits.square().mean() + values.square().mean()).backward()
        optimizer.step()
    for name, weight in net.named_parameters():
        assert weight.grad is not None and weight.grad.abs().sum() > 0, name


@pytest.mark.parametrize(("args", "message"), [
    (["tictactoe", "--set", "init_from=nowhere.zip"],
     "init_from: checkpoint nowhere.zip not found"),
    (["tictactoe", "--set", "init_from=shipped:four_in_a_row_az"],
     "trained for 'four_in_a_row', not 'tictactoe'"),
    (["tictactoe", "--set", "init_from=checkpoints/tictactoe_az.zip", "--set", "channels=16"],
     "has channels 32 (config: 16)"),
    (["tictactoe", "--set", "init_from=checkpoints/tictactoe_az.zip", "--set", "blocks=1"],
     "(a smaller network grows)"),
    (["nosuchgame"], "unknown game"),
    (["tictactoe", "--set", "bogus=1"], "unknown config key"),
    (["tictactoe", "--set", "simulations=0"], "simulations must be a positive integer"),
    (["tictactoe", "--set", "method=beam"], "method must be one of"),
    (["tictactoe", "--set", "precision=half"], "precision must be one of"),
    (["tictactoe", "--set", "lr_schedule=cosine"], "lr_schedule must be one of"),
    (["tictactoe", "--set", "opening_plies=[4,2]"], "opening_plies must be [low, high]"),
    (["tictactoe", "--set", "value_mix=1.5"],
     "value_mix must be a number in [0, 1], got 1.5; fix it with --set value_mix=0.0"),
    (["--resume", "nowhere"], "not a run folder"),
])
def test_az_command_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       args: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as done:
        main(["az", *args, "--runs-dir", str(tmp_path)])
    error = capsys.readouterr().err
    assert done.value.code == 2
    assert message in error and len(error.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_a_zip_that_is_neither_checkpoint_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "not a network")
    with pytest.raises(CheckpointError, match="not an az checkpoint") as error:
        agents.make("tictactoe", f"az:0@{path}")
    assert "\n" not in str(error.value)


def test_az_over_a_policy_checkpoint_plays_its_policy_and_searches_with_it() -> None:
    """``az:N@PATH`` takes a policy checkpoint too: with 0 simulations it plays exactly the
    policy's moves; with N it searches (legal, deterministic moves, also batched in a vector
    env); on another game it is refused in one line."""
    record = game("tictactoe")
    positions = load_positions(default_positions(record), record)[::15]
    policy = agents.make("tictactoe", "checkpoints/tictactoe.zip")
    raw = agents.make("tictactoe", "az:0@checkpoints/tictactoe.zip")
    searched = agents.make("tictactoe", "az:8@checkpoints/tictactoe.zip")
    rng = np.random.default_rng(0)
    for position in positions:
        state = record.rules.parse(position.text)
        assert raw.act(state, rng) == policy.act(state, rng)
        move = searched.act(state, rng)
        assert record.rules.legal_mask(state)[move] and move == searched.act(state, rng)
    env = gym.make_vec("TicTacToe-v0", num_envs=8, vectorization_mode="vector_entry_point",
                       opponent="az:8@checkpoints/tictactoe.zip")
    env.reset(seed=0)
    for _ in range(20):
        masks = env.unwrapped.action_masks()
        env.step(masks.argmax(axis=1))  # a finished game (all False) takes any action
    with pytest.raises(CheckpointError, match="trained for 'tictactoe'") as error:
        agents.make("four_in_a_row", "az:0@checkpoints/tictactoe.zip")
    assert "\n" not in str(error.value)
