"""typelattice.numpy: the signatures completed for jax.numpy parity (ufunc
methods, one-argument where, take modes, .at[] modes and apply, var/std
with mean=, sort keywords, the Array methods), checked against NumPy at the
promoted dtype. tests/test_numpy_jax.py compares the same calls with JAX."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp


def arr(values: Any, dtype: str) -> tnp.Array:
    return tnp.asarray(np.asarray(values, dtype=dtype))


def check(x: Any, dtype: str, weak: bool, values: Any = None) -> None:
    assert isinstance(x, tnp.Array)
    assert (x.dtype, x.weak_type) == (np.dtype(dtype), weak), repr(x)
    if values is not None:
        np.testing.assert_array_equal(np.asarray(x), np.asarray(values, dtype=dtype))


# -- mean, var, std ---------------------------------------------------------


class TestMoments:
    x = np.array([[1.0, 2, 4], [3, 5, 9]], "float32")

    def test_var_with_mean(self) -> None:
        x = tnp.asarray(self.x)
        m = tnp.mean(x, axis=1, keepdims=True)
        out = tnp.var(x, axis=1, mean=m)
        check(out, "float32", False)
        np.testing.assert_allclose(np.asarray(out), np.var(self.x, axis=1), 1e-6)
        zero = tnp.zeros((2, 1))
        expect = np.mean(self.x**2, axis=1)
        np.testing.assert_allclose(np.asarray(tnp.var(x, axis=1, mean=zero)), expect)
        out = tnp.std(x, mean=tnp.asarray(0.0))
        check(out, "float32", False)
        np.testing.assert_allclose(float(out), np.sqrt(np.mean(self.x**2)), 1e-6)
        check(tnp.var(arr([1, 2, 3], "int8"), mean=2), "float32", False, 2 / 3)
        np.testing.assert_allclose(
            float(tnp.var(arr([1.0, 2.0, 6.0], "float32"), mean=3.0, ddof=1)),
            (4 + 1 + 9) / 2,
        )

    def test_mean_with_the_wrong_shape_is_refused(self) -> None:
        x = tnp.asarray(self.x)
        with pytest.raises(ValueError, match=r"mean= has shape \(2,\).*keepdims=True"):
            tnp.var(x, axis=1, mean=tnp.mean(x, axis=1))
        with pytest.raises(ValueError, match="pass tnp.real"):
            tnp.var(x, mean=1j)

    def test_integer_dtype_computes_in_integers_like_jax(self) -> None:
        # Sum in the dtype (wrapping), divided rounding toward zero.
        check(tnp.mean(arr([1, 2, 4], "int8"), dtype="int32"), "int32", False, 2)
        check(tnp.mean(arr([100, 100, 101], "int8"), dtype="int8"), "int8", False, 15)
        check(tnp.mean(arr([-1, -2], "int32"), dtype="int32"), "int32", False, -1)
        check(
            tnp.mean(arr([1.5, 2.0, 4.5], "float32"), dtype="int32"), "int32", False, 2
        )
        # var: integer arithmetic, then a weak float (nan-able) as JAX.
        check(tnp.var(arr([1, 2, 4], "int8"), dtype="int32"), "float32", True, 1)
        check(
            tnp.var(arr([1, 2], "int8"), dtype="int32", ddof=2), "float32", True, np.nan
        )
        with tl.enable_x64():
            check(tnp.var(arr([1, 2, 4], "int8"), dtype="int16"), "float64", True, 1)

    def test_dtypes_jax_refuses(self) -> None:
        with pytest.raises(ValueError, match="std: dtype=int32 is not supported"):
            tnp.std(arr([1, 2], "int32"), dtype="int32")
        with pytest.raises(TypeError, match="dtype=bool"):
            tnp.var(arr([1, 2], "int32"), dtype=bool)
        with pytest.raises(TypeError, match="dtype=bool"):
            tnp.mean(arr([1, 2], "int32"), dtype=bool)

    def test_complex_input_with_a_real_dtype_is_refused(self) -> None:
        z = arr([1 + 1j, 2 - 1j, 3j], "complex64")
        for fn in (tnp.var, tnp.std):
            with pytest.raises(ValueError, match="give a complex dtype"):
                fn(z, dtype="float16")
        out = tnp.var(z, dtype="complex64")
        check(out, "complex64", False)
        np.testing.assert_allclose(complex(out), np.var(np.asarray(z)), 1e-6)
        check(tnp.var(z), "float32", False)
