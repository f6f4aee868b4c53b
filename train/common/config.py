"""Training configs as data: one YAML file per game and trainer, typed by a dataclass.

Every trainer's config is a dataclass derived from ``RunConfig``: its fields are the keys
(each documented by the docstring under it), ``HYPERPARAMS`` names the game's file in
``train/hyperparams/`` and ``load_config`` reads it. ``--config FILE`` replaces that file and
``--set key=value`` overrides single keys (the value is parsed as YAML, so ``--set
net_arch=[64,64]`` and ``--set opponents=[random]`` work).

Everything is checked before anything runs, at construction, each failure one line naming
the key and the ``--set`` that mends it: unknown keys, YAML syntax (of ``--set`` values and of
the file), each value's type against the field's annotation, and each numeric key's range.
The ranges are declared in one place, on the fields: a numeric key is made with
``ranged(default, valid)`` (``ranged_list`` for a list of numbers), ``valid`` a ``Range``
(``between(low, high)``, ``above(low, high)``: every numeric key has a lowest and a highest
value, the highest a cap where more would exhaust memory or time). ``RunConfig.__post_init__``
checks them all (``RunConfig.ranges`` lists them); a float must also be finite. Then
``env_kwargs`` is checked against the game's board options and the env arguments the
trainer passes on (``RunConfig.ENV_ARGUMENTS``), and last the subclass's ``validate`` checks
its choices and the keys that go together. A run folder keeps the resolved config as
``config.yaml`` (``train.common.runs``), which ``load_config`` reads back on ``--resume``.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import os
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import yaml

from boardgym.envs.games import canonical_name
from boardgym.envs.games import game as game_record
from boardgym.envs.settings import FIRST_PLAYER_CHOICES, check_choice, env_settings

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
MAX_STEPS = 10 ** 10
"""The most steps a trainer's length or interval in steps may hold (years of training)."""
MAX_GAMES = 10_000
"""The most games of one evaluation or league check against one opponent."""
MAX_SIMULATIONS = 10_000
"""The most search simulations per move (the self-play search, the evaluated player, a
search teacher)."""
MAX_SEARCH_NODES = 2 ** 22
"""The most search tree nodes at once (games searched together x simulations): about 4 GB
of tree on Reversi."""
MAX_PLIES = 128
"""The most plies of an opening (more than any shipped game lasts)."""
MAX_PASSES = 1_000
"""The most passes (epochs) over one set of samples."""
MAX_CHANNELS, MAX_BLOCKS, MAX_WIDTH = 1_024, 64, 8_192
"""The largest network: convolution channels, residual blocks, hidden layer width."""
MAX_RATE = 1.0
"""The highest learning rate (higher ones diverge)."""
MAX_WEIGHT = 1_000.0
"""The highest loss weight, draw weight or coefficient."""
RANGE = "range"
"""The metadata key of a numeric field's ``Range`` (``ranged``)."""
YAML_FORMS = "lists are [a, b], mappings {key: value} with a space after each colon"
"""How the messages about bad YAML say what YAML looks like."""

T = TypeVar("T")


# -- ranges: the one declaration of every numeric key's valid values ------------------------

