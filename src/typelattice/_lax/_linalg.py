"""The linear algebra primitives of ``typelattice.lax.linalg``: ``qr`` and
``triangular_solve``.

As ``jax.lax.linalg``: the operands are batches of matrices (the last two
axes), of a floating or complex dtype. The implementations are NumPy's
(``np.linalg``, which computes float32 in float64 and rounds the result,
as it does for every caller). The derivative of ``qr`` is JAX's
(``qr_jvp_rule``), written with ``triangular_solve`` and the contractions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from typelattice import _dtypes
from typelattice._lax import _dot as dot
from typelattice._lax import _elementwise as ew
from typelattice._lax import _structural as st
from typelattice._lax._primitive import (
    Primitive,
    ShapedArray,
    Zero,
    batch_size,
    bdim_at_front,
    defjvp2,
    is_undefined,
    moveaxis,
    to_array,
)

if TYPE_CHECKING:
    from typelattice._basearray import Array
    from typelattice.typing import ArrayLike

__all__ = ["qr", "qr_p", "triangular_solve", "triangular_solve_p"]

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


# qr and triangular_solve take leading batch axes: the batch axis goes first.
@qr_p.def_batch
def _qr_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, Any]:
    (x,), (d,) = args, dims
    assert d is not None
    return qr_p.bind(moveaxis(x, d, 0), **params), (0, 0)


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


def _matmul(a: Any, b: Any) -> Any:
    """``a @ b`` over the last two axes, the others batch axes."""
    nb = len(a.shape) - 2
    batch = tuple(range(nb))
    return dot.dot_general(a, b, (((nb + 1,), (nb,)), (batch, batch)))


def _swap(x: Any) -> Any:
    """The transpose of each matrix."""
    n = len(x.shape)
    return st.transpose(x, (*range(n - 2), n - 1, n - 2))


def _is_complex(x: Any) -> bool:
    return _dtypes.kind_of(x.dtype) == "c"


def _adjoint(x: Any) -> Any:
    """The conjugate transpose of each matrix."""
    return _swap(ew.conj(x) if _is_complex(x) else x)


def _where_band(x: Any, lo: int | None, hi: int | None) -> Any:
    """``x`` where ``lo <= row - column <= hi`` (None: no bound), 0
    elsewhere: a triangle or the diagonal of each matrix."""
    *_, m, n = x.shape
    rows = st.broadcast_in_dim(st.iota("int32", m), (m, n), (0,))
    cols = st.broadcast_in_dim(st.iota("int32", n), (m, n), (1,))
    offset = ew.sub(rows, cols)
    pred: Any = None
    if lo is not None:
        pred = ew.ge(offset, lo)
    if hi is not None:
        below = ew.le(offset, hi)
        pred = below if pred is None else ew.bitwise_and(pred, below)
    nd = len(x.shape)
    pred = st.broadcast_in_dim(pred, tuple(x.shape), (nd - 2, nd - 1))
    return ew.select(pred, x, st.full(tuple(x.shape), 0, x.dtype))


def _qr_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool
) -> tuple[Any, Any]:
    # JAX's qr_jvp_rule: with dx R^-1 = Q (Q^H dx R^-1) + (I - Q Q^H) dx R^-1,
    # the skew-Hermitian part of Q^H dQ comes from the strictly lower part.
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, full_matrices=False)
    *_, m, n = x.shape
    if m < n or (full_matrices and m != n):
        raise NotImplementedError(
            "Unimplemented case of QR decomposition derivative: only for "
            "matrices of at least as many rows as columns, with "
            "full_matrices=False unless they are square"
        )
    if type(dx) is Zero:
        return (q, r), (Zero.of(q), Zero.of(r))
    dx_rinv = triangular_solve(r, dx)  # dx R^-1 (R upper, on the right)
    qt_dx_rinv = _matmul(_adjoint(q), dx_rinv)
    lower = _where_band(qt_dx_rinv, 1, None)
    do = ew.sub(lower, _adjoint(lower))  # skew-Hermitian
    if _is_complex(qt_dx_rinv):
        # (the imaginary part of the diagonal, for complex inputs)
        imag = ew.sub(qt_dx_rinv, ew.convert_element_type(ew.real(qt_dx_rinv), x.dtype))
        do = ew.add(do, _where_band(imag, 0, 0))
    dq = ew.add(_matmul(q, ew.sub(do, qt_dx_rinv)), dx_rinv)
    dr = _matmul(ew.sub(qt_dx_rinv, do), r)
    return (q, r), (dq, dr)


qr_p.def_jvp(_qr_jvp)


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


# -- triangular_solve ------------------------------------------------------------

triangular_solve_p = Primitive("triangular_solve")


@triangular_solve_p.def_batch
def _triangular_solve_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, Any]:
    size = batch_size(args, dims)
    a, b = (bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True))
    return triangular_solve_p.bind(a, b, **params), 0


_SOLVE_PARAMS = ("left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal")


@triangular_solve_p.def_abstract_eval
def _triangular_solve_abstract(
    a: ShapedArray, b: ShapedArray, **params: bool
) -> ShapedArray:
    _check_matrices("triangular_solve", a)
    _check_matrices("triangular_solve", b)
    if a.dtype != b.dtype:
        raise TypeError(
            "triangular_solve requires a and b to have the same dtype, got "
            f"{a.dtype} and {b.dtype}; convert one, e.g. b.astype(a.dtype)"
        )
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(
            "triangular_solve requires the last two dimensions of a to be equal "
            f"in size, got a.shape of {a.shape}."
        )
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError(
            "triangular_solve requires both arguments to have the same number "
            f"of dimensions and equal batch dimensions, got {a.shape} and "
            f"{b.shape}."
        )
    common = b.shape[-2] if params["left_side"] else b.shape[-1]
    if a.shape[-1] != common:
        side = "rows" if params["left_side"] else "columns"
        raise ValueError(
            f"triangular_solve: a of shape {a.shape} needs b with {a.shape[-1]} "
            f"{side} (left_side={params['left_side']}), got b.shape of {b.shape}."
        )
    return b.update(weak_type=a.weak_type and b.weak_type)


def _triangle(a: NDArray, lower: bool, unit_diagonal: bool) -> NDArray:
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n: int = a.shape[-1]
        diagonal = (..., range(n), range(n))
        t[diagonal] = 1
    return t


@triangular_solve_p.def_impl
def _triangular_solve_impl(a: NDArray, b: NDArray, **params: bool) -> NDArray:
    t = _triangle(a, params["lower"], params["unit_diagonal"])
    if params["transpose_a"]:
        t = np.swapaxes(t, -1, -2)
    if params["conjugate_a"]:
        t = np.conj(t)
    if params["left_side"]:  # op(a) @ x = b
        x = np.linalg.solve(t, b)
    else:  # x @ op(a) = b
        x = np.swapaxes(
            np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2
        )
    return np.asarray(x, b.dtype)


def _triangular_solve_jvp_a(ta: Any, ans: Any, a: Any, b: Any, **params: bool) -> Any:
    # op(a) x = b gives op(da) x + op(a) dx = 0: dx = -op(a)^-1 op(da) x
    # (on the right: dx = -x op(da) op(a)^-1), da the tangent's triangle.
    first = 1 if params["unit_diagonal"] else 0  # (off the diagonal only)
    if params["lower"]:
        da = _where_band(ta, first, None)
    else:
        da = _where_band(ta, None, -first)
    if params["transpose_a"]:
        da = _swap(da)
    if params["conjugate_a"] and _is_complex(da):
        da = ew.conj(da)
    product = _matmul(da, ans) if params["left_side"] else _matmul(ans, da)
    return ew.neg(triangular_solve_p.bind(a, product, **params))


def _triangular_solve_jvp_b(tb: Any, ans: Any, a: Any, b: Any, **params: bool) -> Any:
    return triangular_solve_p.bind(a, tb, **params)


defjvp2(triangular_solve_p, _triangular_solve_jvp_a, _triangular_solve_jvp_b)


@triangular_solve_p.def_transpose
def _triangular_solve_transpose(ct: Any, a: Any, b: Any, **params: bool) -> list[Any]:
    # Linear in b: x = M b (or b M) with M = op(a)^-1; the transpose applies
    # M^T, the inverse of op(a)^T.
    if is_undefined(a):
        raise ValueError("triangular_solve is linear in b only, not in a")
    flipped = {**params, "transpose_a": not params["transpose_a"]}
    return [None, triangular_solve_p.bind(a, ct, **flipped)]


def triangular_solve(
    a: ArrayLike,
    b: ArrayLike,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
) -> Array:
    """Solve ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` for
    ``x``, ``a`` triangular (only its triangle is read), as
    ``jax.lax.linalg.triangular_solve``.

    Args:
      a: matrices ``(..., m, m)``, float32, float64, complex64 or
        complex128.
      b: matrices of ``a``'s dtype and batch axes: ``(..., m, n)`` with
        ``left_side``, ``(..., n, m)`` otherwise.
      left_side: ``a`` on the left of ``x``.
      lower: read ``a``'s lower triangle (else its upper one).
      transpose_a: ``op(a)`` is ``a``'s transpose.
      conjugate_a: ``op(a)`` is conjugated.
      unit_diagonal: take ``a``'s diagonal as ones.

    Returns:
      ``x``, of ``b``'s shape and dtype.

    Raises:
      TypeError: dtypes that differ or have no decomposition.
      ValueError: shapes that do not fit.

    >>> import numpy as np
    >>> a = np.float32([[2.0, 1.0], [0.0, 4.0]])
    >>> triangular_solve(a, np.float32([[2.0, 9.0]]))
    Array([[1., 2.]], dtype=float32)
    """
    x = to_array(a, "triangular_solve", 0)
    y = to_array(b, "triangular_solve", 1)
    flags = (left_side, lower, transpose_a, conjugate_a, unit_diagonal)
    params = {k: bool(v) for k, v in zip(_SOLVE_PARAMS, flags, strict=True)}
    return triangular_solve_p.bind(x, y, **params)  # type: ignore[no-any-return]
