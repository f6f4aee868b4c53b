"""Batched environments: N games stepped at once on numpy ``uint64`` bitboards.

``gym.make_vec("Reversi-v0", num_envs=N, vectorization_mode="vector_entry_point", **kwargs)``
builds a ``ReversiVectorEnv`` (one ``f"{record.class_prefix}VectorEnv"`` per registered game,
made by ``define_vector_env``) taking the same keyword arguments as ``gym.make``, validated by
the same function (``turn_based.env_settings``). Sub-env ``i`` behaves exactly like the single
env: the same observations (plane 0 the agent's stones), masks, passes, opponent replies
inside ``step``, rewards and ``illegal_action`` handling. The games' state lives in arrays
(one batched rules state); every rule comes from the game's batched rules (``initial_batch``,
``apply_batch``, ``legal_mask``, ``is_terminal``, ``result``, ``observation``).

Opponents. ``opponent=`` is one spec for every sub-env (a built-in player name, an ``Agent``
or a checkpoint path), a list of N of them (sub-env ``i`` plays ``opponent[i]``), or a
*sampler*: a callable ``sampler(rng) -> spec`` called for a sub-env each time a new game starts
there, with that sub-env's own ``np.random.Generator`` (seeded with its seed, see below), so
an opponent pool is drawn per game and reproducibly (a sampler should return specs, or Agents
from a fixed set: each new object makes a new group). The sub-envs are grouped by opponent: a
spec with a batched twin (``players.make_batched``) moves for its whole group at once, any
other player moves game by game (with a warning, as that is slow).

Openings. ``opening=`` (default None: every game from the start position) is a callable
``opening(rng) -> text | None`` called for a sub-env at each new game, after its opponent is
drawn, with that sub-env's generator: the game starts from that position (the game's
position text; None: the start position), with the first player drawn as usual for the
agent's side. Where the opponent's replies end the new game before the agent has moved,
another opening is drawn (at most ``OPENING_DRAWS`` times, then the start position), so the
agent always gets a position with a legal move: the single env's rule
(``turn_based.OPENING_DRAWS``, ``opening_state``). With openings, sub-env ``i``'s games
still depend only on its seed and actions; against one opponent without a batched twin they
are the single env's games with the same ``opening=``.

Autoreset: Gymnasium's next-step mode by default (``metadata["autoreset_mode"]``): the step
that ends game ``i`` returns its last observation with ``terminated[i]``; the next ``step``
ignores ``actions[i]``, starts a new game and returns its first observation with reward 0.
``autoreset_mode=AutoresetMode.SAME_STEP`` instead returns the new game's first observation
in the ending step, the last one in ``info["final_obs"]`` (where ``info["_final_obs"]``).

Random streams. ``reset(seed=s)`` gives sub-env ``i`` the seed ``s + i`` (or ``seed[i]`` for
a list), as ``SyncVectorEnv`` does; seeds are ints in ``[0, 2**64)``. Against a batched
opponent each sub-env draws from its own counter-based stream: draw ``k`` of sub-env ``i`` is
the 64-bit word ``splitmix64(splitmix64(seed_i) + (k + 1) * golden_gamma)``, one draw per
random first player (its top bit: 1 = the opponent moves first) and one per opponent move
(the batched player picks with it, see ``bitboard.choose``). So sub-env ``i``'s games depend
only on its seed and its actions, not on N or on the other sub-envs, but they differ from a
single env's (which shuffles with ``np.random.Generator``). Against an opponent without a
batched twin (an ``Agent`` object, a checkpoint, ``alphabeta:4``) the player runs per sub-env
with the generator ``np.random.default_rng(seed_i)``, drawing the first player and the
opponent's moves exactly as the single env does: sub-env ``i`` then plays the very games of
``gym.make(id, **kwargs)`` reset with seed ``seed_i`` and given the same actions. A sampler
draws from that generator too, before the first player is drawn.

Masks handed out (``action_masks()``, ``info["action_mask"]``) are copies: writing into them
changes nothing. After ``illegal_action="raise"`` refuses a step, nothing has changed and the
env takes the next (legal) step as if the refused one had not been tried.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from boardgym.envs.games import IllegalMoveError, players
from boardgym.envs.games.bitboard import MEMO_CELLS, popcount, single_bit_slot
from boardgym.envs.games.core import Game, batch_of, put, side_view, take, unbatch
from boardgym.envs.turn_based import (
    AGENT_SIDE,
    FIRST_PLAYER_CHOICES,
    OPENING_DRAWS,
    OPPONENT_WON,
    Opening,
    check_choice,
    check_opening,
    draw_agent_side,
    env_settings,
    is_named_player,
    opening_state,
)

AGENT_FIRST, OPPONENT_FIRST, RANDOM_FIRST = range(3)
FIRST_PLAYER_CODES = {"agent": AGENT_FIRST, "opponent": OPPONENT_FIRST, "random": RANDOM_FIRST}
NO_ACTION = -1
"""``info["opponent_action"]`` of a sub-env where the opponent did not move."""
GOLDEN_GAMMA = np.uint64(0x9E37_79B9_7F4A_7C15)
MIX_1 = np.uint64(0xBF58_476D_1CE4_E5B9)
MIX_2 = np.uint64(0x94D0_49BB_1331_11EB)
TOP_BIT = np.uint64(63)
SEED_LIMIT = 2 ** 64
"""Seeds are ints in ``[0, SEED_LIMIT)``: the stream keys are 64-bit words."""
ENTROPY_BOUND = 2 ** 63
AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
RESET_MASK_OPTION = "reset_mask"
SHOWN_ILLEGAL = 5
"""How many illegal sub-envs an ``IllegalMoveError`` names."""
VECTOR_SUFFIX = "VectorEnv"
Sampler = Callable[[np.random.Generator], Any]
"""``sampler(rng) -> spec``: a sub-env's opponent for its next game."""


