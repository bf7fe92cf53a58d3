"""typelattice.numpy: the signatures completed for jax.numpy parity (ufunc
methods, one-argument where, take modes, .at[] modes and apply, var/std
with mean=, sort keywords, the Array methods), checked against NumPy at the
promoted dtype. tests/test_numpy_jax.py compares the same calls with JAX."""

from __future__ import annotations

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import arr, check

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


# -- ufunc methods ----------------------------------------------------------

UFUNCS = [
    "add", "multiply", "subtract", "maximum", "minimum", "logaddexp",
    "logaddexp2", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor",
]  # fmt: skip


class TestUfuncMethods:
    def test_attributes(self) -> None:
        identities = {"add": 0, "multiply": 1, "bitwise_and": -1, "logical_and": True}
        for name in UFUNCS:
            u = getattr(tnp, name)
            assert isinstance(u, tnp.ufunc)
            assert (u.nin, u.nout, u.nargs, u.__name__) == (2, 1, 2, name)
            if name in identities:
                assert u.identity == identities[name]
        assert tnp.maximum.identity is None
        assert tnp.logaddexp.identity == -np.inf
        assert not isinstance(tnp.divide, tnp.ufunc)
        # The function itself still computes as before, as does the operator.
        x = arr([1, 2], "int8")
        check(tnp.add(x, 1), "int8", False, [2, 3])
        check(x + 1, "int8", False, [2, 3])

    def test_reduce_dtypes_follow_jax(self) -> None:
        i8 = arr([100, 100, 3], "int8")
        # add/multiply widen as sum/prod; the others keep the dtype.
        check(tnp.add.reduce(i8), "int32", False, 203)
        check(tnp.multiply.reduce(i8), "int32", False, 30000)
        check(tnp.add.reduce(arr([200, 100], "uint8")), "uint32", False, 300)
        check(tnp.maximum.reduce(i8), "int8", False, 100)
        check(
            tnp.subtract.reduce(i8), "int8", False, np.subtract.reduce(np.asarray(i8))
        )
        check(tnp.bitwise_or.reduce(i8), "int8", False, 103)
        check(tnp.logical_xor.reduce(i8), "bool", False, True)
        x = np.array([0.5, 1.0, 2.0], "float32")
        out = tnp.logaddexp.reduce(arr([0, 1, 2], "int32"))
        check(out, "float32", False)
        np.testing.assert_allclose(float(out), np.logaddexp.reduce([0.0, 1, 2]), 1e-6)
        out = tnp.logaddexp2.reduce(tnp.asarray(x))
        np.testing.assert_allclose(float(out), np.logaddexp2.reduce(x), 1e-6)
        z = np.array([1 + 1j, 2 + 0j, 0.5j], "complex64")
        out = tnp.logaddexp.reduce(tnp.asarray(z))
        check(out, "complex64", False)
        np.testing.assert_allclose(
            complex(out), np.log(np.exp(z.astype(complex)).sum()), 1e-5
        )
        # Weak input, strong result.
        check(tnp.subtract.reduce(tnp.full(3, 2.0)), "float32", False, -2.0)

    def test_reduce_keywords(self) -> None:
        x = arr([[1, 2, 3], [4, 5, 6]], "int16")
        check(tnp.subtract.reduce(x, axis=1), "int16", False, [-4, -7])
        check(tnp.subtract.reduce(x, axis=None), "int16", False, 1 - 2 - 3 - 4 - 5 - 6)
        check(tnp.bitwise_xor.reduce(x, axis=(0, 1)), "int16", False, 7)
        check(tnp.add.reduce(x, keepdims=True), "int32", False, [[5, 7, 9]])
        check(tnp.subtract.reduce(x, axis=0, initial=10), "int16", False, [5, 3, 1])
        mask = tnp.asarray([True, False, True])
        i8 = arr([100, 100, 3], "int8")
        check(tnp.add.reduce(i8, where=mask), "int32", False, 103)
        check(tnp.subtract.reduce(i8, where=mask, initial=0), "int8", False, -103)
        check(tnp.add.reduce(i8, dtype="float32"), "float32", False, 203)
        check(tnp.subtract.reduce(i8, dtype="int32"), "int32", False, -3)
        check(tnp.maximum.reduce(i8, dtype="int16"), "int16", False, 100)
        check(tnp.bitwise_and.reduce(tnp.zeros(0, "uint8")), "uint8", False, 255)
        check(tnp.logaddexp.reduce(tnp.zeros(0)), "float32", False, -np.inf)

    def test_reduce_errors(self) -> None:
        i8 = arr([100, 100, 3], "int8")
        with pytest.raises(ValueError, match="needs initial="):
            tnp.subtract.reduce(i8, where=tnp.asarray([True, False, True]))
        with pytest.raises(ValueError, match="initial"):
            tnp.maximum.reduce(i8, where=tnp.asarray([True, False, True]))
        with pytest.raises(ValueError, match="no identity.*initial"):
            tnp.subtract.reduce(tnp.zeros(0))
        with pytest.raises(ValueError, match="0-d array; pass axis=None"):
            tnp.add.reduce(3.0)
        with pytest.raises(OverflowError, match="1000 does not fit in int8"):
            tnp.subtract.reduce(i8, initial=1000)
        with pytest.raises(TypeError, match="cannot start from float32 values"):
            tnp.subtract.reduce(i8, initial=1.5)
        with pytest.raises(TypeError, match="out argument"):
            tnp.add.reduce(i8, out=i8)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="not reorderable"):
            tnp.subtract.reduce(tnp.ones((2, 2)), axis=(0, 1))

    def test_accumulate(self) -> None:
        i8 = arr([100, 100, 3], "int8")
        check(tnp.add.accumulate(i8), "int8", False, [100, -56, -53])  # wraps, as JAX
        check(tnp.add.accumulate(arr([True, True], "bool")), "int32", False, [1, 2])
        check(
            tnp.subtract.accumulate(arr([10, 2, 3], "int32")),
            "int32",
            False,
            [10, 8, 5],
        )
        check(
            tnp.maximum.accumulate(arr([1, 3, 2], "int32")), "int32", False, [1, 3, 3]
        )
        check(tnp.subtract.accumulate(i8, dtype="int32"), "int32", False, [100, 0, -3])
        ones = tnp.ones((2, 3), "int8")
        check(tnp.add.accumulate(ones, axis=1), "int8", False, [[1, 2, 3]] * 2)
        check(tnp.add.accumulate(ones, axis=None), "int8", False, [1, 2, 3, 4, 5, 6])
        check(tnp.maximum.accumulate(tnp.asarray(3.0)), "float32", False, [3.0])
        z = np.array([1 + 1j, 2 + 0j, 0.5j], "complex64")
        out = np.asarray(tnp.logaddexp.accumulate(tnp.asarray(z)))
        expect = np.log(np.cumsum(np.exp(z.astype(complex))))
        np.testing.assert_allclose(out, expect, 1e-5)

    def test_outer(self) -> None:
        i8 = arr([1, 2, 3], "int8")
        check(tnp.add.outer(i8, 2), "int8", False, [3, 4, 5])
        check(tnp.add.outer(2, 3.0), "float32", True, 5.0)
        out = tnp.subtract.outer(i8, arr([[1, 2]], "int8"))
        check(out, "int8", False, np.subtract.outer([1, 2, 3], [[1, 2]]))
        assert out.shape == (3, 1, 2)
        with pytest.raises(OverflowError):
            tnp.add.outer(i8, 1000)

    def test_at(self) -> None:
        i8 = arr([100, 100, 3], "int8")
        idx = tnp.asarray([0, 0])
        check(tnp.add.at(i8, idx, 1, inplace=False), "int8", False, [102, 100, 3])
        check(tnp.subtract.at(i8, idx, 1, inplace=False), "int8", False, [98, 100, 3])
        check(tnp.maximum.at(i8, 0, 120, inplace=False), "int8", False, [120, 100, 3])
        check(
            tnp.bitwise_xor.at(tnp.zeros(4, "int8"), idx, 1, inplace=False),
            "int8", False, [0, 0, 0, 0],
        )  # fmt: skip
        out = tnp.logaddexp.at(tnp.zeros(2), idx, 0.0, inplace=False)
        check(out, "float32", False)
        np.testing.assert_allclose(np.asarray(out), [np.log(3), 0], 1e-6)
        w = tnp.full(3, 2.0)
        check(tnp.add.at(w, 0, 1, inplace=False), "float32", True, [3, 2, 2])
        check(tnp.maximum.at(w, 0, 1, inplace=False), "float32", False, [2, 2, 2])
        check(tnp.logical_xor.at(w, 0, 1, inplace=False), "bool", False, [0, 1, 1])
        with pytest.raises(NotImplementedError, match="inplace=False"):
            tnp.add.at(i8, 0, 1)
        with pytest.raises(TypeError, match="give the values"):
            tnp.add.at(i8, 0, inplace=False)
        with pytest.raises(TypeError, match="cannot store float32 values in a int8"):
            tnp.add.at(i8, 0, 1.5, inplace=False)
        with pytest.raises(IndexError):
            tnp.add.at(i8, 5, 1, inplace=False)

    def test_reduceat(self) -> None:
        x = tnp.arange(8)
        idx = tnp.asarray([0, 4, 1, 5])
        check(tnp.add.reduceat(x, idx), "int32", False, [6, 4, 10, 18])
        check(
            tnp.maximum.reduceat(tnp.arange(8.0), tnp.asarray([0, 4, 6, 5])),
            "float32", False, [3, 5, 6, 7],
        )  # fmt: skip
        i8 = arr([100, 100, 3], "int8")
        check(tnp.add.reduceat(i8, tnp.asarray([0, 2])), "int8", False, [-56, 3])
        check(
            tnp.add.reduceat(i8, tnp.asarray([0, 2]), dtype="int32"),
            "int32",
            False,
            [200, 3],
        )
        check(
            tnp.add.reduceat(tnp.full(3, 2.0), tnp.asarray([0, 1])),
            "float32",
            True,
            [2, 4],
        )
        out = tnp.add.reduceat(tnp.ones((3, 4)), tnp.asarray([0, 2]), axis=1)
        check(out, "float32", False, np.full((3, 2), 2.0))
        with pytest.raises(IndexError, match="index 9 is out of bounds"):
            tnp.add.reduceat(x, tnp.asarray([0, 9]))
        with pytest.raises(IndexError, match="index -3"):
            tnp.add.reduceat(x, tnp.asarray([-3, 7]))
        with pytest.raises(ValueError, match="one-dimensional"):
            tnp.add.reduceat(x, tnp.asarray([[0, 2]]))
        with pytest.raises(TypeError, match="pass dtype='float32'"):
            tnp.logaddexp.reduceat(x, tnp.asarray([0, 2]))

    def test_under_tracing(self) -> None:
        i8 = arr([100, 100, 3], "int8")
        f = tl.jit(lambda x: tnp.add.reduce(x) + tnp.subtract.accumulate(x))
        check(f(i8), "int32", False, [303, 203, 200])
        check(f(i8), "int32", False, [303, 203, 200])  # replayed
        g = tl.jit(lambda x, i: tnp.add.at(x, i, 1, inplace=False))
        check(g(i8, tnp.asarray([2, 2])), "int8", False, [100, 100, 5])
        shape = tl.eval_shape(lambda x: tnp.multiply.outer(x, x), i8)
        assert (shape.shape, shape.dtype) == ((3, 3), np.dtype("int8"))
        shape = tl.eval_shape(lambda x: tnp.add.reduceat(x, tnp.asarray([0, 1])), i8)
        assert (shape.shape, shape.dtype) == ((2,), np.dtype("int8"))


