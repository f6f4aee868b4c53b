"""The tic-tac-toe AIs on hand-built positions, and ``perfect`` never losing.

Boards are three rows of ``X`` (the side to move), ``O`` (the other side) and ``.``.
"""

from __future__ import annotations

import numpy as np
import pytest

from boardgym import agents
from boardgym.agents.tictactoe import move_values, value
from boardgym.envs.games import tictactoe
from boardgym.envs.games.core import unbatch
from tests.boards import candidate_sets, random_batch

SEEDS = range(30)
OTHERS = ("random", "rules", "rules_center", "perfect")
PERFECT_GAMES = 1000


def position(board: str) -> tictactoe.State:
    """The state drawn in ``board``; ``to_move`` follows from the mark counts."""
    cells = "".join(board.split())
    me = sum(1 << i for i, ch in enumerate(cells) if ch == "X")
    opp = sum(1 << i for i, ch in enumerate(cells) if ch == "O")
    return tictactoe.State(me, opp, int(me.bit_count() < opp.bit_count()))


def moves_played(spec: str, state: tictactoe.State) -> set[int]:
    """Every cell ``spec`` plays in ``state`` over ``SEEDS``."""
    agent = agents.make("tictactoe", spec)
    return {int(agent.act(state, np.random.default_rng(seed))) for seed in SEEDS}


@pytest.mark.parametrize("spec", ["rules", "rules_center", "perfect"])
def test_win_before_block(spec: str) -> None:
    assert moves_played(spec, position("XX. OO. ...")) == {2}


@pytest.mark.parametrize("spec", ["rules", "rules_center"])
def test_the_first_winning_cell_in_scan_order(spec: str) -> None:
    assert moves_played(spec, position("X.X .O. XOO")) == {1}  # 1 and 3 both win


@pytest.mark.parametrize("spec", ["rules", "rules_center", "perfect"])
def test_block(spec: str) -> None:
    assert moves_played(spec, position("OO. .X. ...")) == {2}


@pytest.mark.parametrize("spec", ["rules", "rules_center"])
def test_cell_zero_counts_for_win_and_block(spec: str) -> None:
    assert moves_played(spec, position(".XX .O. O..")) == {0}  # win at 0
    assert moves_played(spec, position(".OO .X. X..")) == {0}  # block at 0


def test_rules_corner_then_centre_then_side() -> None:
    assert moves_played("rules", position("... ... ...")) == {0, 2, 6, 8}
    assert moves_played("rules", position("XOX ... OXO")) == {4}
    assert moves_played("rules", position("XOX .O. OXO")) == {3, 5}


def test_rules_center_centre_then_corner_then_side() -> None:
    assert moves_played("rules_center", position("... ... ...")) == {4}
    assert moves_played("rules_center", position("... .O. ...")) == {0, 2, 6, 8}
    assert moves_played("rules_center", position("XOX .O. OXO")) == {3, 5}


def test_perfect_answers_opposite_corners_with_a_side() -> None:
    """After X takes opposite corners around O's centre, a corner reply lets X fork."""
    assert moves_played("perfect", position("O.. .X. ..O")) == {1, 3, 5, 7}


def test_perfect_blocks_with_a_fork() -> None:
    """X must block O's diagonal at 2, which also threatens 1 and 5: O cannot stop both."""
    state = position("X.. .O. O.X")
    assert moves_played("perfect", state) == {2}
    forked = tictactoe.apply(state, 2)
    for reply in np.flatnonzero(tictactoe.legal_mask(forked)):
        after = tictactoe.apply(forked, int(reply))
        free = [cell for cell in (1, 5) if not (after.opp >> cell) & 1]
        assert any(tictactoe.has_line(after.me | (1 << cell)) for cell in free)


def test_perfect_prefers_the_fastest_win() -> None:
    """Taking 2 wins now; 4 also wins (threats at 2 and 7) but two moves later."""
    state = position("XX. O.. ..O")
    assert 0 < move_values(state.me, state.opp)[4] < move_values(state.me, state.opp)[2]
    assert moves_played("perfect", state) == {2}


def test_value_counts_the_empty_cells() -> None:
    assert value(0, 0) == 0  # perfect play draws
    lost = position("OOO XX. ...")  # X to move has lost; 4 cells empty
    assert value(int(lost.me), int(lost.opp)) == -(1 + 4)


def never_loses(perfect_side: int, state: tictactoe.State, seed: int) -> bool:
    """Whether ``perfect`` on ``perfect_side`` avoids losing against every possible reply."""
    if tictactoe.is_terminal(state):
        return tictactoe.result(state, perfect_side) != -1
    if state.to_move == perfect_side:
        move = agents.make("tictactoe", "perfect").act(state, np.random.default_rng(seed))
        return never_loses(perfect_side, tictactoe.apply(state, int(move)), seed)
    return all(never_loses(perfect_side, tictactoe.apply(state, int(move)), seed)
               for move in np.flatnonzero(tictactoe.legal_mask(state)))


@pytest.mark.parametrize("perfect_side", [0, 1])
def test_perfect_never_loses_against_any_sequence_of_replies(perfect_side: int) -> None:
    for seed in range(3):
        assert never_loses(perfect_side, tictactoe.initial_state(), seed)


@pytest.mark.parametrize("other", OTHERS)
def test_perfect_never_loses_a_thousand_games_first_and_second(other: str) -> None:
    """Perfect moves first in the even games and second in the odd ones."""
    players = agents.make("tictactoe", "perfect"), agents.make("tictactoe", other)
    for index in range(PERFECT_GAMES):
        rng, perfect_side = np.random.default_rng([1, index]), index % 2
        state = tictactoe.initial_state()
        while not tictactoe.is_terminal(state):
            player = players[0] if state.to_move == perfect_side else players[1]
            state = tictactoe.apply(state, player.act(state, rng))
        assert tictactoe.result(state, perfect_side) != -1


def test_names() -> None:
    assert agents.names("tictactoe") == ["alphabeta", "az", "mcts", "ntuple", "perfect", "random",
                                         "rules", "rules_center"]


def reference_rule(state: tictactoe.State, groups: tuple[tuple[int, ...], ...]) -> set[int]:
    """The classic rule AI, plainly: the first winning cell, else the first blocking cell,
    else the free cells of the first group with any."""
    free = [cell for cell in range(tictactoe.CELLS) if not ((state.me | state.opp) >> cell) & 1]
    for marks in (state.me, state.opp):
        wins = [cell for cell in free if tictactoe.has_line(marks | 1 << cell)]
        if wins:
            return {wins[0]}
    return next({cell for cell in group if cell in free} for group in groups
                if any(cell in free for cell in group))


CORNERS, CENTRE, SIDES = (0, 2, 6, 8), (4,), (1, 3, 5, 7)


@pytest.mark.parametrize(("spec", "groups"), [("rules", (CORNERS, CENTRE, SIDES)),
                                              ("rules_center", (CENTRE, CORNERS, SIDES))])
def test_rule_candidates_on_every_position(spec: str,
                                           groups: tuple[tuple[int, ...], ...]) -> None:
    state = random_batch(tictactoe, 2000, seed=4)
    candidates = candidate_sets("tictactoe", spec, state)
    live = np.flatnonzero(~np.asarray(tictactoe.is_terminal(state)))
    for i in live:
        expected = reference_rule(unbatch(state, int(i)), groups)
        assert {c for c in range(tictactoe.CELLS) if int(candidates[i]) >> c & 1} == expected
