"""Batched tree search guided by a policy/value network: Gumbel AlphaZero and PUCT.

One call searches N games at once. The N trees live in preallocated arrays (``Tree``): node
``k`` of game ``i`` holds its position (in one batched rules state), the network's masked
prior logits over its actions, its raw value, its visit count and value sum, and the node
index of each child (``-1`` until expanded). Each simulation step walks down every tree
(one vectorised selection per depth), expands the N new leaves with the rules' batched
``apply_batch``, evaluates all of them in ONE network call, and backs the values up. A
finished game's value is exact (``rules.result``), never the network's; so is a position that
the optional ``leaf_values`` (an exact solver, ``agents.solvers.leaf_values``) answers near
the end of the game. The search never goes below a node with an exact value (it is
*settled*). Values are for the side to move at each node; passes (Reversi) mean a child may
have the same side to move as its parent, so a value changes sign only where the side to
move changes.

Two ways to choose moves (``SearchConfig.method``):

- ``"gumbel"`` (default), Gumbel AlphaZero (Danihelka et al., 2022; the recipe of mctx's
  ``gumbel_muzero_policy``): at the root, Gumbel noise plus the prior logits pick the
  considered actions and sequential halving spreads the simulations over them, halving
  them by ``noise + logits + sigma(completed Q)``; inside the tree the deterministic
  selection that matches ``softmax(logits + sigma(completed Q))``. The policy target is that
  improved policy, the action the last survivor of the halving. It improves the policy even
  with few simulations: the better choice on a small CPU.
- ``"puct"``: AlphaZero's PUCT with Dirichlet noise mixed into the root prior; the policy
  target is the root's visit distribution and the move the most visited (the caller may
  sample it with a temperature instead).

Randomness comes in as an array (``noise``, from ``draw_noise``), so a game searched alone
and the same game searched in a batch visit the same nodes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from boardgym.agents.solvers import LeafValues
from boardgym.envs.games.core import Rules, put, take

Evaluate = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
"""The network as the search calls it: ``(observations (B, planes, rows, cols), legal masks
(B, A)) -> (logits (B, A) with -inf on illegal actions, values (B,) for the side to move)``."""

METHODS = ("gumbel", "puct")
UNEXPANDED = -1
ROOT = 0
NO_SCORE = -np.inf
EPSILON = 1e-8
"""Guards the min-max rescaling of Q against equal values."""


@dataclass(frozen=True)
class SearchConfig:
    """How the search spends its simulations.

    Attributes:
        simulations: simulation steps per search (each adds at most one node per game).
        method: ``"gumbel"`` or ``"puct"``.
        considered: Gumbel: the most root actions sequential halving starts with.
        gumbel_scale: Gumbel: the noise's scale (0: no noise, the strongest play).
        value_scale: Gumbel: ``c_scale`` of ``sigma(q) = (maxvisit_init + max N) * c_scale * q``.
        maxvisit_init: Gumbel: ``c_visit`` of the same.
        c_puct: PUCT: the exploration constant.
        dirichlet_alpha: PUCT: concentration of the root noise.
        dirichlet_fraction: PUCT: the noise's share of the root prior.
    """

    simulations: int = 32
    method: str = "gumbel"
    considered: int = 16
    gumbel_scale: float = 1.0
    value_scale: float = 0.1
    maxvisit_init: float = 50.0
    c_puct: float = 1.25
    dirichlet_alpha: float = 0.3
    dirichlet_fraction: float = 0.25

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"search method must be one of {METHODS}, got {self.method!r}")
        if self.simulations < 1 or self.considered < 1:
            raise ValueError(f"simulations and considered must be >= 1, got "
                             f"{self.simulations} and {self.considered}")
        if min(self.gumbel_scale, self.value_scale, self.maxvisit_init, self.c_puct,
               self.dirichlet_fraction) < 0 or self.dirichlet_alpha <= 0:
            raise ValueError("search scales must be >= 0 and dirichlet_alpha > 0")


@dataclass(frozen=True)
class SearchResult:
    """What one search found for each of its N games.

    Attributes:
        action: ``(N,)`` the move to play.
        policy: ``(N, A)`` the policy target (zero on illegal actions, rows sum to 1).
        visits: ``(N, A)`` root visit counts.
        value: ``(N,)`` the root's mean value for the side to move.
        action_value: ``(N,)`` the value of ``action`` for the side to move: its Q at the
            root (the root's value where it went unvisited).
    """

    action: np.ndarray
    policy: np.ndarray
    visits: np.ndarray
    value: np.ndarray
    action_value: np.ndarray


def considered_visits(considered: int, simulations: int) -> tuple[int, ...]:
    """Sequential halving's schedule: for each simulation, the visit count that the root
    action it visits must have (mctx's ``get_sequence_of_considered_visits``).

    ``considered`` actions share the first phase; each phase gives every surviving action
    ``max(1, simulations // (log2(considered) * survivors))`` more visits, then halves the
    survivors (to no fewer than 2) until the simulations are spent.
    """
    if considered <= 1:
        return tuple(range(simulations))
    phases = math.ceil(math.log2(considered))
    sequence: list[int] = []
    visits = [0] * considered
    survivors = considered
    while len(sequence) < simulations:
        extra = max(1, simulations // (phases * survivors))
        for _ in range(extra):
            sequence.extend(visits[:survivors])
            for i in range(survivors):
                visits[i] += 1
        survivors = max(2, survivors // 2)
    return tuple(sequence[:simulations])


def draw_noise(config: SearchConfig, rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """The root noise of a search of the games whose legal masks are ``masks`` ``(N, A)``:
    Gumbel(0, 1) samples times ``gumbel_scale``, or a Dirichlet(``dirichlet_alpha``) over
    each game's legal actions (PUCT). Zero on illegal actions."""
    if config.method == "gumbel":
        return np.where(masks, rng.gumbel(size=masks.shape) * config.gumbel_scale, 0.0)
    draws = rng.gamma(config.dirichlet_alpha, size=masks.shape) * masks
    return draws / np.maximum(draws.sum(axis=1, keepdims=True), EPSILON)


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax; ``-inf`` entries get probability 0, and a row with no finite entry
    (a finished game: no legal move) is all zeros."""
    top = logits.max(axis=1, keepdims=True)
    shifted = np.exp(logits - np.where(np.isfinite(top), top, 0.0))
    total = shifted.sum(axis=1, keepdims=True)
    return shifted / np.where(total > 0, total, 1.0)


def masked_argmax(scores: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Per row, the first legal index of the highest score."""
    return np.where(legal, scores, NO_SCORE).argmax(axis=1)


class Tree:
    """N search trees in preallocated arrays, one node per simulation plus the root.

    Args:
        rules: the game's rules module.
        roots: a batched state of N unfinished positions.
        nodes: nodes per tree (``simulations + 1``).
        n_actions: the size of the action space.
        leaf_values: an exact solver for positions near the end (None: the network alone).
    """

    def __init__(self, rules: Rules, roots: Any, nodes: int, n_actions: int,
                 leaf_values: LeafValues | None = None) -> None:
        n = len(roots.to_move)
        self.rules, self.n, self.nodes, self.leaf_values = rules, n, nodes, leaf_values
        shape = (n, nodes)
        self.children = np.full((*shape, n_actions), UNEXPANDED, dtype=np.int64)
        self.logits = np.full((*shape, n_actions), NO_SCORE)
        self.legal = np.zeros((*shape, n_actions), dtype=bool)
        self.raw_value = np.zeros(shape)
        self.value_sum = np.zeros(shape)
        self.visits = np.zeros(shape, dtype=np.int64)
        self.to_move = np.zeros(shape, dtype=np.int64)
        self.settled = np.zeros(shape, dtype=bool)
        self.size = np.ones(n, dtype=np.int64)
        self.states = type(roots)(*(np.zeros(n * nodes, dtype=field.dtype)
                                    if isinstance(field, np.ndarray) else field
                                    for field in roots))

    def add(self, games: np.ndarray, nodes: np.ndarray, states: Any, evaluate: Evaluate
            ) -> np.ndarray:
        """Store ``states`` as node ``nodes[j]`` of game ``games[j]``: legal moves, prior
        logits and raw value (one network call for the unfinished ones, the exact result
        for the finished ones and for those ``leaf_values`` answers: these are settled).
        Returns their values for their side to move."""
        settled = np.asarray(self.rules.is_terminal(states), dtype=bool)
        to_move = np.asarray(states.to_move, dtype=np.int64)
        values = np.zeros(len(games))
        live = ~settled
        if live.any():
            values[live], settled[live] = self.evaluate_live(games[live], nodes[live],
                                                             take(states, live), evaluate)
        finished = settled & ~live
        if finished.any():
            values[finished] = self.rules.result(take(states, finished), to_move[finished])
        put(self.states, games * self.nodes + nodes, states)
        self.raw_value[games, nodes] = values
        self.to_move[games, nodes] = to_move
        self.settled[games, nodes] = settled
        return values

    def evaluate_live(self, games: np.ndarray, nodes: np.ndarray, states: Any,
                      evaluate: Evaluate) -> tuple[np.ndarray, np.ndarray]:
        """Store the legal moves and prior logits of the unfinished ``states`` (nodes
        ``nodes`` of ``games``); return ``(values, solved)``: the network's values, or
        ``leaf_values``' exact ones where it answers (``solved``)."""
        masks = self.rules.legal_mask(states)
        logits, values = evaluate(self.rules.observation(states), masks)
        self.legal[games, nodes] = masks
        self.logits[games, nodes] = logits
        if self.leaf_values is None:
            return values, np.zeros(len(games), dtype=bool)
        exact = self.leaf_values(states)
        solved = ~np.isnan(exact)
        return np.where(solved, exact, values), solved

    def child_stats(self, games: np.ndarray, nodes: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
        """``(visit counts, Q values)`` ``(k, A)`` of the children of ``nodes``, Q for the
        side to move at each node (0 where unvisited)."""
        children = self.children[games, nodes]
        expanded = children != UNEXPANDED
        index = np.where(expanded, children, ROOT)
        rows = games[:, None]
        counts = np.where(expanded, self.visits[rows, index], 0)
        means = self.value_sum[rows, index] / np.maximum(counts, 1)
        same = self.to_move[rows, index] == self.to_move[games, nodes][:, None]
        return counts, np.where(counts > 0, np.where(same, means, -means), 0.0)

    def backup(self, path: list[np.ndarray], leaves: np.ndarray, values: np.ndarray) -> None:
        """Add each game's leaf value to every node on its ``path`` (one array of nodes per
        depth, ``UNEXPANDED`` past the game's leaf), signed for each node's side to move."""
        games = np.arange(self.n)
        leaf_mover = self.to_move[games, leaves]
        for nodes in path:
            on = nodes != UNEXPANDED
            g, x = games[on], nodes[on]
            same = self.to_move[g, x] == leaf_mover[on]
            self.value_sum[g, x] += np.where(same, values[on], -values[on])
            self.visits[g, x] += 1


class Search:
    """One batched search: the trees, the rules, the network and the root noise.

    Args:
        rules: the game's rules module (with its batched twins).
        roots: a batched state of N unfinished positions.
        evaluate: the network (``Evaluate``).
        config: how to search.
        noise: ``(N, A)`` root noise (``draw_noise``); zeros for none.
        leaf_values: an exact solver for positions near the end (None: the network alone).

    Raises:
        ValueError: a finished root position.
    """

    def __init__(self, rules: Rules, roots: Any, evaluate: Evaluate, config: SearchConfig,
                 noise: np.ndarray, leaf_values: LeafValues | None = None) -> None:
        if np.any(rules.is_terminal(roots)):
            raise ValueError("search needs unfinished positions; a root game is over")
        self.rules, self.evaluate, self.config, self.noise = rules, evaluate, config, noise
        n_actions = noise.shape[1]
        self.tree = Tree(rules, roots, config.simulations + 1, n_actions, leaf_values)
        self.games = np.arange(self.tree.n)
        self.root = np.full(self.tree.n, ROOT)
        values = self.tree.add(self.games, self.root, roots, evaluate)
        self.tree.backup([self.root], self.root, values)
        legal = self.tree.legal[:, ROOT]
        self.prior = self.tree.logits[:, ROOT].copy()
        if config.method == "puct":
            mixed = (1 - config.dirichlet_fraction) * softmax(self.prior) \
                + config.dirichlet_fraction * noise
            self.prior = np.where(legal, np.log(np.maximum(mixed, EPSILON)), NO_SCORE)
        considered = np.minimum(config.considered, legal.sum(axis=1))
        table = np.array([considered_visits(m, config.simulations)
                          for m in range(config.considered + 1)])
        self.schedule = table[considered]

    # -- selection ---------------------------------------------------------------------------

    def completed_q(self, games: np.ndarray, nodes: np.ndarray, counts: np.ndarray,
                    q: np.ndarray) -> np.ndarray:
        """``sigma(completed Q)`` of the children of ``nodes`` (mctx's
        ``qtransform_completed_by_mix_value``): unvisited children get the mixed value
        (the raw value averaged with the prior-weighted Q of the visited ones), Q is rescaled
        to [0, 1] over the legal actions, then scaled by ``(maxvisit_init + max N) *
        value_scale``."""
        legal = self.tree.legal[games, nodes]
        prior = softmax(self.tree.logits[games, nodes])
        visited = counts > 0
        total = counts.sum(axis=1)
        weight = np.where(visited, prior, 0.0)
        weighted_q = (weight * q).sum(axis=1) / np.maximum(weight.sum(axis=1), EPSILON)
        mixed = (self.tree.raw_value[games, nodes] + total * weighted_q) / (total + 1)
        completed = np.where(visited, q, mixed[:, None])
        low = np.where(legal, completed, np.inf).min(axis=1, keepdims=True)
        high = np.where(legal, completed, -np.inf).max(axis=1, keepdims=True)
        rescaled = (completed - low) / np.maximum(high - low, EPSILON)
        scale = (self.config.maxvisit_init + counts.max(axis=1)) * self.config.value_scale
        return np.where(legal, rescaled * scale[:, None], 0.0)

    def gumbel_scores(self, counts: np.ndarray, q: np.ndarray, wanted: np.ndarray
                      ) -> np.ndarray:
        """Root scores ``noise + logits + sigma(completed Q)`` of the actions whose visit
        count is ``wanted`` (per game); ``-inf`` for the others."""
        sigma = self.completed_q(self.games, self.root, counts, q)
        logits = self.prior - self.prior.max(axis=1, keepdims=True)
        scores = self.noise + logits + sigma
        return np.where(counts == wanted[:, None], scores, NO_SCORE)

    def select_root(self, step: int) -> np.ndarray:
        """Each game's root action at simulation ``step``."""
        counts, q = self.tree.child_stats(self.games, self.root)
        legal = self.tree.legal[:, ROOT]
        if self.config.method == "puct":
            return masked_argmax(self.puct_scores(self.prior, counts, q), legal)
        return masked_argmax(self.gumbel_scores(counts, q, self.schedule[:, step]), legal)

    def puct_scores(self, logits: np.ndarray, counts: np.ndarray, q: np.ndarray) -> np.ndarray:
        """PUCT: ``Q + c_puct * prior * sqrt(1 + N) / (1 + n)``."""
        explore = np.sqrt(counts.sum(axis=1, keepdims=True) + 1) / (1 + counts)
        return q + self.config.c_puct * softmax(logits) * explore

    def select_inside(self, games: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """The action at inner nodes: Gumbel's deterministic choice (the most under-visited
        action of ``softmax(logits + sigma(completed Q))``) or PUCT's."""
        counts, q = self.tree.child_stats(games, nodes)
        legal = self.tree.legal[games, nodes]
        logits = self.tree.logits[games, nodes]
        if self.config.method == "puct":
            return masked_argmax(self.puct_scores(logits, counts, q), legal)
        improved = softmax(logits + self.completed_q(games, nodes, counts, q))
        return masked_argmax(improved - counts / (1 + counts.sum(axis=1, keepdims=True)), legal)

    # -- one simulation ------------------------------------------------------------------------

    def descend(self, step: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
        """Walk every tree from its root to a new leaf or to a settled node.

        Returns:
            ``(path, leaves, parents, actions)``: the nodes per depth (``UNEXPANDED`` past a
            game's leaf; a new leaf is numbered ``tree.size``), each game's leaf, and the node
            and action whose child is the new leaf (``UNEXPANDED`` for a game that stopped on
            a settled node already in its tree).
        """
        tree = self.tree
        node = self.root.copy()
        path = [node.copy()]
        parents = np.full(tree.n, UNEXPANDED)
        actions = np.full(tree.n, UNEXPANDED)
        walking = np.ones(tree.n, dtype=bool)
        while walking.any():
            games, at = self.games[walking], node[walking]
            chosen = self.select_root(step)[walking] if len(path) == 1 \
                else self.select_inside(games, at)
            child = tree.children[games, at, chosen]
            new = child == UNEXPANDED
            parents[games[new]], actions[games[new]] = at[new], chosen[new]
            node[games] = np.where(new, tree.size[games], child)
            walking[games] = ~new & ~tree.settled[games, np.where(new, ROOT, child)]
            depth = np.full(tree.n, UNEXPANDED)
            depth[games] = node[games]
            path.append(depth)
        return path, node, parents, actions

    def simulate(self, step: int) -> None:
        """One simulation step in every tree: descend, expand (one network call), back up."""
        tree = self.tree
        path, leaves, parents, actions = self.descend(step)
        values = tree.raw_value[self.games, np.where(parents == UNEXPANDED, leaves, ROOT)]
        expand = parents != UNEXPANDED
        games = self.games[expand]
        if games.size:
            before = take(tree.states, games * tree.nodes + parents[expand])
            after = self.rules.apply_batch(before, actions[expand])
            values[expand] = tree.add(games, leaves[expand], after, self.evaluate)
            tree.children[games, parents[expand], actions[expand]] = leaves[expand]
            tree.size[expand] += 1
        tree.backup(path, leaves, values)

    def run(self) -> SearchResult:
        """Spend the simulations and read the result off the roots."""
        for step in range(self.config.simulations):
            self.simulate(step)
        counts, q = self.tree.child_stats(self.games, self.root)
        legal = self.tree.legal[:, ROOT]
        if self.config.method == "puct":
            total = np.maximum(counts.sum(axis=1, keepdims=True), 1)
            action = masked_argmax(counts + softmax(self.prior), legal)
            policy = counts / total
        else:
            sigma = self.completed_q(self.games, self.root, counts, q)
            policy = softmax(np.where(legal, self.prior + sigma, NO_SCORE))
            action = masked_argmax(self.gumbel_scores(counts, q, counts.max(axis=1)), legal)
        value = self.tree.value_sum[:, ROOT] / self.tree.visits[:, ROOT]
        played = np.arange(len(action)), action
        action_value = np.where(counts[played] > 0, q[played], value)
        return SearchResult(action, policy, counts, value, action_value)


def search(rules: Rules, roots: Any, evaluate: Evaluate, config: SearchConfig,
           noise: np.ndarray, leaf_values: LeafValues | None = None) -> SearchResult:
    """Search the N unfinished positions of the batched state ``roots`` at once.

    Args:
        rules: the game's rules module.
        roots: a batched state (``core.batch_of`` makes one of a single position).
        evaluate: the network (``Evaluate``), called once per simulation step.
        config: how to search.
        noise: ``(N, A)`` root noise (``draw_noise``), zeros for none.
        leaf_values: an exact solver for positions near the end (``LeafValues``; None: the
            network alone).

    Raises:
        ValueError: a finished root position.
    """
    return Search(rules, roots, evaluate, config, noise, leaf_values).run()


__all__ = ["METHODS", "Evaluate", "SearchConfig", "SearchResult", "Tree", "considered_visits",
           "draw_noise", "search", "softmax"]
