"""A trained PPO policy as a player: reading and writing its checkpoint, the agent, its
batched twin and the policy as a tree search's evaluator.

The checkpoint is the pickle-free format of ``agents.checkpoint`` (``boardgym.json`` with
the architecture record of ``agents.ppo.architecture``, the weights in ``policy.pth``).
``load_network`` is the one reader: it checks the record, rebuilds the policy in plain code
from the allow-lists and loads its weights; anything else is refused with a one-line
``CheckpointError``. An old pickled file is converted with ``python -m
boardgym.agents.ppo.convert OLD NEW`` (``agents.ppo.convert``).

This module imports torch and stable-baselines3: ``agents.make`` imports it only for a
checkpoint spec, so ``import boardgym`` needs neither. A checkpoint is loaded once per
process: ``load_policy`` keeps the players it built, by file (path, size and modification
time) and options.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from boardgym.agents import shipped
from boardgym.agents.base import check_rng
from boardgym.agents.checkpoint import (
    METADATA_ENTRY,
    OPTIMIZER_ENTRY,
    POLICY_ENTRY,
    CheckpointError,
    check_game,
    checkpoint_metadata,
    initial_state,
    load_state,
    read_policy_record,
    read_tensors,
    tensor_bytes,
    write_zip_atomic,
)
from boardgym.agents.devices import CPU, resolve_device
from boardgym.agents.ppo.architecture import architecture_of, policy_arguments
from boardgym.agents.ppo.policies import action_logits, logits_and_values
from boardgym.envs.games import canonical_name, rules
from boardgym.envs.games.core import one_line, unbatch

MASKED_LOGIT = -np.inf
INFERENCE_THREADS = 1
"""torch threads for one-board inference: more threads only add hand-off latency."""
LOADED_CHECKPOINTS = 16
"""Players kept by ``load_policy``, so that a checkpoint is read once per process."""


# -- reading ---------------------------------------------------------------------------------

def read_metadata(path: str | Path) -> dict[str, Any]:
    """The ``boardgym.json`` record of the checkpoint at ``path``, checked in full: its own
    fields (``agents.checkpoint.check_metadata``) and its architecture (``policy_arguments``).

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: corrupt, in the pickled format, or not a boardgym checkpoint.
    """
    metadata = read_policy_record(path)
    policy_arguments(metadata["policy"], f"checkpoint {path}")
    return metadata


def no_learning(_progress: float) -> float:
    """The learning-rate schedule of a policy that only plays."""
    return 0.0


def observation_space(shape: Sequence[int]) -> spaces.Box:
    """The observation space of boards of ``shape`` ``(planes, rows, cols)``, as the envs
    give it: 0/1 planes, uint8."""
    return spaces.Box(0, 1, tuple(shape), np.uint8)


def build_policy(metadata: dict[str, Any], path: str | Path) -> MaskableActorCriticPolicy:
    """The untrained policy that a checked ``boardgym.json`` record describes, built in plain
    code from the allow-lists of ``agents.ppo.policies``.

    Raises:
        CheckpointError: the architecture does not build.
    """
    policy_class, kwargs = policy_arguments(metadata["policy"], f"checkpoint {path}")
    action_space = spaces.Discrete(metadata["n_actions"])
    try:
        return policy_class(observation_space(metadata["observation_shape"]), action_space,
                            no_learning, **kwargs)
    except (ValueError, RuntimeError) as error:
        raise CheckpointError(f"checkpoint {path}: its architecture does not build "
                              f"({one_line(str(error))}); retrain it") from error


def load_network(path: str | Path,
                 game: str | None = None) -> tuple[MaskableActorCriticPolicy, dict[str, Any]]:
    """The policy stored at ``path`` (on the CPU, in eval mode) and its checked record: the
    one reader of checkpoints, with nothing unpickled. With ``game``, the checkpoint must be
    for that game (``check_game``), checked before any network is built.

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: anything but a boardgym checkpoint of this format (the message
            says what it is and how to convert it), or one for another game than ``game``.
    """
    metadata, state = read_policy(path, game)
    policy = build_policy(metadata, path)
    load_state(policy, state, path, POLICY_ENTRY)
    policy.set_training_mode(False)
    return policy, metadata


def read_policy(path: str | Path,
                game: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The checked record of the policy checkpoint at ``path`` and its policy state dict
    (tensors only); with ``game``, the record is checked to be that game's first.

    Raises:
        FileNotFoundError, CheckpointError: as ``load_network``.
    """
    metadata = read_metadata(path)
    if game is not None:
        check_game(metadata, game, path)
    return metadata, read_tensors(path, POLICY_ENTRY)


# -- writing ---------------------------------------------------------------------------------

