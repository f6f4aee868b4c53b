"""``bench.search``: the players it times search in compiled code where they have it."""

from __future__ import annotations

import numpy as np
import pytest

from boardgym import agents
from boardgym.agents.search import search as python_search
from boardgym.bench.search import middle_games, searched


@pytest.mark.parametrize(("game", "spec"), [("reversi", "alphabeta:2"),
                                            ("four_in_a_row", "alphabeta:3")])
def test_the_timed_search_is_the_players_own_with_the_python_searchs_result(
        game: str, spec: str) -> None:
    player = agents.make(game, spec)
    assert hasattr(player, "search"), "the bench would time the Python search instead"
    for state in middle_games(game, 3):
        result = searched(player, state, np.random.default_rng(0))
        assert result == python_search(state, player.heuristics, player.depth,
                                       np.random.default_rng(0))
