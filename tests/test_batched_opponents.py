"""Batched rules and opponents against their single twins on 10,000 random positions a game,
and the batched four-in-a-row ``potential`` against the classic one on several board sizes."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest
from boardgym.agents import batched
from boardgym.agents.four_in_a_row import potential as single_potential
from boardgym.envs.games import four_in_a_row, reversi, tictactoe
from boardgym.envs.games.bitboard import nth_set_bit, planes, unpack

from boardgym import agents

POSITIONS = 10_000
SAMPLED = 500
"""Positions per opponent on which the single agent's move set is sampled to completion."""
MAX_DRAWS = 400
GAMES: dict[str, tuple[ModuleType, int]] = {
    "reversi": (reversi, 60), "four_in_a_row": (four_in_a_row, 42), "tictactoe": (tictactoe, 9)}


def random_positions(game: str, n: int, seed: int = 0, first_stop: int = 0,
                     longest: int | None = None, quiet: bool = False,
                     size: dict[str, int] | None = None) -> Any:
    """``n`` positions reached by uniformly random play, each stopped at a random ply in
    ``first_stop .. longest - 1`` (``longest`` defaults to the game's on its default board),
    on a board of ``size`` (four-in-a-row). ``quiet`` play avoids the moves that end the game
    while it has others, so games last and threats pile up."""
    rules, default_longest = GAMES[game]
    longest = longest or default_longest
    rng = np.random.default_rng(seed)
    stop = rng.integers(first_stop, longest, size=n)
    state = rules.initial_batch(n, **(size or {}))
    for ply in range(longest):
        mask = legal = rules.legal_mask(state)
        if quiet:
            ending = np.stack([rules.is_terminal(rules.apply_batch(state, np.full(n, a)))
                               for a in range(legal.shape[1])], axis=1)
            mask = np.where((legal & ~ending).any(axis=1, keepdims=True), legal & ~ending, legal)
        moving = (ply < stop) & legal.any(axis=1)
        actions = batched.choose(batched.bits_from_mask(mask), batched.random_draws(rng, n))
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
    actions = batched.choose(batched.bits_from_mask(masks), batched.random_draws(
        np.random.default_rng(1), POSITIONS))
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


def assert_move_sets_equal(game: str, name: str, state: Any, sampled: int) -> None:
    """The batched ``name`` has no candidate in finished games and, in the first ``sampled``
    live ones, exactly the moves the single agent plays."""
    rules, _ = GAMES[game]
    terminal = np.asarray(rules.is_terminal(state))
    agent = batched.make(game, name)
    assert agent is not None
    candidates = agent.candidates(state)
    assert not candidates[terminal].any(), "a finished game has a candidate"
    live = np.flatnonzero(~terminal)
    masks = rules.legal_mask(batched.take(state, live))
    assert (candidates[live] != 0).all()
    assert not (candidates[live] & ~batched.bits_from_mask(masks)).any(), "an illegal candidate"
    single = agents.make(game, name)
    for j, i in enumerate(live[:sampled]):
        allowed = {a for a in range(64) if (int(candidates[i]) >> a) & 1}
        assert _single_move_set(single, batched.unbatch(state, int(i)), allowed, seed=j) == allowed


@pytest.mark.parametrize(("game", "name"), [(g, n) for g in GAMES for n in batched.names(g)])
def test_batched_opponent_move_sets_equal_single_agent(game: str, name: str) -> None:
    assert_move_sets_equal(game, name, random_positions(game, POSITIONS, seed=1), SAMPLED)


BOARD_SIZES = [{"rows": 4, "columns": 5, "connect": 3}, {"rows": 5, "columns": 4},
               {"rows": 7, "columns": 8}, {"rows": 6, "columns": 7}]
LATE_POSITIONS = 200
"""Positions a board size and lookahead depth, from the middle of the game to its end."""


def late_positions(size: dict[str, int], n: int, seed: int) -> Any:
    """``n`` four-in-a-row positions of a board size, from half full to full, by quiet play:
    full columns, threats for both sides, some games over."""
    cells = size["rows"] * size["columns"]
    state = random_positions("four_in_a_row", n, seed, cells // 2, cells + 1, quiet=True,
                             size=size)
    legal = four_in_a_row.legal_mask(state)
    full_columns = ((state.me | state.opp)[:, None] & np.uint64(state.geom.top)
                    & state.geom.column_bits) != 0
    assert full_columns[legal.any(axis=1)].any(axis=1).mean() > 0.3  # live, with a full column
    return state


