"""What a training run does between rollouts: evaluate the learner, checkpoint, run hooks.

The learner is evaluated against each eval opponent: on the batched vector env when the
opponent has a batched twin (all games side by side, one forward pass a turn), else game by
game through ``train.evaluate.play_match``. Eval agents are built once per run. With
``eval_openings: K`` both paths play fair matches, as ``boardgym evaluate --openings K``
does: games ``2k`` and ``2k + 1`` start from the ``K``-ply random opening ``k`` of the match
seed (``train.openings``), the learner first in the even game (self-play's league checks
too). Without, every game starts from the start position, the first player drawn. With
``eval_quality: N`` each evaluation also judges the learner's greedy moves on N positions of
the selection part of the game's labelled set (``train.quality``); ``best.zip`` is then the
evaluation with the best quality score (ties: the best win score), and ``patience`` stops a
run whose selection key has not improved for that many evaluations. With ``eval_bar``
(``{spec: win rate}``), the evaluations where the learner held every bar rank above all
others: ``best.zip`` is the best quality that keeps what a shipped checkpoint must keep;
with ``bar_games: N`` the bar is judged on N games of its own against each bar opponent,
from the start position, instead of on the eval games.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback

from boardgym import agents
from boardgym.agents.checkpoint import board_kwargs, checkpoint_metadata
from boardgym.agents.ppo.architecture import architecture_of
from boardgym.agents.ppo.policy import PolicyAgent, masked_logits
from boardgym.envs.games import game as game_record
from boardgym.envs.games import players
from boardgym.train.common.runs import CHECKPOINTS, EVAL_FILE, write_json
from boardgym.train.common.selection import QUALITY, WIN_RATE, Selection, selection_key
from boardgym.train.match import openings as fair
from boardgym.train.match.evaluate import play_match
from boardgym.train.match.results import A_WON, B_WON, PAIR, TIE, MatchResult
from boardgym.train.ppo.config import TrainConfig
from boardgym.train.ppo.runs import Run, save_checkpoint
from boardgym.train.quality.agreement import Position, judge, selection_positions
from boardgym.train.quality.report import Quality

Hook = Callable[["RunCallback"], None]
"""Called with the callback after each rollout's update (self-play's league)."""
LEARNER = "learner"


def learner_agent(model: BaseAlgorithm, config: TrainConfig) -> PolicyAgent:
    """The model being trained as an ``Agent`` (masked argmax)."""
    metadata = checkpoint_metadata(config.game, config.env_kwargs, model.num_timesteps,
                                   architecture_of(model.policy))
    return PolicyAgent(model.policy, metadata, name=LEARNER)


def match(model: BaseAlgorithm, config: TrainConfig, opponent: str | agents.Agent,
          games: int, seed: int) -> MatchResult:
    """The learner against ``opponent`` over ``games`` games: ``play_match``'s fair openings
    with ``config.eval_openings`` (games must then be even), else from the start position,
    the first player random per game."""
    plies = config.eval_openings
    return play_match(config.game, learner_agent(model, config), opponent, games, seed=seed,
                      config=board_kwargs(config.env_kwargs),
                      openings=str(plies) if plies else None)


def win_rate(model: BaseAlgorithm, config: TrainConfig, opponent: str | agents.Agent,
             games: int, seed: int) -> float:
    """The learner's win rate against ``opponent`` (the games of ``match``)."""
    return match(model, config, opponent, games, seed).a_win_rate


def fair_openings(config: TrainConfig, seed: int) -> fair.Openings | None:
    """The openings of a training-time match seeded ``seed``: ``config.eval_openings``
    random plies, the very ones ``play_match(..., openings=str(plies))`` plays (None: no
    openings)."""
    if not config.eval_openings:
        return None
    return fair.openings_from(str(config.eval_openings), config.game, seed,
                              board_kwargs(config.env_kwargs))