@dataclass(frozen=True)
class Range:
    """The values a numeric config key takes: ``low`` to ``high``, each bound included
    unless ``open_low`` (or ``open_high``) excludes it; a float must also be finite. The
    range of a list key holds for each item; None, where the key allows it, passes.

    Attributes:
        low, high: the bounds (every numeric key has both: the highest value is the key's
            cap, documented here and in the messages).
        open_low, open_high: the bound itself is outside.
        note: why the cap is where it is, added to the message (e.g. this machine's CPUs).
    """

    low: float
    high: float
    open_low: bool = False
    open_high: bool = False
    note: str = ""

    def __contains__(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            return False
        above_low = value > self.low if self.open_low else value >= self.low
        below_high = value < self.high if self.open_high else value <= self.high
        return above_low and below_high

    def __str__(self) -> str:
        text = (f"{'(' if self.open_low else '['}{number_text(self.low)}, "
                f"{number_text(self.high)}{')' if self.open_high else ']'}")
        return f"{text} ({self.note})" if self.note else text

    def kind(self, integer: bool) -> str:
        """What the range's values are, in words: ``"a positive integer, at most 8"``
        (from 1) or ``"0 or a positive integer, at most 8"`` (from 0) for integers, else
        ``"an integer in [2, 8]"`` or ``"a number in (0, 1]"``."""
        cap = f", at most {number_text(self.high)}" + (f" ({self.note})" if self.note else "")
        if integer and not self.open_low and self.low in (0, 1) and not self.open_high:
            return ("a positive integer" if self.low == 1 else "0 or a positive integer") + cap
        return f"{'an integer' if integer else 'a number'} in {self}"


def between(low: float, high: float, note: str = "") -> Range:
    """The closed range ``[low, high]``."""
    return Range(low, high, note=note)


def above(low: float, high: float, note: str = "") -> Range:
    """The range ``(low, high]``: above ``low``, at most ``high``."""
    return Range(low, high, open_low=True, note=note)


def number_text(value: float) -> str:
    """``value`` as YAML writes it back (integral values without a fraction)."""
    return str(int(value)) if float(value).is_integer() else repr(value)


def ranged(default: T, valid: Range) -> T:
    """A config field with ``default`` whose values (each item, for a list or None
    default) must lie in ``valid``; ``RunConfig.__post_init__`` checks it."""
    return field(default=default, metadata={RANGE: valid})


def ranged_list(factory: Callable[[], list[T]], valid: Range) -> list[T]:
    """A list config field made by ``factory`` whose items must lie in ``valid``."""
    return field(default_factory=factory, metadata={RANGE: valid})


class KeysRefusing:
    """A class attribute: the numeric keys of the config class whose range refuses
    ``value`` (``POSITIVE_KEYS``: the counts that must be at least 1), read off the ranges."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __get__(self, instance: object, owner: type[RunConfig]) -> tuple[str, ...]:
        return tuple(name for name, valid in owner.ranges().items() if self.value not in valid)


# -- the config ------------------------------------------------------------------------------

@dataclass
class RunConfig:
    """The keys every trainer's config starts with, and the checks every config gets.

    A subclass adds its keys as fields (a numeric one with ``ranged`` or ``ranged_list``:
    a numeric key without a range fails the tests), sets the class variables below and
    checks its choices and the keys that go together in ``validate``. Construction
    canonicalises ``game``, checks each field's type against its annotation
    (``checked_type``), then each range (``ranges``), then ``env_kwargs``
    (``check_env_kwargs``), then calls ``validate``.

    Raises:
        ValueError: on construction, an unknown game or a bad value (the message names
            the key and the fix).
    """

    HYPERPARAMS: ClassVar[str] = "{game}.yaml"
    """The game's file in ``HYPERPARAMS_DIR`` (``{game}``: the canonical game name)."""
    ENV_ARGUMENTS: ClassVar[tuple[str, ...]] = ()
    """The env's own arguments (``envs.settings.ENV_ARGUMENTS``) that ``env_kwargs`` may
    hold besides the game's board options: those the trainer passes on to its envs."""
    RESUMABLE_KEYS: ClassVar[frozenset[str]] = frozenset()
    """The keys ``--resume`` may change; the others are fixed by the saved run."""
    POSITIVE_KEYS = KeysRefusing(0)
    """The numeric keys whose range refuses 0 (read off the ranges)."""

    game: str
    """The canonical game name (an alias is accepted and replaced)."""
    seed: int = ranged(0, between(0, SEED_LIMIT - 1))
    """Seeds every random stream of the run; below ``SEED_LIMIT``."""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """The board options (four-in-a-row ``rows``, ``columns``, ``connect``) and, for the
    trainers whose ``ENV_ARGUMENTS`` name them, other env arguments (``reward``)."""

    def __post_init__(self) -> None:
        self.game = canonical_name(self.game)
        hints = typing.get_type_hints(type(self))
        for name in self.keys():
            setattr(self, name, checked_type(name, getattr(self, name), hints[name]))
        for name, valid in self.ranges().items():
            check_range(name, getattr(self, name), valid, default_of(type(self), name))
        check_env_kwargs(self.game, self.env_kwargs, self.ENV_ARGUMENTS)
        self.validate()

    def validate(self) -> None:
        """The subclass's own checks (choices, keys that go together).

        Raises:
            ValueError: naming the key to fix.
        """

    @classmethod
    def keys(cls) -> list[str]:
        """Every key of the config, in field order."""
        return [item.name for item in dataclasses.fields(cls)]

    @classmethod
    def ranges(cls) -> dict[str, Range]:
        """Each numeric key's ``Range`` (declared with ``ranged`` or ``ranged_list``)."""
        return {item.name: item.metadata[RANGE] for item in dataclasses.fields(cls)
                if RANGE in item.metadata}

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


# -- the checks ------------------------------------------------------------------------------

def check_range(name: str, value: Any, valid: Range, default: Any = None) -> None:
    """Refuse a value of key ``name`` (each item of a list) outside ``valid``; None passes.

    Raises:
        ValueError: ``{name} must be ... in {valid}, got ...; fix it with --set
            {name}=...`` (``default`` as the example where it is in range).
    """
    items = value if isinstance(value, list) else [value]
    if all(item is None or item in valid for item in items):
        return
    what = f"items must each be {valid.kind(all(isinstance(item, int) for item in items))}" \
        if isinstance(value, list) else f"must be {valid.kind(isinstance(value, int))}"
    example = json.dumps(default) if default_in(default, valid) else \
        ("[...]" if isinstance(value, list) else "...")
    raise ValueError(f"{name} {what}, got {value!r}; fix it with --set "
                     f"{name}={example}")


def default_of(kind: type[RunConfig], name: str) -> Any:
    """The default value of key ``name`` of config class ``kind`` (None: it has none)."""
    item = next(item for item in dataclasses.fields(kind) if item.name == name)
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return None if item.default is dataclasses.MISSING else item.default


def default_in(default: Any, valid: Range) -> bool:
    """Whether ``default`` (a number or a list of numbers) is a value of ``valid``."""
    if isinstance(default, list):
        return bool(default) and all(item in valid for item in default)
    return default in valid


def check_env_kwargs(game: str, env_kwargs: dict[str, Any], arguments: Sequence[str]) -> None:
    """Refuse ``env_kwargs`` keys other than the game's board options and ``arguments``
    (env arguments the trainer passes on), and values the game or env refuses.

    Raises:
        ValueError: one line naming the valid keys and a ``--set 'env_kwargs={...}'`` that
            works (for a key such as ``'rows:5'``, YAML's reading of ``{rows:5}``, the
            spaced ``{rows: 5}``).
    """
    record = game_record(game)
    valid = [*record.options, *arguments]
    example = "{" + ", ".join(f"{key}: {value}" for key, value in record.options.items()) + "}"
    unknown = [key for key in env_kwargs if key not in valid]
    if unknown:
        key = str(unknown[0])
        hint = ""
        if ":" in key:
            example = "{" + key.replace(":", ": ", 1) + "}"
            hint = " (YAML reads {a:1} as the key 'a:1': put a space after the colon)"
        raise ValueError(f"env_kwargs: {record.title} has no key {key!r}{hint}; valid keys: "
                         f"{', '.join(valid) or 'none'}; fix it with --set "
                         f"'env_kwargs={example}'")
    board = {key: value for key, value in env_kwargs.items() if key in record.options}
    try:
        env_settings(record, env_kwargs.get("illegal_action", "lose"),
                     env_kwargs.get("reward", "win"), board)
        check_choice("first_player", env_kwargs.get("first_player", "random"),
                     FIRST_PLAYER_CHOICES)
    except ValueError as error:
        raise ValueError(f"env_kwargs: {error}; fix it with --set 'env_kwargs={example}'") \
            from None


def check_specs(game: str, key: str, specs: list[str]) -> None:
    """Refuse a spec of config key ``key`` that names no player of ``game``: a named player
    is made (cheap; its argument is checked too); a checkpoint, or a search over one
    (``az:N@PATH``), is loaded when the run starts (the opponent pool, the evaluations).

    Raises:
        ValueError: the player registry's message and the ``--set`` that mends it.
    """
    from boardgym import agents

    names = agents.names(game)
    for spec in specs:
        if "@" in spec or (agents.is_checkpoint_spec(spec) and spec.partition(":")[0]
                           not in names):
            continue
        try:
            agents.make(game, spec)
        except ValueError as error:
            raise ValueError(f"{key}: {error}; fix it with --set {key}=[...]") from None


def check_lr_schedule(lr_schedule: str) -> None:
    """Refuse an ``lr_schedule`` other than ``LR_SCHEDULES``'.

    Raises:
        ValueError: naming the fix.
    """
    if lr_schedule not in LR_SCHEDULES:
        raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}, got {lr_schedule!r}; "
                         "fix it with --set lr_schedule=linear (or constant)")


