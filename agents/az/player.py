"""``az`` players: a search over an az checkpoint's network, or its raw policy.

The spec ``az:N@PATH`` plays the checkpoint at ``PATH`` with ``N`` simulations of Gumbel
AlphaZero search (no root noise: the strongest, deterministic play), in which the game's
exact solver, where it has one (``agents.solvers.leaf_values``: four-in-a-row and Reversi,
with numba), settles the positions near the end; ``az:0@PATH`` plays the raw policy (the
most likely legal move, the network alone). ``PATH`` is an az checkpoint (``boardgym az``)
or a policy checkpoint (``boardgym train`` / ``selfplay``), whose actor gives the search its
priors and whose value head its leaf values (``agents.ppo.policy.PolicyEvaluator``). A bare
path of an az checkpoint plays like ``az:0@PATH``. ``PATH`` may be ``shipped:NAME``, a
checkpoint shipped in the package (``az:200@shipped:reversi_az``). The batched twin searches
the games of a vector env together, one network call per simulation step for all of them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import torch

from boardgym.agents import shipped, solvers
from boardgym.agents.az.checkpoint import (
    CheckpointError,
    is_az_checkpoint,
    load_network,
)
from boardgym.agents.az.network import Evaluator
from boardgym.agents.az.search import Evaluate, SearchConfig, SearchResult, search, softmax
from boardgym.agents.base import check_rng
from boardgym.agents.checkpoint import board_kwargs, is_policy_checkpoint
from boardgym.agents.devices import CPU, resolve_device
from boardgym.agents.ppo import policy
from boardgym.envs.games import canonical_name, rules
from boardgym.envs.games.core import Game, batch_of

NAME = "az"
SEPARATOR = "@"
EXAMPLE = "az:200@shipped:four_in_a_row_az"
INFERENCE_THREADS = 1
"""torch threads for play: one small batch per forward is fastest on one thread."""
LOADED_CHECKPOINTS = 16
"""Networks kept by ``load``, so that a checkpoint is read once per process."""
MAX_SIMULATIONS = 2_000
"""The most ``az:N`` simulations a move: some ten seconds a Reversi move on one CPU thread."""


def parse_spec(arg: str | None) -> tuple[int, str]:
    """``(simulations, path)`` of the text after ``az:`` (``"200@runs/x/last.zip"``).

    Raises:
        ValueError: not ``N@PATH`` with ``0 <= N <= MAX_SIMULATIONS`` (the message shows a
            valid spec, or names the cap).
    """
    count, separator, path = (arg or "").partition(SEPARATOR)
    if not separator or not count.isdecimal() or not path:
        raise ValueError(f"az takes SIMULATIONS@CHECKPOINT, e.g. {EXAMPLE} (az:0@... plays "
                         f"the raw policy); got az:{arg or ''}")
    if int(count) > MAX_SIMULATIONS:
        raise ValueError(f"az:{count}@... is over the maximum of {MAX_SIMULATIONS} "
                         f"simulations a move (more would take minutes a move); use "
                         f"az:{MAX_SIMULATIONS}@{path} or less")
    return int(count), path


class AzAgent:
    """A player of an az network: ``simulations`` of Gumbel search, or the raw policy (0).

    Also the batched twin: ``act`` takes a single state and an ``rng``, ``act_batch`` a
    batched state and per-game draws; both deterministic (no noise, ties to the lowest
    action), so the draws are not needed.

    Args:
        evaluate: the network as the search sees it (an az ``Evaluator`` or a
            ``PolicyEvaluator``).
        record: the game and board of its checkpoint (``game``, ``env_kwargs``).
        simulations: search simulations per move, with the game's exact solver near the end;
            0 plays the masked argmax of the policy.
        name: how the player is shown.
    """

    def __init__(self, evaluate: Evaluate, record: dict[str, Any], simulations: int,
                 name: str = NAME) -> None:
        self.record = record
        self.game = canonical_name(record["game"])
        self.rules = rules(self.game)
        self.evaluate = evaluate
        self.simulations = simulations
        self.config = SearchConfig(simulations=max(simulations, 1), gumbel_scale=0.0)
        self.leaf_values = solvers.leaf_values(self.game)
        start = self.rules.initial_state(**record["env_kwargs"])
        self.board = (self.rules.observation(start).shape, getattr(start, "geom", None))
        self.name = name

    def __repr__(self) -> str:
        return f"AzAgent({self.name!r})"

    def check_board(self, state: Any) -> None:
        """Raise a CheckpointError when ``state``'s board is not the network's."""
        geom = getattr(state, "geom", None)
        shape = self.rules.observation(state).shape[-len(self.board[0]):]
        if shape != self.board[0] or geom != self.board[1]:
            raise CheckpointError(f"{self.name} was trained on a {self.game} board with "
                                  f"{self.record['env_kwargs'] or 'the default size'}; play it on "
                                  "that board or train one for this board")

    def search_batch(self, state: Any) -> SearchResult:
        """What the player finds in each game of the batched, unfinished ``state``: the move,
        the policy (the search's improved policy; with 0 simulations the network's softmax
        over the legal moves) and the value for the side to move (the root's mean; with 0
        simulations the network's). ``visits`` is all zeros without a search."""
        self.check_board(state)
        masks = self.rules.legal_mask(state)
        if self.simulations > 0:
            return search(self.rules, state, self.evaluate, self.config,
                          np.zeros(masks.shape), self.leaf_values)
        return self.network_result(self.rules.observation(state), masks)

    def network_result(self, observations: np.ndarray, masks: np.ndarray) -> SearchResult:
        """The network alone on a batch of observations and legal ``masks``: the most likely
        legal move, the softmax over the legal moves, the value for the side to move (the
        position's and the move's alike), no visits."""
        logits, values = self.evaluate(observations, masks)
        return SearchResult(logits.argmax(axis=1), softmax(logits),
                            np.zeros(masks.shape, dtype=np.int64), values, values)

    def act_batch(self, state: Any) -> np.ndarray:
        """The move of each game of the batched, unfinished ``state``."""
        return self.search_batch(state).action

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """The move for the side to move of ``state`` (never an illegal one)."""
        check_rng(rng)
        return int(self.act_batch(batch_of(state))[0])


class BatchedAz:
    """The batched twin of an ``AzAgent`` (the ``BatchedPlayer`` protocol)."""

    def __init__(self, agent: AzAgent) -> None:
        self.agent = agent

    def __repr__(self) -> str:
        return f"BatchedAz({self.agent.name!r})"

    def act(self, state: Any, draws: np.ndarray) -> np.ndarray:
        """One move per game of the batched ``state`` (deterministic: ``draws`` unused)."""
        return self.agent.act_batch(state)


def load(path: str, game: str, simulations: int, device: str = CPU) -> AzAgent:
    """The search player over the az or policy checkpoint at ``path`` (or ``shipped:NAME``)
    for ``game``, its network on ``device`` (``agents.devices``: ``cpu``, ``auto``, ``cuda``,
    ``cuda:N``); the same object for the same file (unchanged since) and arguments, within a
    process.

    Raises:
        ValueError: a malformed device, or a GPU torch does not see.
        FileNotFoundError: no file at ``path``.
        CheckpointError: neither kind of checkpoint, or one for another game.
    """
    device = resolve_device(device)
    try:
        file = shipped.resolve(path)
        stat = file.stat()
    except OSError:
        return _load(path, canonical_name(game), simulations, device)  # raises, clearly
    return _cached(str(file.resolve()), stat.st_size, stat.st_mtime_ns, path,
                   canonical_name(game), simulations, device)


@lru_cache(maxsize=LOADED_CHECKPOINTS)
def _cached(resolved: str, size: int, modified_ns: int, path: str, game: str,
            simulations: int, device: str) -> AzAgent:
    """``_load``, kept by file identity (``resolved`` path, ``size``, ``modified_ns``)."""
    return _load(path, game, simulations, device)


def _load(path: str, game: str, simulations: int, device: str) -> AzAgent:
    evaluate, record = _network(path, game, device)
    torch.set_num_threads(INFERENCE_THREADS)
    label = f"{NAME}:{simulations}{SEPARATOR}{path}"
    return AzAgent(evaluate, record, simulations, name=label)


def _network(path: str, game: str, device: str) -> tuple[Evaluate, dict[str, Any]]:
    """The network of the checkpoint at ``path`` on ``device`` (a resolved one) as the search
    sees it, and its game and board record: an az checkpoint's, else a policy checkpoint's.

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: neither kind of checkpoint, or one for another game.
    """
    if is_az_checkpoint(path) or not is_policy_checkpoint(path):
        net, record = load_network(path, game)
        return Evaluator(net.to(device)), record
    network, metadata = policy.load_network(path, game)
    board = board_kwargs(metadata["env_kwargs"])
    return (policy.PolicyEvaluator(network.to(device)),
            {"game": metadata["game"], "env_kwargs": board})


def az_player(record: Game, arg: str | None, device: str = CPU) -> AzAgent:
    """The factory of ``az:N@PATH`` specs (``players.register``), the network on
    ``device``."""
    simulations, path = parse_spec(arg)
    return load(path, record.name, simulations, device)


def az_batched(record: Game, arg: str | None) -> BatchedAz:
    """The batched twin's factory of ``az:N@PATH`` specs."""
    return BatchedAz(az_player(record, arg))


__all__ = ["AzAgent", "BatchedAz", "az_batched", "az_player", "load", "parse_spec"]