# -- take, .at[] modes and apply ----------------------------------------------


class TestTake:
    def test_default_refuses_out_of_bounds_indices(self) -> None:
        # jax.numpy fills by default; a wrong index must not pass unnoticed.
        x = arr([1.0, 2.0, 3.0], "float32")
        check(tnp.take(x, tnp.asarray([0, -1, -3])), "float32", False, [1, 3, 1])
        with pytest.raises(IndexError, match="index 3 is out of bounds.*mode='fill'"):
            tnp.take(x, tnp.asarray([0, 3]))
        with pytest.raises(IndexError, match="index -4 is out of bounds"):
            tnp.take(x, tnp.asarray([-4]), fill_value=0.0)

    def test_fill_mode_like_jax(self) -> None:
        x = arr([1.0, 2.0, 3.0], "float32")
        idx = tnp.asarray([0, 3, -1, -4, 5])
        fill = "fill"
        check(
            tnp.take(x, idx, mode=fill),
            "float32",
            False,
            [1, np.nan, 3, np.nan, np.nan],
        )
        i8 = arr([1, 2, 3], "int8")
        check(
            tnp.take(i8, tnp.asarray([0, 3, -1]), mode=fill),
            "int8",
            False,
            [1, -128, 3],
        )
        check(
            tnp.take(arr([1, 2], "uint8"), tnp.asarray([5]), mode=fill),
            "uint8",
            False,
            [255],
        )
        check(
            tnp.take(arr([False], "bool"), tnp.asarray([5]), mode=fill),
            "bool",
            False,
            [True],
        )
        check(
            tnp.take(tnp.full(3, 2.0), tnp.asarray([0, 3]), mode=fill),
            "float32",
            True,
            [2, np.nan],
        )
        check(
            tnp.take(i8, tnp.asarray([0, 3]), mode=fill, fill_value=7),
            "int8",
            False,
            [1, 7],
        )
        out = tnp.take(tnp.ones((2, 3)), tnp.asarray([0, 3]), axis=1, mode=fill)
        check(out, "float32", False, [[1, np.nan], [1, np.nan]])

    def test_modes(self) -> None:
        i8 = arr([1, 2, 3], "int8")
        idx = tnp.asarray([0, 3, -1, -4])
        check(tnp.take(i8, idx, mode="clip"), "int8", False, [1, 3, 1, 1])
        check(tnp.take(i8, idx, mode="wrap"), "int8", False, [1, 1, 3, 3])
        check(tnp.take(i8, tnp.asarray([-1]), mode="raise"), "int8", False, [3])
        with pytest.raises(IndexError, match="index 3 is out of bounds"):
            tnp.take(i8, idx, mode="raise")
        with pytest.raises(ValueError, match="mode='bogus' is not one of"):
            tnp.take(i8, idx, mode="bogus")

    def test_fill_values_that_would_change_are_refused(self) -> None:
        i8 = arr([1, 2, 3], "int8")
        with pytest.raises(OverflowError, match="1000 does not fit"):
            tnp.take(i8, tnp.asarray([5]), mode="fill", fill_value=1000)
        with pytest.raises(TypeError, match="cannot fill with float32"):
            tnp.take(i8, tnp.asarray([5]), mode="fill", fill_value=1.5)
        with pytest.raises(ValueError, match="no NaN.*fill_value"):
            tnp.take(tnp.ones(2, "float4_e2m1fn"), tnp.asarray([5]), mode="fill")


