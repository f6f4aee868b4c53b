"""Batched rules and players against their single twins on thousands of random positions, and
the bit helpers that pick the moves (``choose``, ``bits_from_mask``)."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from boardgym import agents
from boardgym.envs.games import four_in_a_row, game, players, reversi, tictactoe
from boardgym.envs.games.bitboard import (
    bits_from_mask,
    choose,
    nth_set_bit,
    planes,
    random_draws,
    unpack,
)
from boardgym.envs.games.core import take, unbatch
from tests.boards import candidate_sets, random_batch

POSITIONS = 10_000
SAMPLED = 300
"""Positions per player on which the single player is checked against its batched twin."""
RULES: dict[str, ModuleType] = {"reversi": reversi, "four_in_a_row": four_in_a_row,
                                "tictactoe": tictactoe}


@pytest.mark.parametrize("name", list(RULES))
def test_batched_rules_equal_single_rules(name: str) -> None:
    rules = RULES[name]
    state = random_batch(rules, POSITIONS)
    masks = rules.legal_mask(state)
    terminal = np.asarray(rules.is_terminal(state))
    results = np.asarray(rules.result(state, 0))
    actions = choose(bits_from_mask(masks), random_draws(np.random.default_rng(1), POSITIONS))
    after = rules.apply_batch(state, actions)
    assert 0 < terminal.sum() < POSITIONS
    for i in range(POSITIONS):
        single = unbatch(state, i)
        np.testing.assert_array_equal(masks[i], rules.legal_mask(single))
        assert terminal[i] == rules.is_terminal(single)
        if terminal[i]:
            assert results[i] == rules.result(single, 0) == -rules.result(single, 1)
            continue
        assert unbatch(after, i) == rules.apply(single, int(actions[i]))


def test_batched_flips_equal_single_flips() -> None:
    state = random_batch(reversi, POSITIONS, seed=2)
    live = np.flatnonzero(state.legal != 0)
    part = take(state, live)
    moves = choose(part.legal, random_draws(np.random.default_rng(3), len(live)))
    flipped = reversi.flip_bits(part.me, part.opp, np.uint64(1) << moves.astype(np.uint64))
    for i in range(0, len(live), 7):
        assert int(flipped[i]) == reversi.flips(unbatch(part, i), int(moves[i]))


BATCHED = [(name, spec) for name in RULES for spec in players.batched_names(game(name))
           if players.make_batched(game(name), spec) is not None]  # az needs a checkpoint


@pytest.mark.parametrize(("name", "spec"), BATCHED)
def test_candidates_are_legal_and_the_single_player_plays_its_batched_twin(name: str,
                                                                           spec: str) -> None:
    """No candidate in finished games, only legal ones in live games; the single player on a
    game and the batched player on that game alone, drawing from equal generators, agree."""
    rules, record = RULES[name], game(name)
    state = random_batch(rules, POSITIONS, seed=1)
    batched = players.make_batched(record, spec)
    assert batched is not None
    terminal = np.asarray(rules.is_terminal(state))
    candidates = candidate_sets(name, spec, state)
    assert not candidates[terminal].any(), "a finished game has a candidate"
    live = np.flatnonzero(~terminal)
    legal = bits_from_mask(rules.legal_mask(take(state, live)))
    assert (candidates[live] != 0).all() and not (candidates[live] & ~legal).any()
    single = agents.make(name, spec)
    for seed, i in enumerate(live[:SAMPLED]):
        alone = take(state, np.array([i]))
        twin = batched.act(alone, random_draws(np.random.default_rng(seed), 1))
        assert single.act(unbatch(state, int(i)), np.random.default_rng(seed)) == twin[0]


def test_choose_is_uniform_over_candidates_and_the_same_for_ints_and_arrays() -> None:
    candidates = np.full(60_000, 0b1010_0110, dtype=np.uint64)
    draws = random_draws(np.random.default_rng(0), 60_000)
    moves = choose(candidates, draws)
    values, counts = np.unique(moves, return_counts=True)
    assert values.tolist() == [1, 2, 5, 7]
    assert counts.min() > 14_000
    assert [choose(0b1010_0110, int(d)) for d in draws[:200]] == moves[:200].tolist()
    assert choose(0, 12345) == 0 and choose(np.zeros(2, np.uint64), draws[:2]).tolist() == [0, 0]


def test_players_without_a_batched_twin_and_bad_arguments() -> None:
    four = game("four_in_a_row")
    assert players.make_batched(four, "alphabeta:2") is None
    assert players.make_batched(game("reversi"), agents.make("reversi", "random")) is None
    assert players.make_batched(game("connect_four"), "lookahead:1") is not None
    assert {"lookahead", "random"} <= set(players.batched_names(four))
    for spec in ("lookahead", "lookahead:3", "lookahead:6"):
        assert players.make_batched(four, spec) is not None
    for spec in ("lookahead:0", "lookahead:-1", "lookahead:two", "lookahead:", "random:2"):
        with pytest.raises(ValueError, match=r"lookahead|random"):
            players.make_batched(four, spec)


def test_bit_selection_matches_a_plain_reference() -> None:
    rng = np.random.default_rng(3)
    masks = rng.random((2_000, 64)) < rng.random((2_000, 1))
    bits = bits_from_mask(masks)
    for width in (7, 9, 52, 53, 64):
        np.testing.assert_array_equal(bits_from_mask(masks[:, :width]),
                                      bits & np.uint64((1 << width) - 1))
    counts = masks.sum(axis=1)
    live = counts > 0
    ranks = (rng.random(len(masks)) * counts).astype(np.int64)
    expected = [np.flatnonzero(m)[r] for m, r in zip(masks[live], ranks[live], strict=True)]
    np.testing.assert_array_equal(nth_set_bit(bits[live], ranks[live]), expected)
    small = bits[live] & np.uint64(0xFFF)  # words of a small board: the table path
    small_ranks = (rng.random(len(small)) * np.bitwise_count(small)).astype(np.int64)
    expected = [[i for i in range(12) if int(w) >> i & 1][r] if w else 0
                for w, r in zip(small, small_ranks, strict=True)]
    np.testing.assert_array_equal(nth_set_bit(small, small_ranks), expected)


@pytest.mark.parametrize("cells", [four_in_a_row.geometry(6, 9, 5).board_map,
                                   four_in_a_row.geometry().top_cells, reversi.BOARD_MAP,
                                   tictactoe.BOARD_MAP])
def test_cells_read_the_same_from_ints_and_arrays(cells: np.ndarray) -> None:
    words = np.random.default_rng(4).integers(0, 2**63, 500).astype(np.uint64) << np.uint64(1)
    batch = unpack(words, cells)
    expected = (words.reshape(-1, *[1] * cells.ndim) >> cells.astype(np.uint64)) & np.uint64(1)
    np.testing.assert_array_equal(batch, expected)
    pair = planes(words, words[::-1], cells)
    for i in range(0, len(words), 7):
        np.testing.assert_array_equal(unpack(int(words[i]), cells), batch[i])
        np.testing.assert_array_equal(planes(int(words[i]), int(words[-1 - i]), cells), pair[i])


@pytest.mark.filterwarnings("error")
def test_the_az_twin_plays_a_batch_that_holds_finished_games() -> None:
    """The vector env hands a single opponent its whole batch, finished games included: the
    az network's twin moves legally in every live game, without a numpy warning."""
    state = random_batch(four_in_a_row, 500, seed=3)
    terminal = np.asarray(four_in_a_row.is_terminal(state))
    assert terminal.any() and not terminal.all()
    batched = players.make_batched(game("four_in_a_row"), "az:0@checkpoints/four_in_a_row_az.zip")
    assert batched is not None
    moves = batched.act(state, random_draws(np.random.default_rng(0), 500))
    live = np.flatnonzero(~terminal)
    assert four_in_a_row.legal_mask(state)[live, moves[live]].all()
