"""``linear_transpose``: the transpose of a linear function, as JAX's."""

from __future__ import annotations

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp


def test_transpose_of_a_matrix_product_is_the_transposed_product() -> None:
    a = tnp.asarray(np.arange(6, dtype=np.float32).reshape(3, 2))
    f_t = tl.linear_transpose(lambda v: a @ v, tnp.zeros(2, dtype="float32"))
    ct = tnp.asarray([1.0, -2.0, 0.5], dtype="float32")
    (got,) = f_t(ct)
    np.testing.assert_allclose(np.asarray(got), np.asarray(a).T @ np.asarray(ct))
    assert (got.dtype, got.weak_type) == (np.dtype("float32"), False)
    (jitted,) = tl.jit(f_t)(ct)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(got))


def test_pytrees_several_arguments_and_shape_dtype_structs() -> None:
    def f(d: dict[str, tl.Array], y: tl.Array) -> tuple[tl.Array, tl.Array]:
        return d["a"] * 3.0 + y, -d["a"]

    f_t = tl.linear_transpose(
        f, {"a": tl.ShapeDtypeStruct((2,), "float32")}, tnp.zeros(2, "float32")
    )
    d_ct, y_ct = f_t((tnp.ones(2, "float32"), tnp.full(2, 2.0, "float32")))
    np.testing.assert_array_equal(np.asarray(d_ct["a"]), [1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(y_ct), [1.0, 1.0])
    # An output that does not depend on the arguments: zero cotangents.
    (zero,) = tl.linear_transpose(lambda x: tnp.zeros(2), tnp.zeros(2))(tnp.ones(2))
    np.testing.assert_array_equal(np.asarray(zero), [0.0, 0.0])


def test_what_is_not_linear_is_refused() -> None:
    with pytest.raises(TypeError, match="float or complex"):
        tl.linear_transpose(lambda x: x, tnp.zeros(2, "int32"))
    with pytest.raises(ValueError, match="not in both"):
        tl.linear_transpose(lambda x: x * x, tnp.zeros(2))(tnp.ones(2))
    with pytest.raises(NotImplementedError, match="'sin'"):
        tl.linear_transpose(tnp.sin, tnp.zeros(2))(tnp.ones(2))
    with pytest.raises(TypeError, match="structure"):
        tl.linear_transpose(lambda x: x, tnp.zeros(2))((tnp.ones(2),))