class TestAtModes:
    x = np.array([1.0, 2.0, 3.0], "float32")

    def test_get(self) -> None:
        x = tnp.asarray(self.x)
        idx = tnp.asarray([0, 3, -1, -4])
        check(x.at[idx].get(mode="fill"), "float32", False, [1, np.nan, 3, np.nan])
        check(x.at[idx].get(mode="clip"), "float32", False, [1, 3, 3, 1])
        i8 = arr([1, 2, 3], "int8")
        check(i8.at[idx].get(mode="drop", fill_value=9), "int8", False, [1, 9, 3, 9])
        for mode in (None, "promise_in_bounds"):
            with pytest.raises(IndexError, match="out of bounds"):
                x.at[idx].get(mode=mode)
        check(
            x.at[-1].get(wrap_negative_indices=False, mode="fill"),
            "float32",
            False,
            np.nan,
        )
        m = tnp.zeros((2, 3))
        check(m.at[..., 5].get(mode="fill"), "float32", False, [np.nan, np.nan])
        with pytest.raises(ValueError, match="mode='wrap' is not one of"):
            x.at[0].get(mode="wrap")

    def test_updates(self) -> None:
        x = tnp.asarray(self.x)
        idx = tnp.asarray([0, 3, -1, -4])
        for mode in ("fill", "drop"):
            check(x.at[idx].set(9.0, mode=mode), "float32", False, [9, 2, 9])
            check(x.at[idx].add(9.0, mode=mode), "float32", False, [10, 2, 12])
        check(x.at[idx].add(9.0, mode="clip"), "float32", False, [19, 2, 21])
        with pytest.raises(IndexError, match="mode='clip'"):
            x.at[idx].set(9.0)
        check(
            x.at[-1].set(9.0, mode="drop", wrap_negative_indices=False),
            "float32",
            False,
            self.x,
        )
        m = tnp.zeros((2, 3))
        out = m.at[:, tnp.asarray([0, 5])].set(1.0, mode="drop")
        check(out, "float32", False, [[1, 0, 0], [1, 0, 0]])
        check(
            x.at[tnp.asarray([0, 0])].add(
                1.0, unique_indices=True, indices_are_sorted=True
            ),
            "float32",
            False,
            [3, 2, 3],
        )

    def test_apply(self) -> None:
        x = tnp.asarray(self.x)
        check(x.at[tnp.asarray([0, 0])].apply(tnp.negative), "float32", False, self.x)
        check(
            x.at[tnp.asarray([0, 2])].apply(tnp.negative), "float32", False, [-1, 2, -3]
        )
        out = tnp.full(3, 2.0).at[0].apply(tnp.sin)
        check(out, "float32", True, [np.sin(np.float32(2)), 2, 2])
        i8 = arr([1, 2, 3], "int8")
        check(i8.at[0].apply(lambda v: v * 2), "int8", False, [2, 2, 3])
        check(x.at[5].apply(tnp.negative, mode="clip"), "float32", False, [1, 2, -3])
        check(x.at[5].apply(tnp.negative, mode="drop"), "float32", False, self.x)
        with pytest.raises(TypeError, match="sin turned int8 values into float32"):
            i8.at[0].apply(tnp.sin)
        with pytest.raises(IndexError):
            x.at[5].apply(tnp.negative)
        f = tl.jit(lambda x, i: x.at[i].apply(tnp.negative, mode="drop"))
        check(f(x, tnp.asarray([1, 7])), "float32", False, [1, -2, 3])


