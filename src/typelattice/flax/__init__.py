"""typelattice.flax: Flax's training utilities on typelattice.

Only :mod:`typelattice.flax.jax_utils` here so far.
"""

__all__: list[str] = []
