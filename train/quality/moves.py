"""Move sets: positions labelled with the move a player chooses there, for pretraining where
no exact solver reaches (``boardgym positions GAME --player SPEC``).

Each line of a set is one JSON object ``{"position": TEXT, "move": ACTION, "result": R}``:
``TEXT`` is the game's position text (``rules.to_text``), ``ACTION`` the move the player
chose there, ``R`` the final result of the game the position came from, for its side to move
(+1 won, 0 drawn, -1 lost).

Game ``g`` of seed ``S`` draws everything from ``np.random.default_rng([S, g])``: a number of
uniformly random opening plies (uniform in ``0..OPENING_PLIES``), then the player chooses at
every ply (its tie-breaks from the same generator); each position and choice is a line, and
with probability ``EXPLORE`` a uniformly random legal move is played instead of the choice,
so the set also holds positions off the player's own lines. Positions seen earlier in the
set are skipped; a set's first ``n`` lines are the set made with ``--count n``, and
``--workers`` and ``--backend`` change nothing.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from boardgym import agents
from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Game, position_key
from boardgym.train.common.backends import Backend, connect, flat_map, task_ranges
from boardgym.train.common.commands import check_at_least
from boardgym.train.quality.agreement import open_text, read_items

T = TypeVar("T")

OPENING_PLIES = 10
"""The most uniformly random plies a game of a move set opens with."""
EXPLORE = 0.1
"""The chance that a move of a set's game is uniformly random instead of the player's."""


@dataclass(frozen=True)
class MoveLabel:
    """One position of a move set.

    Attributes:
        text: the position text (``rules.parse`` reads it).
        move: the action the player chose there.
        result: the final result of its game for the side to move (+1, 0, -1).
    """

    text: str
    move: int
    result: int

    def line(self) -> str:
        """The label as one JSON line (without the newline)."""
        return json.dumps({"position": self.text, "move": self.move, "result": self.result})


def first_distinct(items: Iterable[T | None], count: int, key: Callable[[T], str],
                   advance: Callable[[int], object] | None = None) -> list[T]:
    """The first ``count`` items of ``items`` whose ``key`` is new, in order (``None`` items
    skipped), calling ``advance(1)`` as each is kept; stops reading there (fewer when
    ``items`` ends first)."""
    kept: list[T] = []
    seen: set[str] = set()
    for item in items:
        if item is None or key(item) in seen:
            continue
        seen.add(key(item))
        kept.append(item)
        if advance is not None:
            advance(1)
        if len(kept) == count:
            break
    return kept


def is_move_set(path: str | Path) -> bool:
    """True when the first line of the JSONL file ``path`` (gzip-compressed when its name
    ends in ``.gz``) is a move label (``"move"``), False for an exactly labelled set
    (``"moves"``) or anything else."""
    with open_text(path) as source:
        first = source.readline()
    try:
        item = json.loads(first)
    except ValueError:
        return False
    return isinstance(item, dict) and "move" in item


def load_moves(path: str | Path, record: Game) -> list[MoveLabel]:
    """The move labels of a JSONL file, each checked: the position parses as ``record``'s
    game, is not over, the move is legal there and the result is -1, 0 or 1.

    Raises:
        ValueError: a missing or empty file, or a line that is not a move label of this game
            (the message names the line).
    """
    source = Path(path)

    def label(item: Any) -> MoveLabel:
        state = record.rules.parse(item["position"])
        move, result = int(item["move"]), int(item["result"])
        legal = record.rules.legal_mask(state)
        if record.rules.is_terminal(state) or not 0 <= move < len(legal) or not legal[move] \
                or result not in (-1, 0, 1):
            raise ValueError("an illegal move, a finished game or a result not in -1, 0, 1")
        return MoveLabel(item["position"], move, result)

    return read_items(source, label, f"a {record.name} move label",
                      f"no move set {str(source)!r}: make one with boardgym positions "
                      f"{record.name} --player SPEC --count N --out FILE")


@dataclass(frozen=True)
class _Games:
    """What every game of a move set shares (picklable for worker processes)."""

    game: str
    seed: int
    player: str

    def setup(self) -> Any:
        """The player (built once per worker)."""
        return agents.make(game_record(self.game), self.player)

    def play(self, player: Any, index: int) -> list[MoveLabel]:
        """The labels of game ``index`` in the order played (a function of
        ``(seed, index)``)."""
        rules = game_record(self.game).rules
        rng = np.random.default_rng([self.seed, index])
        state = rules.initial_state()
        opening = int(rng.integers(0, OPENING_PLIES + 1))
        chosen: list[tuple[str, int, int]] = []
        for ply in itertools.count():
            if rules.is_terminal(state):
                break
            legal = np.flatnonzero(rules.legal_mask(state))
            if ply >= opening:
                move = int(player.act(state, rng))
                chosen.append((position_key(rules, state), move, state.to_move))
                if rng.random() < EXPLORE:
                    move = int(legal[rng.integers(len(legal))])
            else:
                move = int(legal[rng.integers(len(legal))])
            state = rules.apply(state, move)
        results = [int(rules.result(state, side)) for side in (0, 1)]
        return [MoveLabel(text, move, results[side]) for text, move, side in chosen]

    def play_all(self, player: Any, indices: range) -> list[list[MoveLabel]]:
        """Games ``indices`` in order (one task of ``train.common.backends.flat_map``)."""
        return [self.play(player, index) for index in indices]


GAMES_PER_TASK = 2
"""Games handed to a worker process (or a Ray task) at a time."""


def move_lines(game: str, player: str, count: int, seed: int = 0, backend: Backend | None = None,
               advance: Callable[[int], object] | None = None) -> list[str]:
    """The first ``count`` distinct labels of a game's move set by ``player``, as JSON lines
    (see the module docstring).

    Args:
        game: a game name or alias.
        player: the player spec whose choices label the positions (``agents.make``).
        count: labels wanted, > 0.
        seed: the set's seed, >= 0.
        backend: where the games are played (default: in this process); same lines on any.
        advance: called with 1 each time a line is added.

    Raises:
        ValueError: an unknown game or player (or a checkpoint that cannot be loaded), a
            count or seed below its minimum, or a Ray backend that cannot start.
    """
    record = game_record(game)
    try:  # an unknown spec or a missing checkpoint fails here, before any worker starts
        agents.make(record, player)
    except FileNotFoundError as error:
        raise ValueError(str(error)) from None
    check_at_least(count=(count, 1), seed=(seed, 0))
    where = backend or Backend()
    connect(where)
    played = _Games(record.name, seed, player)
    games = flat_map(played.play_all, task_ranges(GAMES_PER_TASK, where), played.setup, where)
    with closing(games):
        labels = first_distinct(itertools.chain.from_iterable(games), count,
                                lambda label: label.text, advance)
    return [label.line() for label in labels]