# -- where(condition), nonzero, sorting -----------------------------------------


def test_where_with_the_condition_alone_is_nonzero() -> None:
    c = arr([[0, 1], [2, 0]], "int32")
    rows, cols = tnp.where(c)
    check(rows, "int32", False, [0, 1])
    check(cols, "int32", False, [1, 0])
    rows, cols = tnp.where(c, size=3, fill_value=-1)
    check(rows, "int32", False, [0, 1, -1])
    rows, cols = tnp.where(c, size=3, fill_value=(-1, -2))
    check(cols, "int32", False, [1, 0, -2])
    rows, _ = tnp.nonzero(c, size=3, fill_value=1.5)  # promoted, as JAX
    check(rows, "float32", True, [0, 1, 1.5])
    (short,) = tnp.nonzero(arr([0, 3, 4, 5], "int8"), size=2)
    check(short, "int32", False, [1, 2])
    with pytest.raises(ValueError, match="size and fill_value are for where"):
        tnp.where(c, 1, 2, size=3)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="atleast_1d"):
        tnp.where(tnp.asarray(1))
    with pytest.raises(ValueError, match="one per dimension"):
        tnp.nonzero(c, size=2, fill_value=(1, 2, 3))
    with pytest.raises(OverflowError):
        tnp.nonzero(c, size=3, fill_value=2**40)
    f = tl.jit(lambda c: tnp.where(c, size=3, fill_value=-1))
    rows, cols = f(c)
    check(rows, "int32", False, [0, 1, -1])
    with pytest.raises(tl.ConcretizationTypeError):
        tl.jit(lambda c: tnp.where(c))(c)


