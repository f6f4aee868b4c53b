"""boardgym environments. Importing this package registers the built-in games' env ids.

``Reversi-v0``, ``FourInARow-v0`` (alias ``ConnectFour-v0``) and ``TicTacToe-v0``; also
reachable without the import as ``gym.make("boardgym:Reversi-v0")``. ``gym.make_vec(id,
num_envs=N, vectorization_mode="vector_entry_point")`` builds the batched env of
``envs.vector``. ``register_game(record)`` adds a game of one's own (a rules module and its
``Game`` record) with its envs and ids.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from boardgym.envs import games, turn_based, vector
from boardgym.envs.games.core import Game

ENV_IDS: dict[str, str] = {}
"""Every registered env id (aliases included) -> the name of its env class."""


def register_game(record: Game) -> Game:
    """Add ``record`` to the games registry, make its env classes (``f"{prefix}Env"`` in
    ``envs.turn_based``, ``f"{prefix}VectorEnv"`` in ``envs.vector``) and register
    ``record.env_id`` and ``record.env_aliases`` with Gymnasium (entry point and vector entry
    point). Registering a game again replaces its classes and ids.

    Raises:
        ValueError: a game name or alias taken by another game (from ``games.register_game``),
            or an env id registered by someone else.
    """
    env_class = record.class_prefix + turn_based.ENV_SUFFIX
    for env_id in (record.env_id, *record.env_aliases):
        if env_id in registry and ENV_IDS.get(env_id) != env_class:
            raise ValueError(f"env id {env_id!r} is already registered (by "
                             f"{registry[env_id].entry_point}); give {record.name!r} another")
    games.register_game(record)
    turn_based.define_env(record)
    vector_class = vector.define_vector_env(record).__name__
    for env_id in (record.env_id, *record.env_aliases):
        registry.pop(env_id, None)
        register(id=env_id, entry_point=f"{turn_based.__name__}:{env_class}",
                 vector_entry_point=f"{vector.__name__}:{vector_class}")
        ENV_IDS[env_id] = env_class
    return record


for _record in list(games.GAMES.values()):
    register_game(_record)

__all__ = ["ENV_IDS", "register_game"]
