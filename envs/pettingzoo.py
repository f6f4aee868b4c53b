"""PettingZoo AEC face of the same games: two agents take turns on the shared rules.

Needs the ``pettingzoo`` extra (``pip install 'boardgym[pettingzoo]'``)::

    from boardgym.envs.pettingzoo import env
    aec = env("reversi")   # any registered game: "four_in_a_row" (rows=, columns=, ...), ...
    aec.reset(seed=0)
    for agent in aec.agent_iter():
        obs, reward, termination, truncation, info = aec.last()
        mask = obs["action_mask"]
        action = None if termination or truncation else aec.action_space(agent).sample(mask)
        aec.step(action)

Agents are ``player_0`` (moves first) and ``player_1``. Each observes ``{"observation":
uint8 planes (2, rows, cols) with its own stones first, "action_mask": int8 (n_actions,)}``
(the mask is all zeros when it is not that agent's turn). Rewards: +1 / -1 to the winner /
loser at the end, 0 each for a draw; an illegal move ends the game with -1 for the mover
(PettingZoo's ``TerminateIllegalWrapper``). Reversi passes are automatic: the same agent is
selected again when its opponent has no legal move. Every registered game works
(``boardgym.register_game``): the env reads only the game's record and rules.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from boardgym.envs import render
from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Game
from boardgym.envs.settings import board_spaces, check_choice
from boardgym.envs.turn_based import RENDER_MODES

AGENTS = ("player_0", "player_1")


def env(game: str | Game = "reversi", render_mode: str | None = None,
        **config: Any) -> AECEnv:
    """The AEC env of ``game`` with PettingZoo's standard wrappers (illegal move loses,
    out-of-range actions assert, call order enforced)."""
    aec: AECEnv = raw_env(game, render_mode, **config)
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=-1)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    return wrappers.OrderEnforcingWrapper(aec)


class raw_env(AECEnv):
    """The unwrapped AEC env; see the module docstring for the spec."""

    metadata: dict[str, Any] = {  # noqa: RUF012
        "render_modes": list(RENDER_MODES), "name": "boardgym_v0",
        "is_parallelizable": False, "render_fps": 2}

    def __init__(self, game: str | Game = "reversi", render_mode: str | None = None,
                 **config: Any) -> None:
        super().__init__()
        self.record = game_record(game)
        if render_mode is not None:
            check_choice("render_mode", render_mode, RENDER_MODES)
        self.render_mode = render_mode
        rules = self.record.rules
        self._initial = rules.initial_state(**self.record.board_options(config))
        self.state = self._initial
        self.possible_agents = list(AGENTS)
        board, actions = board_spaces(self.record, self._initial)
        space = spaces.Dict({"observation": board,
                             "action_mask": spaces.Box(0, 1, (int(actions.n),), np.int8)})
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {a: spaces.Discrete(int(actions.n)) for a in self.possible_agents}
        self._renderer = render.Renderer(self.record, render_mode or "ansi",
                                         f"boardgym {self.record.name}",
                                         self.metadata["render_fps"])
        self.np_random, _ = seeding.np_random()

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s planes (its stones first) and its action mask."""
        rules = self.record.rules
        planes = np.asarray(rules.observation(self.state, self.possible_agents.index(agent)))
        mask = np.zeros(self.action_spaces[agent].n, dtype=np.int8)
        if agent == self.agent_selection and not rules.is_terminal(self.state):
            mask[:] = rules.legal_mask(self.state)
        return {"observation": planes, "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game with ``player_0`` to move."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.state = self._initial
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.agents[0]
        if self.render_mode == "human":
            self.render()

    def step(self, action: int | None) -> None:
        """The selected agent plays ``action`` (None once its game is over)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0
        rules = self.record.rules
        self.state = rules.apply(self.state, int(action))  # type: ignore[arg-type]
        if rules.is_terminal(self.state):
            self.rewards = {name: int(rules.result(self.state, side))
                            for side, name in enumerate(self.possible_agents)}
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = self.possible_agents[int(self.state.to_move)]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        """The board as text, an image, an ``Svg`` document (with the legal moves of the agent
        to move as hints), or in a pygame window, like the Gymnasium envs."""
        if self.render_mode is None:
            return None
        return self._renderer(self.state, hints=True)

    def close(self) -> None:
        self._renderer.close()
