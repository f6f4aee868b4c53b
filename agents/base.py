"""The agent protocol and the one agent every game shares: uniformly random play."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

import numpy as np
from boardgym.envs.games.bitboard import nth_set_bit


@runtime_checkable
class Agent(Protocol):
    """A player: picks a legal action for the side to move of a rules state."""

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """A legal action in ``state`` (not terminal), using only ``rng`` for randomness."""
        ...


AgentFactory = Callable[[str | None], Agent]
"""Builds an agent from the text after ``:`` in a spec (``None`` when there is none)."""


class RandomAgent:
    """A uniformly random legal move."""

    def __init__(self, rules: ModuleType) -> None:
        self.rules = rules

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """A uniformly random legal action: the ``k``-th of the legal actions in increasing
        order, ``k`` from one uniform draw."""
        legal = int(self.rules.action_bits(state))
        if not legal:
            raise ValueError("no legal action: the game is over")
        return nth_set_bit(legal, int(rng.random() * legal.bit_count()))


def no_argument(name: str, build: Callable[[], Agent]) -> AgentFactory:
    """A factory for an agent that takes no ``:argument``."""

    def factory(arg: str | None) -> Agent:
        if arg is not None:
            raise ValueError(f"agent {name!r} takes no argument; write {name!r}, not "
                             f"{name + ':' + arg!r}")
        return build()

    return factory
