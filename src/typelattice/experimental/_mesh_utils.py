"""Device meshes, as ``jax.experimental.mesh_utils`` (public in
:mod:`typelattice.experimental.mesh_utils`).

>>> from typelattice.experimental import mesh_utils
>>> mesh_utils.create_device_mesh((1, 1))
array([[CpuDevice(id=0)]], dtype=object)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from typelattice import _devices

__all__ = ["create_device_mesh"]


def create_device_mesh(
    mesh_shape: Sequence[int],
    devices: Sequence[_devices.Device] | None = None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> np.ndarray[Any, np.dtype[Any]]:
    """The devices arranged in an array of ``mesh_shape``, to build a
    :class:`typelattice.sharding.Mesh` from.

    Args:
      mesh_shape: the size of each mesh axis; their product must be the
        number of devices.
      devices: the devices (default: ``typelattice.devices()``, one).
      contiguous_submeshes: accepted for JAX's signature (one device: no
        physical layout to follow).
      allow_split_physical_axes: accepted for JAX's signature.

    Returns:
      An object array of devices of shape ``mesh_shape``.

    Raises:
      TypeError: a size is not an integer, or a device is not a
        typelattice device.
      ValueError: the sizes' product is not the number of devices.

    >>> create_device_mesh([2])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: create_device_mesh: the mesh shape (2,) holds 2 devices, but ...
    """
    del contiguous_submeshes, allow_split_physical_axes
    try:
        shape = tuple(operator.index(n) for n in mesh_shape)
    except TypeError:
        raise TypeError(
            f"create_device_mesh: mesh_shape must be a sequence of integers, "
            f"got {mesh_shape!r:.60}"
        ) from None
    found = _devices.devices() if devices is None else list(devices)
    for d in found:
        if not isinstance(d, _devices.Device):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                f"create_device_mesh: {d!r:.60} is not a device; pass "
                "typelattice.devices()"
            )
    wanted = int(np.prod(shape, dtype=np.int64))
    if wanted != len(found) or any(n < 0 for n in shape):
        listed = ", ".join(map(repr, found))
        noun = "device" if len(found) == 1 else "devices"
        raise ValueError(
            f"create_device_mesh: the mesh shape {shape} holds {wanted} devices, "
            f"but there {'is' if len(found) == 1 else 'are'} {len(found)} {noun} "
            f"({listed}); give axis sizes whose product is {len(found)}"
        )
    grid = np.empty(len(found), dtype=object)
    grid[:] = found
    return grid.reshape(shape)
