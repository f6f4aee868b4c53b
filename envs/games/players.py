"""The registry of players: how the envs find an opponent without importing ``agents``.

Layers point one way (rules <- players <- envs <- train): the players of ``boardgym.agents``
add themselves here when that package is imported (``import boardgym`` does it), and the
envs ask this registry for the opponent a spec names.

A *spec* is a name with an optional argument after a colon (``"lookahead:2"``), or anything
a *loader* understands (a checkpoint path). ``register`` adds a named player for one game or,
with ``game=None``, for every game (``random``, ``alphabeta``, ``mcts``). A player may have a
*batched twin* that picks moves for N games at once (``BatchedPlayer``), and a game may give a
named player a *compiled twin* (``register_compiled``): a numba kernel that plays that
player's replies in N games, which the vector env calls inside its compiled step. A player
without a batched twin may offer ``act_many`` (see ``Agent``): its moves in N games, each
drawing from its own generator, in one call (``act_each``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

import numpy as np

from boardgym.envs.games.core import Game, unbatch


@runtime_checkable
class Agent(Protocol):
    """A player: picks a legal action for the side to move of a rules state.

    A player may also offer ``act_many(state, rngs) -> np.ndarray`` (not part of the
    protocol: ``act`` alone makes an ``Agent``): its move in each game ``k`` of the batched
    ``state`` drawing from ``rngs[k]``, exactly the moves of calling ``act`` game after game
    (``rngs[k]`` for game ``k``, in order: a generator given for several games draws for
    them in turn) and leaving every generator in the same state, only faster (one compiled
    loop). ``act_each`` uses it where it is offered.
    """

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """A legal action in ``state`` (not terminal), using only ``rng`` for randomness."""
        ...


class BatchedPlayer(Protocol):
    """A player's batched twin: one move for each of N games at once."""

    def act(self, state: Any, draws: np.ndarray) -> np.ndarray:
        """One legal action per game of the batched ``state``; game ``i``'s randomness comes
        from the uniform ``uint64`` word ``draws[i]`` alone."""
        ...


def plays_many(agent: Any) -> bool:
    """Whether ``agent`` offers ``act_many`` (see ``Agent``): ``act_each`` is then fast."""
    return callable(getattr(agent, "act_many", None))


