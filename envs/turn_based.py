"""One base env for every game, and one env class per registered game.

``TurnBasedEnv`` holds everything the games share: the agent plays one side, the env plays
the other with an opponent from the player registry (``boardgym.envs.games.players``),
passes and opponent turns happen inside ``step``, masks are published, illegal moves follow
``illegal_action``, and all randomness comes from ``np_random``. Everything game-specific
comes from the game's ``Game`` record and its rules module: ``define_env(record)`` makes the
class ``f"{record.class_prefix}Env"`` (``ReversiEnv``, ``FourInARowEnv``, ``TicTacToeEnv``)
with the record's ``env_doc`` as its docstring, and sets it as an attribute of this module so
that its instances pickle and deep-copy. ``boardgym.register_game`` calls it.

The arguments that the single env and the vector env (``envs.vector``) share are checked in
``envs.settings`` (``env_settings``), which also holds their one rule for where new games
start (``check_opening``, ``opening_state``, ``OPENING_DRAWS``).
"""

from __future__ import annotations

from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from boardgym.envs import render
from boardgym.envs.games import IllegalMoveError, players
from boardgym.envs.games.bitboard import MEMO_CELLS, popcount, unpack
from boardgym.envs.games.core import Game, side_view
from boardgym.envs.settings import (
    AGENT_SIDE,
    FIRST_PLAYER_CHOICES,
    OPENING_DRAWS,
    OPPONENT_WON,
    EnvSettings,
    Opening,
    check_choice,
    check_opening,
    draw_agent_side,
    ended_before_agent,
    env_settings,
    is_int,
    is_named_player,
    opening_state,
    position_state,
)
from boardgym.envs.single_step import SingleStep, plays, single_step

RENDER_MODES = ("ansi", "rgb_array", "human", "svg")
"""The render modes of the single env and the PettingZoo env (``envs.render.Renderer``)."""
POSITION_OPTION = "position"
"""``reset(options={"position": text})`` starts from the position ``text``."""
POSITION_WHAT = f"options[{POSITION_OPTION!r}]"
"""How error messages name a position that the reset option gave."""
ENV_SUFFIX = "Env"


def start_position(record: Game, options: dict[str, Any] | None,
                   settings: EnvSettings) -> Any:
    """The position a reset starts from: ``options["position"]`` read by ``position_state``,
    else the start position.

    Raises:
        ValueError: an unknown reset option, or a bad position (see ``position_state``).
    """
    if not options:
        return settings.initial
    unknown = sorted(set(options) - {POSITION_OPTION})
    if unknown:
        raise ValueError(f"unknown reset option(s) {unknown}; the env takes "
                         f"options={{{POSITION_OPTION!r}: text}}")
    return position_state(record, options[POSITION_OPTION], settings, POSITION_WHAT)


def action_index(action: Any, n: int) -> int:
    """``action`` as an int in ``[0, n)``.

    Raises:
        ValueError: not an integer (an int, a numpy integer or a 0-d integer array), or
            outside the action space.
    """
    if is_int(action):
        index = int(action)
    else:
        value = np.asarray(action)
        if value.shape != () or value.dtype.kind not in "iu":
            raise ValueError(f"action must be an integer in [0, {n}), got {action!r}; for a "
                             "numpy array of actions, step a vector env instead")
        index = int(value)
    if not 0 <= index < n:
        raise ValueError(f"action {index} is outside the action space Discrete({n}); "
                         f"use an integer in [0, {n}) (see env.action_masks())")
    return index


