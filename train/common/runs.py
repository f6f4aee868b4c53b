"""Run folders: where a training run keeps its config, command, checkpoints and history.

A run folder ``runs/{game}__{algo}__{seed}__{time}/`` holds at least ``config.yaml`` (the
resolved config, ``train.common.config``), ``command.txt`` (the exact commands, resumes
included), ``checkpoints/last.zip`` (with everything ``--resume`` needs) and ``eval.json``
(the evaluations, which ``boardgym plot`` draws); each trainer adds its own files.
``--resume`` takes the folder or its ``checkpoints/last.zip`` (``run_directory``). Every
file is written atomically (a temporary file in the same folder, then a rename), so a
process killed at any moment leaves the old file or the new one, never half of one. A
command that fails before a new run's first checkpoint removes its folder
(``removed_on_error``); a resumed run may change only its config's ``RESUMABLE_KEYS``
(``open_run_folder``).
"""

from __future__ import annotations

import base64
import json
import shlex
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml

from boardgym.envs.games import canonical_name
from boardgym.files import atomic_path
from boardgym.train.common.config import RunConfig, load_config, read_yaml

RUNS_DIR = Path("runs")
"""Where run folders go unless ``--runs-dir`` says otherwise."""
CHECKPOINTS = "checkpoints"
LAST = "last.zip"
CONFIG_FILE, COMMAND_FILE = "config.yaml", "command.txt"
TENSORBOARD_DIR = "tb"
EVAL_FILE = "eval.json"
"""The run's evaluation records, a JSON list (``boardgym plot`` reads it)."""

C = TypeVar("C", bound=RunConfig)
T = TypeVar("T")


# -- atomic writes ---------------------------------------------------------------------------

def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: to a temporary file in the same folder, then
    renamed over ``path``; on any failure or interruption (Ctrl-C) the temporary file is
    removed and ``path`` is as it was."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically."""
    write_atomic(path, json.dumps(data, indent=1))


def save_config(config: RunConfig, path: Path) -> None:
    """Write ``config`` as YAML to ``path`` atomically."""
    write_atomic(path, yaml.safe_dump(config.to_dict(), sort_keys=False))


# -- new runs --------------------------------------------------------------------------------

def run_folder_name(game: str, algo: str, seed: int) -> str:
    """``{game}__{algo}__{seed}__{time}``."""
    return f"{game}__{algo}__{seed}__{time.strftime('%Y%m%d-%H%M%S')}"


def make_run_folder(runs_dir: Path, game: str, algo: str, seed: int) -> Path:
    """A new run folder under ``runs_dir`` (``run_folder_name``) with its ``checkpoints/``.

    Raises:
        ValueError: ``runs_dir`` cannot hold a new folder (the message names the path).
    """
    directory = runs_dir / run_folder_name(game, algo, seed)
    try:
        (directory / CHECKPOINTS).mkdir(parents=True, exist_ok=False)
    except OSError as error:
        raise ValueError(f"cannot create the run folder {directory} ({error.strerror}); "
                         "choose another --runs-dir") from error
    return directory


def new_run_folder(config: RunConfig, runs_dir: Path, algo: str) -> Path:
    """The folder of a new run of ``config`` (``make_run_folder``), with its ``config.yaml``.

    Raises:
        ValueError: ``runs_dir`` cannot hold a new folder (the message names the path).
    """
    directory = make_run_folder(runs_dir, config.game, algo, config.seed)
    save_config(config, directory / CONFIG_FILE)
    return directory


def record_command(directory: Path, argv: Sequence[str], script: str) -> None:
    """Append the exact command line (``boardgym SCRIPT ARGV...``) to the run's
    ``command.txt``."""
    path = directory / COMMAND_FILE
    before = path.read_text() if path.is_file() else ""
    write_atomic(path, before + shlex.join(["boardgym", script, *argv]) + "\n")


class RunFolder(Protocol):
    """What ``removed_on_error`` needs of a run (any trainer's)."""

    directory: Path

    @property
    def last(self) -> Path:
        """The run's newest checkpoint file."""
        ...


R = TypeVar("R", bound=RunFolder)


@contextmanager
def removed_on_error(run: R, fresh: bool) -> Iterator[R]:
    """Delete the folder of a ``fresh`` run if the body fails before its first checkpoint
    (a command that fails leaves no run folder behind)."""
    try:
        yield run
    except BaseException:
        if fresh and not run.last.is_file():
            shutil.rmtree(run.directory, ignore_errors=True)
        raise


# -- resumed runs ----------------------------------------------------------------------------

def open_run_folder(kind: type[C], directory: Path, overrides: dict[str, Any],
                    game: str | None, names: tuple[str, str],
                    resume: Callable[[C, Path], T]) -> T:
    """The run in ``directory``, resumed: its config with ``overrides`` (``resumed_config``),
    then ``resume(config, directory)``, the trainer's reading of its checkpoint. Everything
    is checked before anything is written: ``config.yaml`` is rewritten only once both
    succeeded.

    Args:
        kind: the trainer's config class.
        directory: the run folder.
        overrides: config keys given on the command line.
        game: the game named on the command line, if any (it must be the run's).
        names: the trainer's subcommand and folder tag (``resumed_config``).
        resume: the trainer's run from its config and folder (``last_checkpoint`` finds
            the checkpoint).

    Raises:
        ValueError: as ``resumed_config``, and whatever ``resume`` raises.
    """
    directory = run_directory(directory)
    config = resumed_config(kind, directory, overrides, game, *names)
    run = resume(config, directory)
    save_config(config, directory / CONFIG_FILE)
    return run