def check_opening_plies(plies: list[int] | None) -> None:
    """Refuse ``opening_plies`` other than None or ``[low, high]`` with ``low <= high``
    (each in the field's range).

    Raises:
        ValueError: naming the fix.
    """
    if plies is not None and (len(plies) != OPENING_BOUNDS or plies[0] > plies[1]):
        raise ValueError(f"opening_plies must be [low, high] with 0 <= low <= high, got "
                         f"{plies}; fix it with --set opening_plies=[0,8] (or null: no "
                         "openings)")


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
    raise ValueError(f"{name} must be {expected}, got {value!r}; fix it with --set "
                     f"{name}=...")


def check_known_keys(data: dict[str, Any], valid: Iterable[str], source: str) -> None:
    """Raise a ValueError naming the keys of ``data`` (read from ``source``) that are not
    in ``valid`` (with the closest valid name, if any), and listing the valid ones."""
    known = sorted(valid)
    unknown = sorted(map(str, set(data) - set(known)))
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        guess = f" (did you mean {close[0]}?)" if close else ""
        fix = "--set KEY=VALUE" if source == "--set" else f"KEY: VALUE in {source}"
        raise ValueError(f"unknown config key(s) {unknown} in {source}{guess}; valid keys: "
                         f"{', '.join(known)}; give each as {fix}")


