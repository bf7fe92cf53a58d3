"""The linear algebra primitives of ``typelattice.lax.linalg``: ``qr``.

As ``jax.lax.linalg``: the operands are batches of matrices (the last two
axes), of a floating or complex dtype. The implementations are NumPy's
(``np.linalg``, which computes float32 in float64 and rounds the result,
as it does for every caller).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from typelattice import _dtypes
from typelattice._lax._primitive import (
    Primitive,
    ShapedArray,
    defjvp_unsupported,
    to_array,
)

if TYPE_CHECKING:
    from typelattice._basearray import Array
    from typelattice.typing import ArrayLike

__all__ = ["qr", "qr_p"]

NDArray = np.ndarray[Any, Any]

# float16 and bfloat16 have no LAPACK routines (NumPy refuses them too).
_LINALG_DTYPES = frozenset(
    np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)
)


def _check_matrices(name: str, x: ShapedArray) -> None:
    if _dtypes.kind_of(x.dtype) not in "fc":
        raise TypeError(
            f"{name} does not accept dtype {x.dtype}. Accepted dtypes are "
            f"subtypes of floating, complexfloating; convert it first, e.g. "
            f"x.astype('float32')"
        )
    if x.dtype not in _LINALG_DTYPES:
        raise TypeError(
            f"{name} does not accept dtype {x.dtype}: it computes in float32, "
            "float64, complex64 or complex128; convert it first, e.g. "
            "x.astype('float32')"
        )
    if x.ndim < 2:
        raise ValueError(
            f"Argument to {name} must have ndims >= 2, got shape {x.shape}; "
            "give a matrix (or a batch of them, in the last two axes)"
        )


qr_p = Primitive("qr", multiple_results=True)


@qr_p.def_abstract_eval
def _qr_abstract(x: ShapedArray, *, full_matrices: bool) -> tuple[ShapedArray, ...]:
    _check_matrices("qr", x)
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    q = x.update(shape=(*batch, m, k))
    r = x.update(shape=(*batch, k, n))
    return q, r


@qr_p.def_impl
def _qr_impl(x: NDArray, *, full_matrices: bool) -> tuple[NDArray, NDArray]:
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return q, r


defjvp_unsupported(
    qr_p,
    "the derivative of a QR decomposition is not available; compute the "
    "decomposition outside the differentiated function (its result is then "
    "a constant there), or wrap it in stop_gradient",
)


def qr(x: ArrayLike, *, full_matrices: bool = True) -> tuple[Array, Array]:
    """The QR decomposition of a matrix (or a batch of them, in the last two
    axes): ``x = q @ r``, ``q`` with orthonormal columns, ``r`` upper
    triangular.

    Args:
      x: an array of shape ``(..., m, n)``, float32, float64, complex64 or
        complex128.
      full_matrices: ``q`` of shape ``(..., m, m)`` and ``r`` of
        ``(..., m, n)`` (NumPy's mode ``"complete"``); otherwise
        ``(..., m, k)`` and ``(..., k, n)`` with ``k = min(m, n)``
        (``"reduced"``).

    Returns:
      ``(q, r)``, of ``x``'s dtype.

    Raises:
      TypeError: an integer, bool, float16 or bfloat16 operand.
      ValueError: an operand of fewer than two dimensions.

    >>> import numpy as np
    >>> q, r = qr(np.float32([[3.0, 1.0], [4.0, 2.0]]))
    >>> product = np.asarray(q) @ np.asarray(r)
    >>> bool(np.allclose(product, [[3, 1], [4, 2]], atol=1e-6)), r.dtype
    (True, dtype('float32'))
    >>> [a.shape for a in qr(np.zeros((5, 2)), full_matrices=False)]
    [(5, 2), (2, 2)]
    """
    operand = to_array(x, "qr", 0)
    q, r = qr_p.bind(operand, full_matrices=bool(full_matrices))
    return q, r