class TurnBasedEnv(gym.Env[np.ndarray, np.int64]):
    """Base class of the board-game envs: the agent against an opponent from the player
    registry. Each game's class (``define_env``) sets ``record``; its docstring is the spec.

    Positions. ``reset(options={"position": text})`` starts from ``text`` (the game's
    position text, read with passes applied: where the side written to move has no legal
    move, the other side is to move). The agent's side follows ``first_player`` as usual;
    the agent never gets a position without a legal move, so a finished position, or one
    that the opponent's replies end before the agent has moved (e.g. the opponent is to move
    and wins at once), is refused with a ``ValueError`` naming the ``first_player`` that
    seats the agent on the side to move. The vector env takes the same option.

    Speed. Against ``opponent="random"`` a step (and a reset without a position or an
    opening) is one compiled call of the game's kernel (``envs.single_step``: the same games
    for a seed as the Python path, which plays every other opponent); ``state`` is read back
    from the kernel's words when it is asked for.

    Args:
        render_mode: None, ``"ansi"`` (a text board), ``"rgb_array"`` (an image),
            ``"human"`` (a pygame window) or ``"svg"`` (an ``envs.svg.Svg`` document, shown
            as the picture in notebooks: the board, with the agent's legal moves dotted
            when it is to move).
        opponent: a built-in player name, an ``Agent`` or a checkpoint path (default: the
            game's ``default_opponent``).
        first_player: ``"random" | "agent" | "opponent"`` (random: drawn per game).
        opening: None (every game from the start position), or a sampler ``opening(rng) ->
            position text | None`` called at each reset without a position option, with the
            env's ``np_random``: the game starts from that position (None: the start
            position), then the first player is drawn as usual. Where the opponent's replies
            end the new game before the agent has moved, another opening is drawn (and the
            first player again), at most ``OPENING_DRAWS`` times, then the start position:
            the agent always gets a position with a legal move. The vector env
            (``envs.vector``) follows the same rule. Drawing from ``np_random`` (not a
            generator of its own) keeps every random number of a game in one stream, so
            ``reset(seed=s)`` reproduces the game, the env pickles and deep-copies with its
            stream, and against an opponent without a batched twin, sub-env ``i`` of a vector
            env seeded ``s_i`` plays the very games of this env reset with seed ``s_i``.
            ``reset(options={"position": text})`` wins over the sampler. Settable.
        illegal_action: ``"lose" | "raise"``.
        reward: ``"win" | "score"`` (``"score"`` for games that end with a disc count).
        **options: the game's board options (four-in-a-row ``rows``, ``columns``,
            ``connect``).

    Raises:
        ValueError: a bad argument (the message names the choices or the fix).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}  # noqa: RUF012
    record: ClassVar[Game]

    def __init__(self, render_mode: str | None = None, opponent: Any = None,
                 first_player: str = "random", opening: Opening | None = None,
                 illegal_action: str = "lose", reward: str = "win", **options: Any) -> None:
        if render_mode is not None:
            check_choice("render_mode", render_mode, RENDER_MODES)
        record = self.record
        self.render_mode = render_mode
        self.first_player = check_choice("first_player", first_player, FIRST_PLAYER_CHOICES)
        self.settings = env_settings(record, illegal_action, reward, options)
        self.illegal_action, self.reward_mode = illegal_action, reward
        self.observation_space: spaces.Box = self.settings.observation_space
        self.action_space: spaces.Discrete = self.settings.action_space
        self._n_actions = int(self.action_space.n)
        self._action_cells = np.arange(self._n_actions)
        self._words_live = self._stale = False
        """The compiled step's words hold the position (``_words_live``), and ``state`` and
        ``_legal`` are behind them until read (``_stale``): see ``envs.single_step``."""
        self._single: SingleStep | None = None
        """The compiled step, made (its kernel compiled or loaded) when the opponent first
        becomes one it plays."""
        self.opponent = record.default_opponent if opponent is None else opponent
        self.opening = opening
        self.state = None
        self.agent_side = AGENT_SIDE
        self.done = True
        self._legal = 0
        self._memo: dict[Any, tuple[np.ndarray, np.ndarray]] | None = \
            {} if self.settings.board_cells <= MEMO_CELLS else None
        """Small boards: read-only observation and mask by (position, agent side)."""
        self._renderer = render.Renderer(record, render_mode or "ansi", type(self).__name__,
                                         self.metadata["render_fps"])

    @property
    def opponent(self) -> players.Agent:
        """The opponent player. Set it to a spec or an ``Agent`` (it applies from the next
        move on); ``opponent_spec`` is what it was set to."""
        return self._opponent

    @opponent.setter
    def opponent(self, spec: Any) -> None:
        self._opponent = players.make(self.record, spec, self.settings.options)
        self.opponent_spec = spec
        self._fast = self._compiled_step() if plays(spec) else None

    @property
    def state(self) -> Any:
        """The rules state of the game (None before the first reset)."""
        if self._stale:
            self._pull()
        return self._state

    @state.setter
    def state(self, state: Any) -> None:
        self._state = state
        self._words_live = self._stale = False

    @property
    def _legal(self) -> int:
        """The agent's legal actions as bits (0 once the game is over)."""
        if self._stale:
            self._pull()
        return self._legal_bits

    @_legal.setter
    def _legal(self, legal: int) -> None:
        self._legal_bits = legal

    def _pull(self) -> None:
        """``state`` and ``_legal`` read back from the compiled step's words."""
        assert self._single is not None
        self._state = self._single.pull()
        self._legal_bits = int(self.record.rules.action_bits(self._state))
        self._stale = False

    @property
    def opening(self) -> Opening | None:
        """The opening sampler (see the class docstring); set it to a sampler or None (it
        applies from the next reset on).

        Raises:
            ValueError: set to something that is neither None nor callable.
        """
        return self._opening

    @opening.setter
    def opening(self, opening: Any) -> None:
        self._opening = check_opening(opening)

    def __getstate__(self) -> dict[str, Any]:
        """The env's fields; a named opponent is kept as its spec (see ``is_named_player``),
        the compiled step (its generator handles are addresses) is made again."""
        if self._stale:
            self._pull()
        state = self.__dict__.copy()
        state["_words_live"] = False
        del state["_single"], state["_fast"]
        if is_named_player(self.record, self.opponent_spec):
            del state["_opponent"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._single = None
        if "_opponent" not in state:
            self.opponent = self.opponent_spec
        else:
            self._fast = self._compiled_step() if plays(self.opponent_spec) else None

    def _compiled_step(self) -> SingleStep | None:
        """The env's compiled step, made on first use (None where its game has none)."""
        if self._single is None:
            self._single = single_step(self)
        return self._single

    # -- Gymnasium API ---------------------------------------------------------------------

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a game, from ``options["position"]`` (text in the game's notation) if given,
        else from a drawn opening (with ``opening``, see the class docstring) or the start
        position; the opponent moves first when it is its turn.

        Raises:
            ValueError: a bad position text or a finished position (see ``start_position``),
                a position that the opponent's replies end before the agent has moved
                (``settings.ended_before_agent``: the env is left needing a reset), or an
                opening sampler's bad position (see ``opening_state``).
        """
        super().reset(seed=seed)
        fast = self._fast
        if fast is not None and not options and self._opening is None:
            started = fast.start(self)
            if started is not None:
                return started
        state = start_position(self.record, options, self.settings)
        if options:
            opponent_action = self._start_from(state, options[POSITION_OPTION])
        elif self._opening is None:
            opponent_action = self._start(state)
        else:
            opponent_action = self._start_opened()
        obs, mask = self._views()
        info = self._info(opponent_action, mask)
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        """Play ``action``, then the opponent's replies until the agent is to move or the end.

        Raises:
            gymnasium.error.ResetNeeded: the game is over, or never started.
            ValueError: ``action`` is not an integer of the action space.
            IllegalMoveError: an illegal action with ``illegal_action="raise"`` (the game is
                unchanged and goes on).
        """
        if self.done:
            raise gym.error.ResetNeeded("the game is over (or never started): call env.reset() "
                                        "before env.step()")
        if type(action) is int and 0 <= action < self._n_actions:
            index = action
        else:
            index = action_index(action, self._n_actions)
        fast = self._fast
        if fast is not None:
            stepped = fast.step(self, index)
            if stepped is not None:
                return stepped
        if not self._legal >> index & 1:
            if self.illegal_action == "raise":
                raise IllegalMoveError(f"action {index} is illegal here; legal actions: "
                                       f"{np.flatnonzero(self._mask()).tolist()}")
            self.done = True
            self._legal = 0
            info = self._info(None, self._mask(), illegal=True)
            return self._observation(), float(OPPONENT_WON), True, False, info
        self.state = self.record.rules.play(self.state, index)
        opponent_action = self._opponent_turns()
        if self.render_mode == "human":
            self.render()
        obs, mask = self._views()
        return obs, self._reward(), self.done, False, self._info(opponent_action, mask)

    def action_masks(self) -> np.ndarray:
        """A fresh bool mask of the agent's legal actions (all False once the game is over)."""
        return self._mask()

    def position_text(self) -> str:
        """The current position in the game's notation (what ``reset(options={"position":
        text})`` reads)."""
        return str(self.record.rules.to_text(self._current()))

    def render(self) -> str | np.ndarray | None:
        """The board as text (``ansi``), an image (``rgb_array``), an ``Svg`` document
        (``svg``: with the agent's legal moves as hints while it is to move), or drawn in a
        window (``human``)."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi', "
                            "'rgb_array', 'human' or 'svg' to gym.make")
            return None
        return self._renderer(self._current(), hints=not self.done)

    def close(self) -> None:
        """Close the pygame window, if any."""
        self._renderer.close()

    # -- shared plumbing -------------------------------------------------------------------

    def _start(self, state: Any) -> int | None:
        """A new game from ``state``: the agent's side (drawn with ``first_player="random"``),
        then the opponent's turns. Returns the opponent's last action, if any."""
        first = self.first_player
        if first == "random":
            self.agent_side = draw_agent_side(self.np_random)
        else:
            self.agent_side = AGENT_SIDE if first == "agent" else 1 - AGENT_SIDE
        self.state = state
        return self._opponent_turns()

    def _start_from(self, state: Any, text: str) -> int | None:
        """A new game from the position option ``text`` (read as ``state``), as ``_start``.

        Raises:
            ValueError: the opponent's replies ended the game before the agent's first move
                (``settings.ended_before_agent``; the env stays done).
        """
        opponent_action = self._start(state)
        if self.done:
            raise ended_before_agent(self.record, text, state, POSITION_WHAT)
        return opponent_action

    def _start_opened(self) -> int | None:
        """A new game from a drawn opening, drawn again while the opponent ends it before the
        agent's first move (at most ``OPENING_DRAWS`` openings, then the start position).
        Returns the opponent's last action, if any."""
        assert self._opening is not None
        for _ in range(OPENING_DRAWS):
            drawn = opening_state(self.record, self._opening, self.np_random, self.settings)
            opponent_action = self._start(self.settings.initial if drawn is None else drawn)
            if not self.done:
                return opponent_action
        return self._start(self.settings.initial)

    def _current(self) -> Any:
        """The position now (the start position before the first reset)."""
        return self.settings.initial if self.state is None else self.state

    def _opponent_turns(self) -> int | None:
        """Let the opponent move while it is its turn, then note the agent's legal actions
        and whether the game is over. Returns the opponent's last action, if any."""
        rules, state, action = self.record.rules, self.state, None
        legal = rules.action_bits(state)
        while legal and state.to_move != self.agent_side:
            action = int(self._opponent.act(state, self.np_random))
            # ``apply`` checks the move (and names the legal ones) only when it is illegal
            state = rules.play(state, action) if 0 <= action < self._n_actions \
                and legal >> action & 1 else rules.apply(state, action)
            legal = rules.action_bits(state)
        self.state, self._legal, self.done = state, legal, not legal
        return action

    def _views(self) -> tuple[np.ndarray, np.ndarray]:
        """A fresh observation and action mask of the current position (small boards: copies
        of memoized read-only arrays)."""
        memo = self._memo
        if memo is None:
            return self._observation(), self._mask()
        key = (self.state, self.agent_side)
        found = memo.get(key)
        if found is None:
            obs, mask = self._observation(), self._mask()
            obs.flags.writeable = mask.flags.writeable = False
            found = memo[key] = (obs, mask)
        return found[0].copy(), found[1].copy()

    def _mask(self) -> np.ndarray:
        """A fresh bool mask of the agent's legal actions."""
        return unpack(self._legal, self._action_cells).view(bool)

    def _observation(self) -> np.ndarray:
        return self.record.rules.observation(self.state, self.agent_side)

    def _agent_score(self) -> tuple[int, int]:
        """Disc counts ``(agent, opponent)``."""
        mine, theirs = side_view(self.state, self.agent_side)
        return int(popcount(mine)), int(popcount(theirs))

    def _reward(self) -> float:
        if not self.done:
            return 0.0
        if self.reward_mode == "score":
            mine, theirs = self._agent_score()
            return (mine - theirs) / self.settings.board_cells
        return float(self.record.rules.result(self.state, self.agent_side))

    def _info(self, opponent_action: int | None, mask: np.ndarray,
              illegal: bool = False) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": mask, "opponent_action": opponent_action}
        if self.record.scored:
            info["score"] = self._agent_score()
        if illegal:
            info["illegal_action"] = True
            info["winner"] = OPPONENT_WON
        elif self.done:
            info["winner"] = int(self.record.rules.result(self.state, self.agent_side))
        return info


ENV_CLASSES: dict[str, type[TurnBasedEnv]] = {}
"""The env class of each registered game, by class name (``"ReversiEnv"``)."""


def define_env(record: Game) -> type[TurnBasedEnv]:
    """The env class of ``record``'s game, ``f"{record.class_prefix}Env"`` with the record's
    ``env_doc`` as docstring, made and set as an attribute of this module (a game registered
    again gets a new class)."""
    name = record.class_prefix + ENV_SUFFIX
    cls = type(name, (TurnBasedEnv,), {"record": record, "__doc__": record.env_doc,
                                       "__module__": __name__, "__qualname__": name})
    ENV_CLASSES[name] = cls
    globals()[name] = cls
    return cls


def __getattr__(name: str) -> type[TurnBasedEnv]:
    """The env classes are made at registration (``define_env``); any other name is an
    AttributeError naming them."""
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}; the env classes: "
                         f"{', '.join(ENV_CLASSES)}")


__all__ = ["ENV_CLASSES", "RENDER_MODES", "TurnBasedEnv", "action_index", "define_env",
           "start_position"]
