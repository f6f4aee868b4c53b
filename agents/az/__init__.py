"""AlphaZero-style players: ``az:N@PATH`` searches an az checkpoint's network (or a policy
checkpoint's actor and value head).

Importing this package registers, without importing torch:

- the player ``az`` for every game: ``az:N@PATH`` plays the az checkpoint at ``PATH`` with
  ``N`` simulations of Gumbel search per move, ``az:0@PATH`` its raw policy; ``PATH`` may
  also be a policy checkpoint (``boardgym train`` / ``selfplay``); it has a batched twin
  (the vector env's opponents search all their games together);
- a loader for bare paths of az checkpoints (played as ``az:0@PATH``); ``boardgym.agents``
  imports this package before it registers its own checkpoint loader, so az files are
  recognised first and every other file goes on to that loader.

The modules: ``network`` (the residual policy/value net, its evaluator, the board
symmetries), ``search`` (batched Gumbel AlphaZero / PUCT tree search), ``checkpoint`` (the
pickle-free file format), ``player`` (the agents).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from boardgym.envs.games import players
from boardgym.envs.games.core import Game
from boardgym.envs.games.players import Agent, BatchedPlayer

HELP = ("search over an az or policy checkpoint: az:N@PATH plays N simulations of Gumbel "
        "AlphaZero search per move, az:0@PATH the raw policy")


def _player(record: Game, arg: str | None) -> Agent:
    from boardgym.agents.az.player import az_player  # torch: imported only when asked for

    return az_player(record, arg)


def _batched(record: Game, arg: str | None) -> BatchedPlayer | None:
    """The batched twin of ``az:N@PATH``; None for a bare ``az`` (no checkpoint: ``make``
    then says what the spec needs)."""
    if arg is None:
        return None
    from boardgym.agents.az.player import az_batched

    return az_batched(record, arg)


def _load_checkpoint(record: Game, spec: str, options: Mapping[str, Any]) -> Agent | None:
    """The raw-policy player of a bare az checkpoint path (or ``shipped:NAME``), checked to
    fit the board of ``options``; None for anything that is not an az checkpoint file."""
    from boardgym.agents import is_checkpoint_spec
    from boardgym.agents.az.checkpoint import is_az_checkpoint

    if not is_checkpoint_spec(spec) or not is_az_checkpoint(spec):
        return None
    from boardgym.agents.az.player import load

    agent = load(spec, record.name, 0)
    agent.check_board(record.rules.initial_state(**options))
    return agent


players.register(None, "az", _player, batched=_batched, help=HELP)
players.register_loader(_load_checkpoint)

__all__ = ["HELP"]
