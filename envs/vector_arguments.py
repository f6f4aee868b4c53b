"""The vector env's own arguments, checked (those it shares with the single env are checked
by ``envs.settings``): ``num_envs``, per-sub-env ``first_player`` lists, ``autoreset_mode``,
the actions of a step, the ``reset_mask`` and ``position`` reset options, and the error of
a refused step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from boardgym.envs.games import IllegalMoveError
from boardgym.envs.settings import FIRST_PLAYER_CHOICES, check_choice, is_int

AGENT_FIRST, OPPONENT_FIRST, RANDOM_FIRST = range(3)
FIRST_PLAYER_CODES = {"agent": AGENT_FIRST, "opponent": OPPONENT_FIRST, "random": RANDOM_FIRST}
AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
RESET_MASK_OPTION = "reset_mask"
POSITION_OPTION = "position"
"""``reset(options={"position": text or [text, ...]})``: where the reset games start."""
RESET_OPTIONS = (RESET_MASK_OPTION, POSITION_OPTION)
SHOWN_ILLEGAL = 5
"""How many illegal sub-envs an ``IllegalMoveError`` names."""


def check_num_envs(num_envs: Any, render_mode: str | None) -> int:
    """``num_envs`` as an int, after checking the vector env's own arguments.

    Raises:
        ValueError: ``num_envs`` is not a positive int, or a ``render_mode`` is given (vector
            envs do not render).
    """
    if not is_int(num_envs) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
    if render_mode is not None:
        raise ValueError("vector envs do not render: pass render_mode to gym.make(...) "
                         "for a single env instead")
    return int(num_envs)


def checked_actions(actions: Any, num_envs: int, n_actions: int) -> np.ndarray:
    """``actions`` as an int64 array of one action in ``[0, n_actions)`` per sub-env.

    Raises:
        ValueError: not an integer array of shape ``(num_envs,)`` (floats, strings and bools
            are refused, not cast), or an action outside the space.
    """
    values = np.asarray(actions)
    if values.shape != (num_envs,) or values.dtype.kind not in "iu":
        raise ValueError(f"actions must be an integer array of shape ({num_envs},), one per "
                         f"sub-env; got a {values.dtype} array of shape {values.shape}")
    low, high = values.min(), values.max()
    if low < 0 or high >= n_actions:
        raise ValueError(f"actions must be in [0, {n_actions}) (see env.action_masks()); got "
                         f"{low}..{high}")
    return values.astype(np.int64, copy=False)


def first_player_codes(first_player: Any, n: int) -> np.ndarray:
    """``first_player`` (one value, or one per sub-env) as codes ``AGENT_FIRST``, ..."""
    values = [first_player] * n if isinstance(first_player, str) else list(first_player)
    if len(values) != n:
        raise ValueError(f"first_player must be one of {FIRST_PLAYER_CHOICES} or a list of "
                         f"{n} of them (one per sub-env); got {len(values)} values")
    return np.array([FIRST_PLAYER_CODES[check_choice("first_player", v, FIRST_PLAYER_CHOICES)]
                     for v in values], dtype=np.int64)


def checked_autoreset_mode(value: Any) -> AutoresetMode:
    """``value`` as one of ``AUTORESET_MODES``, or a ValueError naming them."""
    valid = [mode.value for mode in AUTORESET_MODES]
    try:
        mode = AutoresetMode(value)
    except ValueError:
        mode = None
    if mode not in AUTORESET_MODES:
        raise ValueError(f"autoreset_mode must be one of {valid}, got {value!r}")
    return mode


def illegal_error(envs_index: np.ndarray, actions: np.ndarray) -> IllegalMoveError:
    """The ``IllegalMoveError`` of ``illegal_action="raise"``, naming the sub-envs."""
    pairs = ", ".join(f"env {i}: action {actions[i]}" for i in envs_index[:SHOWN_ILLEGAL])
    more = ", ..." if len(envs_index) > SHOWN_ILLEGAL else ""
    return IllegalMoveError(f"illegal actions ({pairs}{more}); pick actions where "
                            "env.action_masks() is True (the env is unchanged)")


def reset_options(options: dict[str, Any] | None, num_envs: int
                  ) -> tuple[np.ndarray, list[Any] | None]:
    """The sub-envs a reset starts (all, or ``options["reset_mask"]``) and the position text
    each starts from (``options["position"]``: one text for all, or a list of ``num_envs``,
    sub-env ``i`` reading entry ``i``; None without the option). The texts are read later
    (``settings.position_state``).

    Raises:
        ValueError: an unknown option, a mask that is not a ``(num_envs,)`` bool array, or
            positions that are neither a text nor ``num_envs`` of them.
    """
    if not options:
        return np.ones(num_envs, dtype=bool), None
    unknown = sorted(set(options) - set(RESET_OPTIONS))
    if unknown:
        raise ValueError(f"unknown reset option(s) {unknown}; the vector env takes "
                         f"options={{{RESET_MASK_OPTION!r}: (N,) bool array, "
                         f"{POSITION_OPTION!r}: text or list of N texts}}")
    mask = np.ones(num_envs, dtype=bool)
    if RESET_MASK_OPTION in options:
        mask = np.asarray(options[RESET_MASK_OPTION])
        if mask.shape != (num_envs,) or mask.dtype != bool:
            raise ValueError(f"options[{RESET_MASK_OPTION!r}] must be a bool array of shape "
                             f"({num_envs},), got a {mask.dtype} array of shape {mask.shape}")
    if POSITION_OPTION not in options:
        return mask, None
    texts = options[POSITION_OPTION]
    texts = [texts] * num_envs if isinstance(texts, str) else texts
    if not isinstance(texts, (list, tuple)) or len(texts) != num_envs:
        raise ValueError(f"options[{POSITION_OPTION!r}] must be a position text or a list of "
                         f"{num_envs} of them (one per sub-env), got {texts!r}")
    return mask, list(texts)


__all__ = [
    "AGENT_FIRST",
    "AUTORESET_MODES",
    "FIRST_PLAYER_CODES",
    "OPPONENT_FIRST",
    "POSITION_OPTION",
    "RANDOM_FIRST",
    "RESET_MASK_OPTION",
    "RESET_OPTIONS",
    "check_num_envs",
    "checked_actions",
    "checked_autoreset_mode",
    "first_player_codes",
    "illegal_error",
    "reset_options",
]
