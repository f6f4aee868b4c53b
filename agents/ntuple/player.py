"""The ``ntuple:D@PATH`` players: an n-tuple network's value, with or without a search.

- ``D = 0``: the move whose afterstate the network values best (a finished game's result
  beats any value), ties drawn uniformly with one draw, as every candidate-move rule
  (``agents.base``): a single-game player and its batched twin, one compiled loop a batch.
- ``D >= 1``: the game's alpha-beta search of depth ``D`` with the network's value at the
  leaves (the value for the side to move: minus the value of the position for the side
  that just moved) and the exact endgame where the search has one (``search`` of the
  game's n-tuple module); Reversi's and four-in-a-row's play a batch of games in one
  compiled loop (``act_many``).

Networks are read once per process (by file identity), never unpickled, and without torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from typing import Any

import numpy as np

from boardgym.agents import shipped
from boardgym.agents.base import BatchedCandidatePlayer, CandidatePlayer, check_rng
from boardgym.agents.checkpoint import CheckpointError, initial_state
from boardgym.agents.ntuple.checkpoint import load as load_network
from boardgym.agents.ntuple.model import NTupleNet, game_module
from boardgym.envs.games import canonical_name
from boardgym.envs.games.core import Game

NAME = "ntuple"
SEPARATOR = "@"
EXAMPLE = "ntuple:0@shipped:reversi_ntuple"
MAX_DEPTH = 10
"""The deepest ``ntuple:D`` search: a few seconds a Reversi move in the middle game."""
LOADED_NETWORKS = 16


def parse_spec(arg: str | None) -> tuple[int, str]:
    """``(depth, path)`` of the text after ``ntuple:`` (``"4@runs/x/best.zip"``).

    Raises:
        ValueError: not ``D@PATH`` with ``0 <= D <= MAX_DEPTH``.
    """
    depth, separator, path = (arg or "").partition(SEPARATOR)
    if not separator or not depth.isdecimal() or not path:
        raise ValueError(f"ntuple takes DEPTH@CHECKPOINT, e.g. {EXAMPLE} (depth 0: no "
                         f"search); got ntuple:{arg or ''}")
    if int(depth) > MAX_DEPTH:
        raise ValueError(f"ntuple:{depth}@... is over the maximum depth of {MAX_DEPTH} plies; "
                         f"use ntuple:{MAX_DEPTH}@{path} or less")
    return int(depth), path


def load(path: str, game: str) -> NTupleNet:
    """The network of the n-tuple checkpoint at ``path`` (or ``shipped:NAME``) for ``game``,
    the same object for the same unchanged file within a process.

    Raises:
        FileNotFoundError: no file there.
        CheckpointError: not an n-tuple checkpoint of ``game``.
    """
    try:
        file = shipped.resolve(path)
        stat = file.stat()
    except OSError:
        return load_network(path, game)  # raises, clearly
    return _cached(str(file.resolve()), stat.st_size, stat.st_mtime_ns, path,
                   canonical_name(game))


@lru_cache(maxsize=LOADED_NETWORKS)
def _cached(resolved: str, size: int, modified_ns: int, path: str, game: str) -> NTupleNet:
    return load_network(path, game)


class _Fitted:
    """What both n-tuple players share: the network, its label, the board check."""

    def __init__(self, net: NTupleNet, label: str) -> None:
        self.net = net
        self.name = label
        self.board = initial_state(net.game, net.env_kwargs)

    def check_board(self, state: Any) -> None:
        """Raise a CheckpointError when ``state``'s board is not the network's."""
        if getattr(state, "geom", None) != getattr(self.board, "geom", None):
            raise CheckpointError(f"{self.name} was trained on a {self.net.game} board with "
                                  f"{self.net.env_kwargs or 'the default size'}; play it on "
                                  "that board or train one for this board")


class NTupleGreedy(_Fitted, CandidatePlayer):
    """``ntuple:0@PATH``: a uniformly drawn move among the best afterstates."""

    def __init__(self, net: NTupleNet, label: str) -> None:
        _Fitted.__init__(self, net, label)
        module = game_module(net.game)
        CandidatePlayer.__init__(self, label, lambda state: module.candidates(net.arrays,
                                                                             state))

    def __repr__(self) -> str:
        return f"NTupleGreedy({self.name!r})"


class NTupleSearch(_Fitted):
    """``ntuple:D@PATH`` with ``D >= 1``: the game's alpha-beta over the network.

    Where the game's module has a compiled batch search (``search_many``: Reversi and
    four-in-a-row), the player offers ``act_many`` (``players.act_each``): ``act`` in each
    game of a batch in one compiled loop; elsewhere (tic-tac-toe) it has none.
    """

    def __init__(self, net: NTupleNet, label: str, depth: int) -> None:
        super().__init__(net, label)
        self.depth = depth
        self.spec = label

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """The search's move in ``state`` (its root order drawn from ``rng``).

        Raises:
            ValueError: ``rng`` is not a numpy Generator, or the game is over.
        """
        check_rng(rng)
        return int(game_module(self.net.game).search(state, self.depth, rng, self.net).move)

    @property
    def act_many(self) -> Callable[[Any, Sequence[np.random.Generator]], np.ndarray]:
        """``act`` in each game ``k`` of the batched ``state`` with ``rngs[k]``, as
        ``act_many(state, rngs)``: the moves and generator states of that game-by-game loop,
        in compiled loops (the game module's ``search_many``).

        Raises:
            AttributeError: the game has no batch search (so ``hasattr`` is False).
        """
        many = getattr(game_module(self.net.game), "search_many", None)
        if many is None:
            raise AttributeError(f"{self.name} has no batch search: it moves game by game")
        return partial(self._search_many, many)

    def _search_many(self, many: Callable[..., np.ndarray], state: Any,
                     rngs: Sequence[np.random.Generator]) -> np.ndarray:
        return np.asarray(many(state, self.depth, rngs, self.net), dtype=np.int64)

    def __repr__(self) -> str:
        return f"NTupleSearch({self.name!r})"


def ntuple_player(record: Game, arg: str | None) -> NTupleGreedy | NTupleSearch:
    """The factory of ``ntuple:D@PATH`` specs (``players.register``)."""
    depth, path = parse_spec(arg)
    net = load(path, record.name)
    label = f"{NAME}:{depth}{SEPARATOR}{path}"
    return NTupleGreedy(net, label) if depth == 0 else NTupleSearch(net, label, depth)


def ntuple_batched(record: Game, arg: str | None) -> BatchedCandidatePlayer | None:
    """The batched twin of ``ntuple:0@PATH`` (None for searches: the vector env moves them
    with ``act_many`` where the game has one, game by game otherwise)."""
    if arg is None:
        return None
    player = ntuple_player(record, arg)
    if not isinstance(player, NTupleGreedy):
        return None
    return BatchedCandidatePlayer(player.name, player.candidates)


__all__ = ["MAX_DEPTH", "NTupleGreedy", "NTupleSearch", "load", "ntuple_batched",
           "ntuple_player", "parse_spec"]
