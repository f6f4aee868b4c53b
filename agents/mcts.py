"""``mcts:N`` of the built-in games, compiled (numba): the UCT search of ``agents.search``'s
``MCTSAgent``, move for move.

``MCTSAgent`` (pure Python, over any game's ``Rules``) stays the player of games added with
``register_game``; Reversi, four-in-a-row and tic-tac-toe get ``CompiledMCTSAgent``, which
runs the same search in one compiled kernel (``uct_move``) over the games' compiled bit rules
(``reversi_bits``, ``four_in_a_row_bits``, ``tictactoe_bits``) and plays the same move for the
same ``rng``, leaving ``rng`` in the same state:

- the kernel draws numpy's own 32-bit words: it calls the bit generator's ``next_uint32``
  through the C function pointer numpy exports (``uint32_handles``), so the generator's
  buffered half-words stay exactly where numpy keeps them, with any bit generator;
- over those words it runs numpy's algorithms: ``Generator.permutation`` of the legal moves
  (``shuffled``: Fisher-Yates from the end with ``random_interval``'s masked rejection) for a
  node's untried moves, and ``Generator.choice`` of a legal move (``below``: the buffered
  32-bit Lemire rejection of ``integers(0, n)``; no word at all when ``n`` is 1) in rollouts;
- the UCT arithmetic is the same IEEE double arithmetic in the same order (no fast-math), so
  ties and "first among equals" fall the same way.

``act_many`` (what ``players.act_each`` and so the vector env call) searches a batch of games
in one compiled loop (``uct_moves``), each game drawing through its own generator's handles
(``drawing``), game after game: the moves and generator states of ``act`` game by game.
``permute`` (``rng.shuffle`` over the words) serves the alpha-beta players' batches too.

A position in the kernel is four ``uint64``-sized values, one layout for every game: ``me``
(the side to move's stones), ``opp``, ``to_move`` (0: the first player) and ``legal`` (the
side to move's legal actions as bits, 0 exactly when the game is over: Reversi's ``legal``,
four-in-a-row's ``legal_columns``, tic-tac-toe's ``legal``), plus four-in-a-row's board-size
table ``words`` (``four_in_a_row_bits.board_words``; a dummy for the other games). The game is
a code (``REVERSI``, ``FOUR_IN_A_ROW``, ``TICTACTOE``) the kernel branches on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from numba import njit

from boardgym.agents.base import check_rng
from boardgym.agents.search import DEFAULT_PLAYOUTS, MAX_PLAYOUTS, UCT_EXPLORATION, sized
from boardgym.envs.games import four_in_a_row_bits, players, reversi_bits, tictactoe_bits
from boardgym.envs.games.compiled import (
    HALF,
    ONE,
    entry,
    next_word32,
    nth_set_bit,
    popcount,
    uint32_handles,
)
from boardgym.envs.games.core import Game

REVERSI, FOUR_IN_A_ROW, TICTACTOE = range(3)
"""The game codes of ``uct_move``."""
MAX_MOVES = 64
"""The most legal moves a position of any of the games has (one per bit of a word)."""
UINT32_MASK = np.uint64(0xFFFF_FFFF)
NO_WORDS = np.zeros(1, dtype=np.uint64)
"""The ``words`` argument of the games without a board-size table."""
ME, OPP, LEGAL = range(3)
"""Columns of the tree's ``bits`` array: a node's position words."""
TO_MOVE, MOVER, MOVE, VISITS, UNTRIED, CHILDREN = range(6)
"""Columns of the tree's ``counts`` array: the side to move, the side that moved into the
node and the action it played, the node's visits, how many of its ``moves`` are still
untried, and how many children it has."""
ROOT = 0
NO_NODE = -1


@njit(cache=True, inline="always")
def _below(n: int, function: int, state: int) -> int:
    """``Generator.integers(0, n)`` for ``1 <= n < 2**32`` (numpy's
    ``buffered_bounded_lemire_uint32``): draws no word when ``n`` is 1."""
    if n <= 1:
        return 0
    bound = np.uint64(n)
    product = next_word32(function, state) * bound
    leftover = product & UINT32_MASK
    if leftover < bound:
        threshold = (UINT32_MASK - (bound - ONE)) % bound
        while leftover < threshold:
            product = next_word32(function, state) * bound
            leftover = product & UINT32_MASK
    return int(np.int64(product >> HALF))


@njit(cache=True, inline="always")
def _interval(largest: int, function: int, state: int) -> int:
    """numpy's ``random_interval(largest)`` for ``largest < 2**32``: a uniform integer in
    ``0..largest``, masked 32-bit words rejected until one is at most ``largest``."""
    if largest == 0:
        return 0
    top = np.uint64(largest)
    mask = top
    for shift in (1, 2, 4, 8, 16, 32):
        mask |= mask >> np.uint64(shift)
    value = next_word32(function, state) & mask
    while value > top:
        value = next_word32(function, state) & mask
    return int(np.int64(value))


@njit(cache=True, inline="always")
def permute(values: np.ndarray, count: int, function: int, state: int) -> None:
    """``rng.shuffle(values[:count])`` in place, drawn through ``uint32_handles(rng)``: the
    order ``rng.permutation`` gives those values (numpy's Fisher-Yates from the end, each
    swap index from ``random_interval``), and the generator left in the same state."""
    for i in range(count - 1, 0, -1):
        j = _interval(i, function, state)
        values[i], values[j] = values[j], values[i]


@njit(cache=True, inline="always")
def _shuffle_bits(bits: np.uint64, out: np.ndarray, function: int, state: int) -> int:
    """Write ``Generator.permutation`` of the set bits of ``bits`` (ascending, as
    ``np.flatnonzero`` lists them) into ``out``; return their count."""
    count = 0
    rest = np.uint64(bits)
    while rest:
        out[count] = nth_set_bit(rest, 0)
        rest &= rest - ONE
        count += 1
    permute(out, count, function, state)
    return count


@entry("i8(i8, intp, intp)")
def below(n: int, function: int, state: int) -> int:
    """``rng.integers(0, n)`` (so ``rng.choice`` of ``n`` items picks item ``below(n)``),
    ``1 <= n < 2**32``, drawn through ``uint32_handles(rng)``: the same value, and the
    generator left in the same state."""
    return _below(n, function, state)


@entry("i8[:](u8, intp, intp)")
def shuffled(bits: np.uint64, function: int, state: int) -> np.ndarray:
    """``rng.permutation(np.flatnonzero(mask))`` for the set bits of ``bits``, drawn through
    ``uint32_handles(rng)``: the same order, and the generator left in the same state."""
    out = np.empty(MAX_MOVES, dtype=np.int64)
    return out[:_shuffle_bits(bits, out, function, state)].copy()


@njit(cache=True, inline="always")
def _play(game: int, me: np.uint64, opp: np.uint64, to_move: int, action: int,
          words: np.ndarray) -> tuple[np.uint64, np.uint64, int, np.uint64]:
    """``(me, opp, to_move, legal)`` after the side to move plays the legal ``action``."""
    if game == REVERSI:
        return reversi_bits.play(me, opp, to_move, action)
    if game == FOUR_IN_A_ROW:
        new_me, new_opp, won = four_in_a_row_bits.play(me, opp, action, words)
        return (new_me, new_opp, 1 - to_move,
                four_in_a_row_bits.legal_columns(new_me, new_opp, won, words))
    return tictactoe_bits.play(me, opp, to_move, action)


@njit(cache=True, inline="always")
def _first_result(game: int, me: np.uint64, opp: np.uint64, to_move: int,
                  words: np.ndarray) -> int:
    """+1/0/-1: the finished game's result for the first player (``rules.result(state, 0)``)."""
    if game == REVERSI:
        difference = reversi_bits.disc_difference(me, opp)
        if to_move == 1:
            difference = -difference
        return (difference > 0) - (difference < 0)
    if game == FOUR_IN_A_ROW:
        if not four_in_a_row_bits.has_line(opp, words):
            return 0
        return 1 if to_move == 1 else -1
    return tictactoe_bits.result(opp, to_move, 0)


