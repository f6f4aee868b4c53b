"""Game-agnostic search players over the rules interface: alpha-beta and MCTS.

Both work on any game's rules (``core.Rules``: ``legal_mask``, ``apply``, ``is_terminal``,
``result``, ``state.to_move``), so both are players of every game: ``alphabeta:D`` and
``mcts:N`` are registered for all games, a game's own ``alphabeta`` (with its heuristics)
replacing the generic one. Passing is part of ``apply`` there, so a child position may
have the same side to move as its parent; the search negates values only when the side to
move changes.

Alpha-beta (``AlphaBetaAgent``) is negamax with iterative deepening, a transposition table
(fresh for every move, so a move depends only on the position and ``rng``), the previous
iteration's best move tried first, and game-specific move-order hints. Game knowledge comes in
as ``Heuristics``: an evaluation, a move order, the exact value of a finished game, and how
many plies remain when the rest of the game is small enough to search exactly.

Without a game's own ``Heuristics`` the search knows only the rules: finished games get
their exact value from ``rules.result``, unfinished ones at the horizon 0, moves come in
legal (increasing) order.

MCTS (``MCTSAgent``) is UCT with uniformly random rollouts and no game knowledge at all.

Spec sizes are capped where a move would take minutes (``sized``): ``mcts:N`` at
``MAX_PLAYOUTS``, ``alphabeta:D`` at each game's maximum depth (``GENERIC_MAX_DEPTH`` for a
game without heuristics of its own); a spec above its cap is refused in one line naming it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.extending import intrinsic

from boardgym.agents.base import check_rng, positive_int
from boardgym.envs.games import players
from boardgym.envs.games.core import Game, Rules
from boardgym.envs.games.players import PlayerFactory

WIN = 1_000_000.0
"""Base value of a won game; heuristic evaluations must stay strictly inside ``(-WIN, WIN)``."""
INFINITY = math.inf
EXACT, LOWER, UPPER = 0, 1, 2
"""Transposition-table bound kinds: the value is exact, a lower bound, or an upper bound."""
NO_NET = (np.zeros((0, 1), dtype=np.int64), np.zeros(0, dtype=np.int64),
          np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32),
          np.zeros(5, dtype=np.int64))
"""The empty n-tuple network (``NetArrays`` of ``agents.ntuple.network`` without weights):
the compiled searches of Reversi and four-in-a-row value their leaves with their own
heuristic evaluation when given it, and with the network's value otherwise."""
CELLS_AT, LENGTHS_AT, OFFSETS_AT, WEIGHTS_AT, SHAPE_AT, IMAGES, LONGEST, WEIGHTS, SHAPE = range(9)
"""The words of a ``net_handle``: the five arrays' addresses, then their sizes."""
NET_HANDLE = types.UniTuple(types.int64, SHAPE + 1)
"""The numba type of a ``net_handle``."""