def run_directory(path: Path) -> Path:
    """The run folder ``--resume PATH`` names: ``path`` itself, or the folder of the run
    whose ``checkpoints/last.zip`` it is (what the trainers print as the file to resume
    from).

    Raises:
        ValueError: another checkpoint of a run folder (a resume continues from the last
            one; the message names the folder, and ``init_from`` to start from this one).
    """
    folder = path.parent.parent
    if path.parent.name != CHECKPOINTS or not (folder / CONFIG_FILE).is_file():
        return path
    if path.name != LAST:
        raise ValueError(f"--resume continues a run from its last checkpoint, not {path}: "
                         f"pass --resume {folder} (or a new run from this file with --set "
                         f"init_from={path})")
    return folder


def resumed_config(kind: type[C], directory: Path, overrides: dict[str, Any],
                   game: str | None, command: str, algo: str) -> C:
    """The config a resume of the run in ``directory`` continues with: its ``config.yaml``
    with ``overrides``, checked (nothing is written; the caller saves it once the
    checkpoint is read).

    Args:
        kind: the trainer's config class.
        directory: the run folder.
        overrides: config keys given on the command line.
        game: the game named on the command line, if any (it must be the run's).
        command, algo: the trainer's subcommand and folder tag (for the message when
            ``directory`` is not a run folder).

    Raises:
        ValueError: not a run folder, another game, or an override outside
            ``kind.RESUMABLE_KEYS`` (the message says what to do).
    """
    path = directory / CONFIG_FILE
    if not path.is_file():
        raise ValueError(f"{directory} is not a run folder (no {CONFIG_FILE}); pass a folder "
                         f"made by `boardgym {command}` (or its {CHECKPOINTS}/{LAST}), e.g. "
                         f"{RUNS_DIR}/{game or 'reversi'}__{algo}__0__...")
    saved = load_config(kind, str(read_yaml(path).get("game")), path)
    config = load_config(kind, saved.game, path, overrides)
    check_resume(saved, config, game)
    return config


def check_resume(saved: RunConfig, config: RunConfig, game: str | None) -> None:
    """Refuse a resume that asks for what the saved run cannot change.

    Args:
        saved: the run's config.
        config: the config with the command line's overrides.
        game: the game named on the command line, if any.

    Raises:
        ValueError: another game, or another value of a key outside the config's
            ``RESUMABLE_KEYS``.
    """
    if game is not None and canonical_name(game) != saved.game:
        raise ValueError(f"the run is a {saved.game} run, not {game}; drop GAME or start a "
                         "new run")
    before, after, resumable = saved.to_dict(), config.to_dict(), config.RESUMABLE_KEYS
    fixed = sorted(key for key in after if key not in resumable and after[key] != before[key])
    if fixed:
        raise ValueError(f"--resume keeps the run's {', '.join(fixed)}; only "
                         f"{', '.join(sorted(resumable))} can change (start a new run "
                         "to change the others)")


def checkpoint_file(directory: Path, name: str = LAST) -> Path:
    """The checkpoint ``name`` of the run in ``directory`` (default: ``last.zip``)."""
    return directory / CHECKPOINTS / name


def last_checkpoint(directory: Path) -> Path:
    """The run's ``checkpoints/last.zip``.

    Raises:
        ValueError: the run has no checkpoint yet.
    """
    last = checkpoint_file(directory)
    if not last.is_file():
        raise ValueError(f"{directory} has no checkpoint yet ({last}); start a new run instead")
    return last


def check_train_state(state: dict[str, Any] | None, keys: Iterable[str],
                      last: Path) -> dict[str, Any]:
    """``state``, the training state read from checkpoint ``last``, if it has every key.

    Raises:
        CheckpointError: no state, or one without some of ``keys`` (the message names
            them).
    """
    from boardgym.agents.checkpoint import CheckpointError

    if state is None:
        raise CheckpointError(f"{last} has no training state; it cannot be resumed")
    missing = [key for key in keys if key not in state]
    if missing:
        raise CheckpointError(f"{last}: its training state lacks {', '.join(missing)}; it "
                         "cannot be resumed (start a new run)")
    return state


# -- torch's RNG stream ----------------------------------------------------------------------

def torch_rng_text() -> str:
    """torch's global RNG state as text (base64), for a JSON training state."""
    import torch

    return base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode()


def set_torch_rng(text: str) -> None:
    """Restore torch's global RNG state saved by ``torch_rng_text``."""
    import numpy as np
    import torch

    raw = np.frombuffer(base64.b64decode(text), dtype=np.uint8).copy()
    torch.set_rng_state(torch.from_numpy(raw))
