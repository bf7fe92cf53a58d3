"""Arrays: operators, properties and the namespace's functions give Arrays."""

from typing import assert_type

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice.typing import DType, Shape

x = tnp.asarray([1, 2, 3], dtype="int8")
assert_type(x, tnp.Array)

# typelattice.Array is the namespace's base class, in annotations too.
y: tl.Array = x
assert_type(y, tnp.Array)

# Operators, both orders, with arrays, Python scalars and NumPy values.
assert_type(x + 1, tnp.Array)
assert_type(1 + x, tnp.Array)
assert_type(x * x, tnp.Array)
assert_type(x - np.int8(1), tnp.Array)
assert_type(2.0 / x, tnp.Array)
assert_type(x // 2, tnp.Array)
assert_type(x % 2, tnp.Array)
assert_type(x**2, tnp.Array)
assert_type(x @ x, tnp.Array)
assert_type(x & 1, tnp.Array)
assert_type(x << 1, tnp.Array)
assert_type(-x, tnp.Array)
assert_type(abs(x), tnp.Array)
assert_type(~x, tnp.Array)
assert_type(x == 1, tnp.Array)
assert_type(x < 2, tnp.Array)
assert_type(divmod(x, 2), tuple[tnp.Array, tnp.Array])
assert_type(x[0], tnp.Array)
assert_type(x[1:], tnp.Array)

# Properties: precise types.
assert_type(x.shape, Shape)
assert_type(x.shape, tuple[int, ...])
assert_type(x.dtype, DType)
assert_type(x.ndim, int)
assert_type(x.size, int)
assert_type(x.weak_type, bool)
assert_type(x.T, tnp.Array)
assert_type(x.real, tnp.Array)

# Methods.
assert_type(x.astype(tnp.float32), tnp.Array)
assert_type(x.astype("bfloat16"), tnp.Array)
assert_type(x.reshape(3, 1), tnp.Array)
assert_type(x.sum(), tnp.Array)
assert_type(x.mean(axis=0), tnp.Array)
assert_type(x.at[0].set(5), tnp.Array)
assert_type(x.item(), bool | int | float | complex)
assert_type(float(x[0]), float)
assert_type(int(x[0]), int)
assert_type(bool(x[0] > 0), bool)
for row in x:
    assert_type(row, tnp.Array)

# The namespace's functions.
assert_type(tnp.asarray(1.5), tnp.Array)
assert_type(tnp.zeros(3), tnp.Array)
assert_type(tnp.ones((2, 3), dtype=tnp.bfloat16), tnp.Array)
assert_type(tnp.arange(4), tnp.Array)
assert_type(tnp.sum(x), tnp.Array)
assert_type(tnp.int8(3), tnp.Array)
assert_type(tnp.int8.dtype, DType)
# The elementwise functions are annotated with the concrete class; an Array
# is what callers may rely on.
z: tnp.Array = tnp.add(x, 1)
z = tnp.sin(x)
z = tnp.where(x > 1, x, 0)
z = tnp.matmul(x, x)


# isinstance with the base class narrows.
def check(v: object) -> None:
    if isinstance(v, tl.Array):
        assert_type(v, tnp.Array)
        assert_type(v + 1, tnp.Array)
