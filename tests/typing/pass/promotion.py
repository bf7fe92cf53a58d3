"""The promotion API accepts every documented input form and returns dtypes."""

from typing import assert_type

import ml_dtypes
import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice.typing import DType

x = tnp.asarray([1, 2], dtype="int8")
a = np.zeros(3, np.uint8)

# result_type: dtype-likes, values, arrays, None; the flag changes the result.
assert_type(tl.result_type("int32", "float32"), DType)
assert_type(tl.result_type(np.dtype("int8"), np.uint8, float), DType)
assert_type(tl.result_type(x, a, 2, 1.5, 1j, True), DType)
assert_type(tl.result_type(np.float16(1), ml_dtypes.bfloat16(1)), DType)
assert_type(tl.result_type(ml_dtypes.float8_e4m3fn, tnp.int8, None), DType)
assert_type(tl.result_type(x, 2.0, return_weak_type_flag=True), tuple[DType, bool])
flag = bool(len(a))
assert_type(tl.result_type(x, return_weak_type_flag=flag), DType | tuple[DType, bool])
assert_type(tl.lattice_result_type("int16", 1), tuple[DType, bool])

# promote_types and dtype: dtype-likes in, np.dtype out.
assert_type(tl.promote_types("int8", np.uint8), DType)
assert_type(tl.promote_types(int, tnp.float32), DType)
assert_type(tl.dtype("bf"), DType)
assert_type(tl.dtype(3.0, canonicalize=False), DType)
assert_type(tl.canonicalize_dtype(np.float64), DType)
assert_type(tl.code_to_dtype("f*"), DType | type)

# Classification and limits.
assert_type(tl.issubdtype("bfloat16", np.floating), bool)
assert_type(tl.isdtype(x.dtype, ("integral", "bool")), bool)
assert_type(tl.dtype_code(np.int8, weak=True), str)
assert_type(tl.safe_to_cast(1, "uint8"), bool)
assert_type(tl.is_weakly_typed(x), bool)
assert_type(tl.finfo("bfloat16").bits, int)
assert_type(tl.iinfo(tnp.int8), ml_dtypes.iinfo)

# Configuration scopes keep the decorated function's type.
with tl.enable_x64(), tl.dtype_promotion("strict"):
    assert_type(tl.result_type(1.0), DType)


@tl.rank_promotion("raise")
def double(v: int) -> int:
    return 2 * v


assert_type(double(2), int)
assert_type(tl.config.enable_x64, bool)
