"""``typelattice.flax.training.dynamic_scale``: as Flax's.

>>> from typelattice.flax.training.dynamic_scale import DynamicScale
>>> DynamicScale().scale
65536.0
"""

from typelattice.flax._dynamic_scale import DynamicScale, DynamicScaleResult

__all__ = ["DynamicScale", "DynamicScaleResult"]
