"""Train a MaskablePPO agent against classic AIs (``boardgym train GAME``).

Every run gets a folder ``runs/{game}__{algo}__{seed}__{time}/`` (see ``train.runs``) with its
config, command, checkpoints, eval history and TensorBoard logs. ``--resume RUN_DIR``
continues from ``checkpoints/last.zip``: weights, optimizer, step count, RNG streams,
opponent pool and eval history (only the eval, checkpoint, league and length keys may
change on resume). Everything on the command line is checked before the run folder is made;
a command that fails leaves no folder behind.

Examples::

    boardgym train reversi
    boardgym train four_in_a_row --timesteps 500000 --set n_envs=8
    boardgym train tictactoe --opponent perfect --opponent random --seed 3
    boardgym train reversi --resume runs/reversi__maskableppo__0__20250101-120000
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import VecEnv

from boardgym.agents.az.checkpoint import is_az_checkpoint
from boardgym.agents.az.network import Architecture
from boardgym.agents.checkpoint import (
    OPTIMIZER_ENTRY,
    POLICY_ENTRY,
    CheckpointError,
    board_facts,
    board_kwargs,
    load_state,
    read_tensors,
)
from boardgym.agents.devices import resolve_device
from boardgym.agents.ppo.architecture import policy_arguments
from boardgym.agents.ppo.planes import reversi_moves
from boardgym.agents.ppo.policies import EXTRACTORS
from boardgym.agents.ppo.policy import load_network, observation_space, read_metadata, read_policy
from boardgym.envs.games import game as game_record
from boardgym.envs.games import reversi
from boardgym.train.az.learn import start_weights
from boardgym.train.common.commands import CommandParser, game_names, int_at_least
from boardgym.train.common.config import SEED_LIMIT
from boardgym.train.common.devices import add_device_option
from boardgym.train.common.runs import RUNS_DIR, record_command, removed_on_error
from boardgym.train.ppo.callbacks import Hook, RunCallback
from boardgym.train.ppo.config import TrainConfig, load_config, parse_overrides
from boardgym.train.ppo.environments import OpponentPool, make_vec_env
from boardgym.train.ppo.pretrain import Labelled, Rehearsal, labelled, pretrain
from boardgym.train.ppo.runs import (
    ALGO,
    Run,
    new_run,
    open_run,
    save_checkpoint,
    seed_everything,
    set_rng_state,
)
from boardgym.train.ppo.teacher import PRETRAINED, FrozenPolicy, Kickstart, load_teacher
from boardgym.train.quality.agreement import selection_positions

PoolMaker = Callable[[TrainConfig], OpponentPool]


# -- model -----------------------------------------------------------------------------------

def check_mobility(config: TrainConfig) -> None:
    """Refuse ``mobility`` planes (Reversi's move rule) for a game whose legal moves they do
    not give.

    Raises:
        ValueError: the planes differ from the game's legal moves at its start position.
    """
    if not config.mobility:
        return
    rules = game_record(config.game).rules
    state = rules.initial_state(**board_kwargs(config.env_kwargs))
    planes = torch.as_tensor(rules.observation(state)[None], dtype=torch.float32)
    mask = rules.legal_mask(state)
    fits = planes.shape[-2:] == reversi.BOARD_MAP.shape and np.array_equal(
        reversi_moves(planes[:, 0], planes[:, 1]).numpy().reshape(-1) > 0, mask)
    if not fits:
        raise ValueError(f"mobility planes are Reversi's legal moves, not {config.game}'s; "
                         "use --set mobility=false")


def check_network(config: TrainConfig) -> None:
    """Refuse feature-extractor settings that do not build a network on the run's board
    (such as a ``threats`` line longer than the board), before anything is written.

    Raises:
        ValueError: the extractor's own message and the ``--set`` that mends it.
    """
    if config.tower:
        return  # an az tower builds on every board
    architecture = config_architecture(config)
    shape, _ = board_facts(config.game, config.env_kwargs)
    try:
        EXTRACTORS[architecture["features_extractor"]](
            observation_space(shape), **architecture["features_extractor_kwargs"])
    except ValueError as error:
        raise ValueError(f"{error}; set it with --set KEY=VALUE") from None


def check_quality(config: TrainConfig) -> None:
    """Refuse an ``eval_quality`` that the game's selection positions cannot serve.

    Raises:
        ValueError: too few selection positions, or a board other than theirs.
    """
    if config.eval_quality:
        selection_positions(game_record(config.game), config.eval_quality,
                            board_kwargs(config.env_kwargs), config.eval_quality_positions)


POLICY_CLASSES = {(False, False): "MaskableActorCriticPolicy", (True, False): "SymmetricPolicy",
                  (False, True): "AveragedPolicy"}
"""The policy class of each ``(symmetric, average_symmetries)`` (``TrainConfig`` refuses
both)."""


def config_architecture(config: TrainConfig) -> dict[str, Any]:
    """The architecture record (``agents.ppo.architecture.architecture_of``) of ``config``'s policy:
    ``BoardCNN`` features, ``SymmetricPolicy`` when ``config.symmetric``, ``AveragedPolicy``
    when ``config.average_symmetries`` (an ``EnsemblePolicy`` of ``config.members`` of them
    when more than 1), SB3's Tanh heads; with ``config.tower``, a ``TowerPolicy``."""
    if config.tower:
        return {"class": "TowerPolicy", "channels": config.channels, "blocks": config.blocks,
                "hidden": config.tower_hidden}
    ensemble = config.members > 1
    return {
        "class": "EnsemblePolicy" if ensemble
        else POLICY_CLASSES[(config.symmetric, config.average_symmetries)],
        "features_extractor": "BoardCNN",
        "features_extractor_kwargs": {"channels": config.channels, "blocks": config.blocks,
                                      "features_dim": config.features_dim,
                                      "mobility": config.mobility,
                                      "features_activation": config.features_activation,
                                      "head_planes": config.head_planes,
                                      "threats": config.threats,
                                      "windows": config.windows,
                                      "parity": config.parity,
                                      "landing": config.landing,
                                      "gated": config.gated},
        "net_arch": {"pi": list(config.net_arch), "vf": list(config.net_arch)},
        "activation": "Tanh",
        "share_features_extractor": True,
        **({"members": config.members} if ensemble else {}),
    }


def architecture_settings(architecture: dict[str, Any]) -> dict[str, Any]:
    """The config keys (``tower``, ``symmetric``, ``average_symmetries``, ``members``,
    ``net_arch`` and the extractor's arguments, its defaults filled in; a tower's sizes) that
    give a policy of ``architecture`` (a checked record)."""
    if architecture["class"] == "TowerPolicy":
        return {"tower": True, "channels": architecture["channels"],
                "blocks": architecture["blocks"], "tower_hidden": architecture["hidden"]}
    extractor = inspect.signature(EXTRACTORS[architecture["features_extractor"]]).parameters
    defaults = {name: parameter.default for name, parameter in extractor.items()
                if parameter.default is not inspect.Parameter.empty}
    return {**defaults, **architecture["features_extractor_kwargs"], "tower": False,
            "symmetric": architecture["class"] == "SymmetricPolicy",
            "average_symmetries": architecture["class"] in ("AveragedPolicy", "EnsemblePolicy"),
            "members": architecture.get("members", 1),
            "net_arch": architecture["net_arch"]["pi"]}


def heads_of(architecture: dict[str, Any]) -> tuple[Any, ...]:
    """What of ``architecture`` no config key sets: both heads, activation, sharing (none
    for a tower)."""
    return tuple(architecture.get(key) for key in ("net_arch", "activation",
                                                    "share_features_extractor"))


def initial_weights(config: TrainConfig) -> dict[str, Any] | None:
    """The policy state dict of ``config.init_from`` (None without one), checked to fit a
    fresh run of ``config``: same game, board and network (``check_fits``). With
    ``config.tower``, ``init_from`` may also be an az checkpoint of the tower's sizes or
    smaller (grown to them: ``agents.az.network.grow``).

    Raises:
        ValueError: no such file, not a policy checkpoint, or one that does not fit (the
            message names the fix).
    """
    path = config.init_from
    if path is None:
        return None
    if config.tower and is_az_checkpoint(path):
        return {f"tower.{name}": tensor for name, tensor in start_weights(
            path, config.game, tower_architecture(config), "tower_hidden").items()}
    try:
        metadata, state = read_policy(path, config.game)  # the record on the allow-lists
    except (FileNotFoundError, CheckpointError) as error:
        raise ValueError(f"init_from: {error}; give --set init_from=PATH of a policy "
                         "checkpoint of this game (or null)") from None
    check_fits(config, metadata, path)
    return state


def tower_architecture(config: TrainConfig) -> Architecture:
    """The az network of a ``config.tower`` policy on the run's board."""
    (planes, rows, cols), actions = board_facts(config.game, config.env_kwargs)
    return Architecture(planes, rows, cols, actions, config.channels, config.blocks,
                        config.tower_hidden)


def check_fits(config: TrainConfig, metadata: dict[str, Any], path: str) -> None:
    """Refuse a start checkpoint (its checked ``metadata``) of another board or network
    than a run of ``config`` builds.

    Raises:
        ValueError: naming the ``--set`` that make the config build its network.
    """
    shape, actions = board_facts(config.game, config.env_kwargs)
    if (metadata["observation_shape"], metadata["n_actions"]) != (shape, actions):
        raise ValueError(f"init_from: {path} plays on another board than env_kwargs "
                         f"{board_kwargs(config.env_kwargs) or '(the default board)'}; set "
                         f"env_kwargs to its board ({board_kwargs(metadata['env_kwargs'])}) "
                         "or --set init_from=null")
    theirs, ours = metadata["policy"], config_architecture(config)
    settings = architecture_settings(ours)
    differ = [f"--set {key}={value if isinstance(value, str) else json.dumps(value)}"
              for key, value in architecture_settings(theirs).items()
              if settings.get(key) != value]
    if differ:
        raise ValueError(f"init_from: {path} has another network than the config; "
                         f"{' '.join(differ)} (or --set init_from=null: random weights)")
    if heads_of(theirs) != heads_of(ours):
        raise ValueError(f"init_from: {path} has policy and value heads that no config "
                         "builds; start from another checkpoint or --set init_from=null")


def build_model(config: TrainConfig, vec_env: VecEnv, tensorboard: Path | None,
                architecture: dict[str, Any] | None = None) -> MaskablePPO:
    """A fresh MaskablePPO on ``config.device`` (``resolve_device``) with ``config``'s
    hyperparameters and the policy of ``architecture`` (a checkpoint's record; default
    ``config_architecture(config)``)."""
    policy_class, policy_kwargs = policy_arguments(
        architecture or config_architecture(config), "the config")
    if config.tower:
        policy_kwargs = {**policy_kwargs, "precision": config.precision}
    learning_rate: float | LinearSchedule = config.learning_rate
    if config.lr_schedule == "linear":
        learning_rate = LinearSchedule(config.learning_rate, 0.0, 1.0)
    return MaskablePPO(
        policy_class, vec_env, learning_rate=learning_rate, n_steps=config.n_steps,
        batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma,
        gae_lambda=config.gae_lambda, clip_range=config.clip_range, ent_coef=config.ent_coef,
        vf_coef=config.vf_coef, max_grad_norm=config.max_grad_norm,
        policy_kwargs=policy_kwargs, seed=config.seed, device=resolve_device(config.device),
        verbose=0, tensorboard_log=None if tensorboard is None else str(tensorboard))


def resumed_model(run: Run, vec_env: VecEnv, resume_state: dict[str, Any]) -> MaskablePPO:
    """The model of ``run``'s last checkpoint on ``vec_env``, rebuilt without unpickling:
    the policy from the checkpoint's record, its weights and optimizer state (tensors
    only), step count and counters from JSON; its RNG streams restored."""
    metadata = read_metadata(run.last)
    model = build_model(run.config, vec_env, run.tensorboard, metadata["policy"])
    for module, entry in ((model.policy, POLICY_ENTRY),
                          (model.policy.optimizer, OPTIMIZER_ENTRY)):
        load_state(module, read_tensors(run.last, entry), run.last, entry)
    restore_counters(model, metadata["num_timesteps"], resume_state["counters"])
    vec_env.reset()  # consumes the seeds that the model's construction set
    set_rng_state(vec_env, resume_state["rng"], run.config.seed, model.num_timesteps)
    model._last_obs = vec_env.reset()  # type: ignore[assignment]  # SB3 has no setter
    model._last_episode_starts = np.ones(vec_env.num_envs, dtype=bool)
    return model


def restore_counters(model: MaskablePPO, num_timesteps: int, counters: dict[str, Any]) -> None:
    """Set ``model``'s step count and the counters saved by ``agents.ppo.policy.model_counters``
    (SB3 has no setters for them)."""
    model.num_timesteps = num_timesteps
    model._n_updates = counters["n_updates"]
    model._episode_num = counters["episode_num"]
    model.ep_info_buffer = deque(counters["ep_info_buffer"], maxlen=model._stats_window_size)
    model.ep_success_buffer = deque(maxlen=model._stats_window_size)


# -- training loop ---------------------------------------------------------------------------

def fresh_model(run: Run, vec_env: VecEnv, labels: Labelled | None,
                progress: bool = False) -> MaskablePPO:
    """A new run's model: ``init_from``'s weights (else random ones), then the pretraining
    on ``labels`` (its lines on stdout, with ``progress`` its progress bars). A run that
    pretrains, or whose teacher is ``pretrained``, keeps this start in ``run.start``."""
    config = run.config
    model = build_model(config, vec_env, run.tensorboard)
    start = initial_weights(config)
    if start is not None:
        load_state(model.policy, start, str(config.init_from), POLICY_ENTRY)
    if labels is not None:
        pretrain(model.policy, config, labels, say, progress)
    if labels is not None or config.teacher == PRETRAINED:
        save_checkpoint(model, run.start, config.game, config.env_kwargs)
    return model


def say(line: str) -> None:
    """Print a line of the run's progress now (stdout, flushed)."""
    print(line, flush=True)


def needed_labels(config: TrainConfig, fresh: bool, progress: bool = False) -> Labelled | None:
    """The pretraining labels a run needs (``labelled``, its lines on stdout): a new run's
    to pretrain on, a resumed run's to rehearse (``pretrain_rehearsal``); else None."""
    needed = config.pretrain_positions and (fresh or config.pretrain_rehearsal > 0)
    return labelled(config, say, progress) if needed else None


def ppo_phase(config: TrainConfig, steps: int) -> str:
    """The line that says what PPO does next: its steps, rollouts and evaluations."""
    quality = f", quality on {config.eval_quality:,} positions" if config.eval_quality else ""
    return (f"PPO: {steps:,} steps in rollouts of {config.n_steps} steps x {config.n_envs} "
            f"envs; an evaluation every {config.eval_every:,} steps ({config.eval_games} games "
            f"against each of {', '.join(config.eval_opponents)}{quality})")


def train(run: Run, resume_state: dict[str, Any] | None = None, progress: bool = True,
          hooks: Sequence[Hook] = (), labels: Labelled | None = None) -> MaskablePPO:
    """Train ``run`` up to ``config.total_timesteps`` (continuing from ``resume_state``),
    each phase (pretraining, PPO) announced by a line on stdout.

    Args:
        run, resume_state: the run, and the training state of its checkpoint when resumed.
        progress: progress bars (on a terminal).
        hooks: called between rollouts (``callbacks.RunCallback``).
        labels: the pretraining labels, if the command has read them already (None: read
            here when the run needs them, ``needed_labels``).

    Returns:
        The trained model; ``checkpoints/last.zip`` holds it too.
    """
    config = run.config
    teacher = load_teacher(config)  # before set_num_threads: loading sets play's one thread
    torch.set_num_threads(config.torch_threads)
    seed_everything(config.seed)
    vec_env = make_vec_env(config, run.pool)
    if labels is None:
        labels = needed_labels(config, resume_state is None, progress)
    if resume_state is None:
        model = fresh_model(run, vec_env, labels, progress)
    else:
        model = resumed_model(run, vec_env, resume_state)
    remaining = config.total_timesteps - model.num_timesteps
    callbacks: list[BaseCallback] = [RunCallback(run, hooks)]
    if config.teacher == PRETRAINED:
        teacher = FrozenPolicy(load_network(run.start, config.game)[0], config.precision)
    if teacher is not None:
        callbacks.append(Kickstart(config, teacher))
    if labels is not None and config.pretrain_rehearsal:
        callbacks.append(Rehearsal(config, labels))
    callback = callbacks[0] if len(callbacks) == 1 else CallbackList(callbacks)
    if remaining > 0:
        say(ppo_phase(config, remaining))
        model.learn(remaining, callback=callback, reset_num_timesteps=resume_state is None,
                    progress_bar=progress, tb_log_name=run.algo)
    vec_env.close()
    return model


# -- command line ----------------------------------------------------------------------------

def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``boardgym train`` and ``boardgym selfplay``."""
    parser.add_argument("game", nargs="?",
                        help=f"the game: {game_names()} (not needed with --resume)")
    parser.add_argument("--timesteps", type=int_at_least(1), help="total training steps")
    parser.add_argument("--seed", type=int_at_least(0),
                        help=f"seed of everything, below {SEED_LIMIT} (default 0)")
    parser.add_argument("--n-envs", type=int_at_least(1), help="parallel envs")
    parser.add_argument("--eval-quality", type=int_at_least(0), metavar="N",
                        help="judge the learner on N selection positions at each evaluation "
                             "and keep the best quality as best.zip (0: off; config key "
                             "eval_quality)")
    parser.add_argument("--patience", type=int_at_least(0), metavar="K",
                        help="stop after K evaluations without a new best (0: never; config "
                             "key patience)")
    parser.add_argument("--opponent", action="append", metavar="SPEC",
                        help="opponent spec, repeat for a mix drawn per episode (replaces the "
                             "config's opponents)")
    parser.add_argument("--config", type=Path, help="YAML hyperparameter file (default: "
                        "train/hyperparams/GAME.yaml)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key, e.g. --set learning_rate=1e-4")
    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR, help="where run folders go")
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR",
                        help="continue the run in RUN_DIR from its last checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_device_option(parser)


def resolve_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The config keys set on the command line (``--set`` and the named options)."""
    overrides = parse_overrides(args.set)
    if args.opponent:
        overrides.update(opponents=args.opponent, opponent_weights=None)
    explicit = {"total_timesteps": args.timesteps, "seed": args.seed, "n_envs": args.n_envs,
                "eval_quality": args.eval_quality, "patience": args.patience,
                "device": args.device}
    overrides.update({key: value for key, value in explicit.items() if value is not None})
    return overrides


Prepared = tuple[Run, dict[str, Any] | None, Labelled | None]
"""A run, the training state of its checkpoint (None: a new run) and the labels it needs."""


def prepare(args: argparse.Namespace, algo: str, make_pool: PoolMaker) -> Prepared:
    """The run the command line asks for: a new one (its folder made once everything checked
    out, its pretraining labels read: ``needed_labels``), or ``--resume``'s; its ``device``
    resolved (``resolve_device``) before anything is written.

    Raises:
        ValueError, OSError: bad options or run folder (the message names the fix).
    """
    overrides = resolve_overrides(args)
    if "device" in overrides:  # resolved as it is recorded
        overrides["device"] = resolve_device(overrides["device"])
    progress = not args.no_progress
    if args.resume is not None:
        if args.config is not None:
            raise ValueError("--config cannot change a resumed run; drop it (the run keeps "
                             "its config.yaml)")
        run, state = open_run(args.resume, overrides, args.game)
        run.config.device = resolve_device(run.config.device)  # the run's GPU may be gone
        check_quality(run.config)
        load_teacher(run.config)
        return run, state, needed_labels(run.config, False, progress)
    if args.game is None:
        raise ValueError("give a GAME (reversi, four_in_a_row, tictactoe) or --resume RUN_DIR")
    config = load_config(args.game, args.config, overrides)
    config.device = resolve_device(config.device)
    check_mobility(config)
    check_network(config)
    check_quality(config)
    load_teacher(config)
    initial_weights(config)
    labels = needed_labels(config, True, progress)
    return new_run(config, args.runs_dir, make_pool(config), algo), None, labels


def run_command(argv: Sequence[str] | None, parser: argparse.ArgumentParser, algo: str,
                make_pool: PoolMaker, hooks: Sequence[Hook] = ()) -> Run:
    """Parse ``argv``, prepare the run, record the command and train: the body of
    ``boardgym train`` and ``boardgym selfplay``. Usage errors exit with code 2 (one line)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(args_list)
    try:
        run, state, labels = prepare(args, algo, make_pool)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    with removed_on_error(run, fresh=state is None):
        record_command(run.directory, args_list, parser.prog.split()[-1])
        say(f"run folder: {run.directory}")
        train(run, state, progress=not args.no_progress, hooks=hooks, labels=labels)
    return run


def build_parser(prog: str = "boardgym train", description: str | None = __doc__
                 ) -> argparse.ArgumentParser:
    """The argument parser of a training command (``boardgym train`` unless named)."""
    parser = CommandParser(prog=prog, description=description,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser)
    return parser


def default_pool(config: TrainConfig) -> OpponentPool:
    """The config's opponents with their draw weights."""
    return OpponentPool(config.game, config.opponents, config.opponent_weights)


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym train``: returns the exit code."""
    run = run_command(argv, build_parser(), ALGO, default_pool)
    print(f"done: {run.last} (best: {run.best})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
