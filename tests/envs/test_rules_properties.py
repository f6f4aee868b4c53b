"""Invariants of every game's rules over random legal play (hypothesis)."""

from __future__ import annotations

import itertools
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardgym.envs.games import IllegalMoveError, four_in_a_row, reversi, tictactoe
from boardgym.envs.games.bitboard import (
    FULL64,
    MEMO_CELLS,
    WORD_BITS,
    compress,
    nth_set_bit,
    pack,
    single_bit_slot,
    unpack,
)
from boardgym.envs.games.core import batch_of, join

GAMES = [
    pytest.param(reversi, {}, id="reversi"),
    pytest.param(four_in_a_row, {}, id="four_in_a_row"),
    pytest.param(four_in_a_row, dict(rows=6, columns=9, connect=5), id="four_in_a_row_6x9_5"),
    pytest.param(four_in_a_row, dict(rows=4, columns=5, connect=3), id="four_in_a_row_4x5_3"),
    pytest.param(tictactoe, {}, id="tictactoe"),
]
CHOICES = st.lists(st.integers(0, 1 << 16), min_size=70, max_size=70)


def playout(rules: ModuleType, config: dict[str, Any],
            choices: list[int]) -> list[tuple[Any, int | None]]:
    """``(state, action)`` pairs of one game, action None at the end."""
    state = rules.initial_state(**config)
    trail: list[tuple[Any, int | None]] = []
    for choice in choices:
        if rules.is_terminal(state):
            break
        legal = np.flatnonzero(rules.legal_mask(state))
        action = int(legal[choice % len(legal)])
        trail.append((state, action))
        state = rules.apply(state, action)
    trail.append((state, None))
    return trail


@pytest.mark.parametrize(("rules", "config"), GAMES)
@settings(max_examples=30, deadline=None)
@given(choices=CHOICES)
def test_games_end_within_the_board_and_always_offer_a_move(
        rules: ModuleType, config: dict[str, Any], choices: list[int]) -> None:
    trail = playout(rules, config, choices)
    final = trail[-1][0]
    assert rules.is_terminal(final), "every game ends within the number of cells"
    assert rules.result(final, 0) in (-1, 0, 1)
    assert rules.result(final, 1) == -rules.result(final, 0)
    assert not rules.legal_mask(final).any()
    for state, _ in trail[:-1]:
        assert not rules.is_terminal(state) and rules.legal_mask(state).any()


@pytest.mark.parametrize(("rules", "config"), GAMES)
@settings(max_examples=10, deadline=None)
@given(choices=CHOICES)
def test_mask_is_exactly_the_moves_apply_accepts(
        rules: ModuleType, config: dict[str, Any], choices: list[int]) -> None:
    for state, _ in playout(rules, config, choices)[::5]:
        mask = rules.legal_mask(state)
        for action in range(mask.size):
            try:
                rules.apply(state, action)
                accepted = True
            except IllegalMoveError:
                accepted = False
            assert accepted == mask[action]


@pytest.mark.parametrize(("rules", "config"), GAMES)
@settings(max_examples=10, deadline=None)
@given(choices=CHOICES)
def test_action_bits_and_play_match_the_mask_and_apply(
        rules: ModuleType, config: dict[str, Any], choices: list[int]) -> None:
    for state, action in playout(rules, config, choices):
        bits = rules.action_bits(state)
        mask = rules.legal_mask(state)
        assert bits == sum(1 << int(a) for a in np.flatnonzero(mask))
        assert (bits == 0) == rules.is_terminal(state)
        if action is not None:
            assert rules.play(state, action) == rules.apply(state, action)


@pytest.mark.parametrize(("rules", "config"), GAMES)
@settings(max_examples=5, deadline=None)
@given(choices=CHOICES)
def test_arrays_of_one_game_are_fresh_and_writable(
        rules: ModuleType, config: dict[str, Any], choices: list[int]) -> None:
    for state, _ in playout(rules, config, choices):
        for make in (rules.observation, rules.legal_mask):
            first = make(state)
            expected = first.copy()
            assert first.flags.writeable
            first[...] = 1  # a caller scribbling on its array changes nothing else
            np.testing.assert_array_equal(make(state), expected)


