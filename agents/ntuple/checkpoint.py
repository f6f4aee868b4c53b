"""The n-tuple checkpoint format: a zip of a JSON record and plain arrays, no pickle, no torch.

- ``ntuple.json``: the record: ``format_version`` (``FORMAT_VERSION``), then the network's
  own record (``NTupleNet.record``: ``game``, ``env_kwargs``, ``layout``, ``tuples``,
  ``values``, ``symmetry``, ``stages``, ``stage_first``, ``stage_span``, ``games``).
- ``ntuple_weights.npy``: the weights, a 1-D float32 ``.npy`` array read with
  ``numpy.load(allow_pickle=False)``, its length what the record's tuples and stages need,
  every entry finite.
- Run checkpoints (``boardgym td``) add ``ntuple_tcl_n.npy`` and ``ntuple_tcl_a.npy`` (the
  TCL accumulators, plain float32 arrays) and ``ntuple_train.json`` (what ``--resume``
  needs); players ignore them.

Zips, entries, record checks and atomic writes are ``agents.checkpoint``'s, shared with the
other checkpoints: the same one-line ``CheckpointError`` for a missing, corrupt or foreign
file.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from boardgym.agents.checkpoint import (
    CheckpointError,
    check_game,
    check_keys,
    check_version,
    holds_entry,
    open_checkpoint,
    read_bytes,
    read_entry,
    write_zip_atomic,
)
from boardgym.agents.ntuple.model import NTupleNet
from boardgym.envs.games.core import one_line

RECORD_ENTRY = "ntuple.json"
WEIGHTS_ENTRY = "ntuple_weights.npy"
TRAINER_ENTRIES = ("ntuple_tcl_n.npy", "ntuple_tcl_a.npy")
TRAIN_STATE_ENTRY = "ntuple_train.json"
FORMAT_VERSION = 1
RECORD_TYPES: dict[str, type] = {
    "format_version": int, "game": str, "env_kwargs": dict, "layout": str, "tuples": list,
    "values": int, "symmetry": str, "stages": int, "stage_first": int, "stage_span": int,
    "games": int}
"""Every key of ``ntuple.json`` and its JSON type."""


def is_ntuple_checkpoint(path: str | Path) -> bool:
    """True when ``path`` is a readable zip holding an ``ntuple.json`` record."""
    return holds_entry(path, RECORD_ENTRY)


def array_bytes(array: np.ndarray) -> bytes:
    """``array`` as a ``.npy`` file (no pickle)."""
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def save(path: str | Path, net: NTupleNet, extra: dict[str, str | bytes] | None = None) -> None:
    """Write ``net`` (and ``extra`` entries) to ``path`` atomically."""
    record = {"format_version": FORMAT_VERSION, **net.record()}
    write_zip_atomic(path, {RECORD_ENTRY: json.dumps(record, indent=1),
                            WEIGHTS_ENTRY: array_bytes(net.weights), **(extra or {})})


def read_array(path: str | Path, name: str, dtype: type = np.float32) -> np.ndarray:
    """The 1-D array of ``dtype`` in entry ``name``, read without unpickling.

    Raises:
        CheckpointError: the entry is missing, not a ``.npy`` array of that kind, or holds
            NaN or infinities.
    """
    with open_checkpoint(path) as archive:
        raw = read_bytes(archive, name, path)
    if raw is None:
        raise CheckpointError(f"n-tuple checkpoint {path} has no {name}; the file is damaged: "
                              "re-download it or retrain it")
    try:
        array = np.load(io.BytesIO(raw), allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise CheckpointError(f"n-tuple checkpoint {path}: {name} is not a plain .npy array "
                              f"({one_line(str(error))}); refused: re-download it or retrain "
                              "it") from error
    if not isinstance(array, np.ndarray) or array.dtype != dtype or array.ndim != 1:
        raise CheckpointError(f"n-tuple checkpoint {path}: {name} is not a 1-D "
                              f"{np.dtype(dtype).name} array; the file is damaged")
    if not np.isfinite(array).all():
        raise CheckpointError(f"n-tuple checkpoint {path}: {name} holds NaN or infinite "
                              "weights; the file is damaged: retrain it")
    return array


def load(path: str | Path, game: str | None = None) -> NTupleNet:
    """The network of the n-tuple checkpoint at ``path`` (or ``shipped:NAME``), checked to
    be for ``game`` when given.

    Raises:
        FileNotFoundError: no file there.
        CheckpointError: not an n-tuple checkpoint, another format version, a damaged
            record or weights, or another game.
    """
    record = read_entry(path, RECORD_ENTRY)
    where = f"n-tuple checkpoint {path}"
    if record is None:
        raise CheckpointError(f"{path} is not an n-tuple checkpoint (no {RECORD_ENTRY}); pass "
                              "a file written by `boardgym td`")
    check_version(record, FORMAT_VERSION, where)
    check_keys(record, RECORD_TYPES, f"{where}: {RECORD_ENTRY}")
    if game is not None:
        check_game(record, game, path, kind="n-tuple checkpoint")
    weights = read_array(path, WEIGHTS_ENTRY)
    fields = {key: record[key] for key in RECORD_TYPES
              if key not in ("format_version", "symmetry")}
    try:
        net = NTupleNet(**fields, weights=weights)
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"{where} does not describe a network this boardgym can build "
                              f"({one_line(str(error))}); the file is damaged or from another "
                              "version: retrain it") from error
    if record["symmetry"] != net.board.symmetry:
        raise CheckpointError(f"{where} shares weights over {record['symmetry']!r}, not the "
                              f"board's {net.board.symmetry!r}; the file is damaged")
    return net


def read_train_state(path: str | Path) -> dict[str, Any] | None:
    """The ``ntuple_train.json`` record of a run checkpoint (None when absent)."""
    return read_entry(path, TRAIN_STATE_ENTRY)
