"""``typelattice.experimental.mesh_utils``: device meshes, as
``jax.experimental.mesh_utils``.

>>> from typelattice.experimental import mesh_utils
>>> mesh_utils.create_device_mesh((1, 1))
array([[CpuDevice(id=0)]], dtype=object)
"""

from typelattice.experimental._mesh_utils import create_device_mesh

__all__ = ["create_device_mesh"]
