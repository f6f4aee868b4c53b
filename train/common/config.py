"""Training configs as data: one YAML file per game and trainer, typed by a dataclass.

Every trainer's config is a dataclass derived from ``RunConfig``: its fields are the keys
(each documented by the docstring under it), ``HYPERPARAMS`` names the game's file in
``train/hyperparams/`` and ``load_config`` reads it. ``--config FILE`` replaces that file and
``--set key=value`` overrides single keys (the value is parsed as YAML, so ``--set
net_arch=[64,64]`` and ``--set opponents=[random]`` work). Unknown keys, values of the wrong
type and integers out of range fail at construction, each with a one-line message naming
the key and the ``--set`` that mends it. A run folder keeps the resolved config as
``config.yaml`` (``train.common.runs``), which ``load_config`` reads back on ``--resume``.
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import yaml

from boardgym.envs.games import canonical_name

HYPERPARAMS_DIR = Path(__file__).resolve().parents[1] / "hyperparams"
"""The shipped hyperparameter files, one per game and trainer."""
SEED_LIMIT = 2 ** 32
"""Seeds are below this (numpy's global generator takes 32-bit seeds)."""
MAX_TORCH_THREADS = os.cpu_count() or 1
"""More torch threads than CPUs never helps (and very many crash the process)."""
LR_SCHEDULES = ("constant", "linear")
OPENING_BOUNDS = 2
"""``opening_plies`` is ``[low, high]``."""
TYPE_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string",
              list: "a list", dict: "a mapping"}
"""How a config key's type is named in error messages."""


