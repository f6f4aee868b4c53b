"""An agent backed by a trained policy checkpoint, and the checkpoint format (no pickles).

A boardgym checkpoint is a zip of plain data, read without unpickling anything:

- ``boardgym.json``: the record: ``format_version`` (``FORMAT_VERSION``), the ``game``, its
  board options ``env_kwargs``, the ``observation_shape`` and ``n_actions`` it was trained
  for, the ``algo`` and ``num_timesteps``, and ``policy``, the architecture: the policy
  class, feature extractor and activation by name (each from an allow-list in
  ``agents.networks``), the extractor's keyword arguments, ``net_arch`` and
  ``share_features_extractor``.
- ``policy.pth`` and ``policy.optimizer.pth``: the state dicts of the policy and of its
  optimizer, as stable-baselines3 names and writes them (``torch.save``); they are read with
  ``torch.load(weights_only=True)``, so SB3's own ``model.set_parameters(path)`` takes them too.
- ``boardgym_train.json`` (run checkpoints only): what ``--resume`` needs (counters, RNG
  streams, opponent pool, eval history); agents ignore it.

``load_network`` is the one reader: it checks the record, rebuilds the policy in plain code
and loads its weights. Anything else (an SB3 zip with its pickled ``data`` entry, as boardgym
wrote before format 2; a record naming a class off the allow-list or lacking a key; weights
that need unpickling) is refused with a one-line ``CheckpointError``. An old file is
converted with ``python -m boardgym.agents.policy convert OLD NEW``, which unpickles nothing
either. Writes are atomic (temporary file, then rename).

torch and stable-baselines3 are imported only here (lazily from ``agents.make``). A
checkpoint is loaded once per process: ``load_policy`` keeps the players it built, by file
(path, size and modification time) and options.
"""

from __future__ import annotations

import argparse
import inspect
import io
import json
import os
import pickle
import re
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from boardgym.agents.networks import (
    ACTIVATIONS,
    EXTRACTORS,
    MAX_MEMBERS,
    POLICIES,
    EnsemblePolicy,
    TowerPolicy,
    action_logits,
    logits_and_values,
)
from boardgym.envs.games import GAMES, canonical_name, rules
from boardgym.envs.games.core import unbatch

METADATA_ENTRY = "boardgym.json"
TRAIN_STATE_ENTRY = "boardgym_train.json"
POLICY_ENTRY = "policy.pth"
OPTIMIZER_ENTRY = "policy.optimizer.pth"
PICKLED_ENTRY = "data"
"""stable-baselines3's hyperparameter entry, with pickled fields: never read."""
AZ_RECORD_ENTRY = "az.json"
"""The record of an az network's file (``agents.az.checkpoint``): not a policy checkpoint."""
FORMAT_VERSION = 2
PICKLED_FORMAT = 1
"""The format before 2: an SB3 ``model.save`` zip, loadable only by unpickling."""
METADATA_TYPES: dict[str, type] = {
    "format_version": int, "game": str, "env_kwargs": dict, "observation_shape": list,
    "n_actions": int, "algo": str, "num_timesteps": int, "policy": dict}
"""Every key of ``boardgym.json`` and its JSON type."""
ARCHITECTURE_TYPES: dict[str, type] = {
    "class": str, "features_extractor": str, "features_extractor_kwargs": dict,
    "net_arch": dict, "activation": str, "share_features_extractor": bool}
