"""Players over the rules state: ``make(game, spec)`` builds one from a spec string.

A spec is a built-in name, optionally with an argument after a colon (``lookahead:2``,
``alphabeta:4``), or a path to a trained checkpoint (``checkpoints/reversi.zip``).
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from boardgym.agents.base import Agent, AgentFactory, RandomAgent
from boardgym.envs.games import canonical_name

CHECKPOINT_SUFFIX = ".zip"


def _registry(game: str) -> dict[str, AgentFactory]:
    module = import_module(f"boardgym.agents.{canonical_name(game)}")
    return module.AGENTS  # type: ignore[no-any-return]


def names(game: str) -> list[str]:
    """The built-in agent names of ``game``, sorted."""
    return sorted(_registry(game))


def is_checkpoint_spec(spec: str) -> bool:
    """True when ``spec`` names a checkpoint file rather than a built-in agent."""
    return spec.endswith(CHECKPOINT_SUFFIX) or Path(spec).is_file()


def make(game: str, spec: str | Agent, *, stochastic: bool = False) -> Agent:
    """The agent described by ``spec`` for ``game``.

    Args:
        game: ``reversi``, ``four_in_a_row`` (``connect_four``) or ``tictactoe``.
        spec: a built-in name (``"corner_best"``, ``"lookahead:2"``), a checkpoint path, or
            an ``Agent``, which is returned as it is.
        stochastic: a checkpoint samples its moves from the policy instead of playing the
            masked argmax (built-in agents ignore it).

    Raises:
        ValueError: unknown game or agent name (the message lists the valid ones), or a bad
            argument after the colon.
    """
    if isinstance(spec, Agent):
        return spec
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec must be a string or an Agent, got {spec!r}")
    registry = _registry(game)
    if is_checkpoint_spec(spec):
        from boardgym.agents.policy import load_policy  # heavy (torch): imported only when needed

        return load_policy(spec, canonical_name(game), stochastic=stochastic)
    name, _, arg = spec.partition(":")
    if name not in registry:
        raise ValueError(f"unknown {canonical_name(game)} agent {spec!r}; built-in agents: "
                         f"{', '.join(sorted(registry))}, or a path to a {CHECKPOINT_SUFFIX} "
                         "checkpoint")
    return registry[name](arg if ":" in spec else None)


__all__ = ["Agent", "RandomAgent", "is_checkpoint_spec", "make", "names"]
