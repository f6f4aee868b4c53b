"""The arguments that the single env (``envs.turn_based``) and the vector env (``envs.vector``)
share, checked in one place, and their one rule for where new games start.

``env_settings`` validates ``illegal_action``, ``reward`` and the board options and builds
the spaces (an ``EnvSettings``); ``check_choice`` checks any argument with named choices.
``position_state`` reads a position text (``reset(options={"position": text})`` and
samplers): it must be unfinished. A position that the opponent's replies end before the
agent has moved is refused when the reset option gives it (``ended_before_agent``);
``check_opening``, ``opening_state`` and ``OPENING_DRAWS`` are the rule for ``opening=``
samplers, whose such new game is drawn again, at most ``OPENING_DRAWS`` times.
``draw_agent_side`` draws who moves first with ``first_player="random"``, and
``is_named_player`` says which opponents are rebuilt from their spec when an env is copied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from boardgym.envs.games import players
from boardgym.envs.games.core import Game

FIRST_PLAYER_CHOICES = ("random", "agent", "opponent")
ILLEGAL_ACTION_CHOICES = ("lose", "raise")
REWARD_CHOICES = ("win", "score")
ENV_ARGUMENTS = ("render_mode", "opponent", "first_player", "opening", "illegal_action",
                 "reward")
AGENT_WON, DRAW, OPPONENT_WON = 1, 0, -1
AGENT_SIDE = 0
"""The agent's side when it moves first (``first_player="agent"``): the first player's."""
OPENING_DRAWS = 100
"""Openings drawn for one new game before it starts from the start position instead."""
OPENING_WHAT = "the opening sampler's position"
"""How error messages name a position that an ``opening`` sampler returned."""
Opening = Callable[[np.random.Generator], "str | None"]
"""``opening(rng) -> position text | None``: where the next game starts (None: the start
position)."""


def is_int(value: Any) -> bool:
    """True for an int or a numpy integer, False for anything else (bools included)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``, else a ValueError naming them."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def draw_agent_side(rng: np.random.Generator) -> int:
    """Who the agent is in a game with ``first_player="random"``: 0 (it moves first) or 1,
    each with probability 1/2, from one ``rng.random()`` draw (~6x cheaper than
    ``rng.integers(2)``, which a tic-tac-toe episode would feel)."""
    return int(rng.random() < 0.5)


def board_spaces(record: Game, initial: Any) -> tuple[spaces.Box, spaces.Discrete]:
    """The observation and action spaces of ``record``'s board whose start is ``initial``:
    ``Box(0, 1, (2, rows, cols), uint8)`` stone planes and ``Discrete`` over every action."""
    rules = record.rules
    return (spaces.Box(0, 1, rules.observation(initial).shape, np.uint8),
            spaces.Discrete(rules.legal_mask(initial).size))


@dataclass(frozen=True)
class EnvSettings:
    """The validated arguments that every env of a game shares (see ``env_settings``).

    Attributes:
        options: the board options (``{"rows": 6, ...}``; only those given).
        initial: the start position for those options.
        illegal_action: ``"lose"`` or ``"raise"``.
        reward: ``"win"`` or ``"score"``.
        observation_space: ``Box(0, 1, (2, rows, cols), uint8)``.
        action_space: ``Discrete(n_actions)``.
        board_cells: ``rows * cols``: what ``reward="score"`` divides the disc margin by.
    """

    options: dict[str, Any]
    initial: Any
    illegal_action: str
    reward: str
    observation_space: spaces.Box
    action_space: spaces.Discrete
    board_cells: int