"""Every key of the ``policy`` architecture record and its JSON type."""
ENSEMBLE_TYPES: dict[str, type] = {**ARCHITECTURE_TYPES, "members": int}
"""The keys of an ``EnsemblePolicy``'s record: ``ARCHITECTURE_TYPES`` and ``members``, its
number of networks (each of the record's architecture)."""
TOWER_TYPES: dict[str, type] = {"class": str, "channels": int, "blocks": int, "hidden": int}
"""The keys of a ``TowerPolicy``'s record: its class and the az tower's sizes."""
HEADS = ("pi", "vf")
MAX_WIDTH = 4096
"""The widest layer (and most channels, blocks, features) a checkpoint may ask for."""
MAX_LAYERS = 16
"""The most hidden layers per head a checkpoint may ask for."""
MAX_ENTRY_BYTES = 256 * 2 ** 20
"""The largest entry read from a checkpoint (a guard against zip bombs)."""
CONVERT_HINT = ("convert it with `python -m boardgym.agents.policy convert OLD.zip NEW.zip` "
                "(it reads the old file without unpickling)")
DEFAULT_ALGO = "MaskablePPO"
"""Positions on which ``convert`` checks that the new file plays as the old one."""
MASKED_LOGIT = -np.inf
INFERENCE_THREADS = 1
"""torch threads for one-board inference: more threads only add hand-off latency."""
LOADED_CHECKPOINTS = 16
"""Players kept by ``load_policy``, so that a checkpoint is read once per process."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: corrupt, not boardgym's, in a format that needs
    unpickling, or for another game/board. The message is one line and names the fix."""


def one_line(text: str) -> str:
    """The first line of ``text`` (errors from torch or zipfile may span many)."""
    return text.strip().splitlines()[0] if text.strip() else text


# -- the record ------------------------------------------------------------------------------

