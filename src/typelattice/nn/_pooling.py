"""Pooling: ``pool``, ``avg_pool``, ``max_pool`` and ``min_pool``, as Flax
linen's, on :func:`typelattice.lax.reduce_window`.

Inputs are ``(*batch, *window dims, features)``: the window slides over the
axes between the batch axes and the features (none of the batch axes: an
unbatched input is fine). Results keep the input's dtype, except the
average of ``count_include_pad=False``, which divides by a float32 count of
the elements of each window and so promotes as Flax's does (bfloat16 inputs
give float32 averages there).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import typelattice.numpy as tnp
from typelattice import lax
from typelattice.numpy import Array

__all__ = ["avg_pool", "max_pool", "min_pool", "pool"]

PaddingLike = str | Sequence[tuple[int, int]]


def pool(
    inputs: Any,
    init: Any,
    reduce_fn: Callable[[Any, Any], Any],
    window_shape: Sequence[int],
    strides: Sequence[int] | None,
    padding: PaddingLike,
) -> Array:
    """The reduction of each window of ``inputs`` by ``reduce_fn``.

    Args:
      inputs: ``(*batch, *window dims, features)``.
      init: the reduction's initial value (its identity: 0 for sums).
      reduce_fn: :func:`typelattice.lax.add`, ``lax.max`` or ``lax.min``.
      window_shape: the window, one size per window dimension.
      strides: the steps between windows (default 1 per dimension).
      padding: ``'SAME'``, ``'VALID'``, or one ``(low, high)`` pair per
        window dimension.

    Returns:
      The reduction of each window: ``(*batch, *windows, features)``.

    Raises:
      ValueError: strides or padding of another length than
        ``window_shape``, or inputs with too few dimensions.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> x = tnp.arange(8.0).reshape(1, 4, 2)
    >>> pool(x, 0.0, lax.add, (2,), (2,), 'VALID')[0]
    Array([[ 2.,  4.],
           [10., 12.]], dtype=float32)
    """
    x = tnp.asarray(inputs)
    window = tuple(int(w) for w in window_shape)
    n = len(window)
    steps = (1,) * n if strides is None else tuple(int(s) for s in strides)
    if len(steps) != n:
        raise ValueError(
            f"strides {steps} must have one entry per window dimension, as "
            f"window_shape {window}"
        )
    batch = x.ndim - (n + 1)
    if batch < 0:
        raise ValueError(
            f"inputs of shape {x.shape} have too few dimensions for a {n}-d "
            "window: give (*batch, *window dims, features)"
        )
    dims = (1,) * batch + window + (1,)
    all_strides = (1,) * batch + steps + (1,)
    pads: Any = padding
    if not isinstance(padding, str):
        pairs = [tuple(int(v) for v in p) for p in padding]
        if len(pairs) != n or any(len(p) != 2 for p in pairs):
            raise ValueError(
                f"padding {padding!r} must give one (low, high) pair per window "
                f"dimension of window_shape {window}"
            )
        pads = [(0, 0)] * batch + pairs + [(0, 0)]
    return lax.reduce_window(x, init, reduce_fn, dims, all_strides, pads)


def avg_pool(
    inputs: Any,
    window_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: PaddingLike = "VALID",
    count_include_pad: bool = True,
) -> Array:
    """The mean of each window.

    Args:
      inputs: ``(*batch, *window dims, features)``.
      window_shape: the window, one size per window dimension.
      strides: the steps between windows (default 1 per dimension).
      padding: ``'SAME'``, ``'VALID'`` or ``(low, high)`` pairs.
      count_include_pad: divide by the window's size (padding counted as
        zeros); otherwise by the number of input elements in each window
        (a float32 count: the result promotes with float32).

    Returns:
      The mean of each window.

    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([[[1.0], [2.0], [4.0]]])
    >>> avg_pool(x, (2,), padding='SAME')[0, :, 0]
    Array([1.5, 3. , 2. ], dtype=float32)
    >>> avg_pool(x, (2,), padding='SAME', count_include_pad=False)[0, :, 0]
    Array([1.5, 3. , 4. ], dtype=float32)
    """
    x = tnp.asarray(inputs)
    y = pool(x, 0.0, lax.add, window_shape, strides, padding)
    if count_include_pad:
        # (An integer count: it takes the dtype of the sums, as in Flax.)
        return y / math.prod(window_shape)
    ones_shape = (*x.shape[:-1], 1)
    if len(ones_shape) - 2 == len(window_shape):  # one batch axis: share it
        ones_shape = (1, *ones_shape[1:])
    counts = pool(tnp.ones(ones_shape), 0.0, lax.add, window_shape, strides, padding)
    return y / counts


def max_pool(
    inputs: Any,
    window_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: PaddingLike = "VALID",
) -> Array:
    """The maximum of each window (padding never wins).

    Args:
      inputs: ``(*batch, *window dims, features)``.
      window_shape: the window, one size per window dimension.
      strides: the steps between windows (default 1 per dimension).
      padding: ``'SAME'``, ``'VALID'`` or ``(low, high)`` pairs.

    Returns:
      The maximum of each window, of the input's dtype.

    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([[[1.0], [5.0], [4.0]]])
    >>> max_pool(x, (2,), padding='SAME')[0, :, 0]
    Array([5., 5., 4.], dtype=float32)
    """
    return pool(inputs, -tnp.inf, lax.max, window_shape, strides, padding)


def min_pool(
    inputs: Any,
    window_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: PaddingLike = "VALID",
) -> Array:
    """The minimum of each window (padding never wins).

    Args:
      inputs: ``(*batch, *window dims, features)``.
      window_shape: the window, one size per window dimension.
      strides: the steps between windows (default 1 per dimension).
      padding: ``'SAME'``, ``'VALID'`` or ``(low, high)`` pairs.

    Returns:
      The minimum of each window, of the input's dtype.

    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([[[1.0], [5.0], [4.0]]])
    >>> min_pool(x, (2,), strides=(2,), padding='SAME')[0, :, 0]
    Array([1., 4.], dtype=float32)
    """
    return pool(inputs, tnp.inf, lax.min, window_shape, strides, padding)
