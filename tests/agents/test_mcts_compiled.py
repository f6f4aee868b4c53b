"""The compiled ``mcts:N`` of the built-in games against the Python ``MCTSAgent`` (the
reference): the same move for the same seed on many positions, the generator left in the
same state, and the kernel's draws equal to numpy's own."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from boardgym import agents
from boardgym.agents.mcts import CompiledMCTSAgent, below, shuffled, uint32_handles
from boardgym.agents.search import MAX_PLAYOUTS, MCTSAgent
from boardgym.envs.games import GAMES, four_in_a_row

BIT_GENERATORS = [np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64]
GAME_NAMES = ["reversi", "four_in_a_row", "tictactoe"]
HIGH_BIT = 1 << 63


def random_positions(rules: Any, start: Any, count: int, seed: int) -> list[Any]:
    """``count`` unfinished positions of uniformly random games from ``start``, one a game,
    after a random number of plies."""
    rng = np.random.default_rng(seed)
    positions: list[Any] = []
    while len(positions) < count:
        state, line = start, []
        while not rules.is_terminal(state):
            line.append(state)
            state = rules.apply(state, int(rng.choice(np.flatnonzero(rules.legal_mask(state)))))
        positions.append(line[int(rng.integers(len(line)))])
    return positions


def same_state(a: np.random.Generator, b: np.random.Generator) -> bool:
    """True when the two generators' bit generators are in the same state (buffered words
    included)."""
    def flat(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: flat(item) for key, item in value.items()}
        return value.tolist() if isinstance(value, np.ndarray) else value
    return bool(flat(a.bit_generator.state) == flat(b.bit_generator.state))


def assert_same_moves(record: Any, positions: list[Any], playouts: int, seed: int,
                      bits: Any = np.random.PCG64) -> None:
    """Both players choose the same move in each position from generators of the same seed,
    and leave the generators in the same state."""
    python, compiled = MCTSAgent(record.rules, playouts), CompiledMCTSAgent(record, playouts)
    for k, state in enumerate(positions):
        expected_rng = np.random.Generator(bits(seed + k))
        actual_rng = np.random.Generator(bits(seed + k))
        assert compiled.act(state, actual_rng) == python.act(state, expected_rng), k
        assert same_state(actual_rng, expected_rng), k


@pytest.mark.parametrize("name", GAME_NAMES)
def test_the_same_moves_as_the_python_search_at_50_playouts(name: str) -> None:
    record = GAMES[name]
    positions = random_positions(record.rules, record.rules.initial_state(), 100, seed=1)
    assert_same_moves(record, positions, 50, seed=100)


def test_the_same_reversi_moves_at_200_playouts_with_the_corner_bit_63() -> None:
    record = GAMES["reversi"]
    positions = random_positions(record.rules, record.rules.initial_state(), 20, seed=2)
    assert any((p.me | p.opp) & HIGH_BIT for p in positions)
    assert_same_moves(record, positions, 200, seed=200)


def test_the_same_moves_on_another_four_in_a_row_board() -> None:
    record = GAMES["four_in_a_row"]
    start = four_in_a_row.initial_state(rows=7, columns=8, connect=5)
    assert_same_moves(record, random_positions(record.rules, start, 25, seed=3), 40, seed=300)


@pytest.mark.parametrize("bits", BIT_GENERATORS[1:])
def test_the_same_moves_with_other_bit_generators(bits: Any) -> None:
    for name in GAME_NAMES:
        record = GAMES[name]
        positions = random_positions(record.rules, record.rules.initial_state(), 5, seed=4)
        assert_same_moves(record, positions, 30, seed=400, bits=bits)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_a_whole_game_on_one_generator_agrees_move_for_move(name: str) -> None:
    """The generator's state after each move is the Python player's, so later moves agree."""
    record = GAMES[name]
    rules, playouts = record.rules, 8 if name == "reversi" else 20
    games = []
    for player in (MCTSAgent(rules, playouts), CompiledMCTSAgent(record, playouts)):
        rng, state, moves = np.random.default_rng(5), rules.initial_state(), []
        while not rules.is_terminal(state):
            moves.append(player.act(state, rng))
            state = rules.apply(state, moves[-1])
        games.append((moves, rng.random()))
    assert games[0] == games[1]


@pytest.mark.parametrize("bits", BIT_GENERATORS)
def test_below_is_numpys_choice(bits: Any) -> None:
    for seed in range(40):
        expected, actual = np.random.Generator(bits(seed)), np.random.Generator(bits(seed))
        handles = uint32_handles(actual)
        for n in [*range(1, 70), 1000, 2**31 + 7, 2**32 - 1]:
            assert below(n, *handles) == expected.choice(n), (seed, n)
        assert same_state(actual, expected)


@pytest.mark.parametrize("bits", BIT_GENERATORS)
def test_shuffled_is_numpys_permutation(bits: Any) -> None:
    words = np.random.default_rng(6).integers(0, 2**64, size=60, dtype=np.uint64)
    for seed, word in enumerate([0, 1, HIGH_BIT, 2**64 - 1, *map(int, words)]):
        expected, actual = np.random.Generator(bits(seed)), np.random.Generator(bits(seed))
        moves = np.flatnonzero([(word >> i) & 1 for i in range(64)])
        got = shuffled(np.uint64(word), *uint32_handles(actual))
        assert got.tolist() == expected.permutation(moves).tolist(), seed
        assert same_state(actual, expected)


def test_rollout_draws_are_uniform() -> None:
    """A chi-squared check of ``below`` over 7 outcomes (the test fails about once in 10^6)."""
    handles = uint32_handles(np.random.default_rng(7))
    counts = np.bincount([below(7, *handles) for _ in range(70_000)], minlength=7)
    assert ((counts - 10_000) ** 2 / 10_000).sum() < 35.0


@pytest.mark.parametrize("name", GAME_NAMES)
def test_the_built_in_games_play_the_compiled_search(name: str) -> None:
    player = agents.make(name, "mcts")
    assert isinstance(player, CompiledMCTSAgent)
    assert player.playouts == 800
    assert agents.make(name, f"mcts:{MAX_PLAYOUTS}").playouts == MAX_PLAYOUTS  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=rf"^mcts:{MAX_PLAYOUTS + 1} is over the maximum"):
        agents.make(name, f"mcts:{MAX_PLAYOUTS + 1}")


@pytest.mark.parametrize("name", GAME_NAMES)
def test_a_finished_game_and_a_bad_rng_are_refused(name: str) -> None:
    rules = GAMES[name].rules
    player, state = CompiledMCTSAgent(GAMES[name], 10), rules.initial_state()
    while not rules.is_terminal(state):
        state = rules.apply(state, int(np.flatnonzero(rules.legal_mask(state))[0]))
    with pytest.raises(ValueError, match=r"^cannot search a finished game"):
        player.act(state, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^rng must be a numpy Generator"):
        player.act(rules.initial_state(), 0)  # type: ignore[arg-type]