def assert_potential_equals_classic(state: Any, depth: int) -> None:
    """``batched.potential`` holds the single ``potential`` of every position, with its
    types (which values the classic program holds as floats)."""
    values, is_float = batched.potential(state.me, state.opp, depth, state.geom)
    for i in range(len(state.me)):
        expected = single_potential(batched.unbatch(state, i), depth)
        assert values[:, i].tolist() == list(expected)
        assert is_float[:, i].tolist() == [isinstance(v, float) for v in expected]


@pytest.mark.parametrize("size", BOARD_SIZES)
@pytest.mark.parametrize("depth", [1, 2])
def test_batched_lookahead_equals_single_agent_on_every_board_size(depth: int,
                                                                  size: dict[str, int]) -> None:
    state = late_positions(size, LATE_POSITIONS, 2)
    assert_move_sets_equal("four_in_a_row", f"lookahead:{depth}", state, LATE_POSITIONS)
    assert_potential_equals_classic(state, depth)


@pytest.mark.parametrize(("size", "n"), [(BOARD_SIZES[0], 40), (BOARD_SIZES[3], 12)])
def test_batched_potential_equals_the_classic_one_bit_for_bit(size: dict[str, int],
                                                              n: int) -> None:
    """Opening positions, where depth 3 adds up many inexact floats (with 5 or 7 columns,
    ``/ columns / columns`` rounds): adding them in another order changes the last bits."""
    state = random_positions("four_in_a_row", n, 3, 0, 20, size=size)
    for depth in (1, 2, 3):
        assert_potential_equals_classic(state, depth)
    assert_move_sets_equal("four_in_a_row", "lookahead:3", state, n)


def cpython_sum(items: list[float | int], compensate_floats: bool,
                compensate_ints: bool) -> float:
    """CPython's ``sum`` of small ints and floats, step by step (``Python/bltinmodule.c``)."""
    total: float = 0
    compensation = 0.0
    for position, item in enumerate(items):
        if isinstance(total, int) and isinstance(item, int):
            total += item
            continue
        in_float_loop = not isinstance(total, int) and position > 0
        added = total + item
        if compensate_floats and in_float_loop and (isinstance(item, float) or compensate_ints):
            big, small = (total, item) if abs(total) >= abs(item) else (item, total)
            compensation += (big - added) + small
        total = added
    return float(total + compensation if compensation else total)


@pytest.mark.parametrize(("floats", "ints"), [(False, False), (True, False), (True, True)])
def test_python_sum_adds_in_cpythons_order(floats: bool, ints: bool) -> None:
    rng = np.random.default_rng(5)
    items = rng.normal(size=(9, 3000)) * 10.0 ** rng.integers(-2, 17, size=(9, 3000))
    is_float = rng.random((9, 3000)) < 0.7
    items[~is_float] = rng.integers(-1, 2, size=(~is_float).sum())
    sums = batched.python_sum(items, is_float, floats, ints)
    native = (floats, ints) == (batched.SUM_COMPENSATES_FLOATS, batched.SUM_COMPENSATES_INTS)
    for i in range(items.shape[1]):
        column = [float(v) if f else int(v) for v, f in zip(items[:, i], is_float[:, i],
                                                             strict=True)]
        expected = cpython_sum(column, floats, ints)
        assert sums[i] == expected
        if native:
            assert expected == sum(column)


def test_choose_is_uniform_over_candidates() -> None:
    candidates = np.full(60_000, 0b1010_0110, dtype=np.uint64)
    moves = batched.choose(candidates, batched.random_draws(np.random.default_rng(0), 60_000))
    values, counts = np.unique(moves, return_counts=True)
    assert values.tolist() == [1, 2, 5, 7]
    assert counts.min() > 14_000


def test_unknown_or_unbatched_specs_have_no_batched_twin() -> None:
    assert batched.make("four_in_a_row", "alphabeta:2") is None
    assert batched.make("reversi", agents.make("reversi", "random")) is None
    assert batched.make("connect_four", "lookahead:1") is not None
    assert {"lookahead:1", "lookahead:2"} <= set(batched.names("four_in_a_row"))
    for spec in ("lookahead", "lookahead:3", "lookahead:10"):
        assert batched.make("four_in_a_row", spec) is not None
    for spec in ("lookahead:0", "lookahead:-1", "lookahead:two", "lookahead:", "random:2"):
        assert batched.make("four_in_a_row", spec) is None


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
