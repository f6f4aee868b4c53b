"""One base env for every game, and the three registered env classes.

``TurnBasedEnv`` holds everything the games share: the agent plays one side, the env plays
the other with an opponent agent, passes and opponent turns happen inside ``step``, masks are
published, illegal moves follow ``illegal_action``, and all randomness comes from
``np_random``. A game subclass only names its rules module and default opponent.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from boardgym.envs import render
from boardgym.envs.games import IllegalMoveError, four_in_a_row, reversi, tictactoe
from boardgym.envs.games.bitboard import MEMO_CELLS, unpack
from gymnasium import spaces

FIRST_PLAYER_CHOICES = ("random", "agent", "opponent")
ILLEGAL_ACTION_CHOICES = ("lose", "raise")
REWARD_CHOICES = ("win", "score")
AGENT_WON, DRAW, OPPONENT_WON = 1, 0, -1


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``, else a ValueError naming them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return str(value)


def draw_agent_side(rng: np.random.Generator) -> int:
    """Who the agent is in a game with ``first_player="random"``: 0 (it moves first) or 1,
    each with probability 1/2, from one ``rng.random()`` draw (~6x cheaper than
    ``rng.integers(2)``, which a tic-tac-toe episode would feel)."""
    return int(rng.random() < 0.5)


def _action_index(action: Any, n: int) -> int:
    """``action`` as an int in ``[0, n)``.

    Raises:
        TypeError: not an integer (an int, a numpy integer or a 0-d integer array).
        ValueError: outside the action space.
    """
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        index = int(action)
    else:
        value = np.asarray(action)
        if value.shape != () or value.dtype.kind not in "iu":
            raise TypeError(f"action must be an integer in [0, {n}), got {action!r}; for a "
                            "numpy array of actions, step a vector env instead")
        index = int(value)
    if not 0 <= index < n:
        raise ValueError(f"action {index} is outside the action space Discrete({n}); "
                         f"use an integer in [0, {n}) (see env.action_masks())")
    return index


class TurnBasedEnv(gym.Env[np.ndarray, np.int64]):
    """Base class of the board-game envs: the agent against a built-in opponent.

    Subclasses set ``game`` (a name in ``envs.games.GAMES``), ``rules`` (its module) and
    ``default_opponent``. See the subclasses' docstrings for the spec of each game.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 4}  # noqa: RUF012
    game: str
    rules: ModuleType
    default_opponent: str

    def __init__(self, render_mode: str | None = None, opponent: Any = None,
                 first_player: str = "random", illegal_action: str = "lose",
                 reward: str = "win", **config: Any) -> None:
        if render_mode is not None:
            _choice("render_mode", render_mode, tuple(self.metadata["render_modes"]))
        self.render_mode = render_mode
        self.first_player = _choice("first_player", first_player, FIRST_PLAYER_CHOICES)
        self.illegal_action = _choice("illegal_action", illegal_action, ILLEGAL_ACTION_CHOICES)
        self.reward_mode = _choice("reward", reward, REWARD_CHOICES)
        if reward == "score" and self.game != "reversi":
            raise ValueError(f"reward='score' is only for Reversi; use reward='win' for "
                             f"{self.game}")
        self.config = config
        self._initial = self._initial_state(config)
        obs_shape = self.rules.observation(self._initial).shape
        self.observation_space: spaces.Box = spaces.Box(0, 1, obs_shape, np.uint8)
        n_actions = self.rules.legal_mask(self._initial).size
        self.action_space: spaces.Discrete = spaces.Discrete(n_actions)
        self._n_actions = n_actions
        self._action_cells = np.arange(n_actions)
        from boardgym.agents import make as make_agent  # agents import the rules; resolved lazily

        self.opponent_spec = self.default_opponent if opponent is None else opponent
        self.opponent = make_agent(self.game, self.opponent_spec)
        self.has_score = hasattr(self.rules, "score")
        self.state: Any = None
        self.agent_side = 0
        self.done = True
        self._legal = 0
        """The agent's legal actions as bits (0 once the game is over)."""
        self._memo: dict[Any, tuple[np.ndarray, np.ndarray]] | None = \
            {} if np.prod(obs_shape[1:]) <= MEMO_CELLS else None
        """Small boards: read-only observation and mask by (position, agent side)."""
        self._renderer = render.Renderer(self.game, self.rules, render_mode or "ansi",
                                         type(self).__name__, self.metadata["render_fps"])

    def _initial_state(self, config: dict[str, Any]) -> Any:
        """The game's start position for ``config``, or a ValueError naming the options."""
        try:
            return self.rules.initial_state(**config)
        except TypeError as error:
            raise ValueError(f"bad option for {type(self).__name__}: {error}. Options: "
                             "render_mode, opponent, first_player, illegal_action, reward"
                             + self._config_help()) from error

    def _config_help(self) -> str:
        return ""

    # -- Gymnasium API ---------------------------------------------------------------------

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a game; the opponent moves first when it has the first turn."""
        super().reset(seed=seed)
        first = self.first_player
        if first == "random":
            self.agent_side = draw_agent_side(self.np_random)
        else:
            self.agent_side = 0 if first == "agent" else 1
        self.state = self._initial
        opponent_action = self._opponent_turns()
        obs, mask = self._views()
        info = self._info(opponent_action, mask)
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        """Play ``action``, then the opponent's replies until the agent is to move or the end."""
        if self.done:
            raise gym.error.ResetNeeded("the game is over (or never started): call env.reset() "
                                        "before env.step()")
        if type(action) is int and 0 <= action < self._n_actions:
            index = action
        else:
            index = _action_index(action, self._n_actions)
        if not self._legal >> index & 1:
            if self.illegal_action == "raise":
                raise IllegalMoveError(f"action {index} is illegal here; legal actions: "
                                       f"{np.flatnonzero(self._mask()).tolist()}")
            self.done = True
            self._legal = 0
            info = self._info(None, self._mask(), illegal=True)
            return self._observation(), float(OPPONENT_WON), True, False, info
        self.state = self.rules.play(self.state, index)
        opponent_action = self._opponent_turns()
        if self.render_mode == "human":
            self.render()
        obs, mask = self._views()
        return obs, self._reward(), self.done, False, self._info(opponent_action, mask)

    def action_masks(self) -> np.ndarray:
        """Bool mask of the agent's legal actions (all False once the game is over)."""
        return self._mask()

    def render(self) -> str | np.ndarray | None:
        """The board as text (``ansi``), an image (``rgb_array``), or drawn in a window."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi', "
                            "'rgb_array' or 'human' to gym.make")
            return None
        return self._renderer(self._initial if self.state is None else self.state)

    def close(self) -> None:
        """Close the pygame window, if any."""
        self._renderer.close()

    # -- shared plumbing -------------------------------------------------------------------

    def _opponent_turns(self) -> int | None:
        """Let the opponent move while it is its turn, then note the agent's legal actions
        and whether the game is over. Returns the opponent's last action, if any."""
        rules, state, action = self.rules, self.state, None
        legal = rules.action_bits(state)
        while legal and state.to_move != self.agent_side:
            action = int(self.opponent.act(state, self.np_random))
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
        state = self.state
        if state.to_move != self.agent_side:  # the planes of the side to move come first
            state = state._replace(me=state.opp, opp=state.me)
        return self.rules.observation(state)

    def _winner(self) -> int:
        """``AGENT_WON``, ``OPPONENT_WON`` or ``DRAW`` for a finished game."""
        first_player_result = int(self.rules.outcome(self.state))
        return first_player_result if self.agent_side == 0 else -first_player_result

    def _agent_score(self) -> tuple[int, int]:
        """Reversi disc counts ``(agent, opponent)``."""
        counts = self.rules.score(self.state)
        return int(counts[self.agent_side]), int(counts[1 - self.agent_side])

    def _reward(self) -> float:
        if not self.done:
            return 0.0
        if self.reward_mode == "score":
            mine, theirs = self._agent_score()
            return (mine - theirs) / self.rules.CELLS
        return float(self._winner())

    def _info(self, opponent_action: int | None, mask: np.ndarray,
              illegal: bool = False) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": mask,
                                "opponent_action": opponent_action}
        if self.has_score:
            info["score"] = self._agent_score()
        if illegal:
            info["illegal_action"] = True
            info["winner"] = OPPONENT_WON
        elif self.done:
            info["winner"] = self._winner()
        return info


