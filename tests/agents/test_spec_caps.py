"""Search sizes of player specs stop where a move would take minutes: the maximum of each
is accepted, one more is refused in one line naming it."""

from __future__ import annotations

import pytest

from boardgym import agents
from boardgym.agents.az.player import MAX_SIMULATIONS
from boardgym.agents.four_in_a_row import MAX_LOOKAHEAD
from boardgym.agents.four_in_a_row_strong import MAX_DEPTH as FOUR_MAX_DEPTH
from boardgym.agents.reversi_strong import MAX_DEPTH as REVERSI_MAX_DEPTH
from boardgym.agents.search import GENERIC_MAX_DEPTH, MAX_PLAYOUTS
from tests.commands import usage_error

CAPS = [("four_in_a_row", "lookahead", MAX_LOOKAHEAD),
        ("reversi", "alphabeta", REVERSI_MAX_DEPTH),
        ("four_in_a_row", "alphabeta", FOUR_MAX_DEPTH),
        ("tictactoe", "alphabeta", GENERIC_MAX_DEPTH),
        ("reversi", "mcts", MAX_PLAYOUTS)]


@pytest.mark.parametrize(("game", "name", "maximum"), CAPS)
def test_search_depth_caps(game: str, name: str, maximum: int) -> None:
    agents.make(game, f"{name}:{maximum}")  # built, not played
    with pytest.raises(ValueError, match=f"{name}:{maximum + 1} is over the maximum "
                                         f"{name}:{maximum}") as error:
        agents.make(game, f"{name}:{maximum + 1}")
    assert "\n" not in str(error.value)


def test_az_simulations_cap() -> None:
    with pytest.raises(ValueError, match=f"maximum of {MAX_SIMULATIONS} simulations"):
        agents.make("tictactoe", f"az:{MAX_SIMULATIONS + 1}@shipped:tictactoe_az")


@pytest.mark.parametrize("spec", ["lookahead:99", "alphabeta:100", "mcts:1000000000"])
def test_commands_refuse_a_huge_search_in_one_line(spec: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert "is over the maximum" in usage_error(["evaluate", "four_in_a_row", spec, "random"],
                                                capsys)