@njit(cache=True, inline="always")
def _rollout(game: int, me: np.uint64, opp: np.uint64, to_move: int, legal: np.uint64,
             words: np.ndarray, function: int, state: int) -> int:
    """The first player's result of uniformly random play (``rng.choice`` of the legal moves,
    in increasing order) from the position to the end."""
    while legal:
        action = nth_set_bit(legal, _below(popcount(legal), function, state))
        me, opp, to_move, legal = _play(game, me, opp, to_move, action, words)
    return _first_result(game, me, opp, to_move, words)


@njit(cache=True, inline="always")
def _add_node(node: int, me: np.uint64, opp: np.uint64, to_move: int, legal: np.uint64,
              mover: int, move: int, bits: np.ndarray, counts: np.ndarray, moves: np.ndarray,
              function: int, state: int) -> None:
    """Fill tree slot ``node`` with a position ``mover`` moved into by ``move``: no visits,
    no children, its legal moves shuffled (``rng.permutation``) as the untried ones, popped
    from the end."""
    bits[node, ME], bits[node, OPP], bits[node, LEGAL] = me, opp, legal
    counts[node, TO_MOVE], counts[node, MOVER], counts[node, MOVE] = to_move, mover, move
    counts[node, VISITS] = 0
    counts[node, UNTRIED] = _shuffle_bits(legal, moves[node], function, state)
    counts[node, CHILDREN] = 0


