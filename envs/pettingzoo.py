"""PettingZoo AEC face of the same games: two agents take turns on the shared rules.

Needs the ``pettingzoo`` extra (``pip install 'boardgym[pettingzoo]'``)::

    from boardgym.envs.pettingzoo import env
    aec = env("reversi")            # or "four_in_a_row" (rows=, columns=, connect=), "tictactoe"
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
selected again when its opponent has no legal move.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from boardgym.envs import render
from boardgym.envs.games import canonical_name, rules
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

AGENTS = ("player_0", "player_1")


def env(game: str = "reversi", render_mode: str | None = None, **config: Any) -> AECEnv:
    """The AEC env of ``game`` with PettingZoo's standard wrappers (illegal move loses,
    out-of-range actions assert, call order enforced)."""
    aec: AECEnv = raw_env(game, render_mode, **config)
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=-1)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    return wrappers.OrderEnforcingWrapper(aec)


class raw_env(AECEnv):
    """The unwrapped AEC env; see the module docstring for the spec."""

    metadata: dict[str, Any] = {  # noqa: RUF012
        "render_modes": ["ansi", "rgb_array", "human"], "name": "boardgym_v0",
        "is_parallelizable": False, "render_fps": 2}

    def __init__(self, game: str = "reversi", render_mode: str | None = None,
                 **config: Any) -> None:
        super().__init__()
        self.game = canonical_name(game)
        self.rules = rules(self.game)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, "
                             f"got {render_mode!r}")
        self.render_mode = render_mode
        self._initial = self.rules.initial_state(**config)
        self.state = self._initial
        self.possible_agents = list(AGENTS)
        n_actions = self.rules.legal_mask(self._initial).size
        obs_shape = self.rules.observation(self._initial).shape
        space = spaces.Dict({"observation": spaces.Box(0, 1, obs_shape, np.uint8),
                             "action_mask": spaces.Box(0, 1, (n_actions,), np.int8)})
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {a: spaces.Discrete(n_actions) for a in self.possible_agents}
        self._renderer = render.Renderer(self.game, self.rules, render_mode or "ansi",
                                         f"boardgym {self.game}", self.metadata["render_fps"])
        self.np_random, _ = seeding.np_random()

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s planes (its stones first) and its action mask."""
        side = self.possible_agents.index(agent)
        planes = self.rules.observation(self.state)
        if self.state.to_move != side:
            planes = np.ascontiguousarray(planes[::-1])
        mask = np.zeros(self.action_spaces[agent].n, dtype=np.int8)
        if agent == self.agent_selection and not self.rules.is_terminal(self.state):
            mask[:] = self.rules.legal_mask(self.state)
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
        self.state = self.rules.apply(self.state, int(action))  # type: ignore[arg-type]
        if self.rules.is_terminal(self.state):
            result = int(self.rules.outcome(self.state))  # +1: player_0 won
            self.rewards = {"player_0": result, "player_1": -result}
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = self.possible_agents[int(self.state.to_move)]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        """The board as text, an image, or in a pygame window, like the Gymnasium envs."""
        if self.render_mode is None:
            return None
        return self._renderer(self.state)

    def close(self) -> None:
        self._renderer.close()