class SeatedOpenings:
    """The vector env's ``opening(rng)`` of a fair match on sub-envs seeded ``seed + i``:
    every game of sub-env ``i`` starts from opening ``i // 2`` of ``openings``.

    The sub-env is told by its generator, which the vector env makes as
    ``np.random.default_rng(seed_i)`` (see ``envs.vector``): its seed sequence's entropy is
    ``seed_i``, whatever the generator has drawn since.

    Args:
        openings: the match's openings.
        seed: the first sub-env's seed.
        games: the number of sub-envs (even).
    """

    def __init__(self, openings: fair.Openings, seed: int, games: int) -> None:
        record = game_record(openings.game)
        board = dict(openings.config)
        self.seed = seed
        self.texts = [str(record.rules.to_text(fair.replay(record, openings.opening(k), board)))
                      for k in range(games // PAIR)]
        """The position text of each opening."""

    def __call__(self, rng: np.random.Generator) -> str:
        """The opening of the sub-env whose generator is ``rng``.

        Raises:
            ValueError: ``rng`` is no sub-env's generator of this match.
        """
        entropy = getattr(rng.bit_generator.seed_seq, "entropy", None)
        index = entropy - self.seed if isinstance(entropy, int) else -1
        if not 0 <= index < PAIR * len(self.texts):
            raise ValueError(f"a fair match's opening sampler serves the generators "
                             f"default_rng(seed + i) of its {PAIR * len(self.texts)} sub-envs "
                             f"(seed {self.seed}); got one seeded {entropy!r}")
        return self.texts[index // PAIR]


def fair_seating(openings: fair.Openings | None, games: int, seed: int) -> dict[str, Any]:
    """The vector env arguments of a match of ``games`` sub-envs seeded ``seed + i``: with
    ``openings``, sub-env ``i`` plays opening ``i // 2`` (``SeatedOpenings``) with the
    learner first where ``i`` is even (``play_match``'s games and seatings); without, none
    (the first player drawn per game).

    Raises:
        ValueError: an odd number of games with openings.
    """
    if openings is None:
        return {}
    if games % PAIR:
        raise ValueError(f"with eval_openings every opening is played twice (seats swapped): "
                         f"the games must be even, got {games}")
    return {"opening": SeatedOpenings(openings, seed, games),
            "first_player": ["agent", "opponent"] * (games // PAIR)}


def vector_match(policy: Any, config: TrainConfig, opponent: str, games: int,
                 seed: int) -> MatchResult:
    """The learner ``policy`` (a model's ``policy``, or ``agents.ppo.policy.load_network``'s)
    against the batched player ``opponent`` over ``games`` games played side
    by side on the vector env, one forward pass a turn for all of them.

    Sub-env ``i`` is seeded ``seed + i`` and plays one game, its first player drawn at random,
    or with ``config.eval_openings`` from ``play_match``'s opening ``i // 2``, the learner
    first where ``i`` is even (``fair_openings``, ``fair_seating``; the result's ``openings``
    says which, and it does not count ``distinct_games``: the vector env does not report
    every opponent move). The learner plays the masked argmax, as its ``PolicyAgent`` does,
    so against a deterministic opponent the outcomes are ``match``'s, with one exception:
    where the opponent's replies end a game right after its opening, before the learner's
    first move (a fair opening is not proven decided, so only by filling the last empty
    square, or in Reversi by a wipe-out), ``play_match`` counts that game, while the vector
    env, which always gives the agent a move, draws the opening again and, the game ending
    alike, finally plays it from the start position (see ``envs.vector``).
    """
    start = time.perf_counter()
    record = game_record(config.game)
    openings = fair_openings(config, seed)
    kwargs = {**config.env_kwargs, **fair_seating(openings, games, seed)}
    venv = gym.make_vec(record.env_id, num_envs=games, vectorization_mode="vector_entry_point",
                        autoreset_mode=AutoresetMode.SAME_STEP, opponent=opponent, **kwargs)
    obs, info = venv.reset(seed=seed)
    winners = np.zeros(games, dtype=np.int64)
    done = np.zeros(games, dtype=bool)
    while not done.all():
        actions = masked_logits(policy, obs, info["action_mask"]).argmax(axis=1)
        obs, _, terminated, truncated, info = venv.step(actions)
        ended = (terminated | truncated) & ~done
        winners[ended] = info["winner"][ended]
        done |= ended
    venv.close()
    outcomes = tuple(int(winner) for winner in winners)  # the env's winner: +1 the learner
    return MatchResult(record.name, LEARNER, opponent, games, outcomes.count(A_WON),
                       outcomes.count(B_WON), outcomes.count(TIE),
                       time.perf_counter() - start, outcomes, openings)


class RunCallback(BaseCallback):
    """Evaluates and checkpoints a run between rollouts; runs extra ``hooks`` there too.

    Args:
        run: the run being trained.
        hooks: called with this callback after each rollout's update.
    """

    def __init__(self, run: Run, hooks: Sequence[Hook] = ()) -> None:
        super().__init__()
        self.run = run
        self.hooks = list(hooks)
        self.started = time.perf_counter()
        self.elapsed_at_start = run.elapsed
        self.next_eval = self.next_checkpoint = 0
        record = game_record(run.config.game)
        self.eval_agents = {spec: agents.make(record, spec) for spec in run.config.eval_opponents
                            if players.make_batched(record, spec) is None}
        """The eval opponents without a batched twin, built once."""
        count = run.config.eval_quality
        self.quality_positions: list[Position] = [] if not count else selection_positions(
            record, count, board_kwargs(run.config.env_kwargs),
            run.config.eval_quality_positions)
        """The selection positions judged at each evaluation (none: quality is off)."""
        metric, bar = QUALITY if count else WIN_RATE, bool(run.config.eval_bar)
        # a resume that turned eval_quality on or off starts a new selection (eval_bar and
        # bar_games cannot change on resume: TrainConfig.RESUMABLE_KEYS)
        if (run.selection.metric, run.selection.bar) != (metric, bar):
            run.selection = Selection(metric, bar=bar)
        self.stopped = False
        """Set when ``patience`` evaluations in a row brought no new best."""

    def _init_callback(self) -> None:
        config = self.run.config
        step = self.model.num_timesteps
        self.next_eval = 0 if config.eval_start and step == 0 else next_multiple(
            step, config.eval_every)
        self.next_checkpoint = next_multiple(step, config.checkpoint_every)

    def _on_step(self) -> bool:
        """Go on unless the run stopped early (``patience``)."""
        return not self.stopped

    def _on_rollout_start(self) -> None:
        """After each update (and before the first rollout): evaluate, hooks, checkpoint."""
        step = self.model.num_timesteps
        config = self.run.config
        if step >= self.next_eval:
            self.evaluate()
            self.next_eval = next_multiple(step, config.eval_every)
        for hook in self.hooks:
            hook(self)
        if step >= self.next_checkpoint:
            self.checkpoint()
            self.next_checkpoint = next_multiple(step, config.checkpoint_every)

    def _on_training_end(self) -> None:
        """A last evaluation (unless the run stopped early) and checkpoint at the final step."""
        step = self.model.num_timesteps
        if not self.stopped and (not self.run.history or self.run.history[-1]["step"] != step):
            self.evaluate()
        self.checkpoint()

    def wall_time(self) -> float:
        """Training wall time of the run so far, earlier sessions included."""
        return self.elapsed_at_start + time.perf_counter() - self.started

    def eval_match(self, spec: str, config: TrainConfig | None = None,
                   games: int | None = None) -> MatchResult:
        """The learner against eval opponent ``spec``: ``games`` games (default
        ``config.eval_games``), the openings of ``config`` (default the run's)."""
        config = config or self.run.config
        games = games or config.eval_games
        if spec in self.eval_agents:
            result = match(self.model, config, self.eval_agents[spec], games, config.seed)
            return dataclasses.replace(result, a=LEARNER, b=spec)
        return vector_match(self.model.policy, config, spec, games, config.seed)

    def judge_bar(self, wins: dict[str, float]) -> dict[str, Any]:
        """The evaluation record's ``bar_rates`` (the win rates the bar is judged on:
        ``config.bar_games`` games from the start position against each bar opponent, or
        the eval games' ``wins`` with ``bar_games: 0``) and ``bar_held`` (every rate reaches
        its bar); empty without ``eval_bar``."""
        config = self.run.config
        if not config.eval_bar:
            return {}
        rates = {spec: wins[spec] for spec in config.eval_bar}
        if config.bar_games:
            plain = dataclasses.replace(config, eval_openings=0)
            rates = {spec: self.eval_match(spec, plain, config.bar_games).a_win_rate
                     for spec in rates}
        return {"bar_rates": rates,
                "bar_held": all(rates[spec] >= bar for spec, bar in config.eval_bar.items())}

    def judge_quality(self) -> Quality | None:
        """The learner's greedy moves judged on the selection positions (None: quality off)."""
        if not self.quality_positions:
            return None
        config = self.run.config
        return judge(config.game, learner_agent(self.model, config), self.quality_positions,
                     seed=config.seed)

    def evaluate(self) -> dict[str, float]:
        """Win and loss rates against the eval opponents (and the quality on the selection
        positions, with ``eval_quality``): logged, saved to ``eval.json``; ``best.zip`` keeps
        the weights of the best evaluation (``train.common.selection.selection_key``),
        ``best.json`` says which;
        ``patience`` evaluations without a new best stop the run."""
        config, step = self.run.config, self.model.num_timesteps
        results = {spec: self.eval_match(spec) for spec in config.eval_opponents}
        wins = {spec: r.a_win_rate for spec, r in results.items()}
        losses = {spec: r.b_wins / r.games for spec, r in results.items()}
        for spec in results:
            self.logger.record(f"eval/win_rate_vs_{spec}", wins[spec])
            self.logger.record(f"eval/loss_rate_vs_{spec}", losses[spec])
        record: dict[str, Any] = {"step": step, "seconds": round(self.wall_time(), 1),
                                  "win_rates": wins, "loss_rates": losses}
        record.update(self.judge_bar(wins))
        held = record.get("bar_held")
        quality = self.judge_quality()
        if quality is not None:
            record["quality"] = quality_record(quality)
            for name in QUALITY_FIELDS:
                self.logger.record(f"eval/quality_{name}", record["quality"][name])
        self.logger.dump(step)
        self.run.history.append(record)
        write_json(self.run.directory / EVAL_FILE, self.run.history)
        print(f"[{step:>9} steps, {self.wall_time():7.0f} s] win/loss "
              + ", ".join(f"{spec} {wins[spec]:.0%}/{losses[spec]:.0%}" for spec in results)
              + ("" if quality is None else f"; quality {quality_summary(quality)}")
              + ("" if held is None else f"; bar {bar_summary(record['bar_rates'], held)}"),
              flush=True)
        save_checkpoint(self.model, self.run.directory / CHECKPOINTS / f"step_{step}.zip",
                        config.game, config.env_kwargs)
        win_score = float(np.mean([wins[spec] - losses[spec] for spec in results]))
        self.select(selection_key(win_score, None if quality is None else quality.score, held),
                    step)
        return wins

    def select(self, key: list[float], step: int) -> None:
        """Keep the learner as ``best.zip`` if ``key`` is a new best; write ``best.json``;
        stop the run after ``patience`` evaluations without a new best."""
        run, config = self.run, self.run.config
        if run.selection.offer(key, step):
            save_checkpoint(self.model, run.best, config.game, config.env_kwargs)
        write_json(run.best_record, run.selection.to_dict())
        if config.patience and run.selection.stalled >= config.patience:
            self.stopped = True
            print(f"[{step:>9} steps] stopping: no new best in {config.patience} "
                  f"evaluations (best at step {run.selection.step})", flush=True)

    def checkpoint(self) -> None:
        """Write ``last.zip`` atomically with everything ``--resume`` needs."""
        self.run.elapsed = self.wall_time()
        state = self.run.train_state(self.model, self.training_env)
        save_checkpoint(self.model, self.run.last, self.run.config.game,
                        self.run.config.env_kwargs, state)


QUALITY_FIELDS = ("kept_rate", "best_rate", "score")
"""The quality figures of an evaluation record (``eval.json``'s ``"quality"``)."""


def quality_record(quality: Quality) -> dict[str, Any]:
    """An evaluation's quality figures: positions judged, the outcome-kept and best-move
    shares (None where no position counts) and the score that selects ``best.zip``."""
    return {"positions": quality.positions, "kept_rate": quality.kept_rate,
            "best_rate": quality.best_rate, "score": quality.score}


def quality_summary(quality: Quality) -> str:
    """``"kept 91% / best 80% of 181"``: the progress line's quality figures."""
    shares = [f"{name} {rate:.0%}" for name, rate in (("kept", quality.kept_rate),
                                                      ("best", quality.best_rate))
              if rate is not None]
    return f"{' / '.join(shares) or 'no decisive position'} of {quality.positions}"


def bar_summary(rates: dict[str, float], held: bool) -> str:
    """``"corner_best 97.1% held"``: the progress line's bar figures."""
    return ", ".join(f"{spec} {rate:.1%}" for spec, rate in rates.items()) \
        + (" held" if held else " missed")


def next_multiple(step: int, every: int) -> int:
    """The first multiple of ``every`` after ``step``."""
    return (step // every + 1) * every
