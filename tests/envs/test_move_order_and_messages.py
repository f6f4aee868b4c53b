"""Four-in-a-row's text keeps the move order it was read with (while equal positions stay
equal states), and the rules' ``IllegalMoveError`` messages say what is wrong."""

from __future__ import annotations

import copy
import itertools
import pickle

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boardgym  # noqa: F401
from boardgym.envs.games import IllegalMoveError, reversi, tictactoe
from boardgym.envs.games import four_in_a_row as c4
from boardgym.envs.games.core import NO_TRAIL, batch_of, forget_trail, take, unbatch

BOARDS = [{}, {"rows": 4, "columns": 12, "connect": 4}]


def random_game_text(choices: list[int], **board: int) -> tuple[str, list[c4.State]]:
    """The text of the legal columns picked by ``choices`` (the game stopped at its end),
    and the states along the way."""
    state = c4.initial_state(**board)
    states = [state]
    for choice in choices:
        legal = np.flatnonzero(c4.legal_mask(state))
        if not legal.size:
            break
        state = c4.apply(state, int(legal[choice % legal.size]))
        states.append(state)
    separator = " " if state.geom.columns > 9 else ""
    return separator.join(str(c + 1) for c in state.trail), states


@pytest.mark.parametrize("board", BOARDS)
@settings(max_examples=40, deadline=None)
@given(choices=st.lists(st.integers(0, 100), max_size=40))
def test_four_in_a_row_text_keeps_move_order(board: dict[str, int], choices: list[int]) -> None:
    """``to_text(parse(t)) == t`` for every legal move text, and ``to_text(apply(s, a))``
    appends column ``a + 1``."""
    text, states = random_game_text(choices, **board)
    assert c4.to_text(c4.parse(text, **board)) == text
    separator = " " if states[0].geom.columns > 9 else ""
    for before, after in itertools.pairwise(states):
        added = str(after.trail[-1] + 1)
        written = c4.to_text(before)
        assert c4.to_text(after) == (f"{written}{separator}{added}" if written else added)


def test_the_reported_text_reads_back_as_itself() -> None:
    assert c4.to_text(c4.parse("4453")) == "4453"
    assert c4.to_text(c4.apply(c4.parse("4453"), 0)) == "44531"


def test_equal_positions_stay_equal_states_whatever_the_order() -> None:
    """Transpositions: equal states, equal hashes, one key in dicts and ``tuple(state)``
    keys (memos, transposition tables)."""
    one, other = c4.parse("4453"), c4.parse("4354")
    assert one == other and hash(one) == hash(other)
    assert not one != other  # noqa: SIM202 (``!=`` is compared on its own)
    assert tuple(one) == tuple(other) and hash(tuple(one)) == hash(tuple(other))
    assert len({one: 1, other: 2}) == 1
    assert c4.to_text(one) != c4.to_text(other)
    assert c4.to_text(forget_trail(one)) == c4.to_text(forget_trail(other)) == "4354"
    board = tictactoe.parse("X-O-X----")
    assert tictactoe.to_text(forget_trail(board)) == "X-O-X----"  # games without a trail


def test_the_move_order_survives_pickle_and_copy() -> None:
    state = c4.parse("4453")
    for copied in (pickle.loads(pickle.dumps(state)), copy.deepcopy(state)):
        assert c4.to_text(copied) == "4453"
    assert pickle.loads(pickle.dumps(NO_TRAIL)) is NO_TRAIL


def test_batches_keep_no_order_and_their_games_replay_one() -> None:
    """The batched twin is unchanged: no order in a batch; a game taken out of it is written
    with a move order that reaches it."""
    batch = batch_of(c4.parse("4453"))
    assert batch.trail is NO_TRAIL and take(batch, np.array([0])).trail is NO_TRAIL
    single = unbatch(c4.apply_batch(batch, np.array([0])), 0)
    assert single == c4.apply(c4.parse("4453"), 0)
    assert c4.parse(c4.to_text(single)) == single
    assert c4.initial_batch(3).trail is NO_TRAIL


def test_the_env_position_text_keeps_the_order_read_and_played() -> None:
    env = gym.make("FourInARow-v0", first_player="agent", opponent="random")
    env.reset(seed=0, options={"position": "4453"})
    assert env.unwrapped.position_text() == "4453"
    _, _, _, _, info = env.step(0)
    assert env.unwrapped.position_text() == f"44531{info['opponent_action'] + 1}"


def test_full_column_message() -> None:
    state = c4.parse("444444")
    with pytest.raises(IllegalMoveError, match=r"^column 4 is full; playable columns "
                                               r"\(1-based\): \[1, 2, 3, 5, 6, 7\]$"):
        c4.apply(state, 3)


@pytest.mark.parametrize("action", [-1, 7, 99])
def test_out_of_range_column_message_gives_the_range(action: int) -> None:
    with pytest.raises(IllegalMoveError, match=rf"column index {action} is out of range: "
                                               r"actions are 0\.\.6 \(columns 1\.\.7"):
        c4.apply(c4.initial_state(), action)


def test_four_in_a_row_over_message() -> None:
    with pytest.raises(IllegalMoveError, match="the game is over"):
        c4.apply(c4.parse("1212121"), 3)


@pytest.mark.parametrize(("text", "why"), [("XXXOO----", "X has three in a row"),
                                           ("XX-OOO--X", "O has three in a row"),
                                           ("XOXXOOOXX", "the board is full")])
def test_tictactoe_apply_on_a_finished_board_says_the_game_is_over(text: str,
                                                                   why: str) -> None:
    with pytest.raises(IllegalMoveError) as info:
        tictactoe.apply(tictactoe.parse(text), 8)
    assert str(info.value).startswith(f"the game is over ({why})")
    assert "free cells" not in str(info.value)


def test_tictactoe_taken_and_out_of_range_cells_are_named() -> None:
    state = tictactoe.parse("X--------")
    with pytest.raises(IllegalMoveError, match=r"cell 0 is taken; free cells: \[1, 2"):
        tictactoe.apply(state, 0)
    with pytest.raises(IllegalMoveError, match=r"cell 9 is out of range: cells are 0\.\.8"):
        tictactoe.apply(state, 9)


def test_reversi_apply_after_the_end_says_the_game_is_over() -> None:
    with pytest.raises(IllegalMoveError, match="the game is over"):
        reversi.apply(reversi.parse("X" * 64 + " O"), 0)


def test_tictactoe_parse_refuses_a_move_after_a_line() -> None:
    with pytest.raises(ValueError, match="O has a line in 'XX-OOOX-X' but the other side "
                                         "moved after it"):
        tictactoe.parse("XX-OOOX-X")
