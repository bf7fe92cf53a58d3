"""Moving values onto the device: :func:`device_put` and
:func:`block_until_ready`, as JAX's.

There is one device, the CPU (:mod:`typelattice._devices`), and every array
is computed when it is made, so these functions convert and wait for
nothing more: ``device_put`` turns Python scalars and NumPy values into
arrays with JAX's dtypes and weak flags (as a transformation takes its
arguments), and ``block_until_ready`` returns its argument.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from typelattice import _devices, _sharding
from typelattice._array import (
    ArrayImpl,
    BackendArray,
    from_python_or_numpy,
    place,
    placement,
)
from typelattice._tracing import tree
from typelattice._tracing.tracer import Tracer

__all__ = ["block_until_ready", "device_get", "device_put"]

_T = TypeVar("_T")


def _put(leaf: Any) -> Any:
    if isinstance(leaf, ArrayImpl | Tracer | BackendArray):  # (jit: the identity)
        return leaf
    # Python scalars weak, NumPy values canonical and copied (the caller
    # may write to its array afterwards).
    converted = from_python_or_numpy(leaf, "device_put")
    if converted is None:
        raise TypeError(
            f"device_put: {leaf!r:.60} of type {type(leaf).__name__} is not an "
            "array: give arrays, NumPy arrays or Python scalars (in tuples, "
            "lists, dicts and other pytrees)"
        )
    return converted


def device_put(x: Any, device: Any = None, *, backend: str | None = None) -> Any:
    """``x`` with its leaves as arrays on ``device``, as ``jax.device_put``.

    Args:
      x: an array, a NumPy array or scalar, a Python scalar, or a pytree
        of them.
      device: None, the CPU (``typelattice.devices()[0]`` or ``'cpu'``),
        or a device of another library's backend (``'cuda:1'``, a
        ``torch.device``...): each leaf is moved there (an Array of
        another library within its backend, unless ``backend`` is given).
        Or a sharding (``typelattice.sharding``): checked against each
        leaf's shape, the leaves then on the one device.
      backend: the library to move the leaves to (``'numpy'``,
        ``'torch'``, ``'cupy'``, ``'dask'``), across libraries.

    Returns:
      The tree of arrays: Python scalars weak of the default dtypes
      (``device_put(1.0)`` is a weak float32), NumPy values in their
      canonical dtypes (float64 becomes float32 unless
      ``typelattice.enable_x64``) and copied, arrays and tracers as they
      are.

    Raises:
      TypeError: a leaf that is not an array or a scalar.
      ValueError: ``device`` is not a device of typelattice's (nor of the
        backend given).

    >>> import numpy as np, typelattice as tl
    >>> tl.device_put(1.0)
    Array(1., dtype=float32, weak_type=True)
    >>> tl.device_put({'a': np.arange(3)})
    {'a': Array([0, 1, 2], dtype=int32)}
    """
    if isinstance(device, _sharding.Sharding | _sharding.PartitionSpec):
        _sharding.check_tree(device, x, "device_put")
        device = None
    if backend is None and (device is None or device is _devices.CPU):
        return tree.tree_map(_put, x)
    try:
        name = _devices.device_name(device)
    except TypeError as err:
        raise ValueError(f"device_put: {err}") from None

    def put(leaf: Any) -> Any:
        value = _put(leaf)
        if isinstance(value, Tracer):
            return value
        try:
            where = placement(name, backend, value, "device_put")
        except ValueError as err:
            raise ValueError(
                f"{err} (pass device=None or typelattice.devices()[0] for the "
                "NumPy backend's CPU)"
            ) from None
        return place(value, where)

    return tree.tree_map(put, x)


def block_until_ready(x: _T) -> _T:
    """``x``, once every array in it is computed, as
    ``jax.block_until_ready`` (arrays are computed when they are made: it
    returns at once).

    Args:
      x: any pytree (leaves that are not arrays pass through).

    Returns:
      ``x`` itself.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> tl.block_until_ready({'a': tnp.ones(2)})
    {'a': Array([1., 1.], dtype=float32)}
    """
    return x


def _get(leaf: Any) -> Any:
    if isinstance(leaf, Tracer):
        raise TypeError(
            f"device_get: {leaf!r:.80} is a traced value, whose value is not "
            "known while the function is transformed; call device_get outside "
            "jit, grad and vmap, on the function's results"
        )
    if isinstance(leaf, ArrayImpl):
        # A copy: the caller may write to it, and the array stays immutable.
        return np.array(leaf)
    return leaf


def device_get(x: Any) -> Any:
    """``x`` with its arrays as NumPy arrays on the host, as
    ``jax.device_get``.

    Args:
      x: an array or a pytree of them (other leaves pass through).

    Returns:
      The same tree, each array a new NumPy array (``numpy.ndarray``, or a
      NumPy scalar type's 0-d array) of the array's dtype and values:
      writing to it changes no array.

    Raises:
      TypeError: a traced value (under ``jit``, ``grad`` or ``vmap``).

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> tl.device_get({'a': tnp.arange(3), 'b': 'text'})
    {'a': array([0, 1, 2], dtype=int32), 'b': 'text'}
    """
    return tree.tree_map(_get, x)
