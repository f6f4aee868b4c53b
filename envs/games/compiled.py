"""The compiled bit helpers every game's rules and kernels share (numba, ``uint64`` scalars).

Each function here works on one word and is compiled with ``cache=True``; the games' rules
(``*_bits.py``), the players' kernels and the env kernels call them inside their own loops,
where numba inlines them. They are the compiled twins of ``bitboard``'s helpers and give the
same values:

- ``popcount`` / ``lowest_bit``: LLVM's ``ctpop`` / ``cttz`` on one 64-bit word (the count
  an ``int64``).
- ``nth_set_bit`` / ``choose``: ``bitboard.nth_set_bit`` / ``bitboard.choose`` (the uniform
  pick among candidate bits from one 64-bit draw).
- ``mix`` / ``stream_draw``: the vector env's splitmix64 streams (``envs.vector_streams``).
- ``next_word``: the next 64-bit word of a numpy bit generator, called through the C
  function pointer numpy exports (``generator_handles``), so a kernel draws exactly the
  words ``bitboard.random_draws`` would, and the generator's Python side stays in step.

Kernels that use these functions must call them as module-level globals (numba caches a
kernel per defining file; a function passed as an argument makes it compile again in every
process).

``entry(signature)`` decorates every kernel Python calls: compiled for exactly that signature
(Python ints up to 2**64 - 1 pass as ``u8``; a lazily typed kernel would compile an ``int64``
version and overflow on a bitboard with bit 63 set), but only when first called or first
compiled into another kernel, so importing a module compiles nothing and a process compiles
(or loads from numba's cache) only the kernels it uses.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from boardgym.envs.games.bitboard import WORD64_GENERATORS

U64 = types.uint64
ZERO, ONE = np.uint64(0), np.uint64(1)
HALF = np.uint64(32)
GOLDEN_GAMMA = np.uint64(0x9E37_79B9_7F4A_7C15)
MIX_1 = np.uint64(0xBF58_476D_1CE4_E5B9)
MIX_2 = np.uint64(0x94D0_49BB_1331_11EB)
MIX_SHIFTS = (np.uint64(30), np.uint64(27), np.uint64(31))
WORD64 = 64
WORD32 = 32


def entry(signature: str | Any, **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``njit(signature, cache=True, **options)``, compiled on first use instead of at
    decoration.

    The dispatcher returned is numba's own (other kernels call it as a global). Its first
    call from Python, or the first kernel compiled with a call to it, compiles (or loads
    from the cache) ``signature`` alone and then closes the dispatcher to new signatures,
    so every later call is converted to ``signature`` as with an eager signature.
    """
    def decorate(function: Callable[..., Any]) -> Any:
        dispatcher = njit(cache=True, **options)(function)
        typing_template = dispatcher.get_call_template

        def settle() -> Any:
            if dispatcher._can_compile:
                dispatcher.compile(signature)
                dispatcher.disable_compile()
            return next(iter(dispatcher.overloads.values())).entry_point

        def compile_for_args(*args: Any, **kws: Any) -> Any:
            return settle()

        def get_call_template(args: Any, kws: Any) -> Any:
            settle()
            return typing_template(args, kws)

        dispatcher._compile_for_args = compile_for_args
        dispatcher.get_call_template = get_call_template
        return dispatcher

    return decorate


@intrinsic
def _ctpop(typingctx: Any, word: Any) -> Any:
    """LLVM ``ctpop`` of a ``uint64``."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(WORD64)])
        return builder.call(fn, [args[0]])
    return U64(U64), codegen


@intrinsic
def _cttz(typingctx: Any, word: Any) -> Any:
    """LLVM ``cttz`` of a ``uint64`` (64 for 0)."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        fn = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(WORD64), ir.IntType(1)])
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])
    return U64(U64), codegen