@settings(max_examples=30, deadline=None)
@given(choices=CHOICES)
def test_reversi_disc_count_conservation(choices: list[int]) -> None:
    trail = playout(reversi, {}, choices)
    for (before, action), (after, _) in itertools.pairwise(trail):
        flipped = int(reversi.flips(before, action)).bit_count()
        assert flipped >= 1
        counts_before, counts_after = reversi.score(before), reversi.score(after)
        mover = before.to_move
        assert counts_after[mover] == counts_before[mover] + 1 + flipped
        assert counts_after[1 - mover] == counts_before[1 - mover] - flipped
        assert sum(counts_after) == sum(counts_before) + 1


def stack(states: list[Any]) -> Any:
    """A batched state holding ``states`` (same type), game by game (``core.join`` of
    batches of one)."""
    return join([batch_of(state) for state in states])


@pytest.mark.parametrize(("rules", "config"), GAMES)
@settings(max_examples=5, deadline=None)
@given(seeds=st.lists(CHOICES, min_size=8, max_size=8))
def test_scalar_and_batched_rules_agree_move_by_move(
        rules: ModuleType, config: dict[str, Any], seeds: list[list[int]]) -> None:
    games = [playout(rules, config, choices) for choices in seeds]
    for ply in range(max(map(len, games))):
        live = [g[ply] for g in games if ply < len(g)]
        batch = stack([state for state, _ in live])
        np.testing.assert_array_equal(rules.legal_mask(batch),
                                      [rules.legal_mask(s) for s, _ in live])
        np.testing.assert_array_equal(rules.observation(batch),
                                      [rules.observation(s) for s, _ in live])
        np.testing.assert_array_equal(rules.is_terminal(batch),
                                      [rules.is_terminal(s) for s, _ in live])
        moving = [(s, a) for s, a in live if a is not None]
        if not moving:
            continue
        after = rules.apply_batch(stack([s for s, _ in moving]), np.array([a for _, a in moving]))
        expected = stack([rules.apply(s, a) for s, a in moving])
        for got, want in zip(after, expected, strict=True):
            np.testing.assert_array_equal(got, want)
    finals = [g[-1][0] for g in games]
    for side in (0, 1):
        np.testing.assert_array_equal(rules.result(stack(finals), side),
                                      [rules.result(s, side) for s in finals])


@pytest.mark.parametrize(("rules", "config"), GAMES)
@settings(max_examples=20, deadline=None)
@given(choices=CHOICES)
def test_position_text_round_trips(rules: ModuleType, config: dict[str, Any],
                                   choices: list[int]) -> None:
    """``parse(to_text(s)) == s`` on every position of a random game, the end included."""
    for state, _ in playout(rules, config, choices):
        text = rules.to_text(state)
        assert isinstance(text, str)
        assert rules.parse(text, **config) == state


@pytest.mark.parametrize(("rules", "config"), GAMES)
@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet="XO-.x o0123456789,;/\n", max_size=80) | st.text(max_size=30))
def test_any_text_parses_or_raises_value_error(rules: ModuleType, config: dict[str, Any],
                                               text: str) -> None:
    try:
        state = rules.parse(text, **config)
    except ValueError as error:
        assert str(error) and "\n" not in str(error)  # one clear line
        return
    assert rules.parse(rules.to_text(state), **config) == state