def board_kwargs(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The board options among env keyword arguments (any game's ``Game.options``, such as
    four-in-a-row's ``rows``, ``columns``, ``connect``)."""
    options = {name for record in GAMES.values() for name in record.options}
    return {key: value for key, value in env_kwargs.items() if key in options}


def initial_state(game: str, env_kwargs: dict[str, Any]) -> Any:
    """The start position of ``game`` with the board options of ``env_kwargs``."""
    return rules(game).initial_state(**board_kwargs(env_kwargs))


def board_facts(game: str, env_kwargs: dict[str, Any]) -> tuple[list[int], int]:
    """The observation shape and number of actions of ``game`` with ``env_kwargs``."""
    state = initial_state(game, env_kwargs)
    module = rules(game)
    return list(module.observation(state).shape), int(module.legal_mask(state).size)


def class_name(cls: type, allowed: dict[str, Any], kind: str) -> str:
    """The allow-list name of ``cls``.

    Raises:
        ValueError: ``cls`` is not on the allow-list ``allowed``.
    """
    name = cls.__name__
    if allowed.get(name) is not cls:
        raise ValueError(f"a checkpoint cannot name the {kind} {cls.__module__}.{name}; "
                         f"use one of {', '.join(allowed)}")
    return name


def architecture_of(policy: MaskableActorCriticPolicy) -> dict[str, Any]:
    """The JSON architecture record of ``policy`` (``boardgym.json``'s ``policy``).

    Raises:
        ValueError: the policy uses a class that is not on an allow-list of ``networks``.
    """
    if isinstance(policy, TowerPolicy):
        return {"class": "TowerPolicy", **policy.sizes()}
    net_arch = policy.net_arch
    heads = net_arch if isinstance(net_arch, dict) else {head: net_arch for head in HEADS}
    record = {
        "class": class_name(type(policy), POLICIES, "policy class"),
        "features_extractor": class_name(policy.features_extractor_class, EXTRACTORS,
                                         "feature extractor"),
        "features_extractor_kwargs": dict(policy.features_extractor_kwargs),
        "net_arch": {head: [int(width) for width in heads.get(head, [])] for head in HEADS},
        "activation": class_name(policy.activation_fn, ACTIVATIONS, "activation"),
        "share_features_extractor": bool(policy.share_features_extractor),
    }
    if isinstance(policy, EnsemblePolicy):
        record["members"] = policy.member_count
    return record


def checkpoint_metadata(game: str, env_kwargs: dict[str, Any], num_timesteps: int,
                        architecture: dict[str, Any], algo: str = DEFAULT_ALGO
                        ) -> dict[str, Any]:
    """The ``boardgym.json`` record of a policy with ``architecture`` (``architecture_of``)
    trained on ``game`` with ``env_kwargs`` for ``num_timesteps`` steps."""
    game = canonical_name(game)
    observation_shape, n_actions = board_facts(game, env_kwargs)
    return {
        "format_version": FORMAT_VERSION,
        "game": game,
        "env_kwargs": board_kwargs(env_kwargs),
        "observation_shape": observation_shape,
        "n_actions": n_actions,
        "algo": algo,
        "num_timesteps": int(num_timesteps),
        "policy": architecture,
    }


def check_keys(record: dict[str, Any], types: dict[str, type], what: str) -> None:
    """Check that ``record`` has every key of ``types``, each of its JSON type (a bool is
    not an int), and no other key.

    Raises:
        CheckpointError: a key missing, unknown or of another type (``what`` names the
            record in the message).
    """
    for key, kind in types.items():
        if key not in record:
            raise CheckpointError(f"{what} lacks {key!r}; the file is damaged or not "
                                  "boardgym's: re-download it or retrain it")
        value = record[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise CheckpointError(f"{what} has {key}={value!r}, not {kind.__name__}; the "
                                  "file is damaged: re-download it or retrain it")
    unknown = sorted(set(record) - set(types))
    if unknown:
        raise CheckpointError(f"{what} has unknown keys {unknown}; it was written by another "
                              "program or version: re-save it with this boardgym")


def check_size(value: Any, name: str, where: str, least: int = 1) -> int:
    """``value``, checked to be an int in ``[least, MAX_WIDTH]``.

    Raises:
        CheckpointError: anything else.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_WIDTH:
        raise CheckpointError(f"{where}: {name}={value!r} is not an integer in [{least}, "
                              f"{MAX_WIDTH}]; the file is damaged or not boardgym's")
    return value


def extractor_kwargs(extractor: type, kwargs: dict[str, Any], where: str) -> dict[str, Any]:
    """``kwargs`` checked against ``extractor``'s signature: known names only, each of its
    default's type, sizes in range.

    Raises:
        CheckpointError: an unknown name, another type or a size out of range.
    """
    parameters = inspect.signature(extractor).parameters
    for name, value in kwargs.items():
        default = parameters[name].default if name in parameters else inspect.Parameter.empty
        if name == "observation_space" or default is inspect.Parameter.empty:
            raise CheckpointError(f"{where}: {extractor.__name__} takes no argument {name!r}; "
                                  "the file is damaged or not boardgym's")
        if type(value) is not type(default):
            raise CheckpointError(f"{where}: {extractor.__name__} argument {name}={value!r} "
                                  f"is not {type(default).__name__}; the file is damaged")
        if isinstance(value, int) and not isinstance(value, bool):
            check_size(value, name, where, least=0)
    return dict(kwargs)


def net_arch_of(record: dict[str, Any], where: str) -> dict[str, list[int]]:
    """The record's ``net_arch`` (``{"pi": [...], "vf": [...]}``), checked.

    Raises:
        CheckpointError: other heads, too many layers or a width out of range.
    """
    if set(record) != set(HEADS) or not all(isinstance(record[head], list) and
                                            len(record[head]) <= MAX_LAYERS for head in HEADS):
        raise CheckpointError(f"{where}: net_arch must be {{'pi': [...], 'vf': [...]}} with at "
                              f"most {MAX_LAYERS} layers each, got {record!r}")
    return {head: [check_size(width, "net_arch", where) for width in record[head]]
            for head in HEADS}


def policy_arguments(architecture: dict[str, Any], where: str
                     ) -> tuple[type[MaskableActorCriticPolicy], dict[str, Any]]:
    """The policy class and keyword arguments (``policy_kwargs``) an architecture record
    describes, every name looked up in the allow-lists of ``networks``.

    Args:
        architecture: the record (``architecture_of``).
        where: what the record belongs to (a path), for messages.

    Raises:
        CheckpointError: a missing key, a name off the allow-lists, a bad argument.
    """
    if architecture.get("class") == "TowerPolicy":
        check_keys(architecture, TOWER_TYPES, f"{where}: the policy record")
        return TowerPolicy, {name: check_size(architecture[name], name, where)
                             for name in TOWER_TYPES if name != "class"}
    ensemble = architecture.get("class") == "EnsemblePolicy"
    check_keys(architecture, ENSEMBLE_TYPES if ensemble else ARCHITECTURE_TYPES,
               f"{where}: the policy record")
    chosen = {}
    for key, allowed in (("class", POLICIES), ("features_extractor", EXTRACTORS),
                         ("activation", ACTIVATIONS)):
        name = architecture[key]
        if name not in allowed:
            raise CheckpointError(f"{where} names {key} {name!r}, which boardgym does not "
                                  f"build (allowed: {', '.join(allowed)}); not a boardgym "
                                  "checkpoint")
        chosen[key] = allowed[name]
    extractor = chosen["features_extractor"]
    kwargs = {
        "features_extractor_class": extractor,
        "features_extractor_kwargs": extractor_kwargs(
            extractor, architecture["features_extractor_kwargs"], where),
        "net_arch": net_arch_of(architecture["net_arch"], where),
        "activation_fn": chosen["activation"],
        "share_features_extractor": architecture["share_features_extractor"],
    }
    if ensemble:
        members = architecture["members"]
        if not 2 <= members <= MAX_MEMBERS:
            raise CheckpointError(f"{where}: members={members} is not in [2, {MAX_MEMBERS}]; "
                                  "the file is damaged or not boardgym's")
        kwargs["members"] = members
    return chosen["class"], kwargs


def check_metadata(metadata: dict[str, Any], path: str | Path) -> dict[str, Any]:
    """``metadata`` (a ``boardgym.json`` record), checked in full.

    Raises:
        CheckpointError: the pickled format, another version, a key missing or of another
            type, an unknown game, or a shape that does not fit the game and board.
    """
    version = metadata.get("format_version")
    if version == PICKLED_FORMAT:
        raise pickled_format(path)
    if "format_version" in metadata and version != FORMAT_VERSION:
        raise CheckpointError(f"checkpoint {path} has format_version {version!r}; this "
                              f"boardgym reads {FORMAT_VERSION}: upgrade boardgym or retrain it")
    check_keys(metadata, METADATA_TYPES, f"checkpoint {path}: {METADATA_ENTRY}")
    try:
        game = canonical_name(metadata["game"])
        facts = board_facts(game, metadata["env_kwargs"])
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"checkpoint {path} is for a game or board this boardgym does "
                              f"not know ({one_line(str(error))})") from error
    if facts != (metadata["observation_shape"], metadata["n_actions"]):
        raise CheckpointError(f"checkpoint {path}: observation {metadata['observation_shape']} "
                              f"and {metadata['n_actions']} actions do not fit {game} with "
                              f"{metadata['env_kwargs'] or 'the default board'}; the file is "
                              "damaged: re-download it or retrain it")
    policy_arguments(metadata["policy"], f"checkpoint {path}")
    return metadata


def pickled_format(path: str | Path) -> CheckpointError:
    """The refusal of a checkpoint in the pickled format."""
    return CheckpointError(f"checkpoint {path} is in the old stable-baselines3 format, which "
                           f"only loads by unpickling (it could run any code); {CONVERT_HINT}")


# -- reading ---------------------------------------------------------------------------------

@contextmanager
def open_checkpoint(path: str | Path) -> Iterator[zipfile.ZipFile]:
    """The checkpoint at ``path``, open as a zip.

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: not a readable zip.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} not found; train one with `boardgym "
                                "train GAME` or use a shipped one, e.g. checkpoints/reversi.zip")
    try:
        with zipfile.ZipFile(path) as archive:
            yield archive
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as error:
        raise CheckpointError(f"checkpoint {path} is corrupt ({one_line(str(error))}); "
                              "re-download it or retrain it with `boardgym train GAME`") from error


def read_bytes(archive: zipfile.ZipFile, name: str, path: str | Path) -> bytes | None:
    """The entry ``name`` of ``archive`` (``None`` when absent).

    Raises:
        CheckpointError: the entry is larger than ``MAX_ENTRY_BYTES``, or unreadable.
    """
    try:
        info = archive.getinfo(name)
    except KeyError:
        return None
    if info.file_size > MAX_ENTRY_BYTES:
        raise CheckpointError(f"checkpoint {path}: {name} is {info.file_size} bytes, over the "
                              f"{MAX_ENTRY_BYTES} boardgym reads; not a boardgym checkpoint")
    try:
        return archive.read(info)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
        raise CheckpointError(f"checkpoint {path} is corrupt ({one_line(str(error))}); "
                              "re-download it or retrain it with `boardgym train GAME`") from error


def read_entry(path: str | Path, name: str) -> dict[str, Any] | None:
    """The JSON object in entry ``name`` of the checkpoint at ``path`` (``None`` when absent).

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: not a zip file, or the entry is not a JSON object.
    """
    with open_checkpoint(path) as archive:
        raw = read_bytes(archive, name, path)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"checkpoint {path} is corrupt ({name}: {error}); re-download "
                              "it or retrain it with `boardgym train GAME`") from error
    if not isinstance(data, dict):
        raise CheckpointError(f"checkpoint {path} has a malformed {name}; retrain it")
    return data


def holds_entry(path: str | Path, *names: str) -> bool:
    """True when ``path`` is a readable zip holding an entry of one of ``names``; any other
    file, or no file, is not (nothing is read beyond the zip's directory)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return not set(names).isdisjoint(archive.namelist())
    except (OSError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError):
        return False


def is_policy_checkpoint(path: str | Path) -> bool:
    """True when ``path`` is a zip holding a ``boardgym.json`` record or the pickled
    format's ``data`` entry (so that loading it says what it is)."""
    return holds_entry(path, METADATA_ENTRY, PICKLED_ENTRY)


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The ``boardgym.json`` record of the checkpoint at ``path``, checked in full
    (``check_metadata``).

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: corrupt, in the pickled format, or not a boardgym checkpoint.
    """
    with open_checkpoint(path) as archive:
        names = set(archive.namelist())
    if PICKLED_ENTRY in names:
        raise pickled_format(path)
    metadata = read_entry(path, METADATA_ENTRY)
    if metadata is None and AZ_RECORD_ENTRY in names:
        raise CheckpointError(f"{path} is an az network (`boardgym az`), not a policy "
                              f"checkpoint; play it as az:N@{path}, or use a checkpoint "
                              "written by `boardgym train`")
    if metadata is None:
        raise CheckpointError(f"{path} is not a boardgym checkpoint (no {METADATA_ENTRY}); "
                              "use a checkpoint written by `boardgym train`")
    return check_metadata(metadata, path)


def read_tensors(path: str | Path, name: str) -> dict[str, Any]:
    """The state dict in entry ``name`` of the checkpoint at ``path``, read with
    ``torch.load(weights_only=True)``: tensors and plain containers only, nothing unpickled.

    Raises:
        CheckpointError: the entry is missing, needs unpickling, or is not a state dict.
    """
    with open_checkpoint(path) as archive:
        raw = read_bytes(archive, name, path)
    if raw is None:
        raise CheckpointError(f"checkpoint {path} has no {name}; re-download it or retrain it")
    try:
        state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        raise CheckpointError(f"checkpoint {path}: {name} holds objects that only load by "
                              "unpickling (it could run any code), not plain tensors; refused; "
                              f"{CONVERT_HINT}") from error
    except Exception as error:  # torch raises many kinds on damaged data
        raise CheckpointError(f"checkpoint {path}: {name} is corrupt "
                              f"({type(error).__name__}); re-download it or retrain it") from error
    if not isinstance(state, dict) or not all(isinstance(key, str) for key in state):
        raise CheckpointError(f"checkpoint {path}: {name} is not a state dict; re-download it "
                              "or retrain it")
    return state


def no_learning(_progress: float) -> float:
    """The learning-rate schedule of a policy that only plays."""
    return 0.0


def observation_space(shape: Sequence[int]) -> spaces.Box:
    """The observation space of boards of ``shape`` ``(planes, rows, cols)``, as the envs
    give it: 0/1 planes, uint8."""
    return spaces.Box(0, 1, tuple(shape), np.uint8)


def build_policy(metadata: dict[str, Any], path: str | Path) -> MaskableActorCriticPolicy:
    """The untrained policy that a checked ``boardgym.json`` record describes, built in plain
    code from the allow-lists of ``networks``.

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


def load_state(module: torch.nn.Module | torch.optim.Optimizer, state: dict[str, Any],
               path: str | Path, name: str) -> None:
    """Load ``state`` (entry ``name`` of ``path``) into ``module``, every key matched.

    Raises:
        CheckpointError: the state does not fit ``module``.
    """
    try:
        if isinstance(module, torch.nn.Module):
            module.load_state_dict(state, strict=True)
        else:
            module.load_state_dict(state)
    except (RuntimeError, ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"checkpoint {path}: {name} does not fit the architecture of its "
                              f"{METADATA_ENTRY} ({one_line(str(error))}); retrain it") from error


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


def check_game(metadata: dict[str, Any], game: str, path: str | Path,
               kind: str = "checkpoint") -> None:
    """Raise a CheckpointError when ``metadata`` (a policy checkpoint's, or an az record:
    ``kind`` names which in the message) is not for ``game``."""
    trained = metadata.get("game")
    if trained != canonical_name(game):
        raise CheckpointError(f"{kind} {path} was trained for {trained!r}, not "
                              f"{canonical_name(game)!r}; use it with `{trained}` or pass a "
                              f"{canonical_name(game)} checkpoint")


# -- writing ---------------------------------------------------------------------------------

def tensor_bytes(state: dict[str, Any]) -> bytes:
    """``state`` as ``torch.save`` writes it."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def write_checkpoint(path: str | Path, policy: MaskableActorCriticPolicy, game: str,
                     env_kwargs: dict[str, Any], num_timesteps: int,
                     entries: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``policy`` (weights and optimizer state) with its record to ``path``, atomically:
    the zip is written to a temporary file in the same folder, flushed to disk and renamed.

    Args:
        path: the ``.zip`` to write.
        policy: the policy (any class on ``networks.POLICIES``).
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


def write_zip_atomic(path: str | Path, entries: dict[str, str | bytes],
                     stored: frozenset[str] = frozenset()) -> None:
    """Write a zip of ``entries`` (name -> content) to ``path`` atomically: to a temporary
    file in the same folder, flushed to disk, then renamed over ``path`` (a killed process
    never leaves half a file). Entries are deflated, except those named in ``stored``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, content in entries.items():
                archive.writestr(name, content, compress_type=zipfile.ZIP_STORED
                                 if name in stored else zipfile.ZIP_DEFLATED)
        with tmp.open("rb") as file:
            os.fsync(file.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def model_counters(model: Any) -> dict[str, Any]:
    """The counters of an SB3 algorithm that ``--resume`` restores besides the step count:
    updates done, episodes, and the recent episodes' returns/lengths/times."""
    return {"n_updates": int(model._n_updates), "episode_num": int(model._episode_num),
            "ep_info_buffer": [{key: float(value) for key, value in info.items()}
                               for info in model.ep_info_buffer or ()]}


# -- the agent -------------------------------------------------------------------------------

def masked_logits(policy: Any, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The policy's action logits for a batch of observations; illegal actions get -inf."""
    with torch.inference_mode():
        obs = torch.as_tensor(observations, dtype=torch.float32)  # SB3's preprocessing of a Box
        logits = action_logits(policy, obs).numpy()
    return np.where(masks, logits, MASKED_LOGIT)


class PolicyEvaluator:
    """A policy network as a tree search sees it (the ``az`` players' ``Evaluate``): numpy
    observations and masks in; the actor's logits ``(B, A)`` float64 with ``-inf`` where
    ``masks`` is False, and the value head's estimate ``(B,)`` of the return for the side to
    move (the learner is the side to move at each of its decisions) out; no gradients.

    Args:
        policy: the network (in eval mode).
    """

    def __init__(self, policy: MaskableActorCriticPolicy) -> None:
        self.policy = policy

    def __call__(self, observations: np.ndarray, masks: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        with torch.inference_mode():
            logits, values = logits_and_values(self.policy, torch.as_tensor(
                observations, dtype=torch.float32))
        return (np.where(masks, logits.numpy().astype(np.float64), MASKED_LOGIT),
                values.numpy().astype(np.float64))


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
        CheckpointError: corrupt, not a boardgym checkpoint (or one that needs unpickling),
            or trained for another game; the message names the fix.
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
    torch.set_num_threads(INFERENCE_THREADS)
    policy, metadata = load_network(path, game)
    return PolicyAgent(policy, metadata, stochastic=stochastic, name=str(path))


# -- converting a file of the pickled format ---------------------------------------------------

CLASS_NAME = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>")
"""The class name in the text stable-baselines3 writes beside a pickled class."""
METHOD_OWNER = re.compile(r"<function (\w+)\.__init__ ")
"""A policy class's name, read off the text of its ``__init__`` in the same record."""
SERIALIZED = ":serialized:"


def _readable_class(value: Any, pattern: re.Pattern[str], what: str, old: Path) -> str:
    """The class name stable-baselines3 wrote as readable text beside a pickled class (the
    pickle itself, under ``:serialized:``, is never read).

    Raises:
        CheckpointError: no such text.
    """
    texts = [value] if isinstance(value, str) else \
        [text for key, text in value.items() if key != SERIALIZED and isinstance(text, str)] \
        if isinstance(value, dict) else []
    for text in texts:
        found = pattern.search(text)
        if found:
            return found.group(1)
    raise CheckpointError(f"{old}: its {what} is not named in readable form; not an old "
                          "boardgym checkpoint")


def _signature_default(cls: type, name: str) -> Any:
    """The default of the constructor argument ``name`` of ``cls``, or of the first base
    class that names it (a subclass may pass it on through ``**kwargs``): what SB3 used when
    the run did not set it."""
    for klass in cls.__mro__:
        parameter = inspect.signature(klass).parameters.get(name)
        if parameter is not None:
            return parameter.default
    raise CheckpointError(f"{cls.__name__} takes no {name}")


def _old_architecture(data: dict[str, Any], old: Path) -> dict[str, Any]:
    """The architecture record of an old (format 1) checkpoint, from the readable parts of
    its ``data`` entry: class names as text, sizes as JSON."""
    kwargs = data.get("policy_kwargs")
    if not isinstance(kwargs, dict):
        raise CheckpointError(f"{old}: no readable policy_kwargs; not an old boardgym checkpoint")
    policy_name = _readable_class(data.get("policy_class"), METHOD_OWNER, "policy class", old)
    policy_class = POLICIES.get(policy_name)
    activation = kwargs.get("activation_fn")
    net_arch = kwargs.get("net_arch", {})  # a list: the same layers for both heads
    return {
        "class": policy_name,
        "features_extractor": _readable_class(kwargs.get("features_extractor_class"),
                                              CLASS_NAME, "feature extractor", old),
        "features_extractor_kwargs": kwargs.get("features_extractor_kwargs", {}),
        "net_arch": {head: net_arch for head in HEADS} if isinstance(net_arch, list)
        else net_arch,
        "activation": _readable_class(activation, CLASS_NAME, "activation", old)
        if activation is not None or policy_class is None
        else _signature_default(policy_class, "activation_fn").__name__,
        "share_features_extractor": kwargs.get(
            "share_features_extractor",
            policy_class is None or _signature_default(policy_class, "share_features_extractor")),
    }


def _old_counters(data: dict[str, Any]) -> dict[str, Any]:
    """``--resume``'s counters from the readable parts of an old ``data`` entry (the recent
    episodes' buffer is pickled there, so it starts empty)."""
    return {"n_updates": int(data.get("_n_updates", 0)),
            "episode_num": int(data.get("_episode_num", 0)), "ep_info_buffer": []}


def convert(old: str | Path, new: str | Path) -> dict[str, Any]:
    """Convert a checkpoint of the pickled format (boardgym before format 2) to this one
    without unpickling anything: the architecture from the readable text of its ``data``
    entry (checked against the allow-lists), the weights and optimizer state read with
    ``torch.load(weights_only=True)`` and loaded key for key.

    Returns:
        The new file's ``boardgym.json`` record.

    Raises:
        FileNotFoundError: no file at ``old``.
        CheckpointError: ``old`` is not an old boardgym checkpoint, or its weights do not fit
            its architecture.
    """
    old = Path(old)
    record = read_entry(old, METADATA_ENTRY)
    if record is None:
        raise CheckpointError(f"{old} is not a boardgym checkpoint (no {METADATA_ENTRY})")
    if record.get("format_version") == FORMAT_VERSION:
        raise CheckpointError(f"{old} is already in format {FORMAT_VERSION}; nothing to convert")
    data = read_entry(old, PICKLED_ENTRY)
    if data is None:
        raise CheckpointError(f"{old} has no {PICKLED_ENTRY} entry; not an old boardgym "
                              "checkpoint")
    game, env_kwargs = str(record.get("game")), record.get("env_kwargs", {})
    steps = int(data.get("num_timesteps", record.get("num_timesteps", 0)))
    metadata = checkpoint_metadata(game, env_kwargs, steps, _old_architecture(data, old))
    policy = build_policy(metadata, old)
    load_state(policy, read_tensors(old, POLICY_ENTRY), old, POLICY_ENTRY)
    load_state(policy.optimizer, read_tensors(old, OPTIMIZER_ENTRY), old, OPTIMIZER_ENTRY)
    train_state = read_entry(old, TRAIN_STATE_ENTRY)
    entries = {} if train_state is None else {
        TRAIN_STATE_ENTRY: {**train_state, "counters": _old_counters(data)}}
    return write_checkpoint(new, policy, game, env_kwargs, steps, entries)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m boardgym.agents.policy convert OLD NEW``: returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m boardgym.agents.policy",
        description="Convert a boardgym checkpoint of the old pickled format "
                    f"(format {PICKLED_FORMAT}) to the pickle-free format {FORMAT_VERSION}, "
                    "without unpickling it: the architecture from its readable record, the "
                    "weights as plain tensors.")
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("convert", help="convert OLD to NEW")
    command.add_argument("old", type=Path, help="the old checkpoint")
    command.add_argument("new", type=Path, help="where to write the new one (may be OLD)")
    args = parser.parse_args(argv)
    try:
        metadata = convert(args.old, args.new)
    except (ValueError, OSError) as error:
        parser.error(one_line(str(error)))
    print(f"{args.new}: {metadata['game']} checkpoint, format {FORMAT_VERSION}, "
          f"{metadata['num_timesteps']} steps; plays as {args.old}: the same weights, "
          "read as plain tensors")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
