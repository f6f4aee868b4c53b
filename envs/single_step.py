"""The single env's compiled step: one kernel call a ``step`` (and a ``reset``) against the
``random`` opponent.

``TurnBasedEnv`` takes this path (``single_step``) when its game has a single-env kernel
(``SINGLE_KERNELS``), the opponent is the spec ``"random"`` (the every-game player: a uniform
pick among the legal moves, ``bitboard.choose`` of one raw word of ``np_random``), the
render mode is not ``"human"`` and ``np_random``'s bit generator makes 64-bit words
(``compiled.generator_handles``). A step is then one call of the game's ``step`` kernel: the
agent's move (refused, with nothing changed, when it is illegal: the Python path then
handles it), the opponent's replies drawn from ``np_random``'s own words exactly as the
Python player draws them (passes included), the end of the game, and the observation and
mask written into fresh arrays. A reset without a position option or an opening sampler is
one call of the same kernel (a new game: the first player drawn as
``settings.draw_agent_side`` draws it, then the opponent's replies). Everything else runs the
env's Python path, which is the reference: the same seed and actions give the same
observations, opponent moves, rewards and infos on both.

The kernels keep the position in a small ``uint64`` array (``words``); the env's ``state``
is rebuilt from it only when read (``pull``), and a position set by the Python path is
written into it before the next compiled step (``push``).

A game's kernel module (``SINGLE_KERNELS``) offers ``words(initial) -> array`` (the array
of that board; the generator's handles go in at ``FUNCTION`` and ``ADDRESS``),
``push(words, state, agent_side)``, ``pull(words, base) -> state`` (``base``: the state last
pushed, for what the words do not hold, such as four-in-a-row's board and move order), and
``step(words, move, obs, mask) -> code``: the agent's ``move``, or for ``move < 0`` a new
game whose first player has the ``FIRST_CODES`` code ``-1 - move``; the ``code`` packs what
the step returns (``outcome``) and the agent's side. One kernel a game serves both, so that
a cold start compiles one function (about a second) a game.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from numba import njit

from boardgym.envs.games.bitboard import WORD64_GENERATORS
from boardgym.envs.games.compiled import generator_handles, next_word
from boardgym.envs.vector_arguments import FIRST_PLAYER_CODES, OPPONENT_FIRST, RANDOM_FIRST

SINGLE_KERNELS = {"reversi": "boardgym.envs.kernels.single_reversi",
                  "four_in_a_row": "boardgym.envs.kernels.single_four_in_a_row",
                  "tictactoe": "boardgym.envs.kernels.single_tictactoe"}
"""The games with single-env kernels: game name -> module."""
RANDOM_OPPONENT = "random"
"""The opponent spec the kernels play."""
FIRST_CODES = FIRST_PLAYER_CODES
"""``first_player`` as a new game's code (``step`` with ``move = -1 - code``): the vector
env's codes (0 and 1 are the agent's side)."""
"""(Any other ``first_player`` seats the opponent first, as ``TurnBasedEnv._start`` does.)"""
TOP_BIT = np.uint64(63)

# what a kernel's code packs: the opponent's last action + 1 (0: none), then flags and counts
ACTION_BITS = 0x7F
DONE = 1 << 7
WINNER_SHIFT = 8
"""The agent's result + 1 (2 bits)."""
MINE_SHIFT, THEIRS_SHIFT = 10, 17
"""The agent's and the opponent's stones (7 bits each)."""
COUNT_BITS = 0x7F
SIDE_SHIFT = 24
"""The agent's side."""
ILLEGAL = -1
"""``step``'s code for an illegal action (nothing changed)."""
_empty, _UINT8, _BOOL = np.empty, np.dtype(np.uint8), np.dtype(np.bool_)
"""What the fresh observations and masks are made with (``np.empty`` is about 80 ns faster
given a dtype than a scalar type)."""


@njit(cache=True, inline="always")
def outcome(last: int, done: bool, winner: int, mine: int, theirs: int) -> int:
    """The code of a step: the opponent's last action ``last`` (-1: none), whether the game
    is over, the agent's ``winner`` result (+1 / 0 / -1, read when over) and the stone
    counts ``(mine, theirs)``."""
    code = np.int64(last) + 1 | np.int64(winner + 1) << WINNER_SHIFT \
        | np.int64(mine) << MINE_SHIFT | np.int64(theirs) << THEIRS_SHIFT
    return int(code | DONE if done else code)


@njit(cache=True, inline="always")
def agent_side_of(first: int, function: int, state: int) -> int:
    """The agent's side for the ``FIRST_CODES`` code ``first``: the code itself, or with
    ``RANDOM_FIRST`` ``settings.draw_agent_side``'s draw: 1 when ``rng.random() < 0.5``,
    i.e. when the top bit of the generator's next word is 0 (``random`` is that word's top 53
    bits over 2**53)."""
    if first != RANDOM_FIRST:
        return first
    return 1 if next_word(function, state) >> TOP_BIT == 0 else 0


def entry_point(kernel: Any, signature: str) -> Any:
    """The compiled function of the ``compiled.entry`` kernel ``kernel`` (compiled for
    ``signature`` first where needed), called without numba's type dispatch: about 250 ns
    less a call, the most of a tic-tac-toe step. Its arguments must have the signature's
    types exactly (nothing converts or checks them)."""
    if not kernel.overloads:
        kernel.compile(signature)
    return next(iter(kernel.overloads.values())).entry_point