@intrinsic
def _pointer(typingctx: Any, address: Any) -> Any:
    """The ``void *`` at the ``int64`` ``address``."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], ir.IntType(8).as_pointer())
    return types.voidptr(types.int64), codegen


@njit(cache=True, inline="always")
def _at(address: int) -> Any:
    """``_pointer(address)``."""
    return _pointer(address)  # type: ignore[call-arg]


@njit(cache=True, inline="always")
def net_handle(net: tuple) -> tuple:  # type: ignore[type-arg]
    """The handle of the network ``net`` (``NetArrays``; ``NO_NET``'s has ``WEIGHTS`` 0)
    that a recursive search passes down in its place: the arrays' addresses and sizes, 9
    words where the arrays take 37 a call (passing those cost the heuristic searches half
    their speed). Valid while ``net`` lives (``handle_net``)."""
    cells, lengths, offsets, weights, shape = net
    return (np.int64(cells.ctypes.data), np.int64(lengths.ctypes.data),
            np.int64(offsets.ctypes.data), np.int64(weights.ctypes.data),
            np.int64(shape.ctypes.data), np.int64(cells.shape[0]), np.int64(cells.shape[1]),
            np.int64(weights.shape[0]), np.int64(shape.shape[0]))


@njit(cache=True, inline="always")
def handle_net(handle: tuple) -> tuple:  # type: ignore[type-arg]
    """The ``NetArrays`` of a ``net_handle``: views of the network's own arrays."""
    images = handle[IMAGES]
    return (carray(_at(handle[CELLS_AT]), (images, handle[LONGEST]), np.int64),
            carray(_at(handle[LENGTHS_AT]), images, np.int64),
            carray(_at(handle[OFFSETS_AT]), images, np.int64),
            carray(_at(handle[WEIGHTS_AT]), handle[WEIGHTS], np.float32),
            carray(_at(handle[SHAPE_AT]), handle[SHAPE], np.int64))
UCT_EXPLORATION = math.sqrt(2.0)
"""The UCT exploration constant ``c`` in ``mean + c * sqrt(ln N / n)``."""


def decisive(sign: int, margin: float) -> float:
    """The search value of a finished game: ``sign`` (+1 won, -1 lost, 0 drawn) for the side
    to move, plus ``margin`` (>= 0, e.g. disc difference or empty cells left) for the winner.

    Every won game is worth more than every heuristic value, and a bigger margin more.
    """
    return 0.0 if sign == 0 else sign * (WIN + margin)


def margin_of(value: float) -> float:
    """The signed margin of a ``decisive`` value (0 for a draw)."""
    return 0.0 if value == 0 else math.copysign(abs(value) - WIN, value)


def is_decisive(value: float) -> bool:
    """True when ``value`` is a proven win or loss rather than a heuristic estimate."""
    return abs(value) >= WIN


def _no_evaluation(state: Any) -> float:
    return 0.0


def _never_exact(state: Any) -> int | None:
    return None


def no_solver(state: Any) -> tuple[dict[int, float], int] | None:
    """``Heuristics.solve_moves`` of a game without a faster exact endgame: never answers."""
    return None


@dataclass(frozen=True)
class Heuristics:
    """The game knowledge an alpha-beta search uses; every value is for the side to move.

    Attributes:
        rules: the rules module of the game.
        evaluate: heuristic value of a non-final position, strictly inside ``(-WIN, WIN)``.
        order: the legal moves of a non-final position, most promising first.
        final_value: the value of a finished game, usually ``decisive(...)``.
        exact_plies: if the rest of the game is small enough to search to the end, an upper
            bound on the plies left; otherwise ``None``.
        key: a hashable key that identifies the position for the transposition table.
        exact_budget: the most positions an exact search to the end may visit; beyond it
            the search gives up and keeps its depth-limited result (``None``: no limit).
        solve_moves: a faster exact endgame (e.g. a compiled solver), asked instead of the
            search whenever ``exact_plies`` is not ``None``: the ``decisive`` value of every
            legal move and the positions it visited, or ``None`` when it cannot answer
            (then the search plays the endgame itself).
    """

    rules: Rules
    evaluate: Callable[[Any], float] = _no_evaluation
    order: Callable[[Any], list[int]] | None = None
    final_value: Callable[[Any], float] | None = None
    exact_plies: Callable[[Any], int | None] = _never_exact
    key: Callable[[Any], Hashable] = tuple
    exact_budget: int | None = None
    solve_moves: Callable[[Any], tuple[dict[int, float], int] | None] = no_solver

    def moves(self, state: Any) -> list[int]:
        """The legal moves of ``state``, in the hinted order."""
        if self.order is not None:
            return self.order(state)
        return np.flatnonzero(self.rules.legal_mask(state)).tolist()

    def value_of_end(self, state: Any) -> float:
        """The value of the finished game ``state`` for its side to move."""
        if self.final_value is not None:
            return self.final_value(state)
        return decisive(int(self.rules.result(state, state.to_move)), 0)


@dataclass(frozen=True)
class SearchResult:
    """What one alpha-beta search found.

    Attributes:
        move: the chosen action.
        value: its value for the side to move (``decisive`` when proven).
        depth: the deepest completed iteration, in plies.
        exact: True when the value is proven: every line was searched to the end of the
            game, or a forced win or loss was found.
        nodes: positions visited.
    """

    move: int
    value: float
    depth: int
    exact: bool
    nodes: int


class _OutOfBudget(Exception):
    """An exact search visited more positions than its budget allows."""


@dataclass
class _Search:
    """One search: its transposition table and node count."""

    heuristics: Heuristics
    table: dict[Hashable, tuple[int, float, int, int]] = field(default_factory=dict)
    nodes: int = 0
    node_limit: float = INFINITY

    def child_value(self, state: Any, child: Any, depth: int, alpha: float,
                    beta: float) -> float:
        """The value of ``child`` for the side to move in ``state`` (negamax with passes)."""
        if child.to_move == state.to_move:
            return self.negamax(child, depth, alpha, beta)
        return -self.negamax(child, depth, -beta, -alpha)

    def negamax(self, state: Any, depth: int, alpha: float, beta: float) -> float:
        """The value of ``state`` searched ``depth`` plies deep, within ``(alpha, beta)``."""
        self.nodes += 1
        if self.nodes > self.node_limit:
            raise _OutOfBudget
        knowledge = self.heuristics
        if knowledge.rules.is_terminal(state):
            return knowledge.value_of_end(state)
        if depth == 0:
            return knowledge.evaluate(state)
        key = knowledge.key(state)
        entry = self.table.get(key)
        moves = knowledge.moves(state)
        if entry is not None:
            stored_depth, value, kind, best = entry
            if stored_depth >= depth and (kind == EXACT or (kind == LOWER and value >= beta)
                                          or (kind == UPPER and value <= alpha)):
                return value
            moves.remove(best)
            moves.insert(0, best)
        original_alpha, best_value, best_move = alpha, -INFINITY, moves[0]
        for move in moves:
            child = knowledge.rules.apply(state, move)
            value = self.child_value(state, child, depth - 1, alpha, beta)
            if value > best_value:
                best_value, best_move = value, move
                alpha = max(alpha, value)
                if alpha >= beta:
                    break
        kind = UPPER if best_value <= original_alpha else LOWER if best_value >= beta else EXACT
        self.table[key] = (depth, best_value, kind, best_move)
        return best_value

    def root(self, state: Any, moves: list[int], depth: int) -> tuple[int, float]:
        """The best of ``moves`` (tried in this order; the first wins ties) and its value."""
        best_move, alpha = moves[0], -INFINITY
        for move in moves:
            value = self.child_value(state, self.heuristics.rules.apply(state, move),
                                     depth - 1, alpha, INFINITY)
            if value > alpha:
                best_move, alpha = move, value
        return best_move, alpha


def search(state: Any, heuristics: Heuristics, depth: int,
           rng: np.random.Generator) -> SearchResult:
    """Iterative-deepening alpha-beta from ``state`` (not final) to ``depth`` plies.

    When ``heuristics.exact_plies`` says the rest of the game is within reach, the search
    then continues to the end of the game (within ``heuristics.exact_budget`` positions),
    and the value is exact; if ``heuristics.solve_moves`` answers, its values are used
    instead and nothing is searched. Ties between equally
    valued root moves are broken by a shuffle drawn from ``rng``.

    Raises:
        ValueError: ``depth`` < 1, or ``state`` is a finished game.
    """
    if depth < 1:
        raise ValueError(f"search depth must be at least 1 ply, got {depth}")
    if heuristics.rules.is_terminal(state):
        raise ValueError("cannot search a finished game: there is no move to choose")
    remaining = heuristics.exact_plies(state)
    moves = [int(m) for m in rng.permutation(heuristics.moves(state))]
    solved = None if remaining is None else heuristics.solve_moves(state)
    if remaining is not None and solved is not None:
        values, nodes = solved
        best = max(moves, key=values.__getitem__)  # the first best in the shuffled order
        return SearchResult(best, values[best], remaining, True, nodes)
    run = _Search(heuristics)
    best_move, value, completed = moves[0], 0.0, 0
    for iteration in range(1, depth + 1):
        best_move, value = run.root(state, moves, iteration)
        completed = iteration
        moves.remove(best_move)
        moves.insert(0, best_move)
        if is_decisive(value) and (remaining is None or remaining <= iteration):
            return SearchResult(best_move, value, completed, True, run.nodes)
    if remaining is None or remaining <= depth:
        return SearchResult(best_move, value, completed, remaining is not None, run.nodes)
    if heuristics.exact_budget is not None:
        run.node_limit = run.nodes + heuristics.exact_budget
    try:
        best_move, value = run.root(state, moves, remaining)
    except _OutOfBudget:
        return SearchResult(best_move, value, completed, is_decisive(value), run.nodes)
    return SearchResult(best_move, value, remaining, True, run.nodes)


class AlphaBetaAgent:
    """Plays the move of a ``search`` ``depth`` plies deep (exact near the end of the game)."""

    def __init__(self, heuristics: Heuristics, depth: int) -> None:
        """Args:
            heuristics: the game knowledge.
            depth: plies per move, at least 1.

        Raises:
            ValueError: ``depth`` < 1.
        """
        if depth < 1:
            raise ValueError(f"alphabeta depth must be at least 1, got {depth}")
        self.heuristics = heuristics
        self.depth = depth

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """The searched move for the side to move."""
        return search(state, self.heuristics, self.depth, check_rng(rng)).move


@dataclass
class _Node:
    """A UCT tree node: the position reached, who moved into it, and the statistics."""

    state: Any
    mover: int
    untried: list[int]
    children: list[_Node] = field(default_factory=list)
    move: int = -1
    visits: int = 0
    reward: float = 0.0
    """Sum of rollout results (+1 win, 0.5 draw, 0 loss) for ``mover``."""

    def best_child(self, exploration: float) -> _Node:
        """The child with the highest UCT score (the first among equals)."""
        log_visits = math.log(self.visits)
        return max(self.children, key=lambda c: c.reward / c.visits
                   + exploration * math.sqrt(log_visits / c.visits))


class MCTSAgent:
    """UCT Monte-Carlo tree search with uniformly random rollouts, ``playouts`` per move.

    Each playout walks the tree by the UCT rule, expands one untried move (in an order drawn
    from ``rng``), plays uniformly random moves to the end of the game, and backs the result
    up. The move played is the most visited child of the root.
    """

    def __init__(self, rules: Rules, playouts: int,
                 exploration: float = UCT_EXPLORATION) -> None:
        """Args:
            rules: the rules module of the game.
            playouts: simulated games per move, at least 1.
            exploration: the UCT constant.

        Raises:
            ValueError: ``playouts`` < 1.
        """
        if playouts < 1:
            raise ValueError(f"mcts needs at least 1 playout per move, got {playouts}")
        self.rules = rules
        self.playouts = playouts
        self.exploration = exploration

    def _node(self, state: Any, mover: int, rng: np.random.Generator) -> _Node:
        moves = np.flatnonzero(self.rules.legal_mask(state))
        return _Node(state, mover, rng.permutation(moves).tolist())

    def _rollout(self, state: Any, rng: np.random.Generator) -> int:
        """The first player's result (+1/0/-1) of random play from ``state`` to the end."""
        while not self.rules.is_terminal(state):
            state = self.rules.apply(state, int(rng.choice(
                np.flatnonzero(self.rules.legal_mask(state)))))
        return int(self.rules.result(state, 0))

    def _playout(self, root: _Node, rng: np.random.Generator) -> None:
        path, node = [root], root
        while not node.untried and node.children:
            node = node.best_child(self.exploration)
            path.append(node)
        if node.untried:
            move = node.untried.pop()
            child = self._node(self.rules.apply(node.state, move), int(node.state.to_move), rng)
            child.move = move
            node.children.append(child)
            path.append(child)
            node = child
        result = self._rollout(node.state, rng)
        for visited in path:
            visited.visits += 1
            visited.reward += (1 + (result if visited.mover == 0 else -result)) / 2

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """The most visited move after ``playouts`` playouts."""
        check_rng(rng)
        root = self._node(state, 1 - int(state.to_move), rng)
        for _ in range(self.playouts):
            self._playout(root, rng)
        return max(root.children, key=lambda c: c.visits).move


DEFAULT_PLAYOUTS = 800
MAX_PLAYOUTS = 10_000
"""The most ``mcts:N`` playouts: about ten seconds a move of the Python ``MCTSAgent`` (a game
added with ``register_game``; random rollouts, some 1 000 a second on Reversi). The shipped
games' compiled ``mcts:N`` plays such a move in well under a second."""
GENERIC_DEPTH = 4
"""The default ``alphabeta`` depth of a game without its own heuristics."""
GENERIC_MAX_DEPTH = 9
"""The deepest ``alphabeta:D`` of a game without its own heuristics: tic-tac-toe's whole
game (a move in about a second); deeper adds nothing there, and a bigger game registered
with ``register_game`` may take minutes a move beyond it."""


def sized(text: str | None, name: str, default: int, maximum: int, why: str) -> int:
    """The size in a spec like ``alphabeta:4`` (``default`` when absent): a positive integer
    at most ``maximum``.

    Raises:
        ValueError: not a positive integer (``positive_int``), or above ``maximum``: the
            message names the cap and ``why`` (``"a move would take minutes"``).
    """
    value = positive_int(text, name, default)
    if value > maximum:
        raise ValueError(f"{name}:{value} is over the maximum {name}:{maximum} ({why}); use "
                         f"{name}:{maximum} or less")
    return value


def alphabeta_factory(heuristics_of: Callable[[Game], Heuristics], default_depth: int,
                      max_depth: int, why: str = "deeper, a move takes minutes"
                      ) -> PlayerFactory:
    """The player factory of ``alphabeta[:D]`` specs: a search over ``heuristics_of(game)``,
    ``D`` plies deep (``default_depth`` when absent, at most ``max_depth``: ``sized``)."""

    def factory(record: Game, arg: str | None) -> AlphaBetaAgent:
        return AlphaBetaAgent(heuristics_of(record),
                              sized(arg, "alphabeta", default_depth, max_depth, why))

    return factory


def mcts_player(record: Game, arg: str | None) -> MCTSAgent:
    """The player of an ``mcts[:N]`` spec: ``N`` playouts per move (default 800, at most
    ``MAX_PLAYOUTS``)."""
    return MCTSAgent(record.rules, sized(arg, "mcts", DEFAULT_PLAYOUTS, MAX_PLAYOUTS,
                                         "more would take minutes a move"))


def rules_only(record: Game) -> Heuristics:
    """The heuristics of a game that has none of its own: its rules alone."""
    return Heuristics(rules=record.rules)


players.register(None, "alphabeta",
                 alphabeta_factory(rules_only, GENERIC_DEPTH, GENERIC_MAX_DEPTH,
                                   "tic-tac-toe's whole game; a bigger game takes minutes"),
                 help=f"alpha-beta search D plies deep (default {GENERIC_DEPTH}, at most "
                      f"{GENERIC_MAX_DEPTH}), exact values of finished games only")
players.register(None, "mcts", mcts_player,
                 help=f"UCT tree search, N random playouts per move (default "
                      f"{DEFAULT_PLAYOUTS}, at most {MAX_PLAYOUTS})")