def env_settings(record: Game, illegal_action: str, reward: str,
                 options: dict[str, Any]) -> EnvSettings:
    """Check the shared env arguments of ``record``'s game and build its spaces.

    Raises:
        ValueError: a bad ``illegal_action`` or ``reward`` (``"score"`` only for games that
            end with a disc count), or a bad board option (the message names the options).
    """
    check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_CHOICES)
    check_choice("reward", reward, REWARD_CHOICES)
    if reward == "score" and not record.scored:
        raise ValueError(f"reward='score' is for games that end with a disc count; use "
                         f"reward='win' for {record.title}")
    try:
        board = record.board_options(options)
    except ValueError as error:
        raise ValueError(f"{error}; the env's own arguments: {', '.join(ENV_ARGUMENTS)}") \
            from error
    initial = record.rules.initial_state(**board)
    observation_space, action_space = board_spaces(record, initial)
    return EnvSettings(board, initial, illegal_action, reward, observation_space, action_space,
                       int(np.prod(observation_space.shape[1:])))


def position_state(record: Game, text: Any, settings: EnvSettings, what: str) -> Any:
    """The unfinished position ``text`` (the game's position text) on the env's board.

    The rules read it with passes applied (``rules.parse``: where the side written to move
    has no legal move, the other side is to move), so an unfinished position always has a
    legal move for its side to move. The envs then refuse a position that the opponent's
    replies end before the agent has moved (``ended_before_agent``); an opening sampler's
    is drawn again instead (``OPENING_DRAWS``).

    Raises:
        ValueError: ``text`` is not a str, not a position (the rules say what is wrong), or a
            finished position; the message names ``what`` gave it.
    """
    if not isinstance(text, str):
        raise ValueError(f"{what} must be a position as text (see {record.title}'s "
                         f"rules.parse), got {text!r}")
    try:
        state = record.rules.parse(text, **settings.options)
    except ValueError as error:
        raise ValueError(f"{what}: {error}") from None
    if record.rules.is_terminal(state):
        raise ValueError(f"the position {text!r} ({what}) is finished: an episode needs a "
                         "position where the side to move has a legal move")
    return state


def ended_before_agent(record: Game, text: str, state: Any, what: str) -> ValueError:
    """The error of the position ``text`` (read as ``state``) that the opponent's replies
    end before the agent has moved: the agent never gets a position without a legal move.
    The fix it names: the ``first_player`` that seats the agent on the side to move."""
    mover = record.side_names[int(state.to_move)]
    seat = "agent" if int(state.to_move) == AGENT_SIDE else "opponent"
    return ValueError(f"the position {text!r} ({what}) ends before the agent moves: "
                      f"{mover} is to move there, the opponent played {mover} and its reply "
                      f"ended the game; pass first_player={seat!r} so that the agent plays "
                      f"{mover}, or start from a position the reply does not end")


def check_opening(opening: Any) -> Opening | None:
    """``opening`` if it is None or callable.

    Raises:
        ValueError: anything else (the message says what an opening sampler is).
    """
    if opening is not None and not callable(opening):
        raise ValueError("opening must be None or a callable opening(rng) -> position text "
                         f"or None, got {opening!r}")
    return opening  # type: ignore[no-any-return]


def opening_state(record: Game, opening: Opening, rng: np.random.Generator,
                  settings: EnvSettings) -> Any:
    """The position ``opening(rng)`` names (None: the sampler chose the start position).

    Raises:
        ValueError: the sampler returned something that is not an unfinished position
            (``position_state``, naming ``OPENING_WHAT``).
    """
    text = opening(rng)
    return None if text is None else position_state(record, text, settings, OPENING_WHAT)


def is_named_player(record: Game, spec: Any) -> bool:
    """True when ``spec`` names a registered player of ``record``'s game (``"lookahead:2"``):
    such players are rebuilt from their spec when an env is unpickled or copied, instead of
    being pickled themselves."""
    return isinstance(spec, str) and spec.partition(":")[0] in players.entries(record)


__all__ = ["AGENT_SIDE", "AGENT_WON", "DRAW", "ENV_ARGUMENTS", "FIRST_PLAYER_CHOICES",
           "ILLEGAL_ACTION_CHOICES", "OPENING_DRAWS", "OPENING_WHAT", "OPPONENT_WON",
           "REWARD_CHOICES", "EnvSettings", "Opening", "board_spaces", "check_choice",
           "check_opening", "draw_agent_side", "ended_before_agent", "env_settings", "is_int",
           "is_named_player", "opening_state", "position_state"]
