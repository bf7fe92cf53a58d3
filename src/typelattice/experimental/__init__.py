"""``typelattice.experimental``, as ``jax.experimental``: helpers whose
JAX counterparts live there (:mod:`typelattice.experimental.mesh_utils`)."""

from typelattice.experimental import mesh_utils as mesh_utils

__all__ = ["mesh_utils"]
