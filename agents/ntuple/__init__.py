"""N-tuple networks: value functions of lookup tables trained by TD self-play
(``boardgym td``), and the ``ntuple:D@PATH`` players over them.

Importing this package registers, without importing numba's kernels or torch:

- the player ``ntuple`` for every game with n-tuple networks: ``ntuple:0@PATH`` plays the
  move of the best afterstate, ``ntuple:D@PATH`` (``D >= 1``) searches ``D`` plies with the
  network at the leaves; ``ntuple:0`` has a batched twin;
- a loader for bare paths of n-tuple checkpoints (played as ``ntuple:0@PATH``), asked before
  the policy checkpoints' loader.

The modules: ``network`` (the compiled value and TD step every game shares), ``layouts``
(boards, symmetries, named tuple layouts), ``model`` (``NTupleNet``: record and arrays),
``checkpoint`` (the file format), ``player`` (the agents), and one module a game
(``reversi``, ``four_in_a_row``, ``tictactoe``: its board, layouts and afterstate kernels).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from boardgym.envs.games import players
from boardgym.envs.games.core import Game
from boardgym.envs.games.players import Agent, BatchedPlayer

HELP = ("an n-tuple network (boardgym td): ntuple:0@PATH plays the move of the best "
        "afterstate, ntuple:D@PATH searches D plies with the network at the leaves")


def _player(record: Game, arg: str | None) -> Agent:
    from boardgym.agents.ntuple.player import ntuple_player

    return ntuple_player(record, arg)


def _batched(record: Game, arg: str | None) -> BatchedPlayer | None:
    from boardgym.agents.ntuple.player import ntuple_batched

    return ntuple_batched(record, arg)


def _load_checkpoint(record: Game, spec: str, options: Mapping[str, Any]) -> Agent | None:
    """The ``ntuple:0`` player of a bare n-tuple checkpoint path (or ``shipped:NAME``),
    checked to fit the board of ``options``; None for any other spec."""
    from boardgym.agents import is_checkpoint_spec
    from boardgym.agents.ntuple.checkpoint import is_ntuple_checkpoint

    if not is_checkpoint_spec(spec) or not is_ntuple_checkpoint(spec):
        return None
    from boardgym.agents.ntuple.player import ntuple_player

    agent = ntuple_player(record, f"0@{spec}")
    agent.check_board(record.rules.initial_state(**options))
    return agent


players.register(None, "ntuple", _player, batched=_batched, help=HELP)
players.register_loader(_load_checkpoint)

__all__ = ["HELP"]
