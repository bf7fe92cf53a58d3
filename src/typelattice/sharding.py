"""``typelattice.sharding``: the names of ``jax.sharding``, on one device.

JAX programs say how arrays are laid out across a mesh of devices: a
:class:`Mesh` names the axes of a grid of devices, a :class:`PartitionSpec`
says which mesh axes split each axis of an array, and a
:class:`NamedSharding` pairs the two. typelattice computes on one device
(``typelattice.devices()``): these objects are built and checked as JAX's,
so that the same programs run, and every array stays whole on that device.

>>> import numpy as np, typelattice as tl
>>> from typelattice.sharding import Mesh, NamedSharding, PartitionSpec
>>> with Mesh(np.array(tl.devices()).reshape(1, 1), ('data', 'model')) as mesh:
...     s = NamedSharding(mesh, PartitionSpec('data', None))
>>> s.is_fully_replicated, s.device_set, mesh.shape
(True, {CpuDevice(id=0)}, {'data': 1, 'model': 1})
"""

from typelattice._sharding import (
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
)

__all__ = [
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
]
