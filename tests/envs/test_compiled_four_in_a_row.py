"""Four-in-a-row's compiled bit rules against the numpy/Python reference they replaced, on
every class of board size (the default, the smallest, the tallest, connect 2, 3, 5 and 15,
a board using bit 63): on any 64-bit words (hypothesis) and on random games; batched equals
single; and the rules module (the scalar functions for ints, the compiled loops for arrays)
agrees."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardgym.envs.games import four_in_a_row as rules
from boardgym.envs.games import four_in_a_row_bits as bits
from tests.envs import reference_four_in_a_row as ref

SIZES = [(6, 7, 4), (4, 4, 4), (4, 4, 3), (8, 7, 4), (6, 7, 2), (5, 6, 3), (6, 9, 5),
         (7, 8, 4), (7, 8, 5), (15, 4, 15), (15, 4, 12), (14, 4, 8), (15, 4, 4), (4, 12, 12),
         (4, 12, 5)]
"""``(rows, columns, connect)``: 7x8 and 15x4 fill all 64 bits (bit 63 is the last sentinel);
on 15x4 with connect 12 or 15 and 14x4 with connect 8 only vertical lines fit, and the other
directions' run shifts pass 64 (taken modulo 64, as the machine's shift does, they would find
lines)."""
GEOMS = st.sampled_from([rules.geometry(*size) for size in SIZES])
WORD = st.integers(0, (1 << 64) - 1)
WORDS = st.lists(WORD, max_size=12)


def board_word(draw: st.DrawFn, geom: rules.Geometry) -> int:
    """A word of cells of the board (none of the sentinels or the bits past the board)."""
    return draw(WORD) & geom.board


@st.composite
def positions(draw: st.DrawFn) -> tuple[rules.Geometry, int, int, bool]:
    """A board size, ``me`` and ``opp`` tokens on its cells (disjoint), and ``won``."""
    geom = draw(GEOMS)
    me = board_word(draw, geom)
    return geom, me, board_word(draw, geom) & ~me, draw(st.booleans())


def as_array(words: list[int]) -> np.ndarray:
    return np.array(words, dtype=np.uint64)


def test_board_words_hold_the_geometry_tables() -> None:
    for size in SIZES:
        geom = rules.geometry(*size)
        words = bits.board_words(geom)
        assert words is geom.words and words.dtype == np.uint64
        assert [int(words[i]) for i in (bits.BOTTOM, bits.BOARD, bits.TOP)] == \
            [geom.bottom, geom.board, geom.top]
        assert [int(w) for w in words[[bits.ROWS, bits.COLUMNS, bits.HEIGHT]]] == \
            [geom.rows, geom.columns, geom.height]
        masks = words[bits.COLUMN_MASKS:bits.COLUMN_MASKS + bits.MAX_COLUMNS]
        assert masks.tolist() == [*geom.column_ints, *[0] * (bits.MAX_COLUMNS - geom.columns)]
        assert int(words[bits.STEPS]) == len(ref.doubling_steps(geom.connect))
        shifts = words[bits.RUN_SHIFTS:bits.COLUMN_MASKS]
        assert shifts.max() < 64 and shifts.tolist().count(bits.NO_RUN_SHIFT) == \
            bits.MAX_STEPS * sum(max(d) >= 64 for d in ref.run_shifts(geom))
    assert rules.geometry(7, 8, 4).board >> 63 == 0 and rules.geometry(7, 8).bottom >> 56 & 1


@settings(max_examples=300, deadline=None)
@given(GEOMS, WORDS)
def test_has_line_on_any_words(geom: rules.Geometry, words: list[int]) -> None:
    expected = [bool(ref.has_line(w, geom)) for w in words]
    assert [bits.has_line(w, geom.words) for w in words] == expected
    assert [rules.has_line(w, geom) for w in words] == expected
    assert bits.has_line_batch(as_array(words), geom.words).tolist() == expected
    assert rules.has_line(as_array(words), geom).tolist() == expected
    assert ref.has_line(as_array(words), geom).tolist() == expected


@settings(max_examples=300, deadline=None)
@given(GEOMS, WORDS)
def test_landing_on_any_words(geom: rules.Geometry, words: list[int]) -> None:
    expected = [ref.landing_cells(w, geom) for w in words]
    assert [int(bits.landing(w, geom.words)) for w in words] == expected
    assert [rules.landing_cells(w, geom) for w in words] == expected
    assert rules.landing_cells(as_array(words), geom).tolist() == expected
    grid = as_array(words[:12] + [0] * (12 - len(words[:12]))).reshape(3, 4)
    assert rules.landing_cells(grid, geom).tolist() == \
        ref.landing_cells(grid, geom).tolist()


@settings(max_examples=300, deadline=None)
@given(GEOMS, st.lists(st.tuples(WORD, WORD, st.booleans()), max_size=12))
def test_legal_columns_on_any_words(geom: rules.Geometry,
                                    games: list[tuple[int, int, bool]]) -> None:
    expected = [ref.legal_bits(me, opp, won, geom) for me, opp, won in games]
    assert [int(bits.legal_columns(me, opp, won, geom.words)) for me, opp, won in games] \
        == expected
    assert [rules.legal_bits(rules.State(me, opp, 0, won, geom)) for me, opp, won in games] \
        == expected
    me, opp, won = (np.array(field, dtype=dtype) for field, dtype in
                    zip(zip(*games, strict=True), (np.uint64, np.uint64, bool), strict=True)) \
        if games else (as_array([]), as_array([]), np.zeros(0, bool))
    batch = rules.State(me, opp, np.zeros(len(games), np.int64), won, geom)
    assert rules.legal_bits(batch).tolist() == expected
    assert ref.legal_bits(me, opp, won, geom).tolist() == expected


@settings(max_examples=300, deadline=None)
@given(positions(), st.integers(0, 11))
def test_play_on_any_position(position: tuple[rules.Geometry, int, int, bool],
                              column: int) -> None:
    geom, me, opp, _ = position
    column %= geom.columns
    expected = ref.play(me, opp, column, geom)
    assert tuple(int(x) if i < 2 else bool(x) for i, x in
                 enumerate(bits.play(me, opp, column, geom.words))) == expected
    state = rules.play(rules.State(me, opp, 1, False, geom), column)
    assert (state.me, state.opp, state.won, state.to_move) == (*expected, 0)
    batch = rules.apply_batch(rules.State(as_array([me]), as_array([opp]), np.ones(1, np.int64),
                                          np.zeros(1, bool), geom), np.array([column]))
    assert (batch.me.tolist(), batch.opp.tolist(), batch.won.tolist(), batch.to_move.tolist()) \
        == ([expected[0]], [expected[1]], [expected[2]], [0])


def test_a_column_off_the_board_is_an_index_error() -> None:
    geom = rules.geometry()
    for column in (-1, geom.columns, 1 << 40):
        with pytest.raises(IndexError, match="column out of range"):
            bits.play(0, 0, column, geom.words)
        with pytest.raises(IndexError, match="column out of range"):
            rules.apply_batch(rules.initial_batch(3), np.array([0, column, 1]))
    with pytest.raises(IndexError):
        rules.play(rules.initial_state(), geom.columns)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: "x".join(map(str, size)))
def test_random_games_match_the_reference_single_and_batched(size: tuple[int, int, int]) -> None:
    """32 random games of each size, played as single states, as one batch and by the
    reference, compared ply by ply: tokens, lines, playable columns, landing cells."""
    geom, rng, n = rules.geometry(*size), np.random.default_rng(sum(size)), 32
    singles = [rules.initial_state(*size) for _ in range(n)]
    batch = rules.initial_batch(n, *size)
    reference = [(0, 0, False)] * n
    for _ in range(geom.rows * geom.columns + 1):
        legal = [ref.legal_bits(me, opp, won, geom) for me, opp, won in reference]
        assert [rules.legal_bits(state) for state in singles] == legal
        assert rules.legal_bits(batch).tolist() == legal
        filled = [me | opp for me, opp, _ in reference]
        assert rules.landing_cells(batch.me | batch.opp, geom).tolist() == \
            [ref.landing_cells(f, geom) for f in filled]
        if not any(legal):
            break
        moves = [int(rng.choice([c for c in range(geom.columns) if bits_ >> c & 1]))
                 if bits_ else 0 for bits_ in legal]
        live = np.array([bits_ != 0 for bits_ in legal])
        after = rules.apply_batch(batch, np.array(moves))
        batch = rules.State(*(np.where(live, new, old) for new, old in
                              zip(after[:4], batch[:4], strict=True)), geom)
        singles = [rules.play(state, move) if bits_ else state
                   for state, move, bits_ in zip(singles, moves, legal, strict=True)]
        reference = [ref.play(me, opp, move, geom) if bits_ else (me, opp, won)
                     for (me, opp, won), move, bits_ in zip(reference, moves, legal, strict=True)]
        assert [(s.me, s.opp, s.won) for s in singles] == reference
        assert list(zip(batch.me.tolist(), batch.opp.tolist(), batch.won.tolist(),
                        strict=True)) == reference
        assert all(rules.has_line(s.opp, geom) == s.won for s in singles)
    assert all(rules.is_terminal(state) for state in singles)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: "x".join(map(str, size)))
def test_has_line_on_full_columns_rows_and_words(size: tuple[int, int, int]) -> None:
    geom = rules.geometry(*size)
    row = sum(1 << (c * geom.height) for c in range(geom.columns))
    words = [0, (1 << 64) - 1, geom.board, geom.top, row, row << 63 % geom.height,
             *geom.column_ints, *(mask >> 1 for mask in geom.column_ints)]
    expected = [bool(ref.has_line(w, geom)) for w in words]
    assert [rules.has_line(w, geom) for w in words] == expected
    assert rules.has_line(as_array(words), geom).tolist() == expected
    assert expected[:3] == [False, True, True]
    assert expected[4] == (geom.connect <= geom.columns)
    assert expected[6] == (geom.connect <= geom.rows)