def single_step(env: Any) -> SingleStep | None:
    """The compiled step of the single env ``env`` for its game (None: no kernels for the
    game, or ``render_mode="human"``); it plays only when ``env`` has the ``random``
    opponent (``plays``)."""
    record = env.record
    if record.name not in SINGLE_KERNELS or env.render_mode == "human":
        return None
    return SingleStep(record, env.settings)


def plays(spec: Any) -> bool:
    """True when the opponent spec ``spec`` is the one the kernels play."""
    return isinstance(spec, str) and spec == RANDOM_OPPONENT


class SingleStep:
    """The compiled step of one single env (see the module docstring): the kernels of its
    game, the position's words, and the handles of the generator they draw from."""

    def __init__(self, record: Any, settings: Any) -> None:
        self.kernels: Any = importlib.import_module(SINGLE_KERNELS[record.name])
        self._step = entry_point(self.kernels.step, self.kernels.SIGNATURE)
        self.initial = self.base = settings.initial
        self.words: np.ndarray = self.kernels.words(settings.initial)
        self.obs_shape = settings.observation_space.shape
        self.n_actions = int(settings.action_space.n)
        self.scored = record.scored
        self.score_reward = settings.reward == "score"
        self.cells = settings.board_cells
        self.rng: np.random.Generator | None = None
        """The generator whose handles the words hold."""

    def bind(self, rng: np.random.Generator) -> bool:
        """Draw from ``rng`` from now on; False when its bit generator does not make 64-bit
        words (the Python path then plays)."""
        if rng is self.rng:
            return True
        if not isinstance(rng.bit_generator, WORD64_GENERATORS):
            return False
        self.words[self.kernels.FUNCTION], self.words[self.kernels.ADDRESS] = \
            generator_handles(rng)
        self.rng = rng
        return True

    def push(self, state: Any, agent_side: int) -> None:
        """Hold ``state`` (the agent on ``agent_side``) in the words."""
        self.kernels.push(self.words, state, agent_side)
        self.base = state

    def pull(self) -> Any:
        """The rules state the words hold."""
        return self.kernels.pull(self.words, self.base)

    def step(self, env: Any, action: int) -> tuple[np.ndarray, float, bool, bool,
                                                     dict[str, Any]] | None:
        """``env.step(action)`` (``action`` in the action space, the game going on) by the
        kernel, or None where the Python path must play it (an illegal action, a generator
        without 64-bit words): then nothing has changed."""
        if env._np_random is not self.rng and not self.bind(env._np_random):
            return None
        if not env._words_live:
            self.push(env.state, env.agent_side)
            env._words_live = True
        obs = _empty(self.obs_shape, _UINT8)
        mask = _empty(self.n_actions, _BOOL)
        code = self._step(self.words, action, obs, mask)
        if code & DONE or code < 0 or self.scored:
            if code == ILLEGAL:
                return None
            env._stale = True
            return self.outcome(env, code, obs, mask)
        env._stale = True  # the game goes on and has no score: the most common step, inline
        last = (code & ACTION_BITS) - 1
        return obs, 0.0, False, False, {"action_mask": mask,
                                        "opponent_action": None if last < 0 else last}

    def start(self, env: Any) -> tuple[np.ndarray, dict[str, Any]] | None:
        """``env.reset()``'s new game from the start position by the kernel, or None where
        the Python path must start it (a generator without 64-bit words)."""
        if env._np_random is not self.rng and not self.bind(env.np_random):
            return None
        obs = _empty(self.obs_shape, _UINT8)
        mask = _empty(self.n_actions, _BOOL)
        self.base = self.initial
        code = self._step(self.words, -1 - FIRST_CODES.get(env.first_player, OPPONENT_FIRST),
                          obs, mask)
        env.agent_side = code >> SIDE_SHIFT & 1
        env._words_live = env._stale = True
        env.done = False  # a new game from the start position goes on
        last = (code & ACTION_BITS) - 1
        info: dict[str, Any] = {"action_mask": mask,
                                "opponent_action": None if last < 0 else last}
        if self.scored:
            info["score"] = (code >> MINE_SHIFT & COUNT_BITS, code >> THEIRS_SHIFT & COUNT_BITS)
        return obs, info

    def outcome(self, env: Any, code: int, obs: np.ndarray,
                mask: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """What ``env.step`` returns for the kernel's ``code`` (and ``env.done`` set)."""
        done = env.done = code & DONE != 0
        last = (code & ACTION_BITS) - 1
        info: dict[str, Any] = {"action_mask": mask,
                                "opponent_action": None if last < 0 else last}
        if self.scored:
            mine, theirs = code >> MINE_SHIFT & COUNT_BITS, code >> THEIRS_SHIFT & COUNT_BITS
            info["score"] = (mine, theirs)
        if not done:
            return obs, 0.0, False, False, info
        winner = info["winner"] = (code >> WINNER_SHIFT & 3) - 1
        reward = (mine - theirs) / self.cells if self.score_reward else float(winner)
        return obs, reward, True, False, info


__all__ = ["FIRST_CODES", "ILLEGAL", "SINGLE_KERNELS", "SingleStep", "agent_side_of",
           "outcome", "plays", "single_step"]