def write_checkpoint(path: str | Path, policy: MaskableActorCriticPolicy, game: str,
                     env_kwargs: dict[str, Any], num_timesteps: int,
                     entries: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``policy`` (weights and optimizer state) with its record to ``path``, atomically:
    the zip is written to a temporary file in the same folder, flushed to disk and renamed.

    Args:
        path: the ``.zip`` to write.
        policy: the policy (any class on ``agents.ppo.policies.POLICIES``).
        game, env_kwargs, num_timesteps: what the record says it was trained on and for.
        entries: more JSON entries (name -> data), e.g. ``TRAIN_STATE_ENTRY``.

    Returns:
        The ``boardgym.json`` record written.

    Raises:
        ValueError: the policy uses a class off the allow-lists.
    """
    metadata = checkpoint_metadata(game, env_kwargs, num_timesteps, architecture_of(policy))
    write_zip_atomic(path, {
        METADATA_ENTRY: json.dumps(metadata, indent=1),
        POLICY_ENTRY: tensor_bytes(policy.state_dict()),
        OPTIMIZER_ENTRY: tensor_bytes(policy.optimizer.state_dict()),
        **{name: json.dumps(data) for name, data in (entries or {}).items()}})
    return metadata


def model_counters(model: Any) -> dict[str, Any]:
    """The counters of an SB3 algorithm that ``--resume`` restores besides the step count:
    updates done, episodes, and the recent episodes' returns/lengths/times."""
    return {"n_updates": int(model._n_updates), "episode_num": int(model._episode_num),
            "ep_info_buffer": [{key: float(value) for key, value in info.items()}
                               for info in model.ep_info_buffer or ()]}


# -- the agent -------------------------------------------------------------------------------

def masked_logits(policy: Any, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The policy's action logits for a batch of observations, computed on the policy's
    device (the logits back on the CPU); illegal actions get -inf."""
    with torch.inference_mode():
        obs = torch.as_tensor(observations, dtype=torch.float32,  # SB3's preprocessing of a Box
                              device=policy.device)
        logits = action_logits(policy, obs).cpu().numpy()
    return np.where(masks, logits, MASKED_LOGIT)


class PolicyEvaluator:
    """A policy network as a tree search sees it (the ``az`` players' ``Evaluate``): numpy
    observations and masks in; the actor's logits ``(B, A)`` float64 with ``-inf`` where
    ``masks`` is False, and the value head's estimate ``(B,)`` of the return for the side to
    move (the learner is the side to move at each of its decisions) out; no gradients. The
    pass runs on the policy's device, the results come back to the CPU.

    Args:
        policy: the network (in eval mode).
    """

    def __init__(self, policy: MaskableActorCriticPolicy) -> None:
        self.policy = policy

    def __call__(self, observations: np.ndarray, masks: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        with torch.inference_mode():
            logits, values = logits_and_values(self.policy, torch.as_tensor(
                observations, dtype=torch.float32, device=self.policy.device))
        return (np.where(masks, logits.cpu().numpy().astype(np.float64), MASKED_LOGIT),
                values.cpu().numpy().astype(np.float64))


class PolicyAgent:
    """An ``Agent`` that plays a trained policy: the masked argmax, or a sample.

    Args:
        policy: the policy network (``load_network``, or a model's ``policy``).
        metadata: the checkpoint's ``boardgym.json`` record (``checkpoint_metadata``).
        stochastic: sample from the masked policy with the ``rng`` given to ``act``
            instead of playing the most likely legal action.
        name: how the agent is shown (usually the checkpoint path).
    """

    def __init__(self, policy: MaskableActorCriticPolicy, metadata: dict[str, Any],
                 stochastic: bool = False, name: str = "policy") -> None:
        self.policy = policy
        self.policy.set_training_mode(False)
        self.metadata = metadata
        self.game = canonical_name(metadata["game"])
        self.rules = rules(self.game)
        self.observation_shape = tuple(metadata["observation_shape"])
        self.trained_geom = getattr(initial_state(self.game, metadata.get("env_kwargs", {})),
                                    "geom", None)
        self.stochastic = stochastic
        self.name = name

    def __repr__(self) -> str:
        return f"PolicyAgent({self.name!r}, stochastic={self.stochastic})"

    def check_board(self, state: Any) -> np.ndarray:
        """The observation of ``state``, checked against the board the policy was trained on.

        Raises:
            CheckpointError: another board size (or ``connect``) than the checkpoint's.
        """
        observation = self.rules.observation(state)
        geom = getattr(state, "geom", None)
        if observation.shape != self.observation_shape or geom != self.trained_geom:
            board = "" if geom is None else f" ({geom.rows}x{geom.columns}, connect {geom.connect})"
            raise CheckpointError(
                f"{self.name} was trained on a {self.game} board with "
                f"{self.metadata.get('env_kwargs') or 'the default size'} (observation "
                f"{self.observation_shape}); this game's observation is {observation.shape}"
                f"{board}; play it on the board it was trained for or train one for this board")
        return observation

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """The policy's action for the side to move of ``state`` (never an illegal one)."""
        check_rng(rng)
        observation = self.check_board(state)
        mask = self.rules.legal_mask(state)
        logits = masked_logits(self.policy, observation[None], mask[None])[0]
        if not self.stochastic:
            return int(np.argmax(logits))
        probs = np.exp(logits - logits.max())
        return int(rng.choice(logits.size, p=probs / probs.sum()))

    def batched(self) -> BatchedPolicy:
        """This agent's batched twin (``players.BatchedPlayer``): one forward pass moves in
        N games at once."""
        return BatchedPolicy(self)


UNIT_BITS = 53
"""Bits of a uniform ``uint64`` draw kept for a float in ``[0, 1)`` (a double's mantissa)."""


class BatchedPolicy:
    """A ``PolicyAgent``'s batched twin: the masked argmax (or, for a stochastic agent, a
    sample by the inverse CDF of each game's uniform draw) in N games at once.

    Args:
        agent: the policy agent.
    """

    def __init__(self, agent: PolicyAgent) -> None:
        self.agent = agent

    def act(self, state: Any, draws: np.ndarray) -> np.ndarray:
        """One legal action per game of the batched ``state``.

        Raises:
            CheckpointError: a board other than the one the policy was trained on.
        """
        agent = self.agent
        agent.check_board(unbatch(state, 0))
        observations = np.asarray(agent.rules.observation(state))
        masks = np.asarray(agent.rules.legal_mask(state))
        logits = masked_logits(agent.policy, observations, masks)
        if not agent.stochastic:
            return np.argmax(logits, axis=1)
        cumulative = np.cumsum(np.exp(logits - logits.max(axis=1, keepdims=True)), axis=1)
        uniform = (np.asarray(draws, dtype=np.uint64) >> np.uint64(64 - UNIT_BITS)) \
            * 2.0 ** -UNIT_BITS * cumulative[:, -1]
        last_legal = masks.shape[1] - 1 - np.argmax(masks[:, ::-1], axis=1)
        return np.minimum((cumulative <= uniform[:, None]).sum(axis=1), last_legal)


def load_policy(path: str | Path, game: str, stochastic: bool = False,
                device: str = CPU) -> PolicyAgent:
    """The agent of the checkpoint at ``path``, checked to be a ``game`` checkpoint; the same
    object for the same file (unchanged since) and arguments, within a process.

    Args:
        path: a ``.zip`` written by ``boardgym train`` / ``boardgym selfplay``, or
            ``shipped:NAME`` (a shipped checkpoint, ``agents.shipped``).
        game: the game it will play (a name or alias).
        stochastic: sample moves instead of the masked argmax.
        device: where its network computes (``agents.devices``: ``cpu``, ``auto``,
            ``cuda``, ``cuda:N``).

    Sets torch to ``INFERENCE_THREADS`` thread(s): one board per forward pass is fastest so.

    Raises:
        ValueError: a malformed device, or a GPU torch does not see.
        FileNotFoundError: no file at ``path``.
        CheckpointError: corrupt, not a boardgym checkpoint (or one that needs unpickling),
            or trained for another game; the message names the fix.
    """
    device = resolve_device(device)
    try:
        file = shipped.resolve(path)
        stat = file.stat()
    except OSError:
        return _load_policy(str(path), canonical_name(game), stochastic, device)  # raises
    return _cached_policy(str(file.resolve()), stat.st_size, stat.st_mtime_ns,
                          str(path), canonical_name(game), stochastic, device)


@lru_cache(maxsize=LOADED_CHECKPOINTS)
def _cached_policy(resolved: str, size: int, modified_ns: int, path: str, game: str,
                   stochastic: bool, device: str) -> PolicyAgent:
    """``_load_policy``, kept by file identity (``resolved`` path, ``size``, ``modified_ns``)."""
    return _load_policy(path, game, stochastic, device)


def _load_policy(path: str, game: str, stochastic: bool, device: str) -> PolicyAgent:
    """``load_policy`` without the cache."""
    torch.set_num_threads(INFERENCE_THREADS)
    policy, metadata = load_network(path, game)
    return PolicyAgent(policy.to(device), metadata, stochastic=stochastic, name=str(path))


__all__ = ["BatchedPolicy", "PolicyAgent", "PolicyEvaluator", "build_policy", "load_network",
           "load_policy", "masked_logits", "model_counters", "read_metadata", "read_policy",
           "write_checkpoint"]
