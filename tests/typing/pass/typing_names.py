"""typelattice.typing: what each annotation accepts, and how values narrow."""

from collections.abc import Sequence
from typing import assert_type

import ml_dtypes
import numpy as np

import typelattice.numpy as tnp
from typelattice.typing import (
    Array,
    ArrayLike,
    ArrayLikeTypes,
    DType,
    DTypeLike,
    Shape,
    ShapeLike,
    SupportsDType,
    is_array_like,
    is_dtype_like,
    is_shape_like,
)


def takes_array_like(x: ArrayLike) -> None: ...


def takes_dtype_like(d: DTypeLike) -> None: ...


def takes_shape_like(s: ShapeLike) -> None: ...


def takes_supports_dtype(x: SupportsDType) -> DType:
    return x.dtype


# ArrayLike: arrays, NumPy and ml_dtypes scalars, Python scalars.
takes_array_like(tnp.zeros(2))
takes_array_like(np.zeros(2, np.int8))
takes_array_like(np.float32(1))
takes_array_like(np.bool_(True))
takes_array_like(ml_dtypes.bfloat16(1))
takes_array_like(True)
takes_array_like(1)
takes_array_like(1.5)
takes_array_like(1j)

# DTypeLike: names, dtypes, scalar types, Python types, objects with a dtype.
takes_dtype_like("int8")
takes_dtype_like(np.dtype("float32"))
takes_dtype_like(np.int8)
takes_dtype_like(ml_dtypes.bfloat16)
takes_dtype_like(bool)
takes_dtype_like(int)
takes_dtype_like(float)
takes_dtype_like(complex)
takes_dtype_like(tnp.int8)
takes_dtype_like(np.zeros(2))
takes_dtype_like(tnp.zeros(2))

# SupportsDType: anything with a .dtype.
assert_type(takes_supports_dtype(tnp.float32), DType)
assert_type(takes_supports_dtype(np.zeros(2)), DType)
assert_type(takes_supports_dtype(tnp.zeros(2)), DType)

# ShapeLike: an int or a sequence of ints.
takes_shape_like(3)
takes_shape_like((2, 3))
takes_shape_like([2, 3])
takes_shape_like(range(3))
shape: Shape = tnp.zeros((2, 3)).shape
takes_shape_like(shape)


# Run-time checks narrow the static type.
def check_array_like(v: object) -> None:
    if is_array_like(v):
        assert_type(v, ArrayLike)
        takes_array_like(v)


def check_dtype_like(v: object) -> None:
    if is_dtype_like(v):
        assert_type(v, DTypeLike)
        takes_dtype_like(v)


def check_shape_like(v: object) -> None:
    if is_shape_like(v):
        assert_type(v, ShapeLike)
        if not isinstance(v, int):
            assert_type(v, Sequence[int])


def check_classes(v: object) -> None:
    if isinstance(v, Array):
        assert_type(v, tnp.Array)
    elif isinstance(v, SupportsDType):
        assert_type(takes_supports_dtype(v), DType)


def check_tuple(v: object) -> bool:
    # The tuple form is for run-time checks; it does not narrow statically.
    return isinstance(v, ArrayLikeTypes)
