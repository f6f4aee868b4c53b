"""What the classic players share: a rule is a *candidate-move set*, played once per game or
batched.

Every classic AI (Reversi's ``corner_best``, four-in-a-row's ``lookahead:N``, tic-tac-toe's
``rules``, ``random`` everywhere) picks uniformly among a set of moves it deems best: the
books' programs shuffle the legal moves and take the first best one. So each AI is written
once, as a ``Candidates`` function: a batched rules state -> a ``uint64`` bitmask per game of
the moves it may play (bit ``a`` = action ``a``). From it come both players:

- the single-game player (``CandidatePlayer``) runs the function on the batch of one game
  (``core.batch_of``) and picks with one ``uint64`` draw from ``rng`` (a numpy
  ``Generator``; anything else is refused by ``check_rng``, the one check every player's
  ``act`` can share);
- the batched twin (``BatchedCandidatePlayer``) runs it on N games and picks with the draws
  the vector env hands it.

Both pick with ``bitboard.choose``, so game ``i`` of a batch and the same game alone, given
the same draw, play the same move.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from boardgym.envs.games import players
from boardgym.envs.games.bitboard import choose, random_draws
from boardgym.envs.games.core import Game, batch_of
from boardgym.envs.games.players import Agent

Candidates = Callable[[Any], np.ndarray]
"""Batched state -> ``uint64`` bitmask per game of the moves the player may choose; 0 for a
finished game."""
CandidatesFactory = Callable[[Game, "str | None"], Candidates]
"""Builds a game's ``Candidates`` from the text after ``:`` in a spec (None when absent).
Raises ``ValueError`` for a bad argument."""


def check_rng(rng: Any) -> np.random.Generator:
    """``rng`` if it is a ``numpy.random.Generator``: what every player's ``act(state, rng)``
    draws from (the one check of it, for every player built here).

    Raises:
        ValueError: anything else (None, a seed, the legacy ``np.random`` module or a
            ``RandomState``), naming the fix.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, e.g. np.random.default_rng(seed); "
                         f"got {rng!r}")
    return rng


def spec_of(name: str, arg: str | None) -> str:
    """The spec text ``name`` or ``name:arg``."""
    return name if arg is None else f"{name}:{arg}"


class CandidatePlayer:
    """A single-game player: a uniformly random move among its candidates.

    Args:
        spec: the player's spec, as shown (``"lookahead:2"``).
        candidates: the candidate-move set function.
        scalar: ``candidates`` also takes a single state (its bit logic serves Python ints),
            so a move needs no batch of one (the fast path of cheap rules like ``random``).
    """

    def __init__(self, spec: str, candidates: Candidates, scalar: bool = False) -> None:
        self.spec = spec
        self.candidates = candidates
        self.scalar = scalar

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """One of the candidate moves in ``state``, chosen with one uniform draw from ``rng``.

        Raises:
            ValueError: ``rng`` is not a numpy Generator (``check_rng``), or the game is over
                (no candidate).
        """
        if type(rng) is not np.random.Generator:
            check_rng(rng)
        candidates = int(self.candidates(state)) if self.scalar else \
            int(self.candidates(batch_of(state))[0])
        if not candidates:
            raise ValueError("no legal move: the game is over")
        return int(choose(candidates, random_draws(rng)))

    def __repr__(self) -> str:
        return f"CandidatePlayer({self.spec!r})"


class BatchedCandidatePlayer:
    """The batched twin of a ``CandidatePlayer``: one move per game of a batch.

    Args:
        spec: the player's spec, as shown.
        candidates: the candidate-move set function.
    """

    def __init__(self, spec: str, candidates: Candidates) -> None:
        self.spec = spec
        self.candidates = candidates

    def act(self, state: Any, draws: np.ndarray) -> np.ndarray:
        """One candidate move per game of the batched ``state``, game ``i`` chosen by the
        uniform ``uint64`` word ``draws[i]`` (``bitboard.choose``; action 0 where a game is
        over)."""
        return choose(self.candidates(state), draws)

    def __repr__(self) -> str:
        return f"BatchedCandidatePlayer({self.spec!r})"


def register_candidates(game: str | None, name: str, candidates_for: CandidatesFactory,
                        help: str, scalar: bool = False) -> None:
    """Register the player ``name`` of ``game`` (None: every game) and its batched twin, both
    built from one ``CandidatesFactory`` (``scalar``: see ``CandidatePlayer``)."""

    def single(record: Game, arg: str | None) -> Agent:
        return CandidatePlayer(spec_of(name, arg), candidates_for(record, arg), scalar)

    def batched(record: Game, arg: str | None) -> BatchedCandidatePlayer:
        return BatchedCandidatePlayer(spec_of(name, arg), candidates_for(record, arg))

    players.register(game, name, single, batched=batched, help=help)


def no_argument(name: str, candidates: Candidates) -> CandidatesFactory:
    """The ``CandidatesFactory`` of a player that takes no ``:argument``."""

    def factory(record: Game, arg: str | None) -> Candidates:
        if arg is not None:
            raise ValueError(f"player {name!r} takes no argument; write {name!r}, not "
                             f"{spec_of(name, arg)!r}")
        return candidates

    return factory


def positive_int(text: str | None, name: str, default: int) -> int:
    """The integer argument of a spec like ``alphabeta:4`` (``default`` when absent).

    Raises:
        ValueError: not a positive integer; the message shows a valid spec.
    """
    if text is None:
        return default
    value = int(text) if text.isdecimal() else 0
    if value < 1:
        raise ValueError(f"{name} takes a positive integer, e.g. {name}:{default}; "
                         f"got {spec_of(name, text)}")
    return value


__all__ = ["Agent", "BatchedCandidatePlayer", "CandidatePlayer", "Candidates",
           "CandidatesFactory", "check_rng", "no_argument", "positive_int",
           "register_candidates", "spec_of"]
