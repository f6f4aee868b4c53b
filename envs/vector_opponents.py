"""The vector env's opponents: one per sub-env (a spec, a list, or a sampler), grouped.

``opponent=`` is one spec for every sub-env (a built-in player name, an ``Agent`` or a
checkpoint path), a list of N of them, or a sampler ``sampler(rng) -> spec`` called for a
sub-env each time a new game starts there, with that sub-env's generator (the rule is in
``envs.vector``'s module docstring). ``Opponents`` keeps one player per distinct spec (a
group): a spec with a batched twin (``players.make_batched``) moves for its whole group at
once, any other player moves game by game, each game drawing from its sub-env's generator
(in one call where the player offers ``act_many``: ``players.act_each``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from boardgym.envs.games import players
from boardgym.envs.games.core import Game, take
from boardgym.envs.settings import is_named_player
from boardgym.envs.vector_streams import SubEnvStreams

Sampler = Callable[[np.random.Generator], Any]
"""``sampler(rng) -> spec``: a sub-env's opponent for its next game."""


def is_spec(value: Any) -> bool:
    """A single opponent: a spec string or an ``Agent``."""
    return isinstance(value, (str, players.Agent))


def opponent_plan(record: Game, opponent: Any, n: int) -> tuple[list[Any], Sampler | None]:
    """``opponent`` as N specs, or ``([], sampler)``.

    Raises:
        ValueError: a list of the wrong length, or something that is neither a spec, an
            ``Agent``, a list of them nor a sampler.
    """
    if opponent is None:
        return [record.default_opponent] * n, None
    if is_spec(opponent):
        return [opponent] * n, None
    if isinstance(opponent, (list, tuple)):
        if len(opponent) != n or not all(is_spec(o) for o in opponent):
            raise ValueError(f"opponent as a list needs {n} specs or Agents (one per "
                             f"sub-env); got {len(opponent)} items")
        return list(opponent), None
    if callable(opponent):
        return [], opponent
    raise ValueError(f"opponent must be a spec string, an Agent, a list of {n} of them, or a "
                     f"sampler(rng) -> spec; got {opponent!r}")


class Opponent:
    """One opponent of a group of sub-envs: a batched player, or a single player run game by
    game (each game drawing from its sub-env's generator).

    Raises:
        ValueError: the player registry does not know ``spec`` (from ``players.make``).
    """

    def __init__(self, record: Game, spec: Any, options: dict[str, Any]) -> None:
        self.record, self.spec, self.options = record, spec, options
        self._make()
        if self.single is not None and not players.plays_many(self.single):
            gym.logger.warn(
                f"opponent {spec!r} has no batched version; it runs game by game (slow). "
                f"Batched opponents: {players.batched_names(record)}")

    def _make(self) -> None:
        self.batched = players.make_batched(self.record, self.spec, self.options)
        self.single = None if self.batched is not None else \
            players.make(self.record, self.spec, self.options)

    def __getstate__(self) -> dict[str, Any]:
        """A named opponent is kept as its spec (see ``settings.is_named_player``)."""
        if is_named_player(self.record, self.spec):
            return {"record": self.record, "spec": self.spec, "options": self.options}
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "batched" not in state:
            self._make()

    def moves(self, part: Any, index: np.ndarray, streams: SubEnvStreams) -> np.ndarray:
        """The move in each game of the sub-batch ``part`` (sub-envs ``index``): batched,
        from the sub-envs' streams, or game by game, from their generators."""
        if self.batched is not None:
            return np.asarray(self.batched.act(part, streams.draws(index)))
        assert self.single is not None
        return players.act_each(self.single, part, [streams.rng(i) for i in index])


class Opponents:
    """The opponent of each of N sub-envs, one ``Opponent`` per distinct spec.

    Args:
        record: the game.
        opponent: one spec or ``Agent`` (None: the game's default), a list of N, or a
            sampler (see the module docstring).
        n: the number of sub-envs.
        options: the board options the players are made for.

    Raises:
        ValueError: a bad ``opponent`` (see ``opponent_plan``), or a spec the player registry
            does not know.
    """

    def __init__(self, record: Game, opponent: Any, n: int, options: dict[str, Any]) -> None:
        self.record, self.options = record, options
        specs, self.sampler = opponent_plan(record, opponent, n)
        self._groups: list[Opponent] = []
        self._assignment = np.zeros(n, dtype=np.intp)
        """The index in ``_groups`` of each sub-env's opponent."""
        self._only: Opponent | None = None
        """The opponent of every sub-env, when they all have the same one."""
        if specs:
            self._assign(np.arange(n), specs)

    @property
    def specs(self) -> list[Any]:
        """Each sub-env's current opponent spec (or ``Agent``); empty before a sampler's
        first draw."""
        return [self._groups[g].spec for g in self._assignment] if self._groups else []

    @property
    def batched_only(self) -> Any:
        """The batched player of every sub-env, when they all have the same opponent and it
        has a batched twin; else None."""
        return None if self._only is None else self._only.batched

    def draw(self, index: np.ndarray, streams: SubEnvStreams) -> None:
        """New games start in sub-envs ``index``: with a sampler, each draws its opponent
        from its generator (nothing changes without one)."""
        if self.sampler is not None:
            self._assign(index, [self.sampler(streams.rng(i)) for i in index])

    def looped(self, index: np.ndarray) -> np.ndarray:
        """Whether each sub-env in ``index`` plays an opponent without a batched twin."""
        if self._only is not None:
            return np.full(len(index), self._only.batched is None)
        return np.array([self._groups[g].batched is None for g in self._assignment[index]],
                        dtype=bool)

    def moves(self, part: Any, index: np.ndarray, streams: SubEnvStreams) -> np.ndarray:
        """Each sub-env's opponent's move in the games of ``part`` (sub-envs ``index``)."""
        if self._only is not None:
            return self._only.moves(part, index, streams)
        groups = self._assignment[index]
        moves = np.empty(len(index), dtype=np.int64)
        for number in np.unique(groups):
            chosen = groups == number
            moves[chosen] = self._groups[number].moves(take(part, chosen), index[chosen],
                                                       streams)
        return moves

    def _group(self, spec: Any) -> int:
        """The index in ``_groups`` of the opponent ``spec`` (made on first use)."""
        for number, group in enumerate(self._groups):
            if group.spec is spec or (isinstance(spec, str) and group.spec == spec):
                return number
        self._groups.append(Opponent(self.record, spec, self.options))
        return len(self._groups) - 1

    def _assign(self, index: np.ndarray, specs: Sequence[Any]) -> None:
        """Sub-envs ``index`` play against ``specs`` (one each) from now on."""
        self._assignment[index] = [self._group(spec) for spec in specs]
        first = self._assignment[0]
        self._only = self._groups[first] if (self._assignment == first).all() else None


__all__ = ["Opponent", "Opponents", "Sampler", "opponent_plan"]
