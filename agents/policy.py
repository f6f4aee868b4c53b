"""An agent backed by a trained MaskablePPO checkpoint, and the checkpoint format.

A boardgym checkpoint is a stable-baselines3 zip (``model.save``) with one extra entry,
``boardgym.json``: the game, the env options (board size), the observation shape and the
number of actions it was trained for, and the step count. ``load_policy`` checks all of it
before playing, so a checkpoint of another game or board size fails with a clear message.
Training runs add a second entry, ``boardgym_train.json``, with what ``--resume`` needs
(RNG streams, opponent pool, eval history); agents ignore it.

torch and stable-baselines3 are imported only here (lazily from ``agents.make``). A
checkpoint is loaded once per process: ``load_policy`` keeps the players it built, by file
(path, size and modification time) and options.
"""

from __future__ import annotations

import json
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from boardgym.agents.networks import action_logits
from boardgym.envs.games import GAMES, canonical_name, rules

METADATA_ENTRY = "boardgym.json"
TRAIN_STATE_ENTRY = "boardgym_train.json"
FORMAT_VERSION = 1
MASKED_LOGIT = -np.inf
INFERENCE_THREADS = 1
"""torch threads for one-board inference: more threads only add hand-off latency."""
LOADED_CHECKPOINTS = 16
"""Players kept by ``load_policy``, so that a checkpoint is read once per process."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: corrupt, not boardgym's, or for another game/board."""


def checkpoint_metadata(game: str, env_kwargs: dict[str, Any], num_timesteps: int,
                        algo: str = "MaskablePPO") -> dict[str, Any]:
    """The ``boardgym.json`` record of a model trained on ``game`` with ``env_kwargs``."""
    game = canonical_name(game)
    state = initial_state(game, env_kwargs)
    module = rules(game)
    return {
        "format_version": FORMAT_VERSION,
        "game": game,
        "env_kwargs": board_kwargs(env_kwargs),
        "observation_shape": list(module.observation(state).shape),
        "n_actions": int(module.legal_mask(state).size),
        "algo": algo,
        "num_timesteps": int(num_timesteps),
    }


