"""Batched environments: N games stepped at once on numpy ``uint64`` bitboards.

``gym.make_vec("Reversi-v0", num_envs=N, vectorization_mode="vector_entry_point", **kwargs)``
builds a ``ReversiVectorEnv`` (``FourInARowVectorEnv``, ``TicTacToeVectorEnv``) taking the
same keyword arguments as ``gym.make``. Sub-env ``i`` behaves exactly like the single env:
the same observations (plane 0 the agent's stones), masks, passes, opponent replies inside
``step``, rewards and ``illegal_action`` handling. Every rule comes from the batched twins of
the rules core (``initial_batch``, ``apply_batch``, ``legal_mask``, ``is_terminal``, ...).

Autoreset: Gymnasium's next-step mode by default (``metadata["autoreset_mode"]``): the step
that ends game ``i`` returns its last observation with ``terminated[i]``; the next ``step``
ignores ``actions[i]``, starts a new game and returns its first observation with reward 0.
``autoreset_mode=AutoresetMode.SAME_STEP`` instead returns the new game's first observation
in the ending step, the last one in ``info["final_obs"]`` (where ``info["_final_obs"]``).

Random streams. ``reset(seed=s)`` gives sub-env ``i`` the seed ``s + i`` (or ``seed[i]`` for
a list), as ``SyncVectorEnv`` does. With a batched opponent (see ``agents.batched``) each
sub-env draws from its own counter-based stream: draw ``k`` of sub-env ``i`` is the 64-bit
word ``splitmix64(splitmix64(seed_i) + (k + 1) * golden_gamma)``, one draw per random first
player (its top bit: 1 = the opponent moves first) and one per opponent move (its high 32
bits pick among the candidate moves, see ``agents.batched.choose``). So sub-env ``i``'s games
depend only on its seed and its actions, not on N or on the other sub-envs, but they differ
from a single env's (which shuffles with ``np.random.Generator``). With an opponent that has
no batched twin (an ``Agent`` object, a checkpoint, ``alphabeta:4``), the single agent is run
per sub-env with ``np.random.default_rng(seed_i)``, drawing the first player and the
opponent's moves exactly as the single env does: sub-env ``i`` then plays the very games of
``gym.make(id, **kwargs)`` reset with seed ``seed_i`` and given the same actions (slowly: a
warning says so).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import gymnasium as gym
import numpy as np
from boardgym.agents import batched
from boardgym.envs.games.bitboard import popcount, single_bit_slot
from boardgym.envs.turn_based import (
    AGENT_WON,
    FIRST_PLAYER_CHOICES,
    OPPONENT_WON,
    FourInARowEnv,
    ReversiEnv,
    TicTacToeEnv,
    TurnBasedEnv,
    _choice,
    draw_agent_side,
)
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

AGENT_FIRST, OPPONENT_FIRST, RANDOM_FIRST = range(3)
FIRST_PLAYER_CODES = {"agent": AGENT_FIRST, "opponent": OPPONENT_FIRST, "random": RANDOM_FIRST}
NO_ACTION = -1
"""``info["opponent_action"]`` of a sub-env where the opponent did not move."""
GOLDEN_GAMMA = np.uint64(0x9E37_79B9_7F4A_7C15)
MIX_1 = np.uint64(0xBF58_476D_1CE4_E5B9)
MIX_2 = np.uint64(0x94D0_49BB_1331_11EB)
TOP_BIT = np.uint64(63)
SEED_BOUND = 2 ** 63
AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


def _mix(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (a bijection on uint64 with good avalanche)."""
    z = (z ^ (z >> np.uint64(30))) * MIX_1
    z = (z ^ (z >> np.uint64(27))) * MIX_2
    return z ^ (z >> np.uint64(31))