@dataclass
class RunConfig:
    """The keys every trainer's config starts with, and the checks every config gets.

    A subclass adds its keys as fields, sets the class variables below and checks its own
    ranges and choices in ``validate``; construction canonicalises ``game``, checks each
    field's type against its annotation (``checked_type``), then ``POSITIVE_KEYS`` and
    ``NON_NEGATIVE_KEYS``, then calls ``validate``.

    Raises:
        ValueError: on construction, an unknown game or a bad value (the message names
            the key and the fix).
    """

    HYPERPARAMS: ClassVar[str] = "{game}.yaml"
    """The game's file in ``HYPERPARAMS_DIR`` (``{game}``: the canonical game name)."""
    POSITIVE_KEYS: ClassVar[tuple[str, ...]] = ()
    """Integer keys that must be positive when set (None: the key's default)."""
    NON_NEGATIVE_KEYS: ClassVar[tuple[str, ...]] = ()
    """Integer keys where 0 means none or off."""
    RESUMABLE_KEYS: ClassVar[frozenset[str]] = frozenset()
    """The keys ``--resume`` may change; the others are fixed by the saved run."""

    game: str
    """The canonical game name (an alias is accepted and replaced)."""
    seed: int = 0
    """Seeds every random stream of the run; below ``SEED_LIMIT``."""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """The board options (four-in-a-row ``rows``, ``columns``, ``connect``) and, for the
    envs that take one, other keyword arguments (``reward``)."""

    def __post_init__(self) -> None:
        self.game = canonical_name(self.game)
        hints = typing.get_type_hints(type(self))
        for name in self.keys():
            setattr(self, name, checked_type(name, getattr(self, name), hints[name]))
        for name in self.POSITIVE_KEYS:
            check_at_least(name, getattr(self, name), 1, "a positive integer")
        for name in self.NON_NEGATIVE_KEYS:
            check_at_least(name, getattr(self, name), 0, "0 or a positive integer")
        if not 0 <= self.seed < SEED_LIMIT:
            raise ValueError(f"seed must be in [0, 2**32), got {self.seed}")
        self.validate()

    def validate(self) -> None:
        """The subclass's own checks (ranges, choices, keys that go together).

        Raises:
            ValueError: naming the key to fix.
        """

    @classmethod
    def keys(cls) -> list[str]:
        """Every key of the config, in field order."""
        return [item.name for item in dataclasses.fields(cls)]

    @classmethod
    def default_file(cls, game: str) -> Path:
        """The shipped hyperparameter file of ``game`` (canonical name) for this config."""
        return HYPERPARAMS_DIR / cls.HYPERPARAMS.format(game=game)

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data (what ``config.yaml`` holds)."""
        return dataclasses.asdict(self)


C = TypeVar("C", bound=RunConfig)


def load_config(kind: type[C], game: str, path: Path | None = None,
                overrides: dict[str, Any] | None = None) -> C:
    """The config of a run: a YAML file (default: ``kind``'s file of the game), then
    ``overrides``.

    Args:
        kind: the config class (``RunConfig`` or a subclass).
        game: the game's name or alias.
        path: the YAML file; None: ``kind.default_file(game)``.
        overrides: keys that replace the file's.

    Raises:
        ValueError: unknown game, missing or bad file, unknown key, or a bad value (the
            message names the fix).
    """
    game = canonical_name(game)
    source = path or kind.default_file(game)
    data = {**read_yaml(source), **(overrides or {})}
    check_known_keys(data, kind.keys(), str(source))
    data["game"] = game
    return kind(**data)


def check_at_least(name: str, value: int | None, minimum: int, expected: str) -> None:
    """Refuse an integer key below ``minimum`` (None passes: the key's default).

    Raises:
        ValueError: ``{name} must be {expected}, got ...; fix it with --set {name}=...``.
    """
    if value is not None and value < minimum:
        raise ValueError(f"{name} must be {expected}, got {value!r}; fix it with "
                         f"--set {name}=...")


def check_run_keys(torch_threads: int, lr_schedule: str) -> None:
    """Check the keys every optimising trainer's config has besides ``RunConfig``'s.

    Raises:
        ValueError: naming the fix, unless ``torch_threads`` is at most
            ``MAX_TORCH_THREADS`` (this machine's CPUs) and ``lr_schedule`` is one of
            ``LR_SCHEDULES``.
    """
    if torch_threads > MAX_TORCH_THREADS:
        raise ValueError(f"torch_threads must be at most {MAX_TORCH_THREADS} (this "
                         f"machine's CPUs), got {torch_threads}")
    if lr_schedule not in LR_SCHEDULES:
        raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}, got {lr_schedule!r}; "
                         "fix it with --set lr_schedule=linear (or constant)")


def check_opening_plies(plies: list[int] | None) -> None:
    """Refuse ``opening_plies`` other than None or ``[low, high]`` with
    ``0 <= low <= high``.

    Raises:
        ValueError: naming the fix.
    """
    if plies is not None and (len(plies) != OPENING_BOUNDS or min(plies) < 0
                              or plies[0] > plies[1]):
        raise ValueError(f"opening_plies must be [low, high] with 0 <= low <= high, got "
                         f"{plies}; e.g. --set opening_plies=[0,8] (or null: no openings)")


def checked_type(name: str, value: Any, hint: Any) -> Any:
    """``value`` of config key ``name`` if it fits the type ``hint`` (ints and number strings
    such as ``"1e-4"`` pass for floats, as floats).

    Raises:
        ValueError: the value has another type (the message names the key and the type).
    """
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        return checked_type(name, value, next(arg for arg in args if arg is not type(None)))
    if origin is list and isinstance(value, list):
        return [checked_type(name, item, args[0]) for item in value]
    if origin is dict and isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return value
    if hint is float and not isinstance(value, bool):
        try:  # YAML 1.1 reads 1e-4 as a string
            return float(value)
        except (TypeError, ValueError):
            pass
    if hint in (int, str, bool) and isinstance(value, hint) and \
            (hint is bool or not isinstance(value, bool)):
        return value
    expected = TYPE_NAMES.get(origin or hint, str(hint))
    raise ValueError(f"{name} must be {expected}, got {value!r}; fix it with --set {name}=...")


def check_known_keys(data: dict[str, Any], valid: Iterable[str], source: str) -> None:
    """Raise a ValueError naming the keys of ``data`` (read from ``source``) that are not
    in ``valid``, and listing the valid ones."""
    known = set(valid)
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"unknown config key(s) {sorted(unknown)} in {source}; valid keys: "
                         f"{', '.join(sorted(known))}")


def read_yaml(path: Path) -> dict[str, Any]:
    """The mapping stored in the YAML file ``path``.

    Raises:
        ValueError: missing file, bad YAML, or not a mapping.
    """
    if not path.is_file():
        raise ValueError(f"config file {path} not found; pass an existing YAML file")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise ValueError(f"config file {path} is not valid YAML: {error}") from error
    if not isinstance(data, dict):
        raise ValueError(f"config file {path} must hold a mapping of keys to values")
    return data


def parse_sets(items: Sequence[str], valid: Iterable[str]) -> dict[str, Any]:
    """``--set key=value`` items as a dict, each value parsed as YAML, each key one of
    ``valid``.

    Raises:
        ValueError: an item without ``=`` or an unknown key.
    """
    overrides: dict[str, Any] = {}
    for item in items:
        key, separator, value = item.partition("=")
        if not separator or not key.strip():
            raise ValueError(f"--set needs key=value, got {item!r}")
        overrides[key.strip()] = yaml.safe_load(value)
    check_known_keys(overrides, valid, "--set")
    return overrides
