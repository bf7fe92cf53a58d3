"""The generator: the Threefry-2x32 block function, and the streams made of it.

Threefry-2x32 with 20 rounds (Salmon, Moraes, Dror and Shaw, "Parallel random
numbers: as easy as 1, 2, 3", SC 2011) maps a key of two uint32 words and a
counter of two uint32 words to two uint32 words; for a fixed key it is a
bijection of counters that passes the usual statistical batteries. Nothing
advances a state: every random word is the hash of a counter under a key, so
a key and a request determine the values, whatever was computed before and
in whatever order.

The second counter word says what a hash is for (domain separation), so that
no key derived from a key is a block of that key's own samples:

- ``STREAM`` (0): sample words. Block ``i`` hashes the counter ``(i, 0)``;
  a request for ``n`` words takes the first words of blocks ``0..b-1``, then
  their second words (``b = ceil(n / 2)``).
- ``SPLIT`` (1): the ``j``-th key of :func:`typelattice.random.split`.
- ``FOLD_HIGH`` (2) and ``FOLD_LOW`` (3): :func:`typelattice.random.fold_in`
  hashes the high word of the data, then the low word under the result.

Everything is written with typelattice.numpy operations on uint32 arrays
(which wrap, as unsigned arithmetic does), so that a key that is a tracer
(under ``jit`` or ``eval_shape``) works like a concrete one.
"""

from __future__ import annotations

from typing import Final

import typelattice.numpy as tnp
from typelattice._array import BackendArray, placed
from typelattice.numpy import Array

__all__ = ["FOLD_HIGH", "FOLD_LOW", "SPLIT", "STREAM", "threefry2x32", "words"]

STREAM: Final = 0
SPLIT: Final = 1
FOLD_HIGH: Final = 2
FOLD_LOW: Final = 3

# The rotation constants of Threefry-2x32 (one per round, repeating every 8)
# and the key-schedule parity constant, from the paper above.
_ROTATIONS: Final = (13, 15, 26, 6, 17, 29, 16, 24)
_PARITY: Final = 0x1BD11BDA
_ROUNDS: Final = 20

# The stream's block index is the first counter word: at most 2**32 blocks.
_MAX_WORDS: Final = 2 * 2**32


def _rotate_left(x: Array, r: int) -> Array:
    return (x << r) | (x >> (32 - r))


def threefry2x32(key: Array, c0: Array | int, c1: Array | int) -> tuple[Array, Array]:
    """Threefry-2x32-20 of the counters ``(c0, c1)`` under ``key``.

    ``key`` is a uint32 array of shape (2,); ``c0`` and ``c1`` are uint32
    arrays (or ints below 2**32) that broadcast together. Returns the two
    output words, each of the broadcast shape.
    """
    k0, k1 = key[0], key[1]
    schedule = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0 = schedule[0] + c0
    x1 = schedule[1] + c1
    for r in range(_ROUNDS):
        x0 = x0 + x1
        x1 = _rotate_left(x1, _ROTATIONS[r % 8]) ^ x0
        if r % 4 == 3:
            # Key injection every 4 rounds, with the injection count added
            # to the second word.
            s = r // 4 + 1
            x0 = x0 + schedule[s % 3]
            x1 = x1 + schedule[(s + 1) % 3] + s
    return x0, x1


def counter(n: int, key: Array) -> Array:
    """``arange(n)`` of uint32 on ``key``'s backend and device (another
    library's key draws there)."""
    counts = tnp.arange(n, dtype="uint32")
    if type(key) is BackendArray:
        return placed(counts, key._backend, key._device)  # pyright: ignore[reportPrivateUsage]
    return counts


def words(key: Array, n: int) -> Array:
    """``n`` random uint32 words under ``key``: a uint32 array of shape (n,)."""
    if n > _MAX_WORDS:
        raise ValueError(
            f"cannot draw {n} random 32-bit words from one key (at most "
            f"{_MAX_WORDS}); split the key and draw in parts"
        )
    blocks = (n + 1) // 2
    x0, x1 = threefry2x32(key, counter(blocks, key), STREAM)
    return tnp.concatenate([x0, x1])[:n]