class ReversiEnv(TurnBasedEnv):
    """Reversi (Othello) on an 8x8 board against a built-in opponent.

    ## Action Space
    ``Discrete(64)``: action ``row * 8 + col`` places a disc on that square (row 0 at the top,
    col 0 on the left; ``53`` in the classic programs' column-row notation is action 2*8+4).
    Legal moves flip at least one disc: see ``env.action_masks()`` / ``info["action_mask"]``.

    ## Observation Space
    ``Box(0, 1, (2, 8, 8), uint8)``: plane 0 the agent's discs, plane 1 the opponent's.

    ## Rewards
    At the end +1 win, -1 loss, 0 draw (more discs wins); 0 before. With ``reward="score"``
    the final disc difference (agent - opponent) / 64 instead. An illegal action: -1.

    ## Starting State
    The standard four centre discs. Who moves first is drawn per episode
    (``first_player="random"``); the first player has the black discs (``X`` in text).

    ## Episode End
    When neither side can move (the board full included), or on an illegal action with
    ``illegal_action="lose"``. A side without a legal move passes automatically: when the
    agent must pass, the opponent moves again within the same ``step``.

    ## Arguments
    ``opponent`` (default ``"corner_best"``): a built-in agent name (see
    ``agents.names("reversi")``), an ``Agent``, or a checkpoint path. ``first_player``:
    ``"random" | "agent" | "opponent"``. ``illegal_action``: ``"lose" | "raise"``.
    ``reward``: ``"win" | "score"``. ``render_mode``: ``"ansi" | "rgb_array" | "human"``.

    ## Info
    ``action_mask``, ``opponent_action`` (its last move this step, or None), ``score``
    (``(agent discs, opponent discs)``), ``winner`` (+1 agent, -1 opponent, 0 draw; at the end),
    ``illegal_action`` (True when the episode ended on one).

    ## Version History
    * v0: initial release.
    """

    game = "reversi"
    rules = reversi
    default_opponent = "corner_best"


