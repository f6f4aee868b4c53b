"""Reversi's compiled bit rules (``reversi_bits``, behind ``envs.games.reversi``) against the
numpy/Python reference they replaced (``tests.envs.reference_reversi``): on random disjoint
words (bit 63 included), on the positions of random games, one game and batches; batched
equals single; every array shape the rules took before still works."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from boardgym.agents import reversi as classic
from boardgym.envs.games import reversi as rules
from boardgym.envs.games import reversi_bits as bits
from boardgym.envs.games.bitboard import FULL64
from tests.envs import reference_reversi as ref

TOP_BIT = 1 << 63
WORDS = st.one_of(st.integers(0, FULL64), st.integers(0, FULL64).map(lambda w: w | TOP_BIT))
"""Any 64-bit word, half of them with bit 63 (h8) set."""
PAIRS = st.tuples(WORDS, WORDS, st.booleans()).map(
    lambda t: (t[0], t[1] & ~t[0]) if t[2] else (t[0] & ~t[1], t[1]))
"""Disjoint ``(me, opp)`` words, bit 63 on either side."""
CHOICES = st.lists(st.integers(0, 1 << 16), min_size=61, max_size=61)


def game_positions(choices: list[int]) -> list[rules.State]:
    """Every position of the game that picks legal move ``choice % count`` each ply (the
    reference's ``play``), the final one included."""
    state = state_of(rules.FIRST_START, rules.SECOND_START)
    positions = [state]
    for choice in choices:
        if not state.legal:
            break
        cells = [c for c in range(rules.CELLS) if state.legal >> c & 1]
        state = ref.play(state, cells[choice % len(cells)])
        positions.append(state)
    return positions


def state_of(me: int, opp: int, to_move: int = 0) -> rules.State:
    """The position with these words (no pass applied) and the reference's legal moves."""
    return rules.State(me, opp, to_move, ref.legal_bits(me, opp))


def batch_of_states(states: list[rules.State]) -> rules.State:
    """The states as one batch (``uint64`` words, ``int64`` side to move)."""
    return rules.State(*(np.array(field, dtype=np.int64 if name == "to_move" else np.uint64)
                         for name, field in zip(rules.State._fields, zip(*states, strict=True),
                                                strict=True)))


def assert_single_rules_agree(state: rules.State) -> None:
    """legal_bits, flip_bits of every cell and play of every legal move equal the
    reference's on one game, as Python ints."""
    me, opp = state.me, state.opp
    legal = rules.legal_bits(me, opp)
    assert type(legal) is int and legal == ref.legal_bits(me, opp)
    assert int(bits.legal_moves(me, opp)) == legal
    for cell in range(rules.CELLS):
        flipped = rules.flip_bits(me, opp, 1 << cell)
        assert type(flipped) is int and flipped == ref.flip_bits(me, opp, 1 << cell)
    for cell in (c for c in range(rules.CELLS) if legal >> c & 1):
        after = rules.play(state, cell)
        assert after == ref.play(state, cell)
        assert all(type(field) is int for field in after)


@settings(max_examples=60, deadline=None)
@given(pair=PAIRS, to_move=st.integers(0, 1))
def test_one_game_on_random_words(pair: tuple[int, int], to_move: int) -> None:
    assert_single_rules_agree(state_of(*pair, to_move))


@settings(max_examples=30, deadline=None)
@given(pairs=st.lists(PAIRS, min_size=1, max_size=40))
def test_batches_on_random_words_equal_the_reference_and_single_games(
        pairs: list[tuple[int, int]]) -> None:
    me, opp = (np.array(words, dtype=np.uint64) for words in zip(*pairs, strict=True))
    legal = rules.legal_bits(me, opp)
    assert legal.dtype == np.uint64
    assert np.array_equal(legal, ref.legal_bits(me, opp))
    assert legal.tolist() == [rules.legal_bits(m, o) for m, o in pairs]
    for cell in (0, 7, 27, 56, 63):
        move = np.uint64(1 << cell)
        flipped = rules.flip_bits(me, opp, move)
        assert np.array_equal(flipped, ref.flip_bits(me, opp, move))
        assert flipped.tolist() == [rules.flip_bits(m, o, 1 << cell) for m, o in pairs]


@settings(max_examples=25, deadline=None)
@given(choices=CHOICES)
def test_positions_of_random_games_one_by_one_and_as_a_batch(choices: list[int]) -> None:
    positions = game_positions(choices)
    for state in positions[::4] + positions[-3:]:
        assert_single_rules_agree(state)
    live = [s for s in positions if s.legal]
    batch = batch_of_states(live)
    actions = np.array([(s.legal & -s.legal).bit_length() - 1 for s in live], dtype=np.int64)
    after = rules.apply_batch(batch, actions)
    expected = ref.apply_batch(batch, actions)
    assert [a.dtype for a in after] == [np.uint64, np.uint64, np.int64, np.uint64]
    assert all(np.array_equal(a, e) for a, e in zip(after, expected, strict=True))
    singles = batch_of_states([rules.play(s, int(a)) for s, a in zip(live, actions, strict=True)])
    assert all(np.array_equal(a, s) for a, s in zip(after, singles, strict=True))


def test_passes_and_the_end_of_the_game() -> None:
    # X plays a1 (action 0) over b1: O has no disc left, the game is over
    before = state_of(1 << 2, 1 << 1)
    over = rules.play(before, 0)
    assert over == ref.play(before, 0) == (0, 7, 1, 0)  # O "to move", no move
    passes = 0
    for seed in range(40):
        draws = np.random.default_rng(seed).integers(0, 1 << 16, 61).tolist()
        positions = game_positions(draws)
        for state, after in itertools.pairwise(positions):
            action = next(c for c in range(rules.CELLS) if (state.me | state.opp | 1 << c)
                          == (after.me | after.opp))
            assert rules.play(state, action) == after
            passes += after.legal != 0 and after.to_move == state.to_move
    assert passes > 0, "some of these games pass"


def test_every_array_shape_the_rules_took() -> None:
    positions = game_positions(list(range(0, 61 * 37, 37)))
    batch = batch_of_states(positions)
    me, opp = batch.me, batch.opp
    expected = ref.legal_bits(me, opp)
    strided = np.stack([me, opp], axis=1)
    assert not strided[:, 0].flags.c_contiguous
    assert np.array_equal(rules.legal_bits(strided[:, 0], strided[:, 1]), expected)
    frozen = me.copy()
    frozen.flags.writeable = False
    assert np.array_equal(rules.legal_bits(frozen, opp), expected)
    grid = rules.legal_bits(np.tile(me, (2, 1)), np.tile(opp, (2, 1)))
    assert grid.shape == (2, len(me)) and np.array_equal(grid[1], expected)
    one = positions[10]
    move = one.legal & -one.legal
    broadcast = rules.flip_bits(np.full(3, one.me, dtype=np.uint64), one.opp, move)
    assert broadcast.tolist() == [ref.flip_bits(one.me, one.opp, move)] * 3
    spread = rules.State(np.broadcast_to(np.uint64(one.me), (4,)), np.full(4, one.opp, np.uint64),
                         np.broadcast_to(np.int64(one.to_move), (4,)),
                         np.full(4, one.legal, np.uint64))
    action = move.bit_length() - 1
    after = rules.apply_batch(spread, np.full(4, action))
    assert [f.tolist() for f in after] == [[f] * 4 for f in rules.play(one, action)]


def test_a_batch_plays_any_action_where_a_game_does_not_move() -> None:
    batch = rules.initial_batch(3)
    after = rules.apply_batch(rules.State(batch.me, batch.opp, batch.to_move,
                                          np.array([batch.legal[0], 0, 0], dtype=np.uint64)),
                              np.array([19, -1, 64]))
    assert rules.play(rules.initial_state(), 19) == tuple(int(f[0]) for f in after)


def test_the_classic_players_flip_counts() -> None:
    positions = [s for s in game_positions([5 * k + 3 for k in range(61)]) if s.legal]
    games = [(s, 1 << c) for s in positions for c in range(rules.CELLS) if s.legal >> c & 1]
    me, opp, moves = (np.array(column, dtype=np.uint64) for column in
                      zip(*((s.me, s.opp, move) for s, move in games), strict=True))
    counts = classic.flip_counts(me, opp, moves)
    assert counts.tolist() == [ref.flip_bits(s.me, s.opp, m).bit_count() for s, m in games]
    assert bits.flip_counts_batch(me, opp, moves).tolist() == counts.tolist()