@njit(cache=True, inline="always")
def _best_child(node: int, exploration: float, counts: np.ndarray, reward: np.ndarray,
                children: np.ndarray) -> int:
    """The child of ``node`` with the highest ``reward / visits + exploration *
    sqrt(log(parent visits) / visits)``, the first among equals."""
    log_visits = math.log(counts[node, VISITS])
    best, best_score = NO_NODE, -math.inf
    for k in range(counts[node, CHILDREN]):
        child = children[node, k]
        visits = counts[child, VISITS]
        score = reward[child] / visits + exploration * math.sqrt(log_visits / visits)
        if best == NO_NODE or score > best_score:
            best, best_score = child, score
    return best


@njit(cache=True)
def _search(game: int, me: np.uint64, opp: np.uint64, to_move: int, legal: np.uint64,
            playouts: int, exploration: float, words: np.ndarray, function: int, state: int,
            tree: tuple) -> int:  # type: ignore[type-arg]
    """``uct_move`` in the tree arrays ``tree`` (``_tree``'s, room for ``playouts + 1``
    nodes or more; their old contents are overwritten)."""
    bits, counts, reward, moves, children, path = tree
    reward[:] = 0.0
    _add_node(ROOT, me, opp, to_move, legal, 1 - to_move, NO_NODE, bits, counts, moves, function,
              state)
    nodes = 1
    for _ in range(playouts):
        node, depth = ROOT, 1
        path[0] = ROOT
        while counts[node, UNTRIED] == 0 and counts[node, CHILDREN] > 0:
            node = _best_child(node, exploration, counts, reward, children)
            path[depth] = node
            depth += 1
        if counts[node, UNTRIED] > 0:
            counts[node, UNTRIED] -= 1
            action = moves[node, counts[node, UNTRIED]]
            child_to_move = counts[node, TO_MOVE]
            new_me, new_opp, new_to_move, new_legal = _play(
                game, bits[node, ME], bits[node, OPP], child_to_move, action, words)
            _add_node(nodes, new_me, new_opp, new_to_move, new_legal, child_to_move, action,
                      bits, counts, moves, function, state)
            children[node, counts[node, CHILDREN]] = nodes
            counts[node, CHILDREN] += 1
            node = nodes
            path[depth] = node
            depth += 1
            nodes += 1
        result = _rollout(game, bits[node, ME], bits[node, OPP], counts[node, TO_MOVE],
                          bits[node, LEGAL], words, function, state)
        for i in range(depth):
            visited = path[i]
            counts[visited, VISITS] += 1
            reward[visited] += (1 + (result if counts[visited, MOVER] == 0 else -result)) / 2
    best, best_visits = NO_NODE, -1
    for k in range(counts[ROOT, CHILDREN]):
        child = children[ROOT, k]
        if counts[child, VISITS] > best_visits:
            best, best_visits = child, counts[child, VISITS]
    return int(counts[best, MOVE])


