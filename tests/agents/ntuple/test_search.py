"""``ntuple:D@PATH`` with ``D >= 1``: the game's alpha-beta with the network at the leaves.

The reference is the generic ``agents.search.search`` over each game's heuristics with the
evaluation replaced by the network's leaf value, ``-value(opp, me, marks, net)`` computed by
the network's own ``values_batch``: the compiled searches must agree result for result
(move, value, depth, proof, positions visited) for the same seed, tie-breaks included.
Hand-set networks: random weights over random tuples (with stages), and coarse weights
(multiples of 1/8 over single cells) whose many equal values make the tie-breaks count.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from boardgym import agents
from boardgym.agents import four_in_a_row_search, four_in_a_row_strong, reversi_search
from boardgym.agents import reversi_strong as strong
from boardgym.agents.ntuple import checkpoint
from boardgym.agents.ntuple.model import NTupleNet, game_module
from boardgym.agents.ntuple.network import values_batch
from boardgym.agents.ntuple.player import NTupleSearch
from boardgym.agents.search import NO_NET, Heuristics, search
from boardgym.agents.solvers import reversi as solver
from boardgym.envs.games import four_in_a_row, players, reversi, tictactoe
from boardgym.envs.games.core import batch_of, join
from boardgym.envs.games.four_in_a_row_bits import board_words, landing
from tests.agents.test_act_many import assert_same_as_game_by_game
from tests.agents.test_mcts_compiled import random_positions

POSITIONS = 100
"""Random unfinished positions compared at each depth."""
DEPTHS = (1, 2, 3, 4)
FOUR_BOARDS = {"7x6": {}, "6x5": {"rows": 5, "columns": 6, "connect": 4}}
"""The four-in-a-row boards compared: the default one and another size."""
COARSE = 8
"""The coarse networks' weights are multiples of ``1 / COARSE``: exact sums, many ties."""


def random_net(game: str, env_kwargs: dict[str, Any], layout: str, values: int = 3,
               stages: int = 1, seed: int = 0) -> NTupleNet:
    """A network of ``layout`` with normal random weights (standard deviation 0.3)."""
    net = NTupleNet.from_layout(game, env_kwargs, layout, values, stages)
    net.weights[:] = np.random.default_rng(seed).normal(0, 0.3, net.weights.size)
    return net


def coarse_net(game: str, env_kwargs: dict[str, Any], values: int = 3,
               seed: int = 0) -> NTupleNet:
    """A network of one 1-tuple per cell (a weighted-square table, symmetric images
    sharing it) with weights in ``{-2, ..., 2} / COARSE``."""
    cells = game_module(game).board(env_kwargs).cells
    net = NTupleNet(game, dict(env_kwargs), [[cell] for cell in range(cells)], values)
    rng = np.random.default_rng(seed)
    net.weights[:] = rng.integers(-2, 3, net.weights.size) / COARSE
    return net


def leaf_evaluation(net: NTupleNet, marked: bool = False) -> Any:
    """The reference leaf value of a position for the side to move: minus the network's
    value for the side that just moved (four-in-a-row 4-value nets: the landing cells
    marked)."""

    def evaluate(state: Any) -> float:
        me, opp = np.uint64(int(state.me)), np.uint64(int(state.opp))
        marks = landing(me | opp, board_words(state.geom)) if marked else 0
        own, other, cells = (np.array([bits], dtype=np.uint64) for bits in (opp, me, marks))
        return -float(values_batch(own, other, cells, net.arrays)[0])

    return evaluate


def saved_player(tmp_path: Path, net: NTupleNet, depth: int, name: str = "net") -> Any:
    """The ``ntuple:depth@FILE`` player of ``net`` saved to a file."""
    path = tmp_path / f"{name}.zip"
    checkpoint.save(path, net)
    return agents.make(net.game, f"ntuple:{depth}@{path}")


@cache
def reversi_positions() -> tuple[Any, ...]:
    """``POSITIONS`` unfinished Reversi positions beyond the endgame solver's reach."""
    found = [state for state in random_positions(reversi, reversi.initial_state(),
                                                 3 * POSITIONS, seed=1)
             if strong.empties(state) > strong.ENDGAME_EMPTIES]
    return tuple(found[:POSITIONS])


@cache
def four_positions(board: str) -> tuple[Any, ...]:
    """``POSITIONS`` unfinished four-in-a-row positions of ``board``, some in the exact
    phase (``EXACT_EMPTIES`` empty cells or fewer)."""
    start = four_in_a_row.initial_state(**FOUR_BOARDS[board])
    return tuple(random_positions(four_in_a_row, start, POSITIONS, seed=len(board)))


@cache
def reversi_nets() -> tuple[NTupleNet, ...]:
    return (random_net("reversi", {}, "snakes:12:6:1", stages=3, seed=1),
            coarse_net("reversi", {}, seed=2))