def board_kwargs(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The board options among env keyword arguments (any game's ``Game.options``, such as
    four-in-a-row's ``rows``, ``columns``, ``connect``)."""
    options = {name for record in GAMES.values() for name in record.options}
    return {key: value for key, value in env_kwargs.items() if key in options}


def initial_state(game: str, env_kwargs: dict[str, Any]) -> Any:
    """The start position of ``game`` with the board options of ``env_kwargs``."""
    return rules(game).initial_state(**board_kwargs(env_kwargs))


def write_entries(path: Path, entries: dict[str, Any]) -> None:
    """Add JSON ``entries`` (name -> data) to the zip at ``path``."""
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, json.dumps(data))


def read_entry(path: str | Path, name: str) -> dict[str, Any] | None:
    """The JSON entry ``name`` of the checkpoint at ``path`` (``None`` when absent).

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: not a zip file, or the entry is not valid JSON.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} not found; train one with `boardgym "
                                "train GAME` or use a shipped one, e.g. checkpoints/reversi.zip")
    try:
        with zipfile.ZipFile(path) as archive:
            if name not in archive.namelist():
                return None
            data = json.loads(archive.read(name))
    except (zipfile.BadZipFile, json.JSONDecodeError, OSError, EOFError) as error:
        raise CheckpointError(f"checkpoint {path} is corrupt ({error}); re-download it or "
                              "retrain it with `boardgym train GAME`") from error
    if not isinstance(data, dict):
        raise CheckpointError(f"checkpoint {path} has a malformed {name}; retrain it")
    return data


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The ``boardgym.json`` record of the checkpoint at ``path``.

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: corrupt, or not a boardgym checkpoint (no record).
    """
    metadata = read_entry(path, METADATA_ENTRY)
    if metadata is None:
        raise CheckpointError(f"{path} is not a boardgym checkpoint (no {METADATA_ENTRY}); "
                              "use a checkpoint written by `boardgym train`")
    return metadata


def check_game(metadata: dict[str, Any], game: str, path: str | Path) -> None:
    """Raise a CheckpointError when ``metadata`` is not for ``game``."""
    trained = metadata.get("game")
    if trained != canonical_name(game):
        raise CheckpointError(f"checkpoint {path} was trained for {trained!r}, not "
                              f"{canonical_name(game)!r}; use it with `{trained}` or pass a "
                              f"{canonical_name(game)} checkpoint")


def load_model(path: str | Path) -> Any:
    """The MaskablePPO model stored at ``path``, on the CPU, without an env.

    Raises:
        CheckpointError: the file cannot be loaded as a model.
    """
    from sb3_contrib import MaskablePPO

    try:
        return MaskablePPO.load(path, device="cpu")
    except Exception as error:  # SB3 raises many kinds on a damaged zip
        raise CheckpointError(f"checkpoint {path} is corrupt or incompatible ({error!r}); "
                              "re-download it or retrain it with `boardgym train GAME`") from error


def masked_logits(policy: Any, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The policy's action logits for a batch of observations; illegal actions get -inf."""
    with torch.inference_mode():
        obs = torch.as_tensor(observations, dtype=torch.float32)  # SB3's preprocessing of a Box
        logits = action_logits(policy, obs).numpy()
    return np.where(masks, logits, MASKED_LOGIT)


class PolicyAgent:
    """An ``Agent`` that plays a trained policy: the masked argmax, or a sample.

    Args:
        model: a MaskablePPO model (``load_model``) or any object with its ``policy``.
        metadata: the checkpoint's ``boardgym.json`` record (``checkpoint_metadata``).
        stochastic: sample from the masked policy with the ``rng`` given to ``act``
            instead of playing the most likely legal action.
        name: how the agent is shown (usually the checkpoint path).
    """

    def __init__(self, model: Any, metadata: dict[str, Any], stochastic: bool = False,
                 name: str = "policy") -> None:
        self.policy = model.policy
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
        observation = self.check_board(state)
        mask = self.rules.legal_mask(state)
        logits = masked_logits(self.policy, observation[None], mask[None])[0]
        if not self.stochastic:
            return int(np.argmax(logits))
        probs = np.exp(logits - logits.max())
        return int(rng.choice(logits.size, p=probs / probs.sum()))


def load_policy(path: str | Path, game: str, stochastic: bool = False) -> PolicyAgent:
    """The agent of the checkpoint at ``path``, checked to be a ``game`` checkpoint; the same
    object for the same file (unchanged since) and arguments, within a process.

    Args:
        path: a ``.zip`` written by ``boardgym train`` / ``boardgym selfplay``.
        game: the game it will play (a name or alias).
        stochastic: sample moves instead of the masked argmax.

    Sets torch to ``INFERENCE_THREADS`` thread(s): one board per forward pass is fastest so.

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: corrupt, not a boardgym checkpoint, or trained for another game or
            observation shape; the message names the fix.
    """
    try:
        stat = Path(path).stat()
    except OSError:
        return _load_policy(str(path), canonical_name(game), stochastic)  # raises, clearly
    return _cached_policy(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns,
                          str(path), canonical_name(game), stochastic)


@lru_cache(maxsize=LOADED_CHECKPOINTS)
def _cached_policy(resolved: str, size: int, modified_ns: int, path: str, game: str,
                   stochastic: bool) -> PolicyAgent:
    """``_load_policy``, kept by file identity (``resolved`` path, ``size``, ``modified_ns``)."""
    return _load_policy(path, game, stochastic)


def _load_policy(path: str, game: str, stochastic: bool) -> PolicyAgent:
    """``load_policy`` without the cache."""
    metadata = read_metadata(path)
    check_game(metadata, game, path)
    torch.set_num_threads(INFERENCE_THREADS)
    model = load_model(path)
    n_actions = int(model.action_space.n)
    if (tuple(model.observation_space.shape) != tuple(metadata["observation_shape"])
            or n_actions != metadata["n_actions"]):
        raise CheckpointError(f"checkpoint {path}: its model does not match its "
                              f"{METADATA_ENTRY} record; retrain it")
    return PolicyAgent(model, metadata, stochastic=stochastic, name=str(path))