@njit(cache=True)
def _tree(playouts: int) -> tuple:  # type: ignore[type-arg]
    """The arrays of a tree of ``playouts + 1`` nodes: ``(bits, counts, reward, moves,
    children, path)``."""
    size = playouts + 1
    return (np.empty((size, 3), dtype=np.uint64), np.empty((size, 6), dtype=np.int64),
            np.zeros(size, dtype=np.float64), np.empty((size, MAX_MOVES), dtype=np.int8),
            np.empty((size, MAX_MOVES), dtype=np.int32), np.empty(size, dtype=np.int64))


@entry("i8(i8, u8, u8, i8, u8, i8, f8, u8[::1], intp, intp)")
def uct_move(game: int, me: np.uint64, opp: np.uint64, to_move: int, legal: np.uint64,
             playouts: int, exploration: float, words: np.ndarray, function: int,
             state: int) -> int:
    """``MCTSAgent``'s move in the unfinished position ``(me, opp, to_move, legal)`` of
    ``game``: ``playouts`` UCT playouts with the constant ``exploration``, drawing from the
    bit generator of ``uint32_handles`` exactly as ``MCTSAgent`` draws from its ``rng``; the
    most visited child of the root (the first among equals)."""
    return _search(game, me, opp, to_move, legal, playouts, exploration, words, function,
                   state, _tree(playouts))


@entry("i8[::1](i8, u8[::1], u8[::1], i8[::1], u8[::1], i8, f8, u8[::1], intp[::1], "
       "intp[::1])")
def uct_moves(game: int, me: np.ndarray, opp: np.ndarray, to_move: np.ndarray,
              legal: np.ndarray, playouts: int, exploration: float, words: np.ndarray,
              functions: np.ndarray, states: np.ndarray) -> np.ndarray:
    """``uct_move`` in each game ``i`` of a batch of unfinished positions, one after another,
    game ``i`` drawing through its own handles ``(functions[i], states[i])`` (the same
    handles may serve several games: they then draw in turn, game by game)."""
    tree = _tree(playouts)
    out = np.empty(me.shape[0], dtype=np.int64)
    for i in range(me.shape[0]):
        out[i] = _search(game, me[i], opp[i], to_move[i], legal[i], playouts, exploration,
                         words, functions[i], states[i], tree)
    return out


def words_array(bits: Any) -> np.ndarray:
    """A batch's bitboards as the contiguous ``uint64`` array the batch kernels take."""
    return np.ascontiguousarray(bits, dtype=np.uint64).reshape(-1)


def _no_words(state: Any) -> np.ndarray:
    return NO_WORDS


def _board_words(state: Any) -> np.ndarray:
    return four_in_a_row_bits.board_words(state.geom)


KERNEL_GAMES: dict[str, tuple[int, Callable[[Any], np.ndarray]]] = {
    "reversi": (REVERSI, _no_words),
    "four_in_a_row": (FOUR_IN_A_ROW, _board_words),
    "tictactoe": (TICTACTOE, _no_words),
}
"""Per game name: its ``uct_move`` code and the ``words`` table of a state."""


def handles_of(rngs: Sequence[np.random.Generator]) -> tuple[np.ndarray, np.ndarray]:
    """``uint32_handles`` of each generator (checked with ``check_rng``), as the two
    ``intp`` arrays the batch kernels take: the functions' and the states' addresses.

    Raises:
        ValueError: one of ``rngs`` is no numpy Generator.
    """
    pairs = [uint32_handles(check_rng(rng)) for rng in rngs]
    functions = np.array([function for function, _ in pairs], dtype=np.intp)
    return functions, np.array([address for _, address in pairs], dtype=np.intp)