class FourInARowEnv(TurnBasedEnv):
    """Four-in-a-row (Connect Four) against a built-in opponent, on a configurable board.

    ## Action Space
    ``Discrete(columns)``: drop a token in that column (0 on the left); a full column is
    illegal.

    ## Observation Space
    ``Box(0, 1, (2, rows, columns), uint8)``, row 0 at the top: plane 0 the agent's tokens,
    plane 1 the opponent's.

    ## Rewards
    At the end +1 win, -1 loss, 0 draw; 0 before. An illegal action: -1.

    ## Starting State
    An empty board; who moves first is drawn per episode (``first_player="random"``). The
    first player has red tokens (``X`` in text).

    ## Episode End
    ``connect`` tokens in a row (horizontal, vertical or diagonal), a full board (draw), or an
    illegal action with ``illegal_action="lose"``.

    ## Arguments
    ``rows`` (6), ``columns`` (7): each >= 4, with ``(rows + 1) * columns <= 64``;
    ``connect`` (4): at most ``max(rows, columns)``. ``opponent`` (default ``"lookahead:2"``,
    the classic fitness search), ``first_player``, ``illegal_action``, ``render_mode`` as in
    ``ReversiEnv``.

    ## Info
    ``action_mask``, ``opponent_action``, ``winner`` (at the end), ``illegal_action``.

    ## Version History
    * v0: initial release.
    """

    game = "four_in_a_row"
    rules = four_in_a_row
    default_opponent = "lookahead:2"

    def _config_help(self) -> str:
        return ", rows, columns, connect"


class TicTacToeEnv(TurnBasedEnv):
    """Tic-tac-toe against a built-in opponent.

    ## Action Space
    ``Discrete(9)``: mark cell ``row * 3 + col`` (0 top-left .. 8 bottom-right); taken cells
    are illegal.

    ## Observation Space
    ``Box(0, 1, (2, 3, 3), uint8)``: plane 0 the agent's marks, plane 1 the opponent's.

    ## Rewards
    At the end +1 win, -1 loss, 0 draw; 0 before. An illegal action: -1.

    ## Starting State
    An empty board; who moves first is drawn per episode (``first_player="random"``). The
    first player is ``X``.

    ## Episode End
    Three in a row, a full board (draw), or an illegal action with ``illegal_action="lose"``.

    ## Arguments
    ``opponent`` (default ``"rules"``, the classic win-block-corner-centre-side AI),
    ``first_player``, ``illegal_action``, ``render_mode`` as in ``ReversiEnv``.

    ## Info
    ``action_mask``, ``opponent_action``, ``winner`` (at the end), ``illegal_action``.

    ## Version History
    * v0: initial release.
    """

    game = "tictactoe"
    rules = tictactoe
    default_opponent = "rules"