def _mix(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (a bijection on uint64 with good avalanche)."""
    z = (z ^ (z >> np.uint64(30))) * MIX_1
    z = (z ^ (z >> np.uint64(27))) * MIX_2
    return z ^ (z >> np.uint64(31))


def _stream_draw(keys: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """Draw number ``counters`` of the streams keyed ``keys`` (see the module docstring)."""
    return _mix(keys + counters * GOLDEN_GAMMA)


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def sub_env_seeds(seed: Any, n: int) -> list[int]:
    """One seed per sub-env: ``seed + i``, the n seeds of a list, or fresh entropy (None).

    Raises:
        ValueError: a seed that is not an int in ``[0, 2**64)`` (``1.5``, ``2**64``, ``"3"``),
            or a list of the wrong length.
    """
    if seed is None:
        return [int(s) for s in np.random.default_rng().integers(ENTROPY_BOUND, size=n)]
    many = isinstance(seed, (list, tuple, np.ndarray))
    values = list(seed) if many else [int(seed) + i if _is_int(seed) else seed for i in range(n)]
    if len(values) != n or not all(_is_int(v) and 0 <= v < SEED_LIMIT for v in values):
        raise ValueError(f"seed must be None, an int in [0, 2**64 - {n}], or a list of {n} "
                         f"ints in [0, 2**64) (one per sub-env); got {seed!r}")
    return [int(v) for v in values]


def checked_actions(actions: Any, num_envs: int, n_actions: int) -> np.ndarray:
    """``actions`` as an int64 array of one action in ``[0, n_actions)`` per sub-env.

    Raises:
        ValueError: not an integer array of shape ``(num_envs,)`` (floats, strings and bools
            are refused, not cast), or an action outside the space.
    """
    values = np.asarray(actions)
    if values.shape != (num_envs,) or values.dtype.kind not in "iu":
        raise ValueError(f"actions must be an integer array of shape ({num_envs},), one per "
                         f"sub-env; got a {values.dtype} array of shape {values.shape}")
    low, high = values.min(), values.max()
    if low < 0 or high >= n_actions:
        raise ValueError(f"actions must be in [0, {n_actions}) (see env.action_masks()); got "
                         f"{low}..{high}")
    return values.astype(np.int64, copy=False)


def _first_player_codes(first_player: Any, n: int) -> np.ndarray:
    """``first_player`` (one value, or one per sub-env) as codes ``AGENT_FIRST``, ..."""
    values = [first_player] * n if isinstance(first_player, str) else list(first_player)
    if len(values) != n:
        raise ValueError(f"first_player must be one of {FIRST_PLAYER_CHOICES} or a list of "
                         f"{n} of them (one per sub-env); got {len(values)} values")
    return np.array([FIRST_PLAYER_CODES[check_choice("first_player", v, FIRST_PLAYER_CHOICES)]
                     for v in values], dtype=np.int64)


def _is_spec(value: Any) -> bool:
    """A single opponent: a spec string or an ``Agent``."""
    return isinstance(value, (str, players.Agent))


def _opponent_plan(record: Game, opponent: Any, n: int) -> tuple[list[Any], Sampler | None]:
    """``opponent`` as N specs, or ``([], sampler)``.

    Raises:
        ValueError: a list of the wrong length, or something that is neither a spec, an
            ``Agent``, a list of them nor a sampler.
    """
    if opponent is None:
        return [record.default_opponent] * n, None
    if _is_spec(opponent):
        return [opponent] * n, None
    if isinstance(opponent, (list, tuple)):
        if len(opponent) != n or not all(_is_spec(o) for o in opponent):
            raise ValueError(f"opponent as a list needs {n} specs or Agents (one per "
                             f"sub-env); got {len(opponent)} items")
        return list(opponent), None
    if callable(opponent):
        return [], opponent
    raise ValueError(f"opponent must be a spec string, an Agent, a list of {n} of them, or a "
                     f"sampler(rng) -> spec; got {opponent!r}")


class _Opponent:
    """One opponent of a group of sub-envs: a batched player, or a single player run game by
    game (each game drawing from its sub-env's generator).

    Raises:
        ValueError: the player registry does not know ``spec`` (from ``players.make``).
    """

    def __init__(self, record: Game, spec: Any, options: dict[str, Any]) -> None:
        self.record, self.spec, self.options = record, spec, options
        self._make()
        if self.single is not None:
            gym.logger.warn(
                f"opponent {spec!r} has no batched version; it runs game by game (slow). "
                f"Batched opponents: {players.batched_names(record)}")

    def _make(self) -> None:
        self.batched = players.make_batched(self.record, self.spec, self.options)
        self.single = None if self.batched is not None else \
            players.make(self.record, self.spec, self.options)

    def __getstate__(self) -> dict[str, Any]:
        """A named opponent is kept as its spec (see ``turn_based.is_named_player``)."""
        if is_named_player(self.record, self.spec):
            return {"record": self.record, "spec": self.spec, "options": self.options}
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "batched" not in state:
            self._make()

    def act_each(self, state: Any, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """The single player's move in each game of the batched ``state``, game ``k``
        drawing from ``rngs[k]``."""
        assert self.single is not None
        return players.act_each(self.single, state, rngs)


class _Observations:
    """The agent's observations of N games: observed in full, or kept from step to step and
    mended where a plane changed by one stone.

    Every game's observation is a function of its two planes alone (``rules.observation``
    reads ``side_view``'s planes), and each set bit shows as one cell. Where each move adds
    one stone (four-in-a-row), after a step each plane differs from the last observed one in
    at most one bit: that cell is written, the rest is kept. New games start from the empty
    board (``restart``). The first step that changes a plane by more than one stone (a flip in
    Reversi) observes in full and turns mending off for good.

    Args:
        record: the game.
        fresh: a one-game batched state.
        mend: try keeping and mending (else every call observes in full).
    """

    def __init__(self, record: Game, fresh: Any, mend: bool) -> None:
        self.record = record
        self.obs: np.ndarray | None = None
        self.pairs: np.ndarray | None = None
        """``(N, 2)`` planes of ``obs``."""
        self.starts = np.zeros(0, dtype=np.intp)
        """``(N, 2)``: where each plane of ``obs`` starts in its flat view."""
        self.cell_of: np.ndarray | None = None
        """By ``single_bit_slot`` of bit ``b``: the flat cell showing bit ``b`` of plane 0
        (None: not mending)."""
        self.mask_of = np.zeros(0, dtype=np.uint64)
        """By ``single_bit_slot`` of bit ``b``: ``1 << b``."""
        if mend:
            self._map_cells(fresh)

    def _map_cells(self, fresh: Any) -> None:
        """Fill ``cell_of`` and ``mask_of``, unless a bit shows in more than one cell."""
        bits = np.uint64(1) << np.arange(64, dtype=np.uint64)
        boards = take(fresh, np.zeros(bits.shape, dtype=np.intp))
        shown = self._observe(boards, bits, bits).reshape(64, 2, -1)
        if (shown.sum(axis=2) > 1).any() or not np.array_equal(shown[:, 0], shown[:, 1]):
            return
        cells = shown[:, 0].argmax(axis=1)
        on_board = shown[:, 0].sum(axis=1) > 0
        index = single_bit_slot(bits)
        self.mask_of = np.empty(64, dtype=np.uint64)
        self.mask_of[index] = bits
        self.cell_of = np.empty(64, dtype=np.intp)
        self.cell_of[index] = cells
        if not on_board[0]:  # slot 0 also stands for "no change": point it at a real cell
            self.mask_of[0], self.cell_of[0] = bits[on_board][0], cells[on_board][0]

    def _observe(self, state: Any, mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
        """The observation of the planes ``mine``/``theirs`` of the batched ``state``."""
        return np.asarray(self.record.rules.observation(state._replace(me=mine, opp=theirs)))

    def __call__(self, state: Any, mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
        """A fresh ``(N, 2, rows, cols)`` observation of the planes ``mine``/``theirs`` of the
        batched ``state``."""
        if self.cell_of is None:
            return self._observe(state, mine, theirs)
        pairs = np.stack((mine, theirs), axis=1)
        if self.obs is None or self.pairs is None:  # the first call
            self.obs = self._observe(state, mine, theirs)
        else:
            self._mend(state, pairs)
        self.pairs = pairs
        return self.obs.copy()

    def restart(self, index: np.ndarray, state: Any = None, mine: Any = None,
                theirs: Any = None) -> None:
        """Games ``index`` start again: their kept observation becomes the empty board's, or
        with ``state`` (their batched positions) and its planes ``mine``/``theirs``, theirs."""
        if self.obs is None or self.pairs is None:
            return
        if state is None:
            self.obs[index] = 0
            self.pairs[index] = 0
            return
        self.obs[index] = self._observe(state, mine, theirs)
        self.pairs[index] = np.stack((mine, theirs), axis=1)

    def _mend(self, state: Any, pairs: np.ndarray) -> None:
        """Bring ``obs`` from ``self.pairs`` to ``pairs``: cell by cell if every plane
        changed by at most one stone, else observed in full (and mending stops)."""
        assert self.obs is not None and self.pairs is not None and self.cell_of is not None
        changed = pairs ^ self.pairs
        if np.bitwise_count(changed).max() > 1:
            self.obs = self._observe(state, pairs[:, 0], pairs[:, 1])
            self.cell_of = None
            return
        index = single_bit_slot(changed)
        shown = (pairs & self.mask_of.take(index)) != 0
        if self.starts.size == 0:
            self.starts = np.arange(pairs.size).reshape(pairs.shape) * self.obs[0, 0].size
        self.obs.reshape(-1)[self.starts + self.cell_of.take(index)] = shown.view(np.uint8)


class BoardVectorEnv(VectorEnv):
    """N games of one board game, each against its own opponent, stepped together.

    Each game's class (``define_vector_env``) sets ``record``.

    Args:
        num_envs: number of sub-envs N, >= 1.
        opponent: one spec or ``Agent`` for every sub-env (default: the game's), a list of N,
            or a sampler ``sampler(rng) -> spec`` called per sub-env at each new game with
            that sub-env's generator (see the module docstring).
        first_player: ``"random" | "agent" | "opponent"``, or a list of N of them.
        opening: None, or ``opening(rng) -> position text | None`` called per sub-env at each
            new game (see the module docstring).
        illegal_action: ``"lose" | "raise"``; ``"raise"`` raises ``IllegalMoveError`` naming
            the sub-envs, and leaves the env as it was.
        reward: ``"win" | "score"`` (``"score"`` for games that end with a disc count).
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``SAME_STEP``.
        render_mode: must be None (render a single env from ``gym.make`` instead).
        **options: the game's board options (four-in-a-row ``rows``, ``columns``, ``connect``).

    Attributes:
        state: the batched rules state of the N games (fields are ``(N,)`` arrays).
        agent_side: ``(N,)`` 0 where the agent moved first in the current game, else 1.
    """

    record: ClassVar[Game]

    def __init__(self, num_envs: int = 1, opponent: Any = None, first_player: Any = "random",
                 opening: Opening | None = None, illegal_action: str = "lose",
                 reward: str = "win",
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 render_mode: str | None = None, **options: Any) -> None:
        if not _is_int(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if render_mode is not None:
            raise ValueError("vector envs do not render: pass render_mode to gym.make(...) "
                             "for a single env instead")
        self.metadata = {"autoreset_mode": _autoreset_mode(autoreset_mode), "render_modes": []}
        self.num_envs = n = int(num_envs)
        record = self.record
        self.settings = env_settings(record, illegal_action, reward, options)
        self._first_codes = _first_player_codes(first_player, n)
        self.single_observation_space = self.settings.observation_space
        self.single_action_space = self.settings.action_space
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.n_actions = int(self.settings.action_space.n)
        specs, self._sampler = _opponent_plan(record, opponent, n)
        self._opening = check_opening(opening)
        self._groups: list[_Opponent] = []
        self._assignment = np.zeros(n, dtype=np.intp)
        """The index in ``_groups`` of each sub-env's opponent."""
        self._only: _Opponent | None = None
        """The opponent of every sub-env, when they all have the same one."""
        if specs:
            self._assign(np.arange(n), specs)
        self.state: Any = None
        self.agent_side = np.zeros(n, dtype=np.int64)
        self._fresh = record.rules.initial_batch(1, **self.settings.options)
        self._observations = _Observations(record, self._fresh,
                                           self.settings.board_cells > MEMO_CELLS)
        self._row_starts = np.arange(n) * self.n_actions
        """Offset of each sub-env's row in the flattened ``(N, n_actions)`` masks."""
        self._needs_reset = np.ones(n, dtype=bool)
        self._masks = np.zeros((n, self.n_actions), dtype=bool)
        self._keys = np.zeros(n, dtype=np.uint64)
        self._counters = np.zeros(n, dtype=np.uint64)
        self._seeds: list[int] = []
        self._rngs: dict[int, np.random.Generator] = {}

    # -- Gymnasium API ---------------------------------------------------------------------

    def reset(self, *, seed: Any = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start new games in every sub-env (or where ``options["reset_mask"]`` is True).

        Args:
            seed: None, an int (sub-env ``i`` gets ``seed + i``) or a list of N ints, each in
                ``[0, 2**64)``.
            options: ``{"reset_mask": (N,) bool}`` resets only those sub-envs.

        Raises:
            ValueError: a bad seed, or a bad option.
        """
        mask = self._reset_mask(options)
        if seed is not None or self.state is None:
            self._seed(sub_env_seeds(seed, self.num_envs))
        self._start_games(np.flatnonzero(mask))
        opponent_action, terminal = self._opponent_turns(mask)
        opponent_action, _ = self._redraw_ended(mask, opponent_action, terminal)
        no_end = np.zeros(self.num_envs, dtype=bool)
        obs, _, info = self._publish(opponent_action, no_end, no_end)
        return obs, info

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """Play ``actions[i]`` in each sub-env, then the opponents' replies.

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
            ValueError: ``actions`` is not one integer action per sub-env.
            IllegalMoveError: with ``illegal_action="raise"``, illegal actions (the env is left
                as it was).
        """
        if self.state is None:
            raise gym.error.ResetNeeded("call env.reset() before env.step()")
        actions = checked_actions(actions, self.num_envs, self.n_actions)
        starting = self._needs_reset.copy()
        # a finished game's mask is all False, so ``legal`` is False where games start
        legal = self._masks.reshape(-1)[self._row_starts + actions]
        illegal = ~(starting | legal)
        if self.settings.illegal_action == "raise" and illegal.any():
            raise _illegal_error(np.flatnonzero(illegal), actions)
        if starting.any():
            self._start_games(np.flatnonzero(starting))
        self._play_where(legal, actions)
        opponent_action, terminated = self._opponent_turns(~illegal)
        opponent_action, terminated = self._redraw_ended(starting, opponent_action, terminated)
        terminated |= illegal
        obs, rewards, info = self._publish(opponent_action, terminated, illegal)
        self._needs_reset = terminated.copy()
        if self.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP and terminated.any():
            info["final_obs"], info["_final_obs"] = obs, terminated
            self._start_games(np.flatnonzero(terminated))
            self._redraw_ended(terminated, *self._opponent_turns(terminated))
            self._needs_reset = np.zeros(self.num_envs, dtype=bool)
            obs, info["action_mask"] = self._observation(), self._mask_after(None)
        truncated = np.zeros(self.num_envs, dtype=bool)
        return obs, rewards, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """A fresh ``(N, n_actions)`` bool array: the agent's legal actions in each sub-env
        (what MaskablePPO calls); all False in a sub-env whose game just ended."""
        return self._masks.copy()

    def position_texts(self) -> list[str]:
        """Each sub-env's current position in the game's notation (what the single env's
        ``reset(options={"position": text})`` and ``opening`` read).

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
        """
        if self.state is None:
            raise gym.error.ResetNeeded("call env.reset() before env.position_texts()")
        to_text = self.record.rules.to_text
        return [str(to_text(unbatch(self.state, i))) for i in range(self.num_envs)]

    @property
    def opponents(self) -> list[Any]:
        """Each sub-env's current opponent spec (or ``Agent``)."""
        return [self._groups[g].spec for g in self._assignment] if self._groups else []

    # -- opponents -------------------------------------------------------------------------

    def _group(self, spec: Any) -> int:
        """The index in ``_groups`` of the opponent ``spec`` (made on first use)."""
        for number, group in enumerate(self._groups):
            if group.spec is spec or (isinstance(spec, str) and group.spec == spec):
                return number
        self._groups.append(_Opponent(self.record, spec, self.settings.options))
        return len(self._groups) - 1

    def _assign(self, index: np.ndarray, specs: Sequence[Any]) -> None:
        """Sub-envs ``index`` play against ``specs`` (one each) from now on."""
        self._assignment[index] = [self._group(spec) for spec in specs]
        first = self._assignment[0]
        self._only = self._groups[first] if (self._assignment == first).all() else None

    def _rng(self, i: int) -> np.random.Generator:
        """Sub-env ``i``'s generator, ``np.random.default_rng(seed_i)`` (made on first use)."""
        rng = self._rngs.get(i)
        if rng is None:
            rng = self._rngs[i] = np.random.default_rng(self._seeds[i])
        return rng

    def _moves(self, group: _Opponent, part: Any, index: np.ndarray) -> np.ndarray:
        """``group``'s move in each game of the sub-batch ``part`` (sub-envs ``index``)."""
        if group.batched is not None:
            return np.asarray(group.batched.act(part, self._draws(index)))
        return group.act_each(part, [self._rng(i) for i in index])

    def _opponent_moves(self, part: Any, index: np.ndarray) -> np.ndarray:
        """Each sub-env's opponent's move in the games of ``part`` (sub-envs ``index``)."""
        if self._only is not None:
            return self._moves(self._only, part, index)
        groups = self._assignment[index]
        moves = np.empty(len(index), dtype=np.int64)
        for number in np.unique(groups):
            chosen = groups == number
            moves[chosen] = self._moves(self._groups[number], take(part, chosen),
                                        index[chosen])
        return moves

    # -- shared plumbing -------------------------------------------------------------------

    def _reset_mask(self, options: dict[str, Any] | None) -> np.ndarray:
        """The sub-envs a reset starts (all, or ``options["reset_mask"]``)."""
        if not options:
            return np.ones(self.num_envs, dtype=bool)
        unknown = sorted(set(options) - {RESET_MASK_OPTION})
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; the vector env takes "
                             f"options={{{RESET_MASK_OPTION!r}: (N,) bool array}}")
        mask = np.asarray(options[RESET_MASK_OPTION])
        if mask.shape != (self.num_envs,) or mask.dtype != bool:
            raise ValueError(f"options[{RESET_MASK_OPTION!r}] must be a bool array of shape "
                             f"({self.num_envs},), got a {mask.dtype} array of shape "
                             f"{mask.shape}")
        return mask

    def _seed(self, seeds: list[int]) -> None:
        """Per-sub-env streams and generators from ``seeds`` (see the module docstring)."""
        self._seeds = seeds
        self._keys = _mix(np.array(seeds, dtype=np.uint64))
        self._counters = np.zeros(self.num_envs, dtype=np.uint64)
        self._rngs = {}
        self._np_random, self._np_random_seed = gym.utils.seeding.np_random(seeds[0])

    def _draws(self, index: np.ndarray) -> np.ndarray:
        """The next uniform ``uint64`` draw of each sub-env in ``index`` (its stream advances)."""
        counters = self._counters[index] + np.uint64(1)
        self._counters[index] = counters
        return _stream_draw(self._keys[index], counters)

    def _draws_where(self, moving: np.ndarray) -> np.ndarray:
        """``_draws`` of the sub-envs where ``moving``, in a whole-batch array: only their
        streams advance, and the other entries are no draws (not to be used)."""
        self._counters += moving
        return _stream_draw(self._keys, self._counters)

    def _start_games(self, index: np.ndarray, use_opening: bool = True) -> None:
        """Fresh games in sub-envs ``index``: a sampled opponent (with a sampler), an opening
        (with ``opening``, unless not ``use_opening``), then who moves first where it is
        random. The opponent's first moves come with the next ``_opponent_turns``."""
        if self.state is None:
            self.state = self.record.rules.initial_batch(self.num_envs,
                                                         **self.settings.options)
        put(self.state, index, self._fresh)
        if self._sampler is not None:
            self._assign(index, [self._sampler(self._rng(i)) for i in index])
        opened = self._open(index) if use_opening and self._opening is not None else index[:0]
        codes = self._first_codes[index]
        sides = np.where(codes == OPPONENT_FIRST, 1 - AGENT_SIDE, AGENT_SIDE)
        drawn = codes == RANDOM_FIRST
        if drawn.any():
            sides[drawn] = self._random_sides(index[drawn])
        self.agent_side[index] = sides
        self._needs_reset[index] = False
        if not opened.size:
            self._observations.restart(index)
            return
        part = take(self.state, opened)
        self._observations.restart(opened, part, *side_view(part, self.agent_side[opened]))
        self._observations.restart(np.setdiff1d(index, opened))

    def _redraw_ended(self, started: np.ndarray, last: np.ndarray, terminal: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
        """With openings, start again the new games (``started``) that the opponent ended
        before the agent's first move: another opening each, at most ``OPENING_DRAWS`` in
        all, then the start position.

        Args:
            started: the sub-envs whose games just started (and had their opponent turns).
            last, terminal: ``_opponent_turns``' results for them.

        Returns:
            ``last`` and ``terminal`` with the restarted games' new values.
        """
        if self._opening is None:
            return last, terminal
        ended = started & terminal
        for draw in range(1, OPENING_DRAWS + 1):
            if not ended.any():
                break
            self._start_games(np.flatnonzero(ended), use_opening=draw < OPENING_DRAWS)
            moves, over = self._opponent_turns(ended)
            last, terminal = np.where(ended, moves, last), np.where(ended, over, terminal)
            ended &= over
        return last, terminal

    def _open(self, index: np.ndarray) -> np.ndarray:
        """Put each sub-env's drawn opening into ``state``; the sub-envs given one."""
        assert self._opening is not None
        opened = []
        for i in index.tolist():
            state = opening_state(self.record, self._opening, self._rng(i), self.settings)
            if state is not None:
                put(self.state, np.array([i]), batch_of(state))
                opened.append(i)
        return np.array(opened, dtype=np.intp)

    def _random_sides(self, index: np.ndarray) -> np.ndarray:
        """The agent's side in new games ``index``: from the sub-env's stream against a
        batched opponent, else drawn from its generator as the single env draws it."""
        only = self._only
        if only is not None and only.batched is not None:
            return (self._draws(index) >> TOP_BIT).astype(np.int64)
        looped = np.array([self._groups[g].batched is None for g in self._assignment[index]],
                          dtype=bool)
        sides = np.empty(len(index), dtype=np.int64)
        streamed = ~looped
        if streamed.any():
            sides[streamed] = (self._draws(index[streamed]) >> TOP_BIT).astype(np.int64)
        for k in np.flatnonzero(looped):
            sides[k] = draw_agent_side(self._rng(int(index[k])))
        return sides

    def _play_where(self, moving: np.ndarray, actions: np.ndarray) -> None:
        """Play ``actions`` where ``moving``: the rules run on the whole batch (cheaper than
        gathering the movers when most games move), and the other games keep their
        positions (their ``actions`` may be anything, even illegal)."""
        after = self.record.rules.apply_batch(self.state, actions)
        if not moving.all():
            after = type(after)(*(np.where(moving, new, old) if isinstance(old, np.ndarray)
                                  else old for new, old in zip(after, self.state, strict=True)))
        self.state = after

    def _opponent_turns(self, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Opponent moves in ``active`` sub-envs while it is their turn (several after passes).

        Returns:
            Each sub-env's last opponent action (or ``NO_ACTION``), and whether each game is
            over afterwards.
        """
        rules = self.record.rules
        terminal = np.asarray(rules.is_terminal(self.state))
        moving = active & ~terminal & (self.state.to_move != self.agent_side)
        only = self._only
        if only is not None and only.batched is not None \
                and 2 * np.count_nonzero(moving) > self.num_envs:
            moves = only.batched.act(self.state, self._draws_where(moving))
            self._play_where(moving, moves)
            last = np.where(moving, moves, NO_ACTION)
            terminal = np.asarray(rules.is_terminal(self.state))
            moving &= ~terminal & (self.state.to_move != self.agent_side)  # moves again
        else:
            last = np.full(self.num_envs, NO_ACTION, dtype=np.int64)
        index = np.flatnonzero(moving)
        while index.size:
            part = take(self.state, index)
            moves = self._opponent_moves(part, index)
            part = rules.apply_batch(part, moves)
            put(self.state, index, part)
            last[index] = moves
            over = np.asarray(rules.is_terminal(part))
            terminal[index] = over
            index = index[~over & (part.to_move != self.agent_side[index])]
        return last, terminal

    def _observation(self, planes: tuple[Any, Any] | None = None) -> np.ndarray:
        mine, theirs = side_view(self.state, self.agent_side) if planes is None else planes
        return self._observations(self.state, mine, theirs)

    def _winners(self, index: np.ndarray) -> np.ndarray:
        """+1 agent won / -1 lost / 0 draw in the finished games ``index``."""
        return np.asarray(self.record.rules.result(take(self.state, index),
                                                   self.agent_side[index]))

    def _mask_after(self, illegal: np.ndarray | None) -> np.ndarray:
        """The masks of the current positions (all False where ``illegal`` ended a game),
        kept for checking actions; returns a copy to hand out."""
        masks = self.record.rules.legal_mask(self.state)
        if illegal is not None and illegal.any():
            masks[illegal] = False
        self._masks = masks
        return masks.copy()

    def _publish(self, opponent_action: np.ndarray, terminated: np.ndarray,
                 illegal: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """Observations, rewards and ``info`` of the current positions (fresh arrays)."""
        planes = side_view(self.state, self.agent_side)
        ended = np.flatnonzero(terminated)
        winner = np.zeros(self.num_envs, dtype=np.int64)
        if ended.size:
            winner[ended] = np.where(illegal[ended], OPPONENT_WON, self._winners(ended))
        info: dict[str, Any] = {
            "action_mask": self._mask_after(illegal),
            "opponent_action": opponent_action, "_opponent_action": opponent_action != NO_ACTION,
            "winner": winner, "_winner": terminated,
            "illegal_action": illegal, "_illegal_action": illegal,
        }
        rewards = winner.astype(np.float64)
        if self.record.scored:
            score = np.stack([popcount(plane) for plane in planes], axis=-1)
            info["score"], info["_score"] = score, np.ones(self.num_envs, dtype=bool)
            if self.settings.reward == "score":
                legal_end = ended[~illegal[ended]]
                rewards[legal_end] = (score[legal_end, 0] - score[legal_end, 1]) \
                    / self.settings.board_cells
        return self._observation(planes), rewards, info


def _autoreset_mode(value: Any) -> AutoresetMode:
    """``value`` as one of ``AUTORESET_MODES``, or a ValueError naming them."""
    valid = [mode.value for mode in AUTORESET_MODES]
    try:
        mode = AutoresetMode(value)
    except ValueError:
        mode = None
    if mode not in AUTORESET_MODES:
        raise ValueError(f"autoreset_mode must be one of {valid}, got {value!r}")
    return mode


def _illegal_error(envs_index: np.ndarray, actions: np.ndarray) -> IllegalMoveError:
    """The ``IllegalMoveError`` of ``illegal_action="raise"``, naming the sub-envs."""
    pairs = ", ".join(f"env {i}: action {actions[i]}" for i in envs_index[:SHOWN_ILLEGAL])
    more = ", ..." if len(envs_index) > SHOWN_ILLEGAL else ""
    return IllegalMoveError(f"illegal actions ({pairs}{more}); pick actions where "
                            "env.action_masks() is True (the env is unchanged)")


VECTOR_CLASSES: dict[str, type[BoardVectorEnv]] = {}
"""The vector env class of each registered game, by class name (``"ReversiVectorEnv"``)."""


def define_vector_env(record: Game) -> type[BoardVectorEnv]:
    """The vector env class of ``record``'s game, ``f"{record.class_prefix}VectorEnv"``, made
    and set as an attribute of this module (``gym.make_vec``'s entry point)."""
    name = record.class_prefix + VECTOR_SUFFIX
    doc = (f"``{record.env_id}`` batched: N games of {record.title}, each exactly as "
           f"``{record.class_prefix}Env`` (see its docstring), each sub-env against its own "
           "opponent.\n\n    See ``BoardVectorEnv`` for the arguments; opponents with a batched "
           "twin (``players.batched_names``) run batched.\n    ")
    cls = type(name, (BoardVectorEnv,), {"record": record, "__doc__": doc,
                                         "__module__": __name__, "__qualname__": name})
    VECTOR_CLASSES[name] = cls
    globals()[name] = cls
    return cls


def __getattr__(name: str) -> type[BoardVectorEnv]:
    """The vector env classes are made at registration (``define_vector_env``); any other
    name is an AttributeError naming them."""
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}; the vector env "
                         f"classes: {', '.join(VECTOR_CLASSES)}")


__all__ = ["NO_ACTION", "VECTOR_CLASSES", "BoardVectorEnv", "Sampler", "checked_actions",
           "define_vector_env", "sub_env_seeds"]
