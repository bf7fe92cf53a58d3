"""``typelattice.experimental``, as ``jax.experimental``: the helpers whose
JAX counterparts live there, in submodules
(:mod:`typelattice.experimental.mesh_utils`)."""

from typelattice.experimental import mesh_utils as mesh_utils

__all__: list[str] = []  # (the submodules stay out, as typelattice.numpy does)