@cache
def four_nets(board: str) -> tuple[NTupleNet, ...]:
    kwargs = FOUR_BOARDS[board]
    return (random_net("four_in_a_row", kwargs, "snakes:20:6:3", values=4, stages=2, seed=3),
            random_net("four_in_a_row", kwargs, "snakes:20:5:4", values=3, seed=4),
            coarse_net("four_in_a_row", kwargs, values=4, seed=5))


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("which", [0, 1], ids=["random", "coarse"])
def test_reversi_ntuple_search_is_alphabeta_over_the_network(which: int, depth: int) -> None:
    net = reversi_nets()[which]
    reference = replace(strong.HEURISTICS, evaluate=leaf_evaluation(net))
    module = game_module("reversi")
    for index, state in enumerate(reversi_positions()):
        expected = search(state, reference, depth, np.random.default_rng(index))
        actual = module.search(state, depth, np.random.default_rng(index), net)
        assert actual == expected, (reversi.to_text(state), depth)


def test_reversi_endgames_are_the_solver_s_whatever_the_network() -> None:
    endgames = [state for state in random_positions(reversi, reversi.initial_state(), 60,
                                                    seed=2)
                if strong.empties(state) <= strong.ENDGAME_EMPTIES][:6]
    assert len(endgames) == 6
    for index, state in enumerate(endgames):
        for depth in (1, 4):
            solver.TABLE.reset()  # the positions it visits depend on what it holds
            expected = reversi_search.search(state, depth, np.random.default_rng(index))
            solver.TABLE.reset()
            actual = game_module("reversi").search(state, depth, np.random.default_rng(index),
                                                   reversi_nets()[0])
            assert actual == expected and actual.exact


def test_reversi_players_play_the_searched_moves(tmp_path: Path) -> None:
    net = reversi_nets()[1]
    reference = replace(strong.HEURISTICS, evaluate=leaf_evaluation(net))
    for depth in (1, 3):
        player = saved_player(tmp_path, net, depth, f"d{depth}")
        assert isinstance(player, NTupleSearch)
        for index, state in enumerate(reversi_positions()[:20]):
            expected = search(state, reference, depth, np.random.default_rng(index)).move
            assert player.act(state, np.random.default_rng(index)) == expected


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("which", [0, 1, 2], ids=["values4", "values3", "coarse"])
@pytest.mark.parametrize("board", FOUR_BOARDS)
def test_four_in_a_row_ntuple_search_is_alphabeta_over_the_network(board: str, which: int,
                                                                    depth: int) -> None:
    net = four_nets(board)[which]
    reference = replace(four_in_a_row_strong.HEURISTICS,
                        evaluate=leaf_evaluation(net, marked=net.values == 4))
    module = game_module("four_in_a_row")
    positions = four_positions(board)
    assert any(four_in_a_row_strong.empties(state) <= four_in_a_row_search.EXACT_EMPTIES
               for state in positions)
    for index, state in enumerate(positions):
        expected = search(state, reference, depth, np.random.default_rng(index))
        actual = module.search(state, depth, np.random.default_rng(index), net)
        assert actual == expected, (four_in_a_row.to_text(state), depth)


@pytest.mark.parametrize(("depth", "count"), [(1, POSITIONS), (2, POSITIONS), (3, POSITIONS),
                                              (4, POSITIONS), (9, 15)])
def test_tictactoe_ntuple_search_is_alphabeta_over_the_network(tmp_path: Path, depth: int,
                                                               count: int) -> None:
    positions = random_positions(tictactoe, tictactoe.initial_state(), count, seed=depth)
    for net in (random_net("tictactoe", {}, "lines", stages=2, seed=6),
                coarse_net("tictactoe", {}, seed=7)):
        reference = Heuristics(rules=tictactoe, evaluate=leaf_evaluation(net))
        player = saved_player(tmp_path, net, depth)
        for index, state in enumerate(positions):
            expected = search(state, reference, depth, np.random.default_rng(index))
            actual = game_module("tictactoe").search(state, depth,
                                                     np.random.default_rng(index), net)
            assert actual == expected
            assert player.act(state, np.random.default_rng(index)) == expected.move


def _no_pass_no_tie(state: Any, greedy: Any) -> bool:
    """Reversi beyond the solver, no move making the opponent pass, one best afterstate."""
    if strong.empties(state) <= strong.ENDGAME_EMPTIES:
        return False
    if any(reversi.apply(state, move).to_move == state.to_move
           for move in np.flatnonzero(reversi.legal_mask(state)).tolist()):
        return False
    return int(greedy.candidates(batch_of(state))[0]).bit_count() == 1


