"""Batched rules and opponents against their single twins on 10,000 random positions a game."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import agents
from agents import batched
from envs.games import four_in_a_row, reversi, tictactoe
from envs.games.bitboard import planes, unpack

POSITIONS = 10_000
SAMPLED = 500
"""Positions per opponent on which the single agent's move set is sampled to completion."""
MAX_DRAWS = 400
GAMES: dict[str, tuple[ModuleType, int]] = {
    "reversi": (reversi, 60), "four_in_a_row": (four_in_a_row, 42), "tictactoe": (tictactoe, 9)}


def random_positions(game: str, n: int, seed: int = 0) -> Any:
    """``n`` positions reached by uniformly random play, each stopped at a random ply."""
    rules, longest = GAMES[game]
    rng = np.random.default_rng(seed)
    stop = rng.integers(0, longest, size=n)
    state = rules.initial_batch(n)
    for ply in range(longest):
        mask = rules.legal_mask(state)
        moving = (ply < stop) & mask.any(axis=1)
        actions = batched.choose(batched.bits_from_mask(mask), rng.random(n))
        after = rules.apply_batch(state, actions)
        state = type(state)(*(np.where(moving, new, old) if isinstance(old, np.ndarray) else old
                              for new, old in zip(after, state, strict=True)))
    return state


@pytest.mark.parametrize("game", list(GAMES))
def test_batched_rules_equal_single_rules(game: str) -> None:
    rules, _ = GAMES[game]
    state = random_positions(game, POSITIONS)
    masks = rules.legal_mask(state)
    terminal = np.asarray(rules.is_terminal(state))
    outcomes = np.asarray(rules.outcome(state))
    actions = batched.choose(batched.bits_from_mask(masks), np.linspace(0, 1, POSITIONS,
                                                                       endpoint=False))
    after = rules.apply_batch(state, actions)
    flipped = (reversi.flip_bits(state.me, state.opp, np.uint64(1) << actions.astype(np.uint64))
               if game == "reversi" else None)
    assert 0 < terminal.sum() < POSITIONS
    for i in range(POSITIONS):
        single = batched.unbatch(state, i)
        np.testing.assert_array_equal(masks[i], rules.legal_mask(single))
        assert terminal[i] == rules.is_terminal(single)
        if terminal[i]:
            assert outcomes[i] == rules.outcome(single)
            continue
        assert batched.unbatch(after, i) == rules.apply(single, int(actions[i]))
        if flipped is not None:
            assert int(flipped[i]) == reversi.flips(single, int(actions[i]))


def _single_move_set(agent: Any, state: Any, allowed: set[int], seed: int) -> set[int]:
    """Moves the single agent plays in ``state`` over seeded draws, stopping once it has
    played every move of ``allowed`` (or after ``MAX_DRAWS``)."""
    seen: set[int] = set()
    rng = np.random.default_rng(seed)
    for _ in range(MAX_DRAWS):
        move = int(agent.act(state, rng))
        assert move in allowed, f"single agent played {move}, batched allows {sorted(allowed)}"
        seen.add(move)
        if seen == allowed:
            break
    return seen


@pytest.mark.parametrize(("game", "name"), [(g, n) for g in GAMES for n in batched.names(g)])
def test_batched_opponent_move_sets_equal_single_agent(game: str, name: str) -> None:
    rules, _ = GAMES[game]
    state = random_positions(game, POSITIONS, seed=1)
    live = np.flatnonzero(~np.asarray(rules.is_terminal(state)))
    candidates = batched.make(game, name).candidates(batched.take(state, live))  # type: ignore[union-attr]
    masks = rules.legal_mask(batched.take(state, live))
    assert (candidates != 0).all()
    assert not (candidates & ~batched.bits_from_mask(masks)).any(), "a candidate is illegal"
    single = agents.make(game, name)
    for j in range(min(SAMPLED, len(live))):
        allowed = {a for a in range(64) if (int(candidates[j]) >> a) & 1}
        position = batched.unbatch(state, int(live[j]))
        assert _single_move_set(single, position, allowed, seed=j) == allowed


def test_choose_is_uniform_over_candidates() -> None:
    candidates = np.full(60_000, 0b1010_0110, dtype=np.uint64)
    moves = batched.choose(candidates, np.random.default_rng(0).random(60_000))
    values, counts = np.unique(moves, return_counts=True)
    assert values.tolist() == [1, 2, 5, 7]
    assert counts.min() > 14_000


def test_unknown_or_unbatched_specs_have_no_batched_twin() -> None:
    assert batched.make("four_in_a_row", "lookahead:2") is None
    assert batched.make("reversi", agents.make("reversi", "random")) is None
    assert batched.make("connect_four", "lookahead:1") is not None


def test_bit_selection_matches_a_plain_reference() -> None:
    rng = np.random.default_rng(3)
    masks = rng.random((2_000, 64)) < rng.random((2_000, 1))
    bits = batched.bits_from_mask(masks)
    for width in (7, 9, 52, 53, 64):
        np.testing.assert_array_equal(batched.bits_from_mask(masks[:, :width]),
                                      bits & np.uint64((1 << width) - 1))
    counts = masks.sum(axis=1)
    live = counts > 0
    ranks = (rng.random(len(masks)) * counts).astype(np.int64)
    expected = [np.flatnonzero(m)[r] for m, r in zip(masks[live], ranks[live], strict=True)]
    np.testing.assert_array_equal(batched.nth_set_bit(bits[live], ranks[live]), expected)


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
