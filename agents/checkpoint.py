"""The file format of every boardgym checkpoint: a zip of plain data, read without unpickling.

Three kinds of checkpoint share it (torch is imported only to read or write tensors). A
*policy checkpoint* (``boardgym train`` / ``selfplay``; ``agents.ppo.policy`` builds and
plays it) holds:

- ``boardgym.json``: the record: ``format_version`` (``FORMAT_VERSION``), the ``game``, its
  board options ``env_kwargs``, the ``observation_shape`` and ``n_actions`` it was trained
  for, the ``algo`` and ``num_timesteps``, and ``policy``, the architecture (its keys are
  the PPO policies', checked by ``agents.ppo.architecture``).
- ``policy.pth`` and ``policy.optimizer.pth``: the state dicts of the policy and of its
  optimizer, as stable-baselines3 names and writes them (``torch.save``).
- ``boardgym_train.json`` (run checkpoints only): what ``--resume`` needs; agents ignore it.

An *az checkpoint* (``boardgym az``) holds an ``az.json`` record and its own entries
(``agents.az.checkpoint``); an *n-tuple checkpoint* (``boardgym td``) an ``ntuple.json``
record and its weights as a plain ``.npy`` array (``agents.ntuple.checkpoint``).

Written once, here, for all: the entry names, the checks of a record (keys and JSON types,
sizes, the game and board, the format version), opening a zip and reading its entries with
a size limit, tensors read with ``torch.load(weights_only=True)``, and atomic writes
(temporary file, then rename). Anything unusable (a missing or corrupt file, an entry that
needs unpickling, such as the ``data`` entry of the SB3 zips boardgym wrote before format 2,
a damaged or foreign record) is refused with a one-line ``CheckpointError`` naming the fix.
"""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boardgym.agents import shipped
from boardgym.envs.games import GAMES, canonical_name, rules
from boardgym.envs.games.core import one_line
from boardgym.files import atomic_path

if TYPE_CHECKING:
    import torch

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
DEFAULT_ALGO = "MaskablePPO"
MAX_WIDTH = 4096
"""The widest layer (and most channels, blocks, features) a checkpoint may ask for."""
MAX_ENTRY_BYTES = 256 * 2 ** 20
"""The largest entry read from a checkpoint (a guard against zip bombs)."""
CONVERT_HINT = ("convert it with `python -m boardgym.agents.ppo.convert OLD.zip NEW.zip` "
                "(it reads the old file without unpickling)")
RUN_CHECKPOINTS = ("checkpoints/best.zip", "checkpoints/last.zip")
"""The checkpoints of a run folder, in the order a folder given as a checkpoint names them."""
PICKLED_GLOBAL = "global"
"""What torch's ``weights_only`` refusal says of an object that needs unpickling (an
``Unsupported global``), unlike its refusal of bytes that are no pickle at all."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: corrupt, not boardgym's, in a format that needs
    unpickling, or for another game/board. The message is one line and names the fix."""


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


def checkpoint_metadata(game: str, env_kwargs: dict[str, Any], num_timesteps: int,
                        architecture: dict[str, Any], algo: str = DEFAULT_ALGO
                        ) -> dict[str, Any]:
    """The ``boardgym.json`` record of a policy with ``architecture`` (its JSON record,
    ``agents.ppo.architecture.architecture_of``) trained on ``game`` with ``env_kwargs`` for
    ``num_timesteps`` steps."""
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


def check_version(record: dict[str, Any], version: int, where: str) -> None:
    """Check that ``record``'s ``format_version`` is ``version`` (a record without one is
    left to ``check_keys``).

    Raises:
        CheckpointError: another version.
    """
    found = record.get("format_version", version)
    if found != version:
        raise CheckpointError(f"{where} has format_version {found!r}; this boardgym reads "
                              f"{version}: upgrade boardgym or retrain it")


def record_board(record: dict[str, Any], where: str) -> tuple[list[int], int]:
    """The observation shape and number of actions of the game and board a record names
    (its ``game`` and ``env_kwargs``, already of their JSON types).

    Raises:
        CheckpointError: a game or board this boardgym does not know.
    """
    try:
        return board_facts(canonical_name(record["game"]), record["env_kwargs"])
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"{where} is for a game or board this boardgym does not know "
                              f"({one_line(str(error))})") from error