@pytest.mark.parametrize("game", ["reversi", "four_in_a_row"])
def test_ntuple_1_plays_ntuple_0_s_move_without_ties_or_passes(tmp_path: Path,
                                                                game: str) -> None:
    net = reversi_nets()[0] if game == "reversi" else four_nets("7x6")[0]
    greedy, searcher = saved_player(tmp_path, net, 0), saved_player(tmp_path, net, 1)
    if game == "reversi":
        positions = [s for s in reversi_positions() if _no_pass_no_tie(s, greedy)]
    else:
        positions = [s for s in four_positions("7x6")
                     if four_in_a_row_strong.empties(s) > four_in_a_row_search.EXACT_EMPTIES
                     and int(greedy.candidates(batch_of(s))[0]).bit_count() == 1]
    assert len(positions) >= POSITIONS // 3
    for index, state in enumerate(positions):
        assert (searcher.act(state, np.random.default_rng(index))
                == greedy.act(state, np.random.default_rng(index)))


def test_net_and_heuristic_searches_share_the_table_without_mixing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each search takes a new generation of the process's table: heuristic and network
    searches in turn on one table are the searches of fresh tables."""
    net, rng = reversi_nets()[0], np.random.default_rng
    for index, state in enumerate(reversi_positions()[:10]):
        fresh = []
        for arrays in (NO_NET, net.arrays):
            monkeypatch.setattr(reversi_search, "TABLE", reversi_search.Table())
            fresh.append(reversi_search.search(state, 3, rng(index), arrays))
        assert fresh[0] != fresh[1]
        for arrays, expected in [(NO_NET, fresh[0]), (net.arrays, fresh[1])] * 2:
            assert reversi_search.search(state, 3, rng(index), arrays) == expected
    four, table = four_nets("7x6")[0], four_in_a_row_search.Table()
    for index, state in enumerate(four_positions("7x6")[:10]):
        fresh = [four_in_a_row_search.search(state, 4, rng(index), net=arrays,
                                             table=four_in_a_row_search.Table())
                 for arrays in (NO_NET, four.arrays)]
        for arrays, expected in [(NO_NET, fresh[0]),
                                 (four.arrays, fresh[1])] * 2:
            assert four_in_a_row_search.search(state, 4, rng(index), table=table,
                                               net=arrays) == expected


@pytest.mark.parametrize("depth", [1, 3])
def test_reversi_batches_play_the_games_one_by_one(tmp_path: Path, depth: int) -> None:
    player = saved_player(tmp_path, reversi_nets()[1], depth)
    positions = random_positions(reversi, reversi.initial_state(), 60, seed=depth)
    assert_same_as_game_by_game(player, positions, depth)


@pytest.mark.parametrize("board", FOUR_BOARDS)
def test_four_in_a_row_batches_play_the_games_one_by_one(tmp_path: Path, board: str) -> None:
    player = saved_player(tmp_path, four_nets(board)[2], 4)
    assert_same_as_game_by_game(player, list(four_positions(board)[:60]), 4)


def test_tictactoe_searches_move_game_by_game(tmp_path: Path) -> None:
    player = saved_player(tmp_path, coarse_net("tictactoe", {}), 2)
    assert not players.plays_many(player)
    batch = join([batch_of(state) for state in
                  random_positions(tictactoe, tictactoe.initial_state(), 5, seed=0)])
    rngs = [np.random.default_rng(k) for k in range(5)]
    assert players.act_each(player, batch, rngs).shape == (5,)


RULES = {"reversi": reversi, "four_in_a_row": four_in_a_row, "tictactoe": tictactoe}


@pytest.mark.parametrize("game", RULES)
def test_a_finished_game_is_refused(tmp_path: Path, game: str) -> None:
    rules, player = RULES[game], saved_player(tmp_path, coarse_net(game, {}), 2)
    state = rules.initial_state()
    while not rules.is_terminal(state):
        state = rules.apply(state, int(np.flatnonzero(rules.legal_mask(state))[0]))
    with pytest.raises(ValueError, match="finished game"):
        player.act(state, np.random.default_rng(0))


def test_the_value_at_depth_1_is_the_network_s_for_the_mover() -> None:
    """At depth 1 the root value is the network's value of the chosen afterstate for the
    side that made it (when the opponent does not pass)."""
    net, checked = reversi_nets()[0], 0
    for index, state in enumerate(reversi_positions()):
        result = game_module("reversi").search(state, 1, np.random.default_rng(index), net)
        child = reversi.apply(state, result.move)
        if child.to_move != state.to_move:
            own = np.array([child.opp], dtype=np.uint64)
            other = np.array([child.me], dtype=np.uint64)
            assert result.value == values_batch(own, other, np.zeros(1, dtype=np.uint64),
                                                net.arrays)[0]
            checked += 1
    assert checked > POSITIONS // 2
