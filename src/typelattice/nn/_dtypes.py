"""The FLIP's dtype rules for layers, in one place.

- ``dtype=None``: a layer computes in the promotion (``result_type``) of its
  inputs and parameters, made inexact (promoted with float32) when that is
  an integer type. An explicit ``dtype`` wins, and must be inexact.
- Data safety: a complex operand with an explicit real ``dtype`` raises
  (Flax warns and drops the imaginary part); see docs/semantics.md, "Data
  safety".
- Statistics (normalisation) are computed in ``promote_types(dtype or the
  input's dtype, float32)``: at least float32.

The casts are explicit ``astype`` calls, so the layers run under
``dtype_promotion('strict')`` whenever ``dtype`` is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice.numpy import Array

if TYPE_CHECKING:
    from typelattice.typing import DTypeLike

_FLOAT32: Final = np.dtype("float32")
_INEXACT: Final = ("real floating", "complex floating")
# Inexact dtypes of every mode (x64 or not): the common case of
# compute_dtype, all operands of one of them, needs no promotion.
_INEXACT_DTYPES: Final = frozenset(
    np.dtype(name) for name in ("float16", "float32", "complex64")
)


def canonical(dtype: DTypeLike | None) -> np.dtype[Any] | None:
    """A layer's ``dtype``/``param_dtype`` argument as a NumPy dtype."""
    return None if dtype is None else tl.dtype(dtype)


def is_complex(dtype: np.dtype[Any]) -> bool:
    return bool(tl.isdtype(dtype, "complex floating"))


def compute_dtype(
    *operands: Array | None, dtype: DTypeLike | None, where: str
) -> np.dtype[Any]:
    """The dtype a layer computes in: ``dtype``, or the promotion of the
    operands made inexact. ``None`` operands (an absent bias) are skipped."""
    present = [x for x in operands if x is not None]
    if dtype is None:
        first = present[0].dtype
        if first in _INEXACT_DTYPES and all(x.dtype == first for x in present):
            # (one inexact dtype: the promotion is that dtype, in every mode)
            return first
        found = tl.result_type(*present)
        return found if tl.isdtype(found, _INEXACT) else _at_least_float32(found)
    wanted = tl.dtype(dtype)
    if not tl.isdtype(wanted, _INEXACT):
        raise TypeError(
            f"{where}: dtype={wanted.name} is not a floating or complex type; "
            "a layer computes in an inexact dtype. Pass dtype='float32' (or "
            "None to follow the inputs)"
        )
    if not is_complex(wanted):
        for x in present:
            if is_complex(x.dtype):
                raise TypeError(
                    f"{where}: a {x.dtype.name} operand cannot be computed in "
                    f"dtype={wanted.name} without dropping its imaginary part. "
                    "Pass a complex dtype (or None), or take "
                    "typelattice.numpy.real(x) first to say so"
                )
    return wanted


def promote(*operands: Array | None, dtype: DTypeLike | None, where: str) -> list[Any]:
    """The operands cast to the layer's compute dtype (see compute_dtype);
    None stays None (typed Any so that callers unpack into their own
    Array or Optional names)."""
    target = compute_dtype(*operands, dtype=dtype, where=where)
    return [None if x is None else cast(x, target) for x in operands]


def cast(x: Array, dtype: np.dtype[Any]) -> Array:
    return x if x.dtype == dtype else x.astype(dtype)


def stats_dtype(x: Array, dtype: DTypeLike | None) -> np.dtype[Any]:
    """Where normalisation statistics are computed: at least float32."""
    return _at_least_float32(x.dtype if dtype is None else tl.dtype(dtype))


def _at_least_float32(dtype: np.dtype[Any]) -> np.dtype[Any]:
    # The layers' own rule, not an implicit promotion of the user's values:
    # it holds in every mode (strict included).
    with tl.dtype_promotion("standard"):
        return tl.promote_types(dtype, _FLOAT32)


def as_input(x: Any) -> Array:
    """A layer's input as an Array (NumPy arrays and lists included)."""
    return x if isinstance(x, Array) else tnp.asarray(x)
