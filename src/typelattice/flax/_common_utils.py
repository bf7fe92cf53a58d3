"""The helpers of Flax's ``flax.training.common_utils``, on one device (the
home of ``typelattice.flax.training.common_utils``).

typelattice runs on one device (``typelattice.local_device_count() == 1``):
``shard`` gives each array a leading axis of 1, as Flax's does with one
local device, and ``get_metrics`` takes it away again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from typelattice import _devices, lax
from typelattice import numpy as tnp
from typelattice import random as tl_random
from typelattice._basearray import Array
from typelattice._tracing import tree
from typelattice._typing import ArrayLike

__all__ = ["get_metrics", "onehot", "shard", "shard_prng_key", "stack_forest"]


def shard(xs: Any) -> Any:
    """Each array of ``xs`` reshaped to ``(local_device_count(), -1,
    *shape[1:])``, for a program written for ``pmap``: on one device, a
    leading axis of 1.

    Args:
      xs: a tree of arrays.

    Returns:
      The tree of reshaped arrays.

    >>> import typelattice.numpy as tnp
    >>> shard({'x': tnp.zeros((8, 3))})['x'].shape
    (1, 8, 3)
    """
    n = _devices.local_device_count()
    return tree.tree_map(lambda x: tnp.reshape(x, (n, -1, *np.shape(x)[1:])), xs)


def shard_prng_key(prng_key: Array) -> Array:
    """``prng_key`` split into one key per local device (one here).

    Args:
      prng_key: a key.

    Returns:
      The keys, with a leading axis of ``local_device_count()``.

    >>> from typelattice import random
    >>> len(shard_prng_key(random.key(0)))
    1
    """
    return tl_random.split(prng_key, num=_devices.local_device_count())


def stack_forest(forest: Any) -> Any:
    """The trees of ``forest`` (a sequence of trees of one structure) as one
    tree whose leaves are the stacked leaves.

    Args:
      forest: the trees.

    Returns:
      One tree; each leaf has a new leading axis of ``len(forest)``.

    >>> import typelattice.numpy as tnp
    >>> stack_forest([{'n': tnp.asarray([1])}, {'n': tnp.asarray([5])}])
    {'n': Array([[1],
           [5]], dtype=int32)}
    """
    return tree.tree_map(lambda *xs: tnp.stack(xs), *forest)


def get_metrics(device_metrics: Any) -> Any:
    """Per-step metrics that a ``pmap`` program returned (each leaf with a
    leading axis of one entry per device) as stacked arrays of the first
    device's values, as Flax's ``get_metrics``.

    Args:
      device_metrics: a sequence of trees, one per step, each leaf with a
        leading axis of ``local_device_count()`` (1).

    Returns:
      One tree; each leaf the steps' values stacked.

    Raises:
      ValueError: a leaf's leading axis is not 1.

    >>> import typelattice.numpy as tnp
    >>> get_metrics([{'loss': tnp.asarray([2.0])}, {'loss': tnp.asarray([1.0])}])
    {'loss': Array([2., 1.], dtype=float32)}
    """

    def first(x: Any) -> Any:
        shape = np.shape(x)
        if not shape or shape[0] != 1:
            raise ValueError(
                f"get_metrics expects each metric with a leading axis of one "
                f"entry per device (1 here), got shape {shape}; for metrics "
                "without that axis use stack_forest"
            )
        return tnp.squeeze(x, 0)

    return stack_forest(tree.tree_map(first, list(device_metrics)))


def onehot(
    labels: ArrayLike,
    num_classes: int,
    on_value: float = 1.0,
    off_value: float = 0.0,
) -> Array:
    """A one-hot float32 array of integer ``labels``, as Flax's ``onehot``.

    Args:
      labels: an integer array.
      num_classes: the length of the new last axis.
      on_value: the value where the axis index equals the label.
      off_value: the value elsewhere.

    Returns:
      A float32 array of shape ``labels.shape + (num_classes,)``.

    >>> onehot(tnp.asarray([0, 2]), 3)
    Array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    labels = tnp.asarray(labels)
    hit = labels[..., None] == tnp.arange(num_classes).reshape(
        (1,) * labels.ndim + (-1,)
    )
    picked = lax.select(
        hit, tnp.full(hit.shape, on_value), tnp.full(hit.shape, off_value)
    )
    return picked.astype(tnp.float32)
