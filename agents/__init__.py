"""Players over the rules state; importing this package registers them all.

The players live in the registry ``boardgym.envs.games.players`` (the envs find their
opponents there without importing this package). Registered here, for every game: ``random``,
``alphabeta:D`` and ``mcts:N`` (``agents.search``), and the checkpoint loader; by each game's
module, its own players (Reversi ``corner_best``, four-in-a-row ``lookahead:N``, tic-tac-toe
``rules``, ...; a game's own ``alphabeta`` uses its heuristics).

A spec is a player name, optionally with an argument after a colon (``lookahead:2``,
``alphabeta:4``), or a checkpoint: ``shipped:NAME``, a checkpoint shipped in the package,
found from any folder (``shipped:reversi``; ``agents.shipped``), or a path: a spec with a
path separator or ending in ``.zip`` or ``.pt`` (``runs/x/checkpoints/best.zip``). Names
always win: a file called ``random`` in the working directory is never loaded. A folder
given as a checkpoint (``runs/x``, even without a separator) is refused with the names of
the checkpoints in it (``agents.checkpoint.checkpoint_file``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from boardgym.agents import (  # noqa: F401
    az,
    four_in_a_row,
    mcts,
    ntuple,
    reversi,
    search,
    shipped,
    solvers,
    tictactoe,
)
from boardgym.agents.base import Candidates, no_argument, register_candidates
from boardgym.agents.checkpoint import AZ_RECORD_ENTRY, holds_entry, is_policy_checkpoint
from boardgym.agents.devices import CPU
from boardgym.envs.games import game as game_record
from boardgym.envs.games import players
from boardgym.envs.games.core import Game
from boardgym.envs.games.players import Agent

if TYPE_CHECKING:
    from boardgym.agents.az.player import AzAgent
    from boardgym.agents.ppo.policy import PolicyAgent

CHECKPOINT_SUFFIXES = (".zip", ".pt")
AZ_PLAYER = "az"
"""The name of the search player over a network (``agents.az``: ``az:N@PATH``)."""
PATH_SEPARATORS = tuple(sep for sep in ("/", os.sep, os.altsep) if sep)


def is_checkpoint_spec(spec: str) -> bool:
    """True when ``spec`` reads as a checkpoint: ``shipped:NAME``, or a path (it holds a path
    separator or ends in ``.zip`` or ``.pt``). (A built-in name wins even so: see ``make``.)"""
    return shipped.is_shipped(spec) or spec.endswith(CHECKPOINT_SUFFIXES) \
        or any(sep in spec for sep in PATH_SEPARATORS)


def _load_checkpoint(record: Game, spec: str, options: Mapping[str, Any],
                     stochastic: bool = False, device: str = CPU) -> Agent | None:
    """The player of the checkpoint ``spec`` names, its network on ``device``, checked at
    load to fit the board of ``options``: an az checkpoint's raw policy (``az:0@PATH``; not
    when ``stochastic``), else a policy checkpoint's player; None when ``spec`` is no path
    (nor an existing folder).

    Raises:
        ValueError: a malformed device, or a GPU torch does not see.
        CheckpointError: a checkpoint of another game or board, a bad file, or a folder.
    """
    if not is_checkpoint_spec(spec) and not Path(spec).is_dir():
        return None
    from boardgym.agents.az import player  # heavy (torch): imported only when needed
    from boardgym.agents.ppo.policy import load_policy

    agent: AzAgent | PolicyAgent
    if not stochastic and player.is_az_checkpoint(spec):
        agent = player.load(spec, record.name, 0, device)
    else:
        agent = load_policy(spec, record.name, stochastic=stochastic, device=device)
    agent.check_board(record.rules.initial_state(**options))
    return agent


def _network_player(record: Game, spec: str, options: Mapping[str, Any], stochastic: bool,
                    device: str) -> Agent | None:
    """The player of a spec that plays a network, its network on ``device``: ``az:N@PATH``
    (``agents.az.player``), or an az or policy checkpoint that no player name shadows (any
    checkpoint spec when ``stochastic``: ``_load_checkpoint``); None for any other spec
    (the registry's loaders take the n-tuple files and say what is wrong with the rest)."""
    name, _, arg = spec.partition(":")
    if name in names(record.name):
        if name != AZ_PLAYER or not arg:
            return None
        from boardgym.agents.az.player import az_player

        return az_player(record, arg, device)
    if stochastic or holds_entry(spec, AZ_RECORD_ENTRY) or is_policy_checkpoint(spec):
        return _load_checkpoint(record, spec, options, stochastic, device)
    return None


def _legal_moves(record: Game, arg: str | None) -> Candidates:
    """``random``'s candidates: every legal move of the game."""
    rules = record.rules

    def candidates(state: Any) -> Any:
        bits = rules.action_bits(state)
        return np.asarray(bits, dtype=np.uint64) if isinstance(bits, np.ndarray) else bits

    return no_argument("random", candidates)(record, arg)


register_candidates(None, "random", _legal_moves, help="a uniformly random legal move",
                    scalar=True)
players.register_loader(_load_checkpoint)


def names(game: str) -> list[str]:
    """The names of ``game``'s players (its own and every game's), sorted.

    Raises:
        ValueError: unknown game.
    """
    return list(players.entries(game_record(game)))


def make(game: str | Game, spec: str | Agent, *, stochastic: bool = False,
         options: Mapping[str, Any] | None = None, device: str = CPU) -> Agent:
    """The player ``spec`` describes for ``game``.

    Args:
        game: a game name or alias (``"connect_four"``), or its ``Game`` record.
        spec: a player name (``"corner_best"``, ``"lookahead:2"``), a shipped checkpoint
            (``"shipped:reversi"``), a checkpoint path, or an ``Agent``, which is returned as
            it is.
        stochastic: a checkpoint samples its moves from the policy instead of playing the
            masked argmax (named players ignore it).
        options: the board options of the games it will play (a checkpoint is checked to fit
            that board at load); the default board when None.
        device: where the network of an ``az:N@PATH`` or checkpoint player computes
            (``agents.devices``: ``cpu``, the default, ``auto``, ``cuda``, ``cuda:N``);
            players without a network ignore it.

    Raises:
        ValueError: unknown game or player (the message lists the names), a bad argument
            after the colon, or, for a network player, a malformed device or a GPU torch
            does not see.
        FileNotFoundError, CheckpointError: a checkpoint that cannot be loaded (no file
            there, or no shipped checkpoint of that name: the message says which).
    """
    record = game_record(game)
    if isinstance(spec, str):
        agent = _network_player(record, spec, options or {}, stochastic, device)
        if agent is not None:
            return agent
    return players.make(record, spec, options)


__all__ = ["Agent", "is_checkpoint_spec", "make", "names"]
