"""``typelattice.lax.linalg``: the linear algebra primitives of
``jax.lax.linalg`` (``qr``, ``triangular_solve``).

>>> import numpy as np
>>> from typelattice.lax import linalg
>>> q, r = linalg.qr(np.eye(3, dtype=np.float32))
>>> q.shape, r.dtype
((3, 3), dtype('float32'))
"""

from typelattice._lax._linalg import qr, triangular_solve

__all__ = ["qr", "triangular_solve"]
