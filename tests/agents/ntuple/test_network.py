"""The n-tuple network through its public API: symmetric sharing, the TD step, layouts,
players and checkpoints."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from boardgym import agents
from boardgym.agents.checkpoint import CheckpointError
from boardgym.agents.ntuple import checkpoint
from boardgym.agents.ntuple.model import NTupleNet
from boardgym.agents.ntuple.network import update, values_batch
from boardgym.envs.games import four_in_a_row, reversi, tictactoe

ROUNDS = 40


def random_net(game: str, env_kwargs: dict, layout: str, values: int = 3, stages: int = 1,
               seed: int = 0) -> NTupleNet:
    net = NTupleNet.from_layout(game, env_kwargs, layout, values, stages)
    net.weights[:] = np.random.default_rng(seed).normal(0, 0.3, net.weights.size)
    return net


def random_states(rules, state, rng: np.random.Generator, count: int) -> list:
    """States of random games (unfinished)."""
    found = []
    while len(found) < count:
        current = state
        for _ in range(int(rng.integers(1, 40))):
            if rules.is_terminal(current):
                break
            legal = np.flatnonzero(rules.legal_mask(current))
            current = rules.apply(current, int(rng.choice(legal)))
        if not rules.is_terminal(current):
            found.append(current)
    return found


def value_of(net: NTupleNet, own: int, other: int, marks: int = 0) -> float:
    return float(values_batch(np.array([own], np.uint64), np.array([other], np.uint64),
                              np.array([marks], np.uint64), net.arrays)[0])


def cell_words(board, cells_own: list[int], cells_other: list[int]) -> tuple[int, int]:
    return (sum(1 << board.bits[c] for c in cells_own),
            sum(1 << board.bits[c] for c in cells_other))


@pytest.mark.parametrize(("game", "env_kwargs", "layout"), [
    ("reversi", {}, "edax"), ("reversi", {}, "snakes:20:6:3"), ("tictactoe", {}, "board"),
    ("tictactoe", {}, "lines"), ("four_in_a_row", {}, "thill70"),
    ("four_in_a_row", {"rows": 5, "columns": 6}, "snakes:30:6:1"),
    ("four_in_a_row", {"rows": 7, "columns": 8, "connect": 5}, "snakes:30:7:2")])
def test_every_symmetric_image_has_the_same_value(game: str, env_kwargs: dict,
                                                  layout: str) -> None:
    net = random_net(game, env_kwargs, layout, stages=2)
    board = net.board
    rng = np.random.default_rng(1)
    for _ in range(ROUNDS):
        cells = rng.permutation(board.cells)
        split = int(rng.integers(0, board.cells))
        taken = int(rng.integers(split, board.cells + 1))
        own, other = list(cells[:split]), list(cells[split:taken])
        values = {round(value_of(net, *cell_words(board, [perm[c] for c in own],
                                                   [perm[c] for c in other])), 12)
                  for perm in board.symmetries()}
        assert len(values) == 1, values


def test_four_value_cells_are_told_apart_by_their_marks() -> None:
    net = random_net("four_in_a_row", {}, "thill70", values=4)
    board = net.board
    own, other = cell_words(board, [41], [40])
    assert value_of(net, own, other, 0) != value_of(net, own, other, 1 << board.bits[34])


@pytest.mark.parametrize("alpha", [1.0, 0.3, 0.05])
def test_a_td_step_moves_the_value_toward_its_target_by_the_step_size(alpha: float) -> None:
    net = random_net("tictactoe", {}, "board", seed=2)
    own, other = cell_words(net.board, [0, 5], [1])  # no symmetry maps it onto itself
    before = value_of(net, own, other)
    error = update(np.uint64(own), np.uint64(other), np.uint64(0), 0.9, alpha, net.arrays)
    after = value_of(net, own, other)
    assert error == pytest.approx(0.9 - before)
    expected = np.arctanh(before) + alpha * (0.9 - before) * (1 - before ** 2)
    assert np.arctanh(after) == pytest.approx(expected, rel=1e-5)


def test_layouts_refuse_what_does_not_fit() -> None:
    with pytest.raises(ValueError, match="unknown layout"):
        NTupleNet.from_layout("reversi", {}, "thill70")
    with pytest.raises(ValueError, match="7x6 board"):
        NTupleNet.from_layout("four_in_a_row", {"rows": 5}, "thill70")
    with pytest.raises(ValueError, match="snakes:N:L:SEED needs"):
        NTupleNet.from_layout("tictactoe", {}, "snakes:5:12:0")
    with pytest.raises(ValueError, match="weights"):
        NTupleNet("reversi", {}, [list(range(12))] * 900)


def save_net(tmp_path: Path, net: NTupleNet, name: str = "net.zip") -> Path:
    path = tmp_path / name
    checkpoint.save(path, net)
    return path


def test_checkpoints_round_trip_bit_equal(tmp_path: Path) -> None:
    net = random_net("four_in_a_row", {"rows": 5, "columns": 6}, "snakes:10:5:0", values=4,
                     stages=3)
    loaded = checkpoint.load(save_net(tmp_path, net))
    assert loaded.record() == net.record()
    assert loaded.weights.tobytes() == net.weights.tobytes()


def rewrite(path: Path, name: str, content: bytes | str) -> None:
    with zipfile.ZipFile(path) as archive:
        entries = {item: archive.read(item) for item in archive.namelist()}
    entries[name] = content.encode() if isinstance(content, str) else content
    with zipfile.ZipFile(path, "w") as archive:
        for item, data in entries.items():
            archive.writestr(item, data)


def crafted(tmp_path: Path, kind: str) -> Path:
    net = random_net("tictactoe", {}, "lines")
    path = save_net(tmp_path, net, f"{kind}.zip")
    record = {"format_version": 1, **net.record()}
    if kind == "pickle":
        import pickle

        rewrite(path, checkpoint.WEIGHTS_ENTRY, pickle.dumps(np.zeros(3, dtype=object)))
    elif kind == "object_npy":
        import io

        buffer = io.BytesIO()
        np.save(buffer, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        rewrite(path, checkpoint.WEIGHTS_ENTRY, buffer.getvalue())
    elif kind == "float64":
        rewrite(path, checkpoint.WEIGHTS_ENTRY, checkpoint.array_bytes(net.weights.astype(float)))
    elif kind == "short":
        rewrite(path, checkpoint.WEIGHTS_ENTRY, checkpoint.array_bytes(net.weights[:-1]))
    elif kind == "nan":
        weights = net.weights.copy()
        weights[3] = np.nan
        rewrite(path, checkpoint.WEIGHTS_ENTRY, checkpoint.array_bytes(weights))
    else:
        changes = {"cell": {"tuples": [[0, 1, 9]]}, "unknown": {"extra": 1},
                   "values": {"values": 7}, "symmetry": {"symmetry": "mirror"},
                   "version": {"format_version": 9}, "cell_type": {"tuples": [[0, 1.5, 2]]}}
        rewrite(path, checkpoint.RECORD_ENTRY, json.dumps({**record, **changes[kind]}))
    return path


@pytest.mark.parametrize("kind", ["pickle", "object_npy", "float64", "short", "nan", "cell",
                                  "unknown", "values", "symmetry", "version", "cell_type"])
def test_a_crafted_file_is_refused_in_one_line(tmp_path: Path, kind: str) -> None:
    path = crafted(tmp_path, kind)
    with pytest.raises(CheckpointError) as refused:
        agents.make("tictactoe", f"ntuple:0@{path}")
    assert "\n" not in str(refused.value)


def test_a_network_of_another_game_or_board_is_refused(tmp_path: Path) -> None:
    path = save_net(tmp_path, random_net("tictactoe", {}, "board"))
    with pytest.raises(CheckpointError, match="tictactoe"):
        agents.make("reversi", f"ntuple:0@{path}")
    small = save_net(tmp_path, random_net("four_in_a_row", {"rows": 5}, "snakes:5:4:0"), "s.zip")
    with pytest.raises(CheckpointError, match="board"):
        agents.make("four_in_a_row", str(small))


def test_specs_refuse_a_bad_depth_or_form() -> None:
    for spec in ("ntuple", "ntuple:0", "ntuple:x@a.zip", "ntuple:11@a.zip"):
        with pytest.raises(ValueError) as refused:
            agents.make("reversi", spec)
        assert "\n" not in str(refused.value)


@pytest.mark.parametrize(("game", "rules", "layout"), [
    ("reversi", reversi, "edax"), ("four_in_a_row", four_in_a_row, "thill70"),
    ("tictactoe", tictactoe, "board")])
def test_ntuple0_plays_a_best_afterstate_and_its_twin_the_same(tmp_path: Path, game: str,
                                                               rules, layout: str) -> None:
    from boardgym.envs.games.core import batch_of

    net = random_net(game, {}, layout, values=4 if game == "four_in_a_row" else 3)
    path = save_net(tmp_path, net)
    player = agents.make(game, str(path))  # a bare n-tuple path plays as ntuple:0
    rng = np.random.default_rng(5)
    for state in random_states(rules, rules.initial_state(), rng, 30):
        move = player.act(state, np.random.default_rng(0))
        scores = {}
        for action in np.flatnonzero(rules.legal_mask(state)):
            after = rules.apply(state, int(action))
            if rules.is_terminal(after):
                scores[int(action)] = 2.0 * rules.result(after, int(state.to_move))
            else:
                own, other = (after.opp, after.me) if after.to_move != state.to_move else \
                    (after.me, after.opp)
                marks = 0
                if game == "four_in_a_row" and net.values == 4:
                    geom = after.geom
                    marks = (own | other) + geom.bottom & geom.board
                scores[int(action)] = value_of(net, own, other, marks)
        assert scores[move] == max(scores.values())
        twin = player.candidates(batch_of(state))
        assert int(twin[0]) >> move & 1