def check_metadata(metadata: dict[str, Any], path: str | Path) -> dict[str, Any]:
    """``metadata`` (a ``boardgym.json`` record), its own fields checked; the architecture
    under ``policy`` is the PPO policies' to check (``agents.ppo.architecture``).

    Raises:
        CheckpointError: the pickled format, another version, a key missing or of another
            type, an unknown game, or a shape that does not fit the game and board.
    """
    where = f"checkpoint {path}"
    if metadata.get("format_version") == PICKLED_FORMAT:
        raise pickled_format(path)
    check_version(metadata, FORMAT_VERSION, where)
    check_keys(metadata, METADATA_TYPES, f"{where}: {METADATA_ENTRY}")
    facts = record_board(metadata, where)
    if facts != (metadata["observation_shape"], metadata["n_actions"]):
        raise CheckpointError(f"{where}: observation {metadata['observation_shape']} "
                              f"and {metadata['n_actions']} actions do not fit "
                              f"{canonical_name(metadata['game'])} with "
                              f"{metadata['env_kwargs'] or 'the default board'}; the file is "
                              "damaged: re-download it or retrain it")
    return metadata


def check_game(metadata: dict[str, Any], game: str, path: str | Path,
               kind: str = "checkpoint") -> None:
    """Raise a CheckpointError when ``metadata`` (a policy checkpoint's, or an az record:
    ``kind`` names which in the message) is not for ``game``."""
    trained = metadata.get("game")
    if trained != canonical_name(game):
        raise CheckpointError(f"{kind} {path} was trained for {trained!r}, not "
                              f"{canonical_name(game)!r}; use it with `{trained}` or pass a "
                              f"{canonical_name(game)} checkpoint")


def pickled_format(path: str | Path) -> CheckpointError:
    """The refusal of a checkpoint in the pickled format."""
    return CheckpointError(f"checkpoint {path} is in the old stable-baselines3 format, which "
                           f"only loads by unpickling (it could run any code); {CONVERT_HINT}")


# -- reading ---------------------------------------------------------------------------------

def checkpoint_file(path: str | Path) -> Path:
    """The file of the checkpoint ``path`` (or ``shipped:NAME``: a shipped checkpoint).

    Raises:
        FileNotFoundError: no file at ``path`` (the message says where it looked, and the
            ``shipped:`` name of a shipped checkpoint of that file name), or no shipped
            checkpoint of that name (the message lists them).
        CheckpointError: ``path`` is a folder (the message names the checkpoints of a run
            folder).
    """
    file = shipped.resolve(path)
    if file.is_dir():
        raise CheckpointError(folder_message(path, file))
    if not file.is_file():
        raise FileNotFoundError(f"checkpoint {path} not found: {shipped.missing(file)} (or "
                                "train one: `boardgym train GAME`)")
    return file


def folder_message(path: str | Path, folder: Path) -> str:
    """What to say of a folder given as a checkpoint: the checkpoints inside it a run
    folder has (``RUN_CHECKPOINTS``), else its ``.zip`` files, else how to make one."""
    inside = [folder / name for name in RUN_CHECKPOINTS] + sorted(folder.glob("*.zip"))
    found = [str(Path(path) / candidate.relative_to(folder)) for candidate in inside
             if candidate.is_file()]
    if found:
        return (f"checkpoint {path} is a folder, not a checkpoint file; pass one of its "
                f"checkpoints: {', '.join(found[:len(RUN_CHECKPOINTS)])}")
    return (f"checkpoint {path} is a folder ({folder.absolute()}) with no checkpoint in it; "
            "pass a checkpoint file (.zip), or shipped:NAME (or train one: `boardgym train "
            "GAME`)")


@contextmanager
def open_checkpoint(path: str | Path) -> Iterator[zipfile.ZipFile]:
    """The checkpoint at ``path`` (or ``shipped:NAME``: a shipped checkpoint), open as a zip.

    Raises:
        FileNotFoundError: as ``checkpoint_file``.
        CheckpointError: a folder, or not a readable zip (not a checkpoint, or a damaged
            one).
    """
    file = checkpoint_file(path)
    try:
        with zipfile.ZipFile(file) as archive:
            yield archive
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as error:
        raise CheckpointError(f"checkpoint {path} is not a readable zip file "
                              f"({one_line(str(error))}): not a boardgym checkpoint, or a "
                              "corrupt one; pass a checkpoint written by `boardgym train` or "
                              "`boardgym az` (or shipped:NAME), or re-download it") from error


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
    """True when ``path`` (or ``shipped:NAME``) is a readable zip holding an entry of one of
    ``names``; any other file, or no file, is not (nothing is read beyond the zip's
    directory)."""
    try:
        with zipfile.ZipFile(shipped.resolve(path)) as archive:
            return not set(names).isdisjoint(archive.namelist())
    except (OSError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError):
        return False


def is_policy_checkpoint(path: str | Path) -> bool:
    """True when ``path`` is a zip holding a ``boardgym.json`` record or the pickled
    format's ``data`` entry (so that loading it says what it is)."""
    return holds_entry(path, METADATA_ENTRY, PICKLED_ENTRY)


