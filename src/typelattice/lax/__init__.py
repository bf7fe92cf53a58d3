"""``typelattice.lax``: the primitives of ``jax.lax``, with explicit dtypes.

No implicit promotion: the operands of a primitive that must agree have one
dtype, or the call raises TypeError naming the dtypes, as ``jax.lax`` does
(``typelattice.numpy`` is the promoting layer above). A Python scalar is
weak and takes the dtype of the arrays it meets, when that dtype holds its
kind (an int in an integer or floating type, a float in a floating type),
and its value must fit (``OverflowError`` otherwise). Results are
``typelattice.numpy`` arrays, weak only when all the operands that decide
the result are (see docs/lax.md).

>>> import numpy as np
>>> from typelattice import lax
>>> lax.add(np.int8([1, 2]), 3)
Array([4, 5], dtype=int8)
>>> lax.add(np.int8([1, 2]), np.int16([3, 4]))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
TypeError: lax.add requires arguments to have the same dtypes, got int8, int16. ...
>>> lax.div(np.int32([-7]), 2)
Array([-3], dtype=int32)
"""

# The arrays lax returns have the operators and methods that the array
# namespace sets as it loads: it loads first.
from typelattice import _lax
from typelattice import numpy as _namespace
from typelattice._lax import *  # noqa: F403
from typelattice._sharding import with_sharding_constraint as with_sharding_constraint
from typelattice._tracing.ad import stop_gradient as stop_gradient
from typelattice.lax import linalg as linalg

__all__: list[str] = []
__all__ += _lax.__all__
__all__ += ["stop_gradient"]  # (typelattice.stop_gradient, as jax.lax's)
__all__ += ["with_sharding_constraint"]

del _lax, _namespace  # (linalg stays: the submodule typelattice.lax.linalg)
