"""The vector env's compiled step: when it applies, and the driver that runs its kernels.

``BoardVectorEnv.step`` takes this path (``compiled_step``) when every sub-env plays one
opponent spec with a compiled twin (``players.make_compiled``), there is no opening and no
sampler, the autoreset mode is next-step, and the game has env kernels here
(``KERNEL_MODULES``). A step is then, on the env's own arrays:

1. the checks in Python (the env checked the actions; ``illegal_action="raise"`` refuses
   illegal ones on the kept masks before anything changes);
2. the game's ``begin_step`` kernel: new games where a sub-env needs one (the start position,
   the random first player drawn from the sub-env's stream), the agent's legal moves, the
   illegal flags;
3. the opponent twin's ``respond_batch``: its replies until the agent is to move or the game
   is over;
4. the game's ``publish`` kernel: terminal flags, winners, rewards, scores, observations and
   masks written into fresh arrays, the kept masks and the needs-reset flags.

Everything else (samplers, openings, positions on reset, resets themselves, opponents without
a compiled twin, same-step autoreset) runs the env's Python path, which is the reference: the
compiled step plays the same games, with the same stream draws, and returns equal values.

A game's env-kernel module (``envs.kernels.reversi``, ``.four_in_a_row``, ``.tictactoe``)
offers ``arrays(state) -> (state, fields)`` (the state's array fields the kernels change in
place, made contiguous and writable, then any read-only table of the board: four-in-a-row's
``words``), ``begin_step(*fields, agent_side, first_codes, needs_reset, keys, counters, masks,
actions, illegal)`` and ``publish(fields, agent_side, illegal, score_reward, out, kept_masks,
needs_reset)``; the twin's ``respond_batch`` takes the same ``fields``. The driver asks
``arrays`` again only when the env holds another state object than the one it last took
(the Python path, a reset, replaced it); in place changes need nothing. ``envs.kernels.cells``
writes the small boards' observations and masks one byte a cell.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from boardgym.envs.games import players
from boardgym.envs.vector_arguments import illegal_error

KERNEL_MODULES = {"reversi": "boardgym.envs.kernels.reversi",
                  "four_in_a_row": "boardgym.envs.kernels.four_in_a_row",
                  "tictactoe": "boardgym.envs.kernels.tictactoe"}
"""The games with env kernels: game name -> module."""


@dataclass
class Outputs:
    """The fresh arrays one compiled step fills and returns (nothing is copied after)."""

    obs: np.ndarray
    masks: np.ndarray
    winner: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    score: np.ndarray
    illegal: np.ndarray
    opponent_action: np.ndarray

    @classmethod
    def fresh(cls, n: int, obs_shape: tuple[int, ...], n_actions: int) -> Outputs:
        """Unfilled outputs of ``n`` sub-envs."""
        return cls(np.empty((n, *obs_shape), dtype=np.uint8),
                   np.empty((n, n_actions), dtype=bool), np.empty(n, dtype=np.int64),
                   np.empty(n, dtype=np.float64), np.empty(n, dtype=bool),
                   np.empty((n, 2), dtype=np.int64), np.empty(n, dtype=bool),
                   np.empty(n, dtype=np.int64))


class CompiledStep:
    """The compiled ``step`` of a vector env playing ``spec`` (a name with a compiled twin)
    in every sub-env; called as ``compiled_step(env, actions)`` with checked actions.

    Pickles as its game, spec and board options (the kernels are looked up again).
    """

    def __init__(self, record: Any, spec: str, options: dict[str, Any]) -> None:
        self.record, self.spec, self.options = record, spec, options
        self._resolve()

    def _resolve(self) -> None:
        twin = players.make_compiled(self.record, self.spec, self.options)
        assert twin is not None
        self.twin = twin
        self.kernels: Any = importlib.import_module(KERNEL_MODULES[self.record.name])
        self._state: Any = None
        """The last state whose ``fields`` were taken (the kernels change them in place)."""
        self._fields: tuple[np.ndarray, ...] = ()
        self._masks: np.ndarray | None = None
        """The last kept masks made contiguous and writable."""

    def __getstate__(self) -> dict[str, Any]:
        return {"record": self.record, "spec": self.spec, "options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._resolve()

    def __call__(self, env: Any, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                 np.ndarray, np.ndarray,
                                                                 dict[str, Any]]:
        """``env.step(actions)`` (``actions`` checked): the kernels on ``env``'s arrays.

        Raises:
            IllegalMoveError: with ``illegal_action="raise"``, illegal actions (nothing
                changed).
        """
        settings = env.settings
        if settings.illegal_action == "raise":
            refuse_illegal(env, actions)
        fields, masks = self._arrays(env)
        n, streams, agent_side, needs_reset = env.num_envs, env._streams, env.agent_side, \
            env._needs_reset
        keys, counters = streams._keys, streams._counters
        out = Outputs.fresh(n, env.single_observation_space.shape, env.n_actions)
        self.kernels.begin_step(*fields, agent_side, env._first_codes, needs_reset, keys,
                                counters, masks, actions, out.illegal)
        self.twin.respond_batch(*fields, agent_side, keys, counters, out.illegal,
                                out.opponent_action, self.twin.code)
        self.kernels.publish(fields, agent_side, out.illegal, settings.reward == "score", out,
                             masks, needs_reset)
        return out.obs, out.rewards, out.terminated, np.zeros(n, dtype=bool), \
            info_of(out, env.record.scored)

    def _arrays(self, env: Any) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        """The kernels' fields of ``env.state`` and its kept masks, made contiguous and
        writable where the Python path (a reset) left them otherwise, and put back into
        ``env``; what the last step took when ``env`` still holds those objects."""
        if env.state is not self._state:
            env.state, self._fields = self.kernels.arrays(env.state)
            self._state = env.state
        masks = env._masks
        if masks is not self._masks:
            masks = env._masks = self._masks = np.require(masks, bool, ["C", "W"])
        return self._fields, masks


def refuse_illegal(env: Any, actions: np.ndarray) -> None:
    """Refuse ``actions`` where they are illegal (not in the kept masks of a game going on),
    as the Python path does.

    Raises:
        IllegalMoveError: naming the sub-envs.
    """
    legal = env._masks.reshape(-1)[env._row_starts + actions]
    illegal = ~(env._needs_reset | legal)
    if illegal.any():
        raise illegal_error(np.flatnonzero(illegal), actions)


def info_of(out: Outputs, scored: bool) -> dict[str, Any]:
    """The step's ``info``, keyed as the Python path's."""
    moved = out.opponent_action != -1
    info: dict[str, Any] = {
        "action_mask": out.masks, "opponent_action": out.opponent_action,
        "_opponent_action": moved, "winner": out.winner, "_winner": out.terminated,
        "illegal_action": out.illegal, "_illegal_action": out.illegal}
    if scored:
        info["score"], info["_score"] = out.score, np.ones(len(moved), dtype=bool)
    return info


def compiled_step(env: Any) -> CompiledStep | None:
    """The compiled step of the vector env ``env`` (just built), or None where its Python
    path runs (see the module docstring)."""
    opponents = env._opponents
    specs = opponents.specs
    if (env.metadata["autoreset_mode"] != AutoresetMode.NEXT_STEP or env._opening is not None
            or opponents.sampler is not None or env.record.name not in KERNEL_MODULES
            or not specs or not isinstance(specs[0], str) or specs.count(specs[0]) != len(specs)):
        return None
    if players.make_compiled(env.record, specs[0], env.settings.options) is None:
        return None
    return CompiledStep(env.record, specs[0], env.settings.options)


__all__ = ["KERNEL_MODULES", "CompiledStep", "Outputs", "compiled_step", "info_of",
           "refuse_illegal"]