def read_policy_record(path: str | Path) -> dict[str, Any]:
    """The ``boardgym.json`` record of the policy checkpoint at ``path``, its own fields
    checked (``check_metadata``; the architecture is ``agents.ppo.policy.read_metadata``'s).

    Raises:
        FileNotFoundError: no file at ``path``.
        CheckpointError: corrupt, in the pickled format, an az network, or not a boardgym
            checkpoint.
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
    import torch  # the n-tuple checkpoints share this module and need no torch

    try:
        state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        if PICKLED_GLOBAL in str(error).lower():
            raise CheckpointError(f"checkpoint {path}: {name} holds objects that only load by "
                                  "unpickling (it could run any code), not plain tensors; "
                                  f"refused; {CONVERT_HINT}") from error
        raise not_tensors(path, name) from error
    except Exception as error:  # torch raises many kinds on damaged data
        raise not_tensors(path, name) from error
    if not isinstance(state, dict) or not all(isinstance(key, str) for key in state):
        raise CheckpointError(f"checkpoint {path}: {name} is not a state dict; re-download it "
                              "or retrain it")
    return state


def load_state(module: torch.nn.Module | torch.optim.Optimizer, state: dict[str, Any],
               path: str | Path, name: str) -> None:
    """Load ``state`` (entry ``name`` of ``path``) into ``module``, every key matched.

    Raises:
        CheckpointError: the state does not fit ``module``.
    """
    import torch

    try:
        if isinstance(module, torch.nn.Module):
            module.load_state_dict(state, strict=True)
        else:
            module.load_state_dict(state)
    except (RuntimeError, ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"checkpoint {path}: {name} does not fit the architecture of its "
                              f"record ({one_line(str(error))}); retrain it") from error


def not_tensors(path: str | Path, name: str) -> CheckpointError:
    """The refusal of an entry that is no ``torch.save`` data at all (damaged bytes)."""
    return CheckpointError(f"checkpoint {path}: {name} is not torch tensor data (not written "
                           "by torch.save, or corrupt); the file is damaged or not "
                           "boardgym's: re-download it or retrain it")


# -- writing ---------------------------------------------------------------------------------

def tensor_bytes(state: dict[str, Any]) -> bytes:
    """``state`` as ``torch.save`` writes it, every tensor a CPU copy (``on_cpu``): a file
    loads on any machine, whatever device trained it."""
    import torch

    buffer = io.BytesIO()
    torch.save(on_cpu(state), buffer)
    return buffer.getvalue()


def on_cpu(data: Any) -> Any:
    """``data`` (tensors in dicts, lists and tuples, as state dicts hold them) with every
    tensor on another device copied to the CPU, detached; CPU tensors and everything else
    stay as they are, and a dict keeps its type and its ``_metadata`` (a module's state
    dict's), so that a CPU state is saved byte for byte as before."""
    import torch

    if isinstance(data, torch.Tensor):
        return data if data.device.type == "cpu" else data.detach().cpu()
    if isinstance(data, dict):
        copy = type(data)((key, on_cpu(value)) for key, value in data.items())
        if hasattr(data, "_metadata"):
            copy._metadata = data._metadata  # type: ignore[attr-defined]
        return copy
    if isinstance(data, (list, tuple)) and type(data) in (list, tuple):
        return type(data)(on_cpu(value) for value in data)
    return data


def write_zip_atomic(path: str | Path, entries: dict[str, str | bytes],
                     stored: frozenset[str] = frozenset()) -> None:
    """Write a zip of ``entries`` (name -> content) to ``path`` atomically: to a temporary
    file in the same folder, flushed to disk, then renamed over ``path`` (a killed process
    never leaves half a file). Entries are deflated, except those named in ``stored``."""
    with atomic_path(path) as tmp, \
            zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            archive.writestr(name, content, compress_type=zipfile.ZIP_STORED
                             if name in stored else zipfile.ZIP_DEFLATED)


__all__ = ["AZ_RECORD_ENTRY", "FORMAT_VERSION", "METADATA_ENTRY", "OPTIMIZER_ENTRY",
           "POLICY_ENTRY", "TRAIN_STATE_ENTRY", "CheckpointError", "board_facts",
           "board_kwargs", "check_game", "check_keys", "check_metadata", "check_size",
           "check_version", "checkpoint_file", "checkpoint_metadata", "holds_entry",
           "initial_state", "is_policy_checkpoint", "load_state", "open_checkpoint", "read_entry",
           "read_policy_record", "read_tensors", "record_board", "tensor_bytes",
           "write_zip_atomic"]
