"""Inputs outside ArrayLike, DTypeLike and ShapeLike are rejected."""

import typelattice as tl
from typelattice.typing import ArrayLike, DTypeLike, ShapeLike


def takes_array_like(x: ArrayLike) -> None: ...


def takes_dtype_like(d: DTypeLike) -> None: ...


def takes_shape_like(s: ShapeLike) -> None: ...


# Lists and tuples are not arrays (as in JAX): convert with tnp.asarray.
takes_array_like([1, 2])  # E: arg-type, reportArgumentType
takes_array_like((1.0, 2.0))  # E: arg-type, reportArgumentType
takes_array_like("1")  # E: arg-type, reportArgumentType
takes_array_like(None)  # E: arg-type, reportArgumentType

# None is not a dtype, nor are arbitrary classes or values without a dtype.
takes_dtype_like(None)  # E: arg-type, reportArgumentType
takes_dtype_like(list)  # E: arg-type, reportArgumentType
takes_dtype_like(3)  # E: arg-type, reportArgumentType

takes_shape_like(2.0)  # E: arg-type, reportArgumentType
takes_shape_like("23")  # E: arg-type, reportArgumentType
takes_shape_like((2.0, 3.0))  # E: arg-type, reportArgumentType

# The library's own functions use the same annotations.
tl.result_type([1, 2])  # E: call-overload, reportArgumentType
tl.promote_types(1, "int8")  # E: arg-type, reportArgumentType
tl.promote_types("int8", None)  # E: arg-type, reportArgumentType
tl.safe_to_cast([1], "int8")  # E: arg-type, reportArgumentType
tl.issubdtype("int8", None)  # E: arg-type, reportArgumentType
