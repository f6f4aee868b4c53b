"""boardgym environments. Importing this package registers the env ids (and nothing heavy).

``Reversi-v0``, ``FourInARow-v0`` (alias ``ConnectFour-v0``) and ``TicTacToe-v0``; also
reachable without the import as ``gym.make("boardgym:Reversi-v0")``. ``gym.make_vec(id, num_envs=N,
vectorization_mode="vector_entry_point")`` builds the batched env of ``envs.vector``.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

ENV_IDS = {
    "Reversi-v0": "ReversiEnv",
    "FourInARow-v0": "FourInARowEnv",
    "ConnectFour-v0": "FourInARowEnv",
    "TicTacToe-v0": "TicTacToeEnv",
}
VECTOR_CLASS_SUFFIX = "VectorEnv"
"""``ReversiEnv`` -> ``envs.vector:ReversiVectorEnv`` (``gym.make_vec``'s entry point)."""

for _env_id, _class_name in ENV_IDS.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point=f"boardgym.envs.turn_based:{_class_name}",
                 vector_entry_point="boardgym.envs.vector:"
                 + _class_name.removesuffix("Env") + VECTOR_CLASS_SUFFIX)

__all__ = ["ENV_IDS"]
