"""Batched environments: N games stepped at once on numpy ``uint64`` bitboards.

``gym.make_vec("Reversi-v0", num_envs=N, vectorization_mode="vector_entry_point", **kwargs)``
builds a ``ReversiVectorEnv`` (one ``f"{record.class_prefix}VectorEnv"`` per registered game,
made by ``define_vector_env``) taking the same keyword arguments as ``gym.make``, validated by
the same function (``settings.env_settings``). Sub-env ``i`` behaves exactly like the single
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
batched twin (``players.make_batched``) moves its whole group at once, any other player with
each sub-env's generator: in one loop if it has ``act_many``, else game by game (warned).

Openings. ``opening=`` (default None: every game from the start position) is a callable
``opening(rng) -> text | None`` called for a sub-env at each new game, after its opponent is
drawn, with that sub-env's generator: the game starts from that position (the game's
position text; None: the start position), with the first player drawn as usual for the
agent's side. Where the opponent's replies end the new game before the agent has moved,
another opening is drawn (at most ``OPENING_DRAWS`` times, then the start position), so the
agent always gets a position with a legal move: the single env's rule
(``settings.OPENING_DRAWS``, ``opening_state``). With openings, sub-env ``i``'s games
still depend only on its seed and actions; against one opponent without a batched twin they
are the single env's games with the same ``opening=``. ``reset(options={"position": text})``
(or a list of N texts) starts the reset games from a position, as in the single env: a
finished one, or one that the opponent's replies end before the agent has moved, is refused.

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

The parts live beside this module: ``vector_opponents`` (the grouping and the sampler),
``vector_streams`` (seeds and streams), ``vector_observations`` (observations kept from step
to step) and ``vector_arguments`` (the vector env's own argument checks).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from boardgym.envs.games.bitboard import MEMO_CELLS, popcount
from boardgym.envs.games.core import Game, batch_of, put, side_view, take, unbatch
from boardgym.envs.kernels import compiled_step
from boardgym.envs.settings import (
    AGENT_SIDE,
    OPENING_DRAWS,
    OPPONENT_WON,
    Opening,
    check_opening,
    draw_agent_side,
    ended_before_agent,
    env_settings,
    opening_state,
    position_state,
)
from boardgym.envs.vector_arguments import (
    OPPONENT_FIRST,
    POSITION_OPTION,
    RANDOM_FIRST,
    check_num_envs,
    checked_actions,
    checked_autoreset_mode,
    first_player_codes,
    illegal_error,
    reset_options,
)
from boardgym.envs.vector_observations import Observations
from boardgym.envs.vector_opponents import Opponents
from boardgym.envs.vector_streams import SubEnvStreams, sub_env_seeds

NO_ACTION = -1
"""``info["opponent_action"]`` of a sub-env where the opponent did not move."""
VECTOR_SUFFIX = "VectorEnv"


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
        compiled_step: ``envs.kernels``' compiled ``step``, or None; None runs the Python path.
    """

    record: ClassVar[Game]

    def __init__(self, num_envs: int = 1, opponent: Any = None, first_player: Any = "random",
                 opening: Opening | None = None, illegal_action: str = "lose",
                 reward: str = "win",
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 render_mode: str | None = None, **options: Any) -> None:
        self.num_envs = n = check_num_envs(num_envs, render_mode)
        self.metadata = {"autoreset_mode": checked_autoreset_mode(autoreset_mode),
                         "render_modes": []}
        record = self.record
        self.settings = env_settings(record, illegal_action, reward, options)
        self._first_codes = first_player_codes(first_player, n)
        self.single_observation_space = self.settings.observation_space
        self.single_action_space = self.settings.action_space
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.n_actions = int(self.settings.action_space.n)
        self._opponents = Opponents(record, opponent, n, self.settings.options)
        self._opening = check_opening(opening)
        self.state: Any = None
        self.agent_side = np.zeros(n, dtype=np.int64)
        self._fresh = record.rules.initial_batch(1, **self.settings.options)
        self._observations = Observations(record, self._fresh,
                                           self.settings.board_cells > MEMO_CELLS)
        self._row_starts = np.arange(n) * self.n_actions
        """Offset of each sub-env's row in the flattened ``(N, n_actions)`` masks."""
        self._needs_reset = np.ones(n, dtype=bool)
        self._masks = np.zeros((n, self.n_actions), dtype=bool)
        self._streams = SubEnvStreams([0] * n)
        """Each sub-env's random numbers (seeded again by every seeded reset)."""
        self.compiled_step = compiled_step(self)

    # -- Gymnasium API ---------------------------------------------------------------------

    def reset(self, *, seed: Any = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start new games in every sub-env (or where ``options["reset_mask"]`` is True).

        Args:
            seed: None, an int (sub-env ``i`` gets ``seed + i``) or a list of N ints, each in
                ``[0, 2**64)``.
            options: ``{"reset_mask": (N,) bool}`` resets only those sub-envs;
                ``{"position": text}`` (or a list of N texts, sub-env ``i`` reading entry
                ``i``) starts the reset games from that position, as the single env's option
                does (it wins over ``opening``).

        Raises:
            ValueError: a bad seed, a bad option, a bad or finished position, or a position
                that the opponent's replies end before the agent has moved
                (``settings.ended_before_agent``, naming the sub-env; the env then needs a
                reset: ``step`` raises ``ResetNeeded``).
        """
        mask, texts = reset_options(options, self.num_envs)
        index = np.flatnonzero(mask)
        positions = None if texts is None else self._positions(index, texts)
        if seed is not None or self.state is None:
            self._seed(sub_env_seeds(seed, self.num_envs))
        self._start_games(index, positions=positions)
        opponent_action, terminal = self._opponent_turns(mask)
        if positions is None:
            opponent_action, _ = self._redraw_ended(mask, opponent_action, terminal)
        else:
            self._refuse_ended(index, texts, positions, terminal)
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
        if self.compiled_step is not None:
            return self.compiled_step(self, actions)
        starting = self._needs_reset.copy()
        # a finished game's mask is all False, so ``legal`` is False where games start
        legal = self._masks.reshape(-1)[self._row_starts + actions]
        illegal = ~(starting | legal)
        if self.settings.illegal_action == "raise" and illegal.any():
            raise illegal_error(np.flatnonzero(illegal), actions)
        if starting.any():
            self._start_games(np.flatnonzero(starting))
        self._play_where(legal, actions)
        opponent_action, terminated = self._opponent_turns(~illegal)
        opponent_action, terminated = self._redraw_ended(starting, opponent_action, terminated)
        terminated |= illegal
        obs, rewards, info = self._publish(opponent_action, terminated, illegal)
        self._needs_reset = terminated.copy()
        if self.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP and terminated.any():
            obs = self._restart_ended(obs, info, terminated)
        truncated = np.zeros(self.num_envs, dtype=bool)
        return obs, rewards, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """A fresh ``(N, n_actions)`` bool array: the agent's legal actions in each sub-env
        (what MaskablePPO calls); all False in a sub-env whose game just ended."""
        return self._masks.copy()

    def position_texts(self) -> list[str]:
        """Each sub-env's current position in the game's notation (what
        ``reset(options={"position": text})`` and ``opening`` read). A batch keeps no order
        of moves (``core.Trail``): four-in-a-row's texts are a move order that reaches the
        position, not necessarily the one played.

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
        return self._opponents.specs

    # -- shared plumbing -------------------------------------------------------------------

    def _seed(self, seeds: list[int]) -> None:
        """Per-sub-env streams and generators from ``seeds`` (see the module docstring)."""
        self._streams = SubEnvStreams(seeds)
        self._np_random, self._np_random_seed = gym.utils.seeding.np_random(seeds[0])

    def _restart_ended(self, obs: np.ndarray, info: dict[str, Any],
                       terminated: np.ndarray) -> np.ndarray:
        """Same-step autoreset: the ended games' last observations ``obs`` go into
        ``info["final_obs"]``, new games start there (``info["action_mask"]`` becomes theirs);
        returns the observations of the new positions."""
        info["final_obs"], info["_final_obs"] = obs, terminated
        self._start_games(np.flatnonzero(terminated))
        self._redraw_ended(terminated, *self._opponent_turns(terminated))
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)
        info["action_mask"] = self._mask_after(None)
        return self._observation()

    def _positions(self, index: np.ndarray, texts: list[Any]) -> list[Any]:
        """The positions ``texts[i]`` of the sub-envs ``i`` in ``index``, read and checked
        before anything changes.

        Raises:
            ValueError: a bad or finished position (``settings.position_state``).
        """
        return [position_state(self.record, texts[i], self.settings,
                               f"options[{POSITION_OPTION!r}] of sub-env {i}")
                for i in index.tolist()]

    def _refuse_ended(self, index: np.ndarray, texts: list[Any], positions: list[Any],
                      terminal: np.ndarray) -> None:
        """Refuse the reset when the opponent's replies ended a game started from a position
        option (``index[k]`` from ``positions[k]``) before the agent's first move.

        Raises:
            ValueError: ``settings.ended_before_agent`` of the first such sub-env; the env
                needs a reset then (``state`` is None).
        """
        ended = np.flatnonzero(terminal[index])
        if ended.size:
            k = int(ended[0])
            i = int(index[k])
            self.state = None
            raise ended_before_agent(self.record, texts[i], positions[k],
                                     f"options[{POSITION_OPTION!r}] of sub-env {i}")

    def _start_games(self, index: np.ndarray, use_opening: bool = True,
                     positions: list[Any] | None = None) -> None:
        """Fresh games in sub-envs ``index``: a sampled opponent (with a sampler), the given
        ``positions`` (one per sub-env of ``index``) or else an opening (with ``opening``,
        unless not ``use_opening``), then who moves first where it is random. The opponent's
        first moves come with the next ``_opponent_turns``."""
        if self.state is None:
            self.state = self.record.rules.initial_batch(self.num_envs,
                                                         **self.settings.options)
        put(self.state, index, self._fresh)
        self._opponents.draw(index, self._streams)
        if positions is not None:
            opened = self._put_positions(index.tolist(), positions)
        elif use_opening and self._opening is not None:
            opened = self._open(index)
        else:
            opened = index[:0]
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
        drawn = [(i, opening_state(self.record, self._opening, self._streams.rng(i),
                                   self.settings)) for i in index.tolist()]
        opened = [(i, state) for i, state in drawn if state is not None]
        return self._put_positions([i for i, _ in opened], [state for _, state in opened])

    def _put_positions(self, index: list[int], states: list[Any]) -> np.ndarray:
        """Put single ``states[k]`` into sub-env ``index[k]`` of ``state``; ``index`` as an
        array."""
        for i, state in zip(index, states, strict=True):
            put(self.state, np.array([i]), batch_of(state))
        return np.array(index, dtype=np.intp)

    def _random_sides(self, index: np.ndarray) -> np.ndarray:
        """The agent's side in new games ``index``: from the sub-env's stream against a
        batched opponent, else drawn from its generator as the single env draws it."""
        looped = self._opponents.looped(index)
        sides = np.empty(len(index), dtype=np.int64)
        streamed = ~looped
        if streamed.any():
            sides[streamed] = self._streams.sides(index[streamed])
        for k in np.flatnonzero(looped):
            sides[k] = draw_agent_side(self._streams.rng(int(index[k])))
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
        batched = self._opponents.batched_only
        if batched is not None and 2 * np.count_nonzero(moving) > self.num_envs:
            moves = batched.act(self.state, self._streams.draws_where(moving))
            self._play_where(moving, moves)
            last = np.where(moving, moves, NO_ACTION)
            terminal = np.asarray(rules.is_terminal(self.state))
            moving &= ~terminal & (self.state.to_move != self.agent_side)  # moves again
        else:
            last = np.full(self.num_envs, NO_ACTION, dtype=np.int64)
        index = np.flatnonzero(moving)
        while index.size:
            part = take(self.state, index)
            moves = self._opponents.moves(part, index, self._streams)
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
        """The masks of the current positions (all False where ``illegal`` ended a game or a
        game waits for its restart), kept for checking actions; returns a copy to hand out."""
        masks = self.record.rules.legal_mask(self.state)
        ended = self._needs_reset if illegal is None else illegal | self._needs_reset
        masks[ended] = False
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


__all__ = ["NO_ACTION", "VECTOR_CLASSES", "BoardVectorEnv", "define_vector_env"]
