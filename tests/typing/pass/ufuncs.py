"""ufunc methods and the signatures completed for jax.numpy parity."""

from typing import assert_type

import typelattice.numpy as tnp

x = tnp.asarray([1, 2, 3], dtype="int8")
i = tnp.asarray([0, 1])

assert_type(tnp.add.reduce(x), tnp.Array)
assert_type(tnp.add.reduce(x, axis=None, keepdims=True, initial=0), tnp.Array)
assert_type(tnp.subtract.accumulate(x, dtype="int32"), tnp.Array)
assert_type(tnp.multiply.outer(x, 2), tnp.Array)
assert_type(tnp.maximum.at(x, i, 1, inplace=False), tnp.Array)
assert_type(tnp.add.reduceat(x, i), tnp.Array)
assert_type(tnp.add(x, 1), tnp.Array)
assert_type(tnp.add.identity, bool | int | float | None)
assert_type(tnp.add.nin, int)
u: tnp.ufunc = tnp.logaddexp
assert_type(u.__name__, str)

assert_type(tnp.where(x > 1, size=3, fill_value=-1), tuple[tnp.Array, ...])
assert_type(tnp.take(x, i, mode="clip"), tnp.Array)
assert_type(x.at[i].apply(tnp.negative, mode="drop"), tnp.Array)
assert_type(x.at[i].get(mode="fill", fill_value=0), tnp.Array)
assert_type(tnp.var(x, mean=tnp.mean(x, keepdims=True)), tnp.Array)
assert_type(tnp.argsort(x, descending=True, dtype="int16"), tnp.Array)
assert_type(x.ptp(), tnp.Array)
assert_type(x.searchsorted(2), tnp.Array)