def test_sort_keywords() -> None:
    x = arr([3, 1, 1, 2], "int8")
    check(tnp.argsort(x, descending=True), "int32", False, [0, 3, 1, 2])
    check(tnp.argsort(x, dtype="int8"), "int8", False, [1, 2, 3, 0])
    check(x.argsort(stable=False), "int32", False, [1, 2, 3, 0])
    check(
        tnp.sort(arr([3, np.nan, 1], "float32"), descending=True),
        "float32",
        False,
        [np.nan, 3, 1],
    )
    for fn in (tnp.sort, tnp.argsort):
        with pytest.raises(TypeError, match="stable=True or stable=False"):
            fn(x, kind="quicksort")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="order"):
            fn(x, order="f")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="integer type"):
        tnp.argsort(x, dtype="float32")
    with pytest.raises(OverflowError, match="do not fit in int8"):
        tnp.argsort(tnp.arange(300), dtype="int8")


# -- Array methods ----------------------------------------------------------


class TestArrayMethods:
    def test_ptp_trace_diagonal(self) -> None:
        i8 = arr([100, -100, 3], "int8")
        check(i8.ptp(), "int8", False, -56)  # wraps, as JAX
        check(tnp.ptp(arr([[1, 5], [2, 9]], "int32"), axis=1), "int32", False, [4, 7])
        check(tnp.full(3, 2.0).ptp(), "float32", False, 0)
        with pytest.raises(TypeError, match="bool"):
            tnp.ptp(arr([True, False], "bool"))
        m = tnp.arange(9).reshape(3, 3)
        check(m.diagonal(offset=1), "int32", False, [1, 5])
        check(tnp.full((2, 2), 2.0).diagonal(), "float32", False, [2, 2])  # strong
        check(tnp.ones((3, 3), "int8").trace(), "int32", False, 3)
        check(m.trace(offset=-1), "int32", False, 3 + 7)
        check(tnp.trace(tnp.ones((3, 3), "int8"), dtype="float16"), "float16", False, 3)
        with pytest.raises(ValueError, match="at least 2 dimensions"):
            tnp.diagonal(tnp.arange(3))

    def test_searchsorted(self) -> None:
        a = arr([1, 2, 3], "int8")
        check(a.searchsorted(2), "int32", False, 1)
        check(
            tnp.searchsorted(a, tnp.asarray([2, 5.5]), side="right"),
            "int32",
            False,
            [2, 3],
        )
        check(
            tnp.searchsorted(arr([3, 1, 2], "int32"), 2, sorter=tnp.asarray([1, 2, 0])),
            "int32",
            False,
            1,
        )
        check(
            tnp.searchsorted(
                arr([1, 2, np.nan], "float32"), tnp.asarray([np.nan, 3.0])
            ),
            "int32",
            False,
            [2, 2],
        )
        with pytest.raises(ValueError, match="side='x'"):
            a.searchsorted(2, side="x")
        with pytest.raises(ValueError, match="1-dimensional"):
            tnp.searchsorted(tnp.ones((2, 2)), 1.0)

    def test_view(self) -> None:
        x = arr([1.0, 2.0], "float32")
        raw = np.array([1.0, 2.0], "float32")
        check(x.view("int32"), "int32", False, raw.view("int32"))
        check(x.view("uint8"), "uint8", False, raw.view("uint8"))
        check(x.view("float16"), "float16", False, raw.view("float16"))
        check(
            tnp.full(2, 2.0).view("int32"),
            "int32",
            False,
            np.full(2, 2.0, "float32").view("int32"),
        )
        check(arr([0, 2], "uint8").view(bool), "bool", False, [False, True])
        check(
            tnp.ones((2, 2), "float32").view("uint16").reshape(-1),
            "uint16",
            False,
            np.ones(4, "float32").view("uint16"),
        )
        assert x.view().dtype == np.float32
        with pytest.raises(ValueError, match="0-d array"):
            tnp.asarray(1.0).view("uint16")
        assert x.tobytes() == raw.tobytes()

    def test_compress_and_take(self) -> None:
        i8 = arr([100, -100, 3], "int8")
        cond = tnp.asarray([True, False, True])
        check(i8.compress(cond), "int8", False, [100, 3])
        check(tnp.compress(cond, tnp.full(3, 2.0)), "float32", True, [2, 2])
        check(tnp.compress(cond, i8, size=3, fill_value=7), "int8", False, [100, 3, 7])
        check(i8.compress(tnp.asarray([True]), size=2), "int8", False, [100, 0])
        check(i8.take(tnp.asarray([0, 5]), mode="clip"), "int8", False, [100, 3])

    def test_methods_under_tracing(self) -> None:
        x = arr([[1.0, 4.0], [2.0, 3.0]], "float32")
        out = tl.jit(lambda x: x.ptp() + x.trace() + x.diagonal().sum())(x)
        check(out, "float32", False, 3 + 4 + 4)
        shape = tl.eval_shape(lambda x: x.view("uint8"), x)
        assert (shape.shape, shape.dtype) == ((2, 8), np.dtype("uint8"))