def act_each(agent: Agent, state: Any, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """``agent``'s move in each game of the batched ``state``, one game after another, game
    ``k`` drawing from ``rngs[k]``: its ``act_many`` where it has one (the same moves and
    generator states), else ``act`` game by game."""
    if plays_many(agent):
        return np.asarray(agent.act_many(state, rngs), dtype=np.int64)  # type: ignore[attr-defined]
    return np.array([agent.act(unbatch(state, k), rng) for k, rng in enumerate(rngs)],
                    dtype=np.int64)


PlayerFactory = Callable[[Game, "str | None"], Agent]
"""Builds a player for a game from the text after ``:`` in its spec (None when absent).
Raises ``ValueError`` for a bad argument."""
BatchedFactory = Callable[[Game, "str | None"], "BatchedPlayer | None"]
"""Builds the batched twin, or returns None where that argument has none."""
Loader = Callable[[Game, str, Mapping[str, Any]], "Agent | None"]
"""Builds a player from a spec that is not a name (a checkpoint path) for a game on the board
of the given board options, or returns None. Raises ValueError for a player that cannot play
that board (checked at load, not at its first move)."""


@dataclass(frozen=True)
class CompiledTwin:
    """A player's compiled twin: the kernel ``respond_batch`` of its game's players layer,
    and the integer ``code`` that picks this player inside it.

    ``respond_batch(*arrays, agent_side, keys, counters, skip, last, code)`` plays, in place,
    the player's replies in each game ``i`` of a batch not ``skip[i]`` until
    ``to_move[i] == agent_side[i]`` or the game is over; ``arrays`` are the batched state's
    array fields (the game's env kernels say which), each move is chosen with the sub-env's
    next splitmix stream word (``counters[i]`` advances by one a move, the word is
    ``compiled.stream_draw(keys[i], counters[i])``) exactly as the player's batched twin
    picks with that word, and ``last[i]`` becomes the last move played (or -1).
    """

    respond_batch: Callable[..., None]
    code: int


CompiledFactory = Callable[[Game, "str | None", Mapping[str, Any]], "CompiledTwin | None"]
"""Builds the compiled twin from the text after ``:`` in a spec (None when absent) for the
board of the given board options, or returns None where there is none."""


@dataclass(frozen=True)
class Entry:
    """A registered player: its factory, its batched twin's, its compiled twin's (for the
    game ``entries`` was asked about), and a one-line description."""

    factory: PlayerFactory
    batched: BatchedFactory | None = None
    help: str = ""
    compiled: CompiledFactory | None = None


_NAMED: dict[str | None, dict[str, Entry]] = {}
_COMPILED: dict[str, dict[str, CompiledFactory]] = {}
_LOADERS: list[Loader] = []


def register(game: str | None, name: str, factory: PlayerFactory,
             batched: BatchedFactory | None = None, help: str = "") -> None:
    """Add the player ``name`` for the game named ``game`` (None: every game). A game's own
    player wins over an every-game player of the same name."""
    _NAMED.setdefault(game, {})[name] = Entry(factory, batched, help)


def register_compiled(game: str, name: str, factory: CompiledFactory) -> None:
    """Give the player ``name`` of the game named ``game`` (its own or an every-game one) a
    compiled twin, which must play exactly the moves of its batched twin given the same
    draws."""
    _COMPILED.setdefault(game, {})[name] = factory


def register_loader(loader: Loader) -> None:
    """Add a loader for specs that are not names (tried in order of registration)."""
    _LOADERS.append(loader)


def entries(record: Game) -> dict[str, Entry]:
    """The named players of a game (its own and the every-game ones), sorted by name, each
    with the game's compiled twin where it has one."""
    found = {**_NAMED.get(None, {}), **_NAMED.get(record.name, {})}
    twins = _COMPILED.get(record.name, {})
    return {name: replace(entry, compiled=twins[name]) if name in twins else entry
            for name, entry in sorted(found.items())}


def _split(spec: str) -> tuple[str, str | None]:
    name, colon, arg = spec.partition(":")
    return name, (arg if colon else None)


def make(record: Game, spec: Any, options: Mapping[str, Any] | None = None) -> Agent:
    """The player ``spec`` names for ``record``'s game on the board of ``options`` (the game's
    board options; default board when None); an ``Agent`` is returned as it is.

    Built-in names win over everything else, then the loaders are asked in turn.

    Raises:
        ValueError: no player has that name and no loader takes the spec (the message lists
            the names), or a bad argument.
    """
    if isinstance(spec, Agent) and not isinstance(spec, str):
        return spec
    if not isinstance(spec, str):
        raise ValueError(f"an opponent must be a spec string or an Agent, got {spec!r}")
    name, arg = _split(spec)
    known = entries(record)
    if name in known:
        return known[name].factory(record, arg)
    for loader in _LOADERS:
        agent = loader(record, spec, options or {})
        if agent is not None:
            return agent
    if not known:
        raise ValueError(f"no players are registered for {record.name}: import boardgym "
                         "(it registers the built-in players)")
    raise ValueError(f"unknown {record.name} player {spec!r}; built-in players: "
                     f"{', '.join(known)}, or a checkpoint: shipped:NAME (a shipped one) or a "
                     "path (with a '/' or ending in .zip or .pt)")


def make_batched(record: Game, spec: Any,
                 options: Mapping[str, Any] | None = None) -> BatchedPlayer | None:
    """The batched twin of the player ``spec``, or None where it has none.

    A named player's twin comes from its registered batched factory; any other player (an
    ``Agent`` object, or what a loader makes of a checkpoint spec, on the board of
    ``options``) has a twin when it offers one as ``batched()``.

    Raises:
        ValueError: a checkpoint spec a loader refuses (e.g. another game's checkpoint).
    """
    if isinstance(spec, str):
        name, arg = _split(spec)
        entry = entries(record).get(name)
        if entry is not None:
            return None if entry.batched is None else entry.batched(record, arg)
        spec = next((agent for agent in (loader(record, spec, options or {})
                                         for loader in _LOADERS) if agent is not None), None)
    twin = getattr(spec, "batched", None)
    return twin() if callable(twin) else None


def make_compiled(record: Game, spec: Any,
                  options: Mapping[str, Any] | None = None) -> CompiledTwin | None:
    """The compiled twin of the named player ``spec`` on the board of ``options``, or None
    (no twin, or ``spec`` is not a name: an ``Agent``, a checkpoint)."""
    if not isinstance(spec, str):
        return None
    name, arg = _split(spec)
    entry = entries(record).get(name)
    if entry is None or entry.compiled is None:
        return None
    return entry.compiled(record, arg, options or {})


def batched_names(record: Game) -> list[str]:
    """The names of the players of ``record`` that have a batched twin."""
    return [name for name, entry in entries(record).items() if entry.batched is not None]


__all__ = ["Agent", "BatchedFactory", "BatchedPlayer", "CompiledFactory", "CompiledTwin", "Entry",
           "Loader", "PlayerFactory", "act_each", "batched_names", "entries", "make",
           "make_batched", "make_compiled", "plays_many", "register", "register_compiled",
           "register_loader"]
