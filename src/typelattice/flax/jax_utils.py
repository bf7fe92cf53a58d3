"""Helpers for programs written for several devices, as ``flax.jax_utils``.

typelattice has one device (:func:`typelattice.devices`), so replicating a
tree gives its leaves a leading axis of size 1, the axis
:func:`typelattice.pmap` maps over, and unreplicating takes entry 0 back.
"""

import collections as _collections
import itertools as _itertools
from collections.abc import Iterable as _Iterable
from collections.abc import Iterator as _Iterator
from collections.abc import Sequence as _Sequence
from typing import Any as _Any

import typelattice.numpy as _tnp
from typelattice import _devices
from typelattice.tree_util import tree_map as _tree_map

__all__ = ["prefetch_to_device", "replicate", "unreplicate"]


def _check_devices(devices: _Sequence[_Any] | None, where: str) -> int:
    if devices is None:
        return _devices.local_device_count()
    listed = list(devices)
    if len(listed) != 1 or listed[0] is not _devices.CPU:
        raise ValueError(
            f"{where}: devices={listed!r} is not available: typelattice has one "
            "device, typelattice.local_devices() == [CpuDevice(id=0)]; pass "
            "devices=None"
        )
    return 1


def replicate(tree: _Any, devices: _Sequence[_Any] | None = None) -> _Any:
    """``tree`` with one copy per local device stacked along a new leading
    axis (of size 1: there is one device), as ``flax.jax_utils.replicate``.

    Args:
      tree: a pytree of arrays, NumPy arrays or Python scalars.
      devices: None, or ``typelattice.local_devices()``.

    Returns:
      The tree of arrays of shape ``(1, *leaf.shape)``, in the leaves' dtypes
      (Python scalars as ``device_put`` makes them).

    Raises:
      ValueError: devices other than the one.

    >>> import typelattice.numpy as tnp
    >>> replicate({'w': tnp.ones(2)})
    {'w': Array([[1., 1.]], dtype=float32)}
    """
    n = _check_devices(devices, "replicate")
    return _tree_map(lambda x: _tnp.stack([_tnp.asarray(x)] * n), tree)


def unreplicate(tree: _Any) -> _Any:
    """The first copy of a replicated tree: entry 0 of every leaf's leading
    axis, as ``flax.jax_utils.unreplicate``.

    Args:
      tree: a pytree of arrays with a leading device axis.

    Returns:
      The tree of ``leaf[0]``.

    >>> import typelattice.numpy as tnp
    >>> unreplicate(replicate({'w': tnp.ones(2)}))
    {'w': Array([1., 1.], dtype=float32)}
    """
    return _tree_map(lambda x: x[0], tree)


def prefetch_to_device(
    iterator: _Iterable[_Any], size: int, devices: _Sequence[_Any] | None = None
) -> _Iterator[_Any]:
    """The items of ``iterator`` as arrays, ``size`` of them read ahead, as
    ``flax.jax_utils.prefetch_to_device``.

    Each item is a pytree whose leaves already have the leading device axis
    (of size 1; ``common_utils.shard`` makes it). Its leaves become arrays.

    Args:
      iterator: the items (NumPy arrays in pytrees).
      size: how many items to read ahead (0 or more).
      devices: None, or ``typelattice.local_devices()``.

    Yields:
      Each item, its leaves arrays.

    Raises:
      ValueError: devices other than the one, a negative ``size``, or a leaf
        whose leading axis is not the number of devices (1).

    >>> import numpy as np
    >>> it = prefetch_to_device(iter([{'x': np.zeros((1, 2))}]), 2)
    >>> next(it)
    {'x': Array([[0., 0.]], dtype=float32)}
    """
    n = _check_devices(devices, "prefetch_to_device")
    if size < 0:
        raise ValueError(f"prefetch_to_device: size must be >= 0, got {size}")

    def put(x: _Any) -> _Any:
        a = _tnp.asarray(x)
        if a.ndim == 0 or a.shape[0] != n:
            raise ValueError(
                f"prefetch_to_device: a leaf of shape {a.shape} has no leading "
                f"device axis of size {n}; shard the batch first "
                "(flax.training.common_utils.shard)"
            )
        return a

    queue: _collections.deque[_Any] = _collections.deque()
    source = iter(iterator)

    def enqueue(k: int) -> None:
        for item in _itertools.islice(source, k):
            queue.append(_tree_map(put, item))

    enqueue(max(size, 1))
    while queue:
        yield queue.popleft()
        enqueue(1)