# -- YAML ------------------------------------------------------------------------------------

def yaml_problem(error: Exception) -> str:
    """What the YAML parser found wrong, in one line, with where (line and column)."""
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    mark = getattr(error, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{problem}{where}"


def read_yaml(path: Path) -> dict[str, Any]:
    """The mapping stored in the YAML file ``path``.

    Raises:
        ValueError: missing file, not text (a binary file such as a checkpoint), bad YAML,
            or not a mapping; one line naming the file and the fix.
    """
    if not path.is_file():
        raise ValueError(f"config file {path} not found; pass an existing YAML file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"config file {path} is not a text file (a checkpoint or an "
                         "archive?); pass a YAML file of key: value lines, e.g. one of "
                         f"{HYPERPARAMS_DIR}") from None
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError) as error:
        raise ValueError(f"config file {path} is not valid YAML: {yaml_problem(error)}; fix "
                         f"it ({YAML_FORMS})") from None
    if not isinstance(data, dict):
        raise ValueError(f"config file {path} must hold a mapping of keys to values (key: "
                         "value lines)")
    return data


def parse_sets(items: Sequence[str], valid: Iterable[str]) -> dict[str, Any]:
    """``--set key=value`` items as a dict, each key one of ``valid``, each value parsed as
    YAML.

    Raises:
        ValueError: an item without ``=``, an unknown key, or a value that is not YAML
            (one line naming the key and how to write it).
    """
    known = list(valid)
    overrides: dict[str, Any] = {}
    for item in items:
        key, separator, text = item.partition("=")
        key = key.strip()
        if not separator or not key:
            raise ValueError(f"--set needs key=value, got {item!r}; e.g. --set "
                             "learning_rate=1e-4")
        check_known_keys({key: None}, known, "--set")
        try:
            overrides[key] = yaml.safe_load(text)
        except (yaml.YAMLError, ValueError) as error:
            raise ValueError(f"--set {key}: {text!r} is not valid YAML "
                             f"({yaml_problem(error)}); write it as YAML ({YAML_FORMS}) and quote "
                             f"the item for the shell: --set '{key}=...'") from None
    return overrides