# -- values that differed from JAX ------------------------------------------


def test_arange_with_float_bounds_and_an_integer_dtype() -> None:
    # The length from the float bounds; start and step converted (as NumPy).
    for args, dtype in [
        ((0.5, 5.5), "int32"),
        ((0, 2, 0.3), "int32"),
        ((-2.5, 2, 1.5), "int32"),
        ((1.7,), "int8"),
    ]:
        check(
            tnp.arange(*args, dtype=dtype), dtype, False, np.arange(*args, dtype=dtype)
        )
    # JAX's values (NumPy: [5, 3, 1], from a step of int(5 - 1.5) - 5).
    check(tnp.arange(5, 0.5, -1.5, dtype="int16"), "int16", False, [5, 4, 3])
    # NumPy wraps the start -1 to 255 here and JAX saturates it to 0: uint8
    # cannot hold it, so it raises.
    with pytest.raises(OverflowError, match="-1.5 does not fit in uint8"):
        tnp.arange(-1.5, 3, dtype="uint8")
    check(tnp.arange(1.5, 3, dtype="uint8"), "uint8", False, [1, 2])
    with pytest.raises(TypeError, match="dtype bool"):
        tnp.arange(2, dtype=bool)
    with pytest.raises(OverflowError):
        tnp.arange(0.5, 300.5, dtype="int8")


def test_complex_products_with_a_real_preferred_type() -> None:
    a = np.array([1.5 + 2j, 2.5 - 1j], "complex64")
    b = np.array([2.5 + 1j, -1.25 + 0.5j], "complex64")
    product = np.dot(a, b)
    with pytest.warns(np.exceptions.ComplexWarning, match="imaginary"):
        out = tnp.dot(tnp.asarray(a), tnp.asarray(b), preferred_element_type="float32")
    check(out, "float32", False, product.real)
    with pytest.warns(np.exceptions.ComplexWarning):
        out = tnp.matmul(
            tnp.asarray(a[None]),
            tnp.asarray(b[:, None]),
            preferred_element_type="float32",
        )
    check(out, "float32", False, [[product.real]])
    with pytest.warns(np.exceptions.ComplexWarning):
        out = tnp.einsum(
            "i,i->", tnp.asarray(a), tnp.asarray(b), preferred_element_type="int32"
        )
    check(out, "int32", False, int(product.real))
    with pytest.raises(TypeError, match="narrower"):
        tnp.dot(tnp.asarray(a), tnp.asarray(b), preferred_element_type="bfloat16")