BAD_TEXTS = [
    pytest.param(reversi, {}, "X" * 63 + " X", id="reversi-63-squares"),
    pytest.param(reversi, {}, "-" * 64, id="reversi-no-side-to-move"),
    pytest.param(reversi, {}, "-" * 63 + "Z X", id="reversi-bad-symbol"),
    pytest.param(four_in_a_row, {}, "4448", id="four_in_a_row-column-8"),
    pytest.param(four_in_a_row, {}, "1111111", id="four_in_a_row-full-column"),
    pytest.param(four_in_a_row, {}, "12121212", id="four_in_a_row-move-after-the-end"),
    pytest.param(four_in_a_row, {}, "4a", id="four_in_a_row-not-a-digit"),
    pytest.param(four_in_a_row, dict(rows=6, columns=9, connect=5), "0",
                 id="four_in_a_row-column-0"),
    pytest.param(tictactoe, {}, "XX-------", id="tictactoe-two-x-no-o"),
    pytest.param(tictactoe, {}, "O--------", id="tictactoe-o-first"),
    pytest.param(tictactoe, {}, "XXXOOO-X-", id="tictactoe-both-lines"),
    pytest.param(tictactoe, {}, "X-O", id="tictactoe-too-short"),
]


@pytest.mark.parametrize(("rules", "config", "text"), BAD_TEXTS)
def test_bad_position_text_raises_value_error(rules: ModuleType, config: dict[str, Any],
                                              text: str) -> None:
    with pytest.raises(ValueError, match=r"\S"):
        rules.parse(text, **config)


@settings(deadline=None)
@given(st.integers(1, (1 << MEMO_CELLS) - 1) | st.integers(1, FULL64), st.data())
def test_nth_set_bit_is_the_kth_set_position(bits: int, data: st.DataObject) -> None:
    positions = [i for i in range(FULL64.bit_length()) if bits >> i & 1]
    k = data.draw(st.integers(0, len(positions) - 1))
    assert nth_set_bit(bits, k) == positions[k]


@pytest.mark.parametrize("other", [0b101, 1 << 40])  # a small-board word, a 64-bit one
def test_nth_set_bit_of_an_empty_word_is_0(other: int) -> None:
    words = np.array([0, other, 0], dtype=np.uint64)
    lowest = (other & -other).bit_length() - 1
    assert nth_set_bit(words, np.zeros(3, dtype=np.int64)).tolist() == [0, lowest, 0]


def test_single_bit_slots_differ_for_every_bit() -> None:
    words = np.uint64(1) << np.arange(WORD_BITS, dtype=np.uint64)
    slots = single_bit_slot(words)
    assert sorted(slots.tolist()) == list(range(WORD_BITS))
    assert single_bit_slot(np.zeros(1, dtype=np.uint64))[0] == slots[0]


@given(st.lists(st.integers(0, (1 << WORD_BITS) - 1), min_size=1, max_size=8),
       st.permutations(range(WORD_BITS)))
def test_pack_inverts_unpack(values: list[int], order: list[int]) -> None:
    words = np.array(values, dtype=np.uint64)
    for cells in (np.arange(WORD_BITS).reshape(8, 8), np.array(order[:9]).reshape(3, 3)):
        kept = words & np.uint64(sum(1 << int(cell) for cell in cells.flat))
        assert (pack(unpack(words, cells), cells) == kept).all()


@st.composite
def cell_rows(draw: st.DrawFn) -> list[int]:
    """Up to 16 ascending bit positions below 64: evenly spaced (as the top cells of
    four-in-a-row columns) or not."""
    if draw(st.booleans()):
        step = draw(st.integers(1, 12))
        first = draw(st.integers(0, WORD_BITS - 1))
        count = draw(st.integers(1, min(16, (WORD_BITS - 1 - first) // step + 1)))
        return list(range(first, first + count * step, step))
    return sorted(draw(st.sets(st.integers(0, WORD_BITS - 1), min_size=1, max_size=16)))


@settings(deadline=None)  # the first call of a set of cells builds its plan
@given(cell_rows(), st.lists(st.integers(0, FULL64), min_size=1, max_size=8))
def test_compress_moves_the_bits_at_cells_to_the_bottom(cells: list[int],
                                                        words: list[int]) -> None:
    positions = np.array(cells)
    expected = [sum((word >> cell & 1) << i for i, cell in enumerate(cells)) for word in words]
    assert [compress(word, positions) for word in words] == expected
    batch = compress(np.array(words, dtype=np.uint64), positions)
    assert batch.tolist() == expected
