"""The az checkpoint format: a zip of plain data, read without unpickling anything.

- ``az.json``: the record: ``format_version`` (``FORMAT_VERSION``), ``game``, its board
  options ``env_kwargs``, ``architecture`` (``network.Architecture``: the board's planes, rows,
  cols and actions, the tower's channels, blocks and hidden units), and how long it trained
  (``iterations``, ``positions``: self-play positions seen).
- ``az_model.pth``: the network's state dict, read with ``torch.load(weights_only=True)``.
- ``az_optimizer.pth`` and ``az_train.json`` (run checkpoints only): what ``--resume``
  needs; players ignore them.

The format itself (reading zips and entries, record checks, tensors, atomic writes) is
``agents.checkpoint``'s, shared with the policy checkpoints: the same one-line
``CheckpointError`` for a missing, corrupt, pickled or foreign file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from boardgym.agents.az.network import Architecture, AzNet
from boardgym.agents.checkpoint import (
    AZ_RECORD_ENTRY,
    CheckpointError,
    board_kwargs,
    check_game,
    check_keys,
    check_size,
    check_version,
    holds_entry,
    load_state,
    open_checkpoint,
    read_entry,
    read_tensors,
    record_board,
    tensor_bytes,
    write_zip_atomic,
)
from boardgym.envs.games import canonical_name

RECORD_ENTRY = AZ_RECORD_ENTRY
MODEL_ENTRY = "az_model.pth"
OPTIMIZER_ENTRY = "az_optimizer.pth"
TRAIN_STATE_ENTRY = "az_train.json"
FORMAT_VERSION = 1
RECORD_TYPES: dict[str, type] = {"format_version": int, "game": str, "env_kwargs": dict,
                                 "architecture": dict, "iterations": int, "positions": int}
"""Every key of ``az.json`` and its JSON type."""
ARCHITECTURE_TYPES: dict[str, type] = {name: int for name in Architecture.__dataclass_fields__}
"""Every key of the architecture record (all integers)."""
BOARD_KEYS = ("planes", "rows", "cols", "n_actions")
"""The architecture's keys that the game and board fix."""


def is_az_checkpoint(path: str | Path) -> bool:
    """True when ``path`` is a readable zip holding an ``az.json`` record (any other file,
    or no file, is not an az checkpoint)."""
    return holds_entry(path, RECORD_ENTRY)


def az_record(game: str, env_kwargs: dict[str, Any], arch: Architecture, iterations: int = 0,
              positions: int = 0) -> dict[str, Any]:
    """The ``az.json`` record of a network of ``arch`` for ``game`` on the board of
    ``env_kwargs`` after ``iterations`` training iterations over ``positions`` positions."""
    return {"format_version": FORMAT_VERSION, "game": canonical_name(game),
            "env_kwargs": board_kwargs(env_kwargs), "architecture": arch.to_dict(),
            "iterations": int(iterations), "positions": int(positions)}


def check_record(record: dict[str, Any], path: str | Path) -> Architecture:
    """The architecture of a checked ``az.json`` record.

    Raises:
        CheckpointError: another format version, a key missing or of another type, an
            unknown game, sizes out of range, or a board that does not fit the game.
    """
    where = f"az checkpoint {path}"
    check_version(record, FORMAT_VERSION, where)
    check_keys(record, RECORD_TYPES, f"{where}: {RECORD_ENTRY}")
    check_keys(record["architecture"], ARCHITECTURE_TYPES, f"{where}: its architecture")
    sizes = {name: check_size(value, name, where, least=0 if name == "blocks" else 1)
             for name, value in record["architecture"].items()}
    arch = Architecture(**sizes)
    shape, n_actions = record_board(record, where)
    if [arch.planes, arch.rows, arch.cols, arch.n_actions] != [*shape, n_actions]:
        board = record["env_kwargs"] or "the default board"
        raise CheckpointError(f"{where}: its architecture's board {BOARD_KEYS} does not fit "
                              f"{record['game']} with {board}; the file is damaged: retrain it")
    return arch


def read_record(path: str | Path) -> tuple[dict[str, Any], Architecture]:
    """The checked ``az.json`` record of the checkpoint at ``path`` and its architecture.

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: not an az checkpoint of this format (the message says why).
    """
    record = read_entry(path, RECORD_ENTRY)
    if record is None:
        raise CheckpointError(f"{path} is not an az checkpoint (no {RECORD_ENTRY}); use one "
                              "written by `boardgym az`")
    return record, check_record(record, path)


def load_network(path: str | Path, game: str | None = None) -> tuple[AzNet, dict[str, Any]]:
    """The network stored at ``path`` (CPU, eval mode) and its checked record; nothing is
    unpickled. With ``game``, the checkpoint must be for that game (``check_game``).

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: not an az checkpoint, one for another game than ``game``, or
            weights that do not fit its record.
    """
    record, arch = read_record(path)
    if game is not None:
        check_game(record, game, path, kind="az checkpoint")
    net = AzNet(arch)
    load_state(net, read_tensors(path, MODEL_ENTRY), path, MODEL_ENTRY)
    return net.eval(), record


def write_checkpoint(path: str | Path, net: AzNet, record: dict[str, Any],
                     optimizer: torch.optim.Optimizer | None = None,
                     train_state: dict[str, Any] | None = None,
                     tensors: dict[str, dict[str, torch.Tensor]] | None = None) -> None:
    """Write ``net`` with its ``record`` (``az_record``) to ``path`` atomically: the zip goes
    to a temporary file in the same folder, is flushed to disk and renamed.

    Args:
        path: the ``.zip`` to write.
        net: the network.
        record: its ``az.json`` record.
        optimizer: its optimizer, for ``--resume`` (its state as plain tensors).
        train_state: JSON data for ``--resume`` (``az_train.json``).
        tensors: more entries of plain tensors (name -> state dict), stored uncompressed
            (a training run's replay buffer).
    """
    entries: dict[str, str | bytes] = {RECORD_ENTRY: json.dumps(record, indent=1),
                                       MODEL_ENTRY: tensor_bytes(net.state_dict())}
    if optimizer is not None:
        entries[OPTIMIZER_ENTRY] = tensor_bytes(optimizer.state_dict())
    if train_state is not None:
        entries[TRAIN_STATE_ENTRY] = json.dumps(train_state)
    extra = {name: tensor_bytes(state) for name, state in (tensors or {}).items()}
    write_zip_atomic(path, {**entries, **extra}, stored=frozenset(extra))


__all__ = ["FORMAT_VERSION", "MODEL_ENTRY", "OPTIMIZER_ENTRY", "RECORD_ENTRY",
           "TRAIN_STATE_ENTRY", "CheckpointError", "az_record", "check_record",
           "is_az_checkpoint", "load_network", "open_checkpoint", "read_record",
           "write_checkpoint"]
