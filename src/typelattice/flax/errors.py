"""``typelattice.flax.errors``: the errors of Flax's ``flax.errors`` that
typelattice raises, under their Flax names.

>>> from typelattice.flax import errors
>>> issubclass(errors.InvalidCheckpointError, ValueError)
True
"""

from typelattice.flax._checkpoints import InvalidCheckpointError
from typelattice.nn._module import ScopeParamShapeError

__all__ = ["InvalidCheckpointError", "ScopeParamShapeError"]
