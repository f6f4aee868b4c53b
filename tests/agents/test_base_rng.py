"""Every candidate-move player (the book AIs and ``random`` of every game) refuses an
``rng`` that is not a numpy Generator with one clear error, before any move is made."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from boardgym import agents
from boardgym.agents.base import CandidatePlayer, check_rng
from boardgym.envs.games import GAMES, players


def is_candidate_player(game: str, spec: str) -> bool:
    """True when ``spec`` (without an argument) makes a ``CandidatePlayer`` of ``game``."""
    try:
        return isinstance(agents.make(game, spec), CandidatePlayer)
    except ValueError:  # a player that needs an argument (az:N@PATH, ...)
        return False


CANDIDATE_SPECS = [(name, spec) for name, record in GAMES.items()
                   for spec in players.entries(record) if is_candidate_player(name, spec)]


def test_there_are_candidate_players_in_every_game() -> None:
    assert {name for name, _ in CANDIDATE_SPECS} == set(GAMES)
    assert ("tictactoe", "rules") in CANDIDATE_SPECS


@pytest.mark.parametrize(("game", "spec"), CANDIDATE_SPECS)
@pytest.mark.parametrize("rng", [None, 0, np.random, np.random.RandomState(0)])
def test_act_without_a_generator_names_the_fix(game: str, spec: str, rng: Any) -> None:
    player = agents.make(game, spec)
    state = GAMES[game].rules.initial_state()
    with pytest.raises(ValueError, match=r"^rng must be a numpy Generator, e\.g\. "
                                         r"np\.random\.default_rng\(seed\); got "):
        player.act(state, rng)


@pytest.mark.parametrize(("game", "spec"), CANDIDATE_SPECS[:3])
def test_act_with_a_generator_plays_a_legal_move(game: str, spec: str) -> None:
    rules = GAMES[game].rules
    state = rules.initial_state()
    action = agents.make(game, spec).act(state, np.random.default_rng(0))
    assert rules.legal_mask(state)[action]


def test_check_rng_returns_the_generator() -> None:
    rng = np.random.default_rng(1)
    assert check_rng(rng) is rng


OTHER_PLAYERS = [("tictactoe", "alphabeta:2"), ("tictactoe", "mcts:10"),
                 ("four_in_a_row", "solver"), ("tictactoe", "shipped:tictactoe"),
                 ("tictactoe", "az:0@shipped:tictactoe_az")]
"""Players that are not candidate-move rules: search, the solver and the network players."""


@pytest.mark.parametrize(("game", "spec"), OTHER_PLAYERS)
def test_every_other_player_names_the_fix_too(game: str, spec: str) -> None:
    player = agents.make(game, spec)
    state = GAMES[game].rules.initial_state()
    with pytest.raises(ValueError, match=r"^rng must be a numpy Generator"):
        player.act(state, None)


@pytest.mark.parametrize("bits", [np.random.MT19937, np.random.PCG64, np.random.Philox])
def test_random_plays_every_legal_move_with_any_bit_generator(bits: Any) -> None:
    """Candidate players draw uniform 64-bit words whatever the bit generator (MT19937's
    raw words have 32 bits)."""
    rules = GAMES["reversi"].rules
    state = rules.initial_state()
    player = agents.make("reversi", "random")
    played = {player.act(state, np.random.Generator(bits(seed))) for seed in range(60)}
    assert played == set(np.flatnonzero(rules.legal_mask(state)).tolist())