@contextmanager
def drawing(rngs: Sequence[np.random.Generator]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``handles_of(rngs)``, with the lock of each distinct generator of ``rngs`` held (a
    generator given twice is locked once; always in one order, so that two batches sharing
    generators cannot deadlock), as numpy holds a generator's lock while it draws.

    Raises:
        ValueError: one of ``rngs`` is no numpy Generator.
    """
    handles = handles_of(rngs)
    distinct = {id(rng): rng.bit_generator.lock for rng in rngs}
    locks = [distinct[key] for key in sorted(distinct)]  # one order for every caller
    held = 0
    try:
        for lock in locks:
            lock.acquire()
            held += 1
        yield handles
    finally:
        for lock in locks[:held]:
            lock.release()


class CompiledMCTSAgent:
    """``MCTSAgent`` of a built-in game, compiled: the same UCT search, ``playouts`` per move,
    the same move for the same ``rng`` and ``rng`` left in the same state (see the module
    docstring)."""

    def __init__(self, record: Game, playouts: int,
                 exploration: float = UCT_EXPLORATION) -> None:
        """Args:
            record: the game, one of ``KERNEL_GAMES``.
            playouts: simulated games per move, at least 1.
            exploration: the UCT constant.

        Raises:
            ValueError: ``playouts`` < 1, or a game the kernel does not play.
        """
        if playouts < 1:
            raise ValueError(f"mcts needs at least 1 playout per move, got {playouts}")
        if record.name not in KERNEL_GAMES:
            raise ValueError(f"the compiled mcts plays {', '.join(KERNEL_GAMES)}, not "
                             f"{record.name}: use agents.search.MCTSAgent")
        self.rules = record.rules
        self.code, self.words_of = KERNEL_GAMES[record.name]
        self.playouts = playouts
        self.exploration = exploration

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """The most visited move after ``playouts`` playouts.

        Raises:
            ValueError: ``rng`` is no numpy Generator (``check_rng``), or the game is over.
        """
        check_rng(rng)
        legal = int(self.rules.action_bits(state))
        if not legal:
            raise ValueError("cannot search a finished game: there is no move to choose")
        function, address = uint32_handles(rng)
        with rng.bit_generator.lock:
            return int(uct_move(self.code, np.uint64(state.me), np.uint64(state.opp),
                                int(state.to_move), np.uint64(legal), self.playouts,
                                self.exploration, self.words_of(state), function, address))

    def act_many(self, state: Any, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """``act`` in each game ``k`` of the batched ``state`` with ``rngs[k]``, in one
        compiled loop (``uct_moves``): the moves of ``players.act_each``'s game-by-game
        loop, and the generators left in the same states (one given for several games
        draws for them in turn).

        Raises:
            ValueError: a generator that is no numpy Generator, or a finished game.
        """
        legal = np.asarray(self.rules.action_bits(state), dtype=np.uint64).reshape(-1)
        if len(rngs) != legal.shape[0]:
            raise ValueError(f"act_many needs one generator per game: {legal.shape[0]} "
                             f"games, {len(rngs)} generators")
        if not legal.all():
            raise ValueError("cannot search a finished game: there is no move to choose")
        with drawing(rngs) as (functions, addresses):
            return uct_moves(self.code, words_array(state.me), words_array(state.opp),
                             np.ascontiguousarray(state.to_move, dtype=np.int64).reshape(-1),
                             legal, self.playouts, self.exploration, self.words_of(state),
                             functions, addresses)


def compiled_mcts_player(record: Game, arg: str | None) -> CompiledMCTSAgent:
    """The player of an ``mcts[:N]`` spec of a built-in game: ``N`` playouts per move (default
    ``DEFAULT_PLAYOUTS``, at most ``MAX_PLAYOUTS``), as ``search.mcts_player``."""
    return CompiledMCTSAgent(record, sized(arg, "mcts", DEFAULT_PLAYOUTS, MAX_PLAYOUTS,
                                           "more would take minutes a move"))


for _name in KERNEL_GAMES:
    players.register(_name, "mcts", compiled_mcts_player,
                     help=f"UCT tree search, N random playouts per move (default "
                          f"{DEFAULT_PLAYOUTS}, at most {MAX_PLAYOUTS})")