def _next_caller(width: int) -> Any:
    """The code of a call to the C function ``uint<width>_t next(void *state)`` whose address
    is the first argument, the state's address the second."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        byte_pointer = ir.IntType(8).as_pointer()
        next_type = ir.FunctionType(ir.IntType(width), [byte_pointer])
        target = builder.inttoptr(args[0], next_type.as_pointer())
        return builder.call(target, [builder.inttoptr(args[1], byte_pointer)])
    return codegen


@intrinsic
def _call_next(typingctx: Any, function: Any, state: Any) -> Any:
    """Call the C function ``uint64_t next(void *state)`` at address ``function``."""
    return U64(types.intp, types.intp), _next_caller(WORD64)


@intrinsic
def _call_next32(typingctx: Any, function: Any, state: Any) -> Any:
    """Call the C function ``uint32_t next(void *state)`` at address ``function``."""
    return types.uint32(types.intp, types.intp), _next_caller(WORD32)


@njit(cache=True, inline="always")
def popcount(word: np.uint64) -> int:
    """The number of set bits of ``word``, an ``int64`` (so that differences and negations
    of counts are signed, never wrapping as ``uint64`` would)."""
    return np.int64(_ctpop(np.uint64(word)))  # type: ignore[call-arg, return-value]


@njit(cache=True, inline="always")
def lowest_bit(word: np.uint64) -> int:
    """The position of the lowest set bit of ``word`` (64 when ``word`` is 0), an
    ``int64``."""
    return np.int64(_cttz(np.uint64(word)))  # type: ignore[call-arg, return-value]


@njit(cache=True, inline="always")
def nth_set_bit(word: np.uint64, k: int) -> int:
    """The position of the ``k``-th lowest set bit of ``word`` (``k`` from 0, below its
    count), an ``int64``."""
    bits = np.uint64(word)
    for _ in range(k):
        bits &= bits - ONE
    return lowest_bit(bits)


@njit(cache=True, inline="always")
def choose(candidates: np.uint64, draw: np.uint64) -> int:
    """``bitboard.choose`` of one game: the candidate bit of rank ``c * (draw >> 32) >> 32``
    among the ``c`` candidates (0 when there are none)."""
    count = popcount(candidates)
    if count == 0:
        return np.int64(0)  # type: ignore[return-value]
    rank = ((np.uint64(draw) >> HALF) * np.uint64(count)) >> HALF
    return nth_set_bit(candidates, np.int64(rank))  # type: ignore[arg-type]


@njit(cache=True, inline="always")
def mix(word: np.uint64) -> np.uint64:
    """The splitmix64 finaliser (``envs.vector_streams.mix`` of one word)."""
    z = np.uint64(word)
    z = (z ^ (z >> MIX_SHIFTS[0])) * MIX_1
    z = (z ^ (z >> MIX_SHIFTS[1])) * MIX_2
    return z ^ (z >> MIX_SHIFTS[2])


@njit(cache=True, inline="always")
def stream_draw(key: np.uint64, counter: np.uint64) -> np.uint64:
    """Draw number ``counter`` of the stream keyed ``key`` (``vector_streams.stream_draw``)."""
    return mix(np.uint64(key) + np.uint64(counter) * GOLDEN_GAMMA)


@njit(cache=True, inline="always")
def next_word(function: int, state: int) -> np.uint64:
    """The next 64-bit word of the bit generator whose ``generator_handles`` these are."""
    return _call_next(function, state)  # type: ignore[call-arg, no-any-return]


@njit(cache=True, inline="always")
def next_word32(function: int, state: int) -> np.uint64:
    """The next 32-bit word (``next_uint32``, numpy's own half-word buffering included) of
    the bit generator whose ``uint32_handles`` these are, as a ``uint64``."""
    return np.uint64(_call_next32(function, state))  # type: ignore[call-arg]


@njit(cache=True, inline="always")
def to_front(moves: np.ndarray, count: int, move: int) -> None:
    """Move ``move`` (one of ``moves[:count]``) to the front, the others keeping their
    order (a search trying its best-known move first)."""
    at = 0
    while moves[at] != move:
        at += 1
    while at > 0:
        moves[at] = moves[at - 1]
        at -= 1
    moves[0] = move


def uint32_handles(rng: np.random.Generator) -> tuple[int, int]:
    """``(function, state)``: the addresses of ``rng``'s bit generator's ``next_uint32`` and
    its state, what ``next_word32`` draws with (any numpy bit generator)."""
    handles = rng.bit_generator.ctypes
    function = ctypes.cast(handles.next_uint32, ctypes.c_void_p).value
    return int(function or 0), int(handles.state_address)


def generator_handles(rng: np.random.Generator) -> tuple[int, int]:
    """``(function, state)``: the addresses a kernel passes to ``next_word`` to draw
    ``rng``'s next words, ``rng.bit_generator.random_raw()``'s words.

    Raises:
        ValueError: ``rng``'s bit generator does not make 64-bit words (MT19937): a kernel
            cannot reproduce ``bitboard.random_draws`` with it.
    """
    bit_generator = rng.bit_generator
    if not isinstance(bit_generator, WORD64_GENERATORS):
        raise ValueError(f"{type(bit_generator).__name__} makes 32-bit words; compiled "
                         "players draw from 64-bit bit generators (PCG64, the default)")
    handles = bit_generator.ctypes
    function = ctypes.cast(handles.next_uint64, ctypes.c_void_p).value
    return int(function or 0), int(handles.state_address)