def _stream_draw(keys: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """Draw number ``counters`` of the streams keyed ``keys`` (see the module docstring)."""
    return _mix(keys + counters * GOLDEN_GAMMA)


def _seeds(seed: int | list[int] | None, n: int) -> np.ndarray:
    """One non-negative seed per sub-env: ``seed + i``, a list of n seeds, or fresh entropy."""
    if seed is None:
        return np.random.default_rng().integers(SEED_BOUND, size=n, dtype=np.int64)
    values = np.asarray(seed, dtype=object)
    if values.ndim == 0:
        values = np.array([int(seed) + i for i in range(n)], dtype=object)  # type: ignore[arg-type]
    if values.shape != (n,) or not all(isinstance(v, (int, np.integer)) and v >= 0
                                       for v in values):
        raise ValueError(f"seed must be None, a non-negative int, or a list of {n} "
                         f"non-negative ints (one per sub-env); got {seed!r}")
    return values


def _first_player_codes(first_player: Any, n: int) -> np.ndarray:
    """``first_player`` (one value, or one per sub-env) as codes ``AGENT_FIRST``, ..."""
    values = [first_player] * n if isinstance(first_player, str) else list(first_player)
    if len(values) != n:
        raise ValueError(f"first_player must be one of {FIRST_PLAYER_CHOICES} or a list of "
                         f"{n} of them (one per sub-env); got {len(values)} values")
    return np.array([FIRST_PLAYER_CODES[_choice("first_player", v, FIRST_PLAYER_CHOICES)]
                     for v in values], dtype=np.int64)


class _Observations:
    """The agent's observations of N games: observed in full, or kept from step to step and
    mended where a plane changed by one stone.

    Every game's observation is a function of its two planes alone (``rules.observation``
    reads ``me`` and ``opp``), and each set bit shows as one cell. In four-in-a-row each move
    adds one stone, so after a step each plane differs from the last observed one in at most
    one bit: that cell is written, the rest is kept. New games start from the empty board
    (``restart``). A step with any other change is observed in full.

    Args:
        rules: the game's rules module.
        fresh: a one-game batched state.
        mend: keep and mend (else every call observes in full).
    """

    def __init__(self, rules: ModuleType, fresh: Any, mend: bool) -> None:
        self.rules = rules
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
        boards = batched.take(fresh, np.zeros(bits.shape, dtype=np.intp))
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

    def _observe(self, state: Any, me: np.ndarray, opp: np.ndarray) -> np.ndarray:
        """``rules.observation`` of the planes ``me``/``opp`` of the batched ``state``."""
        return np.asarray(self.rules.observation(state._replace(me=me, opp=opp)))

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

    def restart(self, index: np.ndarray) -> None:
        """Games ``index`` start again: their kept observation becomes the empty board's."""
        if self.obs is not None and self.pairs is not None:
            self.obs[index] = 0
            self.pairs[index] = 0

    def _mend(self, state: Any, pairs: np.ndarray) -> None:
        """Bring ``obs`` from ``self.pairs`` to ``pairs``: cell by cell if every plane
        changed by at most one stone, else observed in full."""
        assert self.obs is not None and self.pairs is not None and self.cell_of is not None
        changed = pairs ^ self.pairs
        if np.bitwise_count(changed).max() > 1:
            self.obs = self._observe(state, pairs[:, 0], pairs[:, 1])
            return
        index = single_bit_slot(changed)
        shown = (pairs & self.mask_of.take(index)) != 0
        if self.starts.size == 0:
            self.starts = np.arange(pairs.size).reshape(pairs.shape) * self.obs[0, 0].size
        self.obs.reshape(-1)[self.starts + self.cell_of.take(index)] = shown.view(np.uint8)


class BoardVectorEnv(VectorEnv):
    """N games of one board game against a batched opponent, stepped together.

    Subclasses set ``env_class`` (the single env whose behaviour each sub-env reproduces).

    Args:
        num_envs: number of sub-envs N, >= 1.
        opponent: as for the single env. A name with a batched twin (``agents.batched.names``)
            runs batched; anything else runs the single agent per sub-env (with a warning).
        first_player: ``"random" | "agent" | "opponent"``, or a list of N of them.
        illegal_action: ``"lose" | "raise"``; ``"raise"`` raises ``IllegalMoveError`` naming
            the sub-envs.
        reward: ``"win" | "score"`` (``"score"`` for Reversi only).
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``SAME_STEP``.
        render_mode: must be None (render a single env from ``gym.make`` instead).
        **config: the game's options (four-in-a-row ``rows``, ``columns``, ``connect``).

    Attributes:
        state: the batched rules state of the N games (fields are ``(N,)`` arrays).
        agent_side: ``(N,)`` 0 where the agent moved first in the current game, else 1.
    """

    env_class: type[TurnBasedEnv]
    mend_observations = False
    """Keep the observations and mend them cell by cell (see ``_Observations``): for games
    whose moves add one stone and whose full observation costs more than the mending."""

    def __init__(self, num_envs: int = 1, opponent: Any = None, first_player: Any = "random",
                 illegal_action: str = "lose", reward: str = "win",
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 render_mode: str | None = None, **config: Any) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if render_mode is not None:
            raise ValueError("vector envs do not render: pass render_mode to gym.make(...) "
                             "for a single env instead")
        mode = AutoresetMode(autoreset_mode)
        if mode not in AUTORESET_MODES:
            raise ValueError(f"autoreset_mode must be one of {[m.value for m in AUTORESET_MODES]}"
                             f", got {autoreset_mode!r}")
        self.num_envs = int(num_envs)
        self._first_codes = _first_player_codes(first_player, self.num_envs)
        self.single = self.env_class(opponent=opponent, illegal_action=illegal_action,
                                     reward=reward, **config)
        self.rules: ModuleType = self.single.rules
        self.config = config
        self.metadata = {"autoreset_mode": mode, "render_modes": []}
        self.single_observation_space = self.single.observation_space
        self.single_action_space = self.single.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.n_actions = int(self.single_action_space.n)
        self.opponent = batched.make(self.single.game, self.single.opponent_spec)
        self.looped = None if self.opponent else batched.LoopedAgent(self.single.opponent)
        if self.looped is not None:
            gym.logger.warn(
                f"opponent {self.single.opponent_spec!r} has no batched version; it runs game "
                f"by game (slow). Batched opponents: {batched.names(self.single.game)}")
        self.state: Any = None
        self.agent_side = np.zeros(self.num_envs, dtype=np.int64)
        self._fresh = self.rules.initial_batch(1, **config)
        self._observations = _Observations(self.rules, self._fresh, self.mend_observations)
        self._row_starts = np.arange(self.num_envs) * self.n_actions
        """Offset of each sub-env's row in the flattened ``(N, n_actions)`` masks."""
        self._needs_reset = np.ones(self.num_envs, dtype=bool)
        self._masks = np.zeros((self.num_envs, self.n_actions), dtype=bool)
        self._keys = np.zeros(self.num_envs, dtype=np.uint64)
        self._counters = np.zeros(self.num_envs, dtype=np.uint64)
        self._rngs: list[np.random.Generator] = []

    # -- Gymnasium API ---------------------------------------------------------------------

    def reset(self, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start new games in every sub-env (or where ``options["reset_mask"]`` is True).

        Args:
            seed: None, an int (sub-env ``i`` gets ``seed + i``) or a list of N ints.
            options: ``{"reset_mask": (N,) bool}`` resets only those sub-envs.
        """
        if seed is not None or self.state is None:
            self._seed(_seeds(seed, self.num_envs))
        mask = np.ones(self.num_envs, dtype=bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"], dtype=bool)
            if mask.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be a bool array of shape "
                                 f"({self.num_envs},), got shape {mask.shape}")
        self._start_games(np.flatnonzero(mask))
        opponent_action, _ = self._opponent_turns(mask)
        no_end = np.zeros(self.num_envs, dtype=bool)
        obs, _, info = self._publish(opponent_action, no_end, no_end)
        return obs, info

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """Play ``actions[i]`` in each sub-env, then the opponents' replies, all batched."""
        if self.state is None:
            raise gym.error.ResetNeeded("call env.reset() before env.step()")
        actions = self._checked_actions(actions)
        starting = self._needs_reset.copy()
        if starting.any():
            self._start_games(np.flatnonzero(starting))
        # a finished game's mask is all False, so ``legal`` is False where games start
        legal = self._masks.reshape(-1)[self._row_starts + actions]
        illegal = ~(starting | legal)
        if self.single.illegal_action == "raise" and illegal.any():
            raise batched_illegal_error(np.flatnonzero(illegal), actions)
        self._play_where(legal, actions)
        opponent_action, terminated = self._opponent_turns(~illegal)
        terminated |= illegal
        obs, rewards, info = self._publish(opponent_action, terminated, illegal)
        self._needs_reset = terminated.copy()
        if self.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP and terminated.any():
            info["final_obs"], info["_final_obs"] = obs, terminated
            self._start_games(np.flatnonzero(terminated))
            self._opponent_turns(terminated)
            self._needs_reset = np.zeros(self.num_envs, dtype=bool)
            obs, info["action_mask"] = self._observation(), self._mask_after(None)
        truncated = np.zeros(self.num_envs, dtype=bool)
        return obs, rewards, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """``(N, n_actions)`` bool: the agent's legal actions in each sub-env (what
        MaskablePPO calls); all False in a sub-env whose game just ended."""
        return self._masks

    # -- shared plumbing -------------------------------------------------------------------

    def _seed(self, seeds: np.ndarray) -> None:
        """Per-sub-env streams from ``seeds`` (see the module docstring)."""
        self._keys = _mix(np.array([int(s) % (1 << 64) for s in seeds], dtype=np.uint64))
        self._counters = np.zeros(self.num_envs, dtype=np.uint64)
        if self.looped is not None:
            self._rngs = [np.random.default_rng(int(s)) for s in seeds]
        self._np_random, self._np_random_seed = gym.utils.seeding.np_random(int(seeds[0]))

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

    def _start_games(self, index: np.ndarray) -> None:
        """Fresh games in sub-envs ``index``, drawing who moves first where it is random."""
        if self.state is None:
            self.state = self.rules.initial_batch(self.num_envs, **self.config)
        self._put(index, self._fresh)
        codes = self._first_codes[index]
        sides = (codes == OPPONENT_FIRST).astype(np.int64)
        drawn = codes == RANDOM_FIRST
        if drawn.any():
            sides[drawn] = self._random_sides(index[drawn])
        self.agent_side[index] = sides
        self._needs_reset[index] = False
        self._observations.restart(index)

    def _random_sides(self, index: np.ndarray) -> np.ndarray:
        if self.looped is not None:  # as the single env
            return np.array([draw_agent_side(self._rngs[i]) for i in index], dtype=np.int64)
        return (self._draws(index) >> TOP_BIT).astype(np.int64)

    def _put(self, index: np.ndarray, part: Any) -> None:
        """Write the sub-batch ``part`` (or one game, broadcast) into the games ``index``."""
        for whole, piece in zip(self.state, part, strict=True):
            if isinstance(whole, np.ndarray):
                whole[index] = piece

    def _play_where(self, moving: np.ndarray, actions: np.ndarray) -> None:
        """Play ``actions`` where ``moving``: the rules run on the whole batch (cheaper than
        gathering the movers when most games move), and the other games keep their
        positions (their ``actions`` may be anything, even illegal)."""
        after = self.rules.apply_batch(self.state, actions)
        if not moving.all():
            after = type(after)(*(np.where(moving, new, old) if isinstance(old, np.ndarray)
                                  else old for new, old in zip(after, self.state, strict=True)))
        self.state = after

    def _opponent_moves(self, part: Any, index: np.ndarray) -> np.ndarray:
        """The opponent's move in each game of the sub-batch ``part`` (sub-envs ``index``)."""
        if self.opponent is not None:
            return self.opponent.act(part, self._draws(index))
        assert self.looped is not None
        return self.looped.act_each(part, [self._rngs[i] for i in index])

    def _opponent_turns(self, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Opponent moves in ``active`` sub-envs while it is their turn (several after passes).

        Returns:
            Each sub-env's last opponent action (or ``NO_ACTION``), and whether each game is
            over afterwards.
        """
        terminal = np.asarray(self.rules.is_terminal(self.state))
        moving = active & ~terminal & (self.state.to_move != self.agent_side)
        if self.opponent is not None and 2 * np.count_nonzero(moving) > self.num_envs:
            last = self._whole_batch_opponent_turn(moving)
            terminal = np.asarray(self.rules.is_terminal(self.state))
            moving &= ~terminal & (self.state.to_move != self.agent_side)  # moves again
        else:
            last = np.full(self.num_envs, NO_ACTION, dtype=np.int64)
        index = np.flatnonzero(moving)
        while index.size:
            part = batched.take(self.state, index)
            moves = self._opponent_moves(part, index)
            part = self.rules.apply_batch(part, moves)
            self._put(index, part)
            last[index] = moves
            over = np.asarray(self.rules.is_terminal(part))
            terminal[index] = over
            index = index[~over & (part.to_move != self.agent_side[index])]
        return last, terminal

    def _whole_batch_opponent_turn(self, moving: np.ndarray) -> np.ndarray:
        """One batched opponent move in the sub-envs where ``moving``, chosen and played on
        the whole batch (cheaper than gathering when most move); returns each sub-env's move,
        or ``NO_ACTION`` where it did not move."""
        assert self.opponent is not None
        moves = self.opponent.act(self.state, self._draws_where(moving))
        self._play_where(moving, moves)
        return np.where(moving, moves, NO_ACTION)

    def _checked_actions(self, actions: Any) -> np.ndarray:
        values = np.asarray(actions)
        if values.shape != (self.num_envs,) or values.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({self.num_envs},), "
                             f"one per sub-env; got {values.dtype} array of shape "
                             f"{values.shape}")
        low, high = values.min(), values.max()
        if low < 0 or high >= self.n_actions:
            raise ValueError(f"actions must be in [0, {self.n_actions}) (see "
                             f"env.action_masks()); got {low}..{high}")
        return values.astype(np.int64, copy=False)

    def _agent_planes(self) -> tuple[Any, Any]:
        """``(agent stones, opponent stones)`` bitboards of every sub-env."""
        agent_to_move = self.state.to_move == self.agent_side
        state = self.state
        return (np.where(agent_to_move, state.me, state.opp),
                np.where(agent_to_move, state.opp, state.me))

    def _observation(self, planes: tuple[Any, Any] | None = None) -> np.ndarray:
        return self._observations(self.state,
                                  *(self._agent_planes() if planes is None else planes))

    def _winners(self, index: np.ndarray) -> np.ndarray:
        """+1 agent won / -1 lost / 0 draw in the finished games ``index``."""
        first_result = np.asarray(self.rules.outcome(batched.take(self.state, index)))
        return np.where(self.agent_side[index] == 0, first_result, -first_result)

    def _mask_after(self, illegal: np.ndarray | None) -> np.ndarray:
        """Fresh masks of the current positions (all False where ``illegal`` ended a game)."""
        masks = self.rules.legal_mask(self.state)
        if illegal is not None and illegal.any():
            masks[illegal] = False
        self._masks = masks
        return masks

    def _publish(self, opponent_action: np.ndarray, terminated: np.ndarray,
                 illegal: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """Observations, rewards and ``info`` of the current positions (fresh arrays)."""
        planes = self._agent_planes()
        ended = np.flatnonzero(terminated)
        winner = np.zeros(self.num_envs, dtype=np.int64)
        winner[ended] = np.where(illegal[ended], OPPONENT_WON, self._winners(ended))
        info: dict[str, Any] = {
            "action_mask": self._mask_after(illegal),
            "opponent_action": opponent_action, "_opponent_action": opponent_action != NO_ACTION,
            "winner": winner, "_winner": terminated,
            "illegal_action": illegal, "_illegal_action": illegal,
        }
        rewards = winner.astype(np.float64)
        if self.single.has_score:
            score = np.stack([popcount(plane) for plane in planes], axis=-1)
            info["score"], info["_score"] = score, np.ones(self.num_envs, dtype=bool)
            if self.single.reward_mode == "score":
                legal_end = ended[~illegal[ended]]
                rewards[legal_end] = (score[legal_end, 0] - score[legal_end, 1]) / self.rules.CELLS
        return self._observation(planes), rewards, info


def batched_illegal_error(envs_index: np.ndarray, actions: np.ndarray) -> Exception:
    """The ``IllegalMoveError`` of ``illegal_action="raise"``, naming the sub-envs."""
    from boardgym.envs.games import IllegalMoveError

    pairs = ", ".join(f"env {i}: action {actions[i]}" for i in envs_index[:5])
    return IllegalMoveError(f"illegal actions ({pairs}{', ...' if len(envs_index) > 5 else ''}); "
                            "pick actions where env.action_masks() is True")


class ReversiVectorEnv(BoardVectorEnv):
    """``Reversi-v0`` batched: N games, each exactly as ``ReversiEnv`` (see its docstring).

    Batched opponents: ``random``, ``corner_best`` (default), ``corner_side_best``, ``worst``.
    ``info`` adds ``score``: ``(N, 2)`` disc counts (agent, opponent).
    """

    env_class = ReversiEnv


class FourInARowVectorEnv(BoardVectorEnv):
    """``FourInARow-v0`` batched: N games, each exactly as ``FourInARowEnv``.

    Batched opponents: ``random`` and ``lookahead:N`` for any N (``lookahead`` and the
    default ``lookahead:2`` included).
    """

    env_class = FourInARowEnv
    mend_observations = True  # N = 4096: 199 us a step instead of 363 (tic-tac-toe's one
    # table lookup, 91 us, is cheaper than mending; Reversi's flips change many stones)


class TicTacToeVectorEnv(BoardVectorEnv):
    """``TicTacToe-v0`` batched: N games, each exactly as ``TicTacToeEnv``.

    Batched opponents (tables over every position): ``random``, ``rules`` (default),
    ``rules_center``, ``perfect``.
    """

    env_class = TicTacToeEnv


__all__ = ["AGENT_WON", "BoardVectorEnv", "FourInARowVectorEnv", "ReversiVectorEnv",
           "TicTacToeVectorEnv"]
