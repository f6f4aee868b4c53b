"""Built-in four_in_a_row players."""

from __future__ import annotations

from agents.base import AgentFactory, RandomAgent, no_argument
from envs.games import four_in_a_row as rules

AGENTS: dict[str, AgentFactory] = {
    "random": no_argument("random", lambda: RandomAgent(rules)),
}
