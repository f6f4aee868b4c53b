"""Built-in tictactoe players."""

from __future__ import annotations

from agents.base import AgentFactory, RandomAgent, no_argument
from envs.games import tictactoe as rules

AGENTS: dict[str, AgentFactory] = {
    "random": no_argument("random", lambda: RandomAgent(rules)),
}
