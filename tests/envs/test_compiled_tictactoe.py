"""Tic-tac-toe's compiled bit rules against the numpy/Python reference they replaced, on every
word, every position index, every reachable position and every move; batched equals single;
and the rules module (memo tables for one game, compiled loops for a batch) agrees."""

from __future__ import annotations

import numpy as np
import pytest

from boardgym.envs.games import tictactoe as rules
from boardgym.envs.games import tictactoe_bits as bits
from boardgym.envs.games.bitboard import unpack
from tests.envs import reference_tictactoe as ref

POSITIONS = ref.reachable_positions()
ME, OPP, TO_MOVE = (np.array(field) for field in zip(*POSITIONS, strict=True))
ME, OPP = ME.astype(np.uint64), OPP.astype(np.uint64)
MOVES = [(i, cell) for i, (me, opp, _) in enumerate(POSITIONS)
         for cell in range(bits.CELLS) if ref.legal(me, opp) >> cell & 1]
"""``(position number, cell)`` of every legal move of every reachable position."""


def test_the_reference_reaches_5478_positions_and_the_rules_the_same() -> None:
    reached = rules.reachable_positions()
    assert len(POSITIONS) == 5478
    assert sorted(zip(reached.me.tolist(), reached.opp.tolist(), reached.to_move.tolist(),
                      strict=True)) == POSITIONS


def test_has_line_on_every_word() -> None:
    words = np.arange(1 << bits.CELLS, dtype=np.uint64)
    expected = ref.has_line(words)
    assert expected.sum() > 0
    assert [bits.has_line(int(w)) for w in words] == expected.tolist()
    assert np.array_equal(bits.has_line_batch(words), expected)
    assert [rules.has_line(int(w)) for w in words] == expected.tolist()
    assert np.array_equal(rules.has_line(words.reshape(8, 64)), expected.reshape(8, 64))


def test_legal_on_every_position_index() -> None:
    index = np.arange(1 << bits.POSITION_BITS, dtype=np.uint64)
    me, opp = index >> np.uint64(bits.CELLS), index & bits.FULL
    expected = ref.legal(me, opp)
    assert np.array_equal(bits.legal_batch(me, opp), expected)
    assert np.array_equal(rules.legal_bits(rules.State(me, opp, np.zeros_like(me))), expected)
    assert tuple(expected.tolist()) == rules.LEGAL_MEMO


def test_legal_terminal_and_mask_on_every_reachable_position() -> None:
    batch = rules.State(ME, OPP, TO_MOVE)
    expected = ref.legal(ME, OPP)
    assert [bits.legal(me, opp) for me, opp, _ in POSITIONS] == expected.tolist()
    assert [rules.legal_bits(rules.State(*p)) for p in POSITIONS] == expected.tolist()
    assert [rules.is_terminal(rules.State(*p)) for p in POSITIONS] == (expected == 0).tolist()
    assert np.array_equal(rules.is_terminal(batch), ref.has_line(OPP) | (ME | OPP == ref.FULL))
    masks = unpack(expected, rules.ACTION_CELLS).view(bool)
    assert np.array_equal(rules.legal_mask(batch), masks)
    assert all(np.array_equal(rules.legal_mask(rules.State(*p)), mask)
               for p, mask in zip(POSITIONS, masks, strict=True))


def test_play_on_every_move_of_every_reachable_position() -> None:
    for i, cell in MOVES:
        me, opp, to_move = POSITIONS[i]
        after = ref.play(me, opp, to_move, cell)
        assert bits.play(me, opp, to_move, cell) == (*after, ref.legal(after[0], after[1]))
        assert rules.play(rules.State(me, opp, to_move), cell) == after  # the memo
        swapped = rules.State(me, opp, 1 - to_move)  # no game reaches it: the compiled call
        assert rules.play(swapped, cell) == ref.play(me, opp, 1 - to_move, cell)


def test_batched_play_equals_single_play_on_every_move() -> None:
    games, cells = (np.array(column) for column in zip(*MOVES, strict=True))
    me, opp, to_move = ME[games], OPP[games], TO_MOVE[games].astype(np.int64)
    after = rules.apply_batch(rules.State(me, opp, to_move), cells)
    assert all(np.array_equal(a, e) for a, e in
               zip(after, ref.play(me, opp, to_move, cells), strict=True))
    legal = np.empty_like(me)
    bits.play_batch(me, opp, to_move, legal, cells.astype(np.int64))  # in place
    singles = [bits.play(*POSITIONS[g], c) for g, c in MOVES]
    assert [tuple(v) for v in zip(me.tolist(), opp.tolist(), to_move.tolist(), legal.tolist(),
                                  strict=True)] == singles


def test_apply_batch_leaves_its_input_alone_and_survives_any_action() -> None:
    state = rules.State(ME[:4].copy(), OPP[:4].copy(), TO_MOVE[:4].astype(np.int64))
    after = rules.apply_batch(state, np.array([-1, 9, 63, 1000], dtype=np.int32))
    assert np.array_equal(state.me, ME[:4]) and np.array_equal(state.opp, OPP[:4])
    assert np.array_equal(after.me, state.opp) and np.array_equal(after.to_move,
                                                                   1 - state.to_move)


@pytest.mark.parametrize("side", [0, 1])
def test_result_on_every_reachable_position(side: int) -> None:
    expected = ref.result(OPP, TO_MOVE, side)
    assert {-1, 0, 1} == set(expected.tolist())
    assert [bits.result(opp, to_move, side) for _, opp, to_move in POSITIONS] == \
        expected.tolist()
    assert [rules.result(rules.State(*p), side) for p in POSITIONS] == expected.tolist()
    batch = rules.State(ME, OPP, TO_MOVE)
    assert np.array_equal(rules.result(batch, side), expected)
    sides = np.full(len(POSITIONS), side)
    assert np.array_equal(bits.result_batch(OPP, TO_MOVE.astype(np.int64), sides), expected)
    assert np.array_equal(rules.result(batch, sides), expected)
