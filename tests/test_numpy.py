"""typelattice.numpy: the Array, its weak flag, and the namespace's semantics."""

from __future__ import annotations

import copy
import operator
import pickle
import re
from collections.abc import Callable
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import arr, check

# -- the Array --------------------------------------------------------------


class TestArray:
    def test_properties(self) -> None:
        x = arr([[1, 2, 3], [4, 5, 6]], "int16")
        assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6
        assert x.itemsize == 2 and x.nbytes == 12 and not x.weak_type
        check(x.T, "int16", False, [[1, 4], [2, 5], [3, 6]])
        check(x.mT, "int16", False, [[1, 4], [2, 5], [3, 6]])
        z = arr([1 + 2j], "complex64")
        check(z.real, "float32", False, [1])
        check(z.imag, "float32", False, [2])

    def test_repr_like_jax(self) -> None:
        assert repr(arr([0, 2, 4], "int8")) == "Array([0, 2, 4], dtype=int8)"
        assert repr(tnp.asarray(2)) == "Array(2, dtype=int32, weak_type=True)"
        assert repr(arr([1, 2], "bfloat16")) == "Array([1, 2], dtype=bfloat16)"
        assert repr(tnp.asarray([[1, 2], [3, 4]], dtype="uint8")) == (
            "Array([[1, 2],\n       [3, 4]], dtype=uint8)"
        )
        assert str(arr([1, 2], "int8")) == "[1 2]"
        assert repr(tnp.zeros((0, 3), "int32")) == (
            "Array([], shape=(0, 3), dtype=int32)"
        )

    def test_shape_functions_do_not_alias_numpy_input(self) -> None:
        src = np.array([[1, 2], [3, 4]], np.int8)
        results = [
            tnp.reshape(src, (4,)),
            tnp.ravel(src),
            tnp.transpose(src),
            tnp.squeeze(src),
            tnp.expand_dims(src, 0),
        ]
        src[0, 0] = 100
        for r in results:
            assert int(np.asarray(r).flat[0]) == 1, repr(r)

    def test_immutable(self) -> None:
        x = arr([1, 2], "int8")
        with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
            x[0] = 5
        view = np.asarray(x)
        assert not view.flags.writeable
        with pytest.raises(ValueError):
            view[0] = 5
        with pytest.raises(TypeError):
            hash(x)

    def test_numpy_input_is_copied(self) -> None:
        source = np.array([1, 2, 3], dtype=np.int8)
        x = tnp.asarray(source)
        source[0] = 100
        assert x.tolist() == [1, 2, 3]

    def test_numpy_interop(self) -> None:
        x = arr([1.5, 2.5], "float32")
        np.testing.assert_array_equal(np.asarray(x), [1.5, 2.5])
        assert np.asarray(x, dtype=np.float64).dtype == np.float64
        assert np.from_dlpack(x).tolist() == [1.5, 2.5]

    def test_numpy_on_the_left_defers(self) -> None:
        a = np.array([1, 2, 3], dtype=np.int32)
        out = a + arr([0.5, 0.5, 0.5], "float32")
        check(out, "float32", False, [1.5, 2.5, 3.5])
        out = np.array([1, 2], dtype=np.int8) * tnp.asarray(2)
        check(out, "int8", False, [2, 4])
        # Other NumPy functions see a plain (read-only) array.
        assert np.sum(np.asarray(arr([1, 2], "int8"))) == 3

    @pytest.mark.parametrize(
        ("op", "expected"),
        [
            (operator.add, [3, 4]),
            (operator.sub, [-1, 0]),
            (operator.mul, [2, 4]),
            (operator.floordiv, [0, 1]),
            (operator.mod, [1, 0]),
            (operator.pow, [1, 4]),
            (operator.and_, [0, 2]),
            (operator.or_, [3, 2]),
            (operator.xor, [3, 0]),
            (operator.lshift, [4, 8]),
            (operator.rshift, [0, 0]),
        ],
    )
    def test_operators_both_orders(self, op: Any, expected: list[int]) -> None:
        x = arr([1, 2], "int8")
        check(op(x, 2), "int8", False, expected)
        flipped = [op(2, v) for v in (1, 2)]
        check(op(2, x), "int8", False, flipped)

    def test_unary_operators_and_comparisons(self) -> None:
        x = arr([1, -2], "int8")
        check(-x, "int8", False, [-1, 2])
        check(+x, "int8", False, [1, -2])
        check(abs(x), "int8", False, [1, 2])
        check(~x, "int8", False, [-2, 1])
        check(x < 0, "bool", False, [False, True])
        check(x == 1, "bool", False, [True, False])
        check(x != 1, "bool", False, [False, True])
        check(x @ x, "int8", False, 5)
        check(round(arr([1.26], "float32"), 1), "float32", False, [1.3])

    def test_python_conversions(self) -> None:
        x = arr(3, "int8")
        assert bool(x) and int(x) == 3 and float(x) == 3.0 and complex(x) == 3
        assert operator.index(x) == 3 and [10, 20, 30, 40][x] == 40
        with pytest.raises(TypeError):
            operator.index(arr(1.5, "float32"))
        with pytest.raises(TypeError):
            len(x)
        y = tnp.asarray([1, 2, 3])
        assert len(y) == 3
        items = list(y)
        assert [int(i) for i in items] == [1, 2, 3]
        assert all(not i.weak_type for i in items)
        assert y.item(1) == 2 and y.tolist() == [1, 2, 3]
        with pytest.raises(ValueError):
            bool(y)

    def test_pickle_and_copy(self) -> None:
        x = tnp.asarray(2.5)
        y = pickle.loads(pickle.dumps(x))
        check(y, "float32", True, 2.5)
        assert copy.deepcopy(x) is x

    def test_methods(self) -> None:
        x = arr([[3, 1], [2, 4]], "int8")
        check(x.astype("float16"), "float16", False, [[3, 1], [2, 4]])
        check(x.reshape(4), "int8", False, [3, 1, 2, 4])
        check(x.reshape(1, 4), "int8", False, [[3, 1, 2, 4]])
        check(x.flatten(), "int8", False, [3, 1, 2, 4])
        check(x.sum(), "int32", False, 10)
        check(x.mean(axis=0), "float32", False, [2.5, 2.5])
        check(x.max(), "int8", False, 4)
        check(x.argmax(), "int32", False, 3)
        check(x.clip(2, 3), "int8", False, [[3, 2], [2, 3]])
        check(x.transpose(), "int8", False, [[3, 2], [1, 4]])
        check(x[None].squeeze(), "int8", False, [[3, 1], [2, 4]])
        check(x.sort(), "int8", False, [[1, 3], [2, 4]])
        check(x.sort(axis=None, descending=True), "int8", False, [4, 3, 2, 1])
        check(x.argsort(axis=None, descending=True), "int32", False, [3, 0, 2, 1])
        rows, cols = x.nonzero()
        check(rows, "int32", False, [0, 0, 1, 1])
        check(cols, "int32", False, [0, 1, 0, 1])
        (padded,) = tnp.nonzero(arr([0, 5, 0, 7], "int8"), size=3, fill_value=-1)
        check(padded, "int32", False, [1, 3, -1])
        check(x.cumsum(), "int8", False, [3, 4, 6, 10])  # JAX: no widening


# -- weak types -------------------------------------------------------------


class TestWeakTypes:
    def test_asarray_of_scalars(self) -> None:
        check(tnp.asarray(2), "int32", True, 2)
        check(tnp.asarray(2.0), "float32", True, 2.0)
        check(tnp.asarray(1j), "complex64", True, 1j)
        check(tnp.asarray(True), "bool", False, True)
        check(tnp.asarray(2, dtype="int16"), "int16", False, 2)
        check(tnp.asarray([1, 2]), "int32", False, [1, 2])
        check(tnp.asarray([1, 2.5]), "float32", False, [1, 2.5])
        check(tnp.asarray(np.arange(3)), "int32", False, [0, 1, 2])
        with tl.enable_x64():
            check(tnp.asarray(2), "int64", True, 2)
            check(tnp.asarray(np.arange(3)), "int64", False, [0, 1, 2])

    def test_python_scalars_defer_to_array_width(self) -> None:
        check(arr([1, 2], "int8") * 2, "int8", False, [2, 4])
        check(arr([1, 2], "bfloat16") + 1.0, "bfloat16", False, [2, 3])
        check(arr([1, 2], "float16") * 2.5, "float16", False, [2.5, 5])
        check(arr([1, 2], "int32") + 1.5, "float32", True, [2.5, 3.5])
        check(arr([1, 2], "uint8") + tnp.asarray(3), "uint8", False, [4, 5])

    def test_jax_headline_cases(self) -> None:
        check(arr([1], "int32") + arr([1.5], "float32"), "float32", False, [2.5])
        check(arr([1], "int8") + arr([1], "uint8"), "int16", False, [2])
        check(arr([1], "bfloat16") + arr([1], "float16"), "float32", False, [2])
        with tl.enable_x64():
            x = tnp.asarray(np.array([1], np.uint64)) + tnp.asarray(np.array([1]))
            # u8 and i8 meet only at the weak float node (seed 001).
            check(x, "float64", True, [2])

    def test_weak_operands_stay_weak(self) -> None:
        w = tnp.asarray(2)
        check(w + 3, "int32", True, 5)
        check(-w, "int32", True, -2)
        check(tnp.sin(tnp.asarray(0.0)), "float32", True, 0)
        check(tnp.sqrt(w), "float32", True, np.sqrt(2))
        check(w * arr([1], "int8"), "int8", False, [2])

    def test_comparisons_weak_only_when_all_inputs_are(self) -> None:
        check(tnp.asarray(2) < 3, "bool", True, True)
        check(arr([1], "int8") < 3, "bool", False, [True])

    def test_reductions_and_astype_are_strong(self) -> None:
        w = tnp.full((3,), 2)
        check(w, "int32", True, [2, 2, 2])
        check(tnp.sum(w), "int32", False, 6)
        check(tnp.max(w), "int32", False, 2)
        check(w.astype("int32"), "int32", False, [2, 2, 2])

    def test_shape_functions_keep_the_flag(self) -> None:
        w = tnp.full((2, 2), 1.5)
        for out in (
            w[0],
            w[:, 1],
            w[tnp.asarray([1, 0])],
            tnp.reshape(w, (4,)),
            tnp.broadcast_to(tnp.asarray(1.5), (2, 2)),
            tnp.zeros_like(w),
            tnp.full_like(w, 3),
            tnp.transpose(w),
            tnp.expand_dims(w, 0),
        ):
            assert out.dtype == np.float32 and out.weak_type, repr(out)

    def test_where_and_concatenate_promote_values_only(self) -> None:
        cond = tnp.asarray([True, False])
        check(tnp.where(cond, arr([1, 2], "int8"), 0), "int8", False, [1, 0])
        check(tnp.where(arr([1, 0], "float64"), 1, 2), "int32", True, [1, 2])
        i8, u8 = arr([1], "int8"), arr([2], "uint8")
        check(tnp.concatenate([i8, u8]), "int16", False, [1, 2])
        check(tnp.stack([i8, u8]), "int16", False, [[1], [2]])

    def test_true_divide_is_inexact(self) -> None:
        check(arr([1, 2], "int8") / 2, "float32", False, [0.5, 1])
        check(tnp.asarray(1) / 2, "float32", True, 0.5)
        with tl.enable_x64():
            check(arr([1], "int64") / arr([2], "int64"), "float64", False, [0.5])

    def test_strict_mode_applies_to_functions(self) -> None:
        with tl.dtype_promotion("strict"):
            with pytest.raises(tl.TypePromotionError, match="strict"):
                arr([1], "int8") + arr([1], "int16")
            with pytest.raises(tl.TypePromotionError):
                tnp.concatenate([arr([1], "int8"), arr([1], "float32")])
            check(arr([1], "int8") + 1, "int8", False, [2])


# -- data safety (SPEC §4) --------------------------------------------------


class TestNoSilentChanges:
    def test_python_int_out_of_range(self) -> None:
        with pytest.raises(OverflowError, match=r"1000 does not fit in uint8"):
            arr([1], "uint8") + 1000
        with pytest.raises(OverflowError, match=r"-1 does not fit in uint8"):
            arr([1], "uint8") * -1
        with pytest.raises(OverflowError):
            tnp.asarray(2**40)
        with pytest.raises(OverflowError):
            tnp.asarray(300, dtype="uint8")
        with pytest.raises(OverflowError):
            tnp.full_like(arr([1], "int8"), 200)

    def test_python_float_that_would_overflow(self) -> None:
        with pytest.raises(OverflowError, match="float16"):
            arr([1], "float16") + 1e6
        with pytest.raises(OverflowError):
            tnp.asarray(1e300)

    def test_64_to_32_bit_conversion_that_changes_values(self) -> None:
        with pytest.raises(OverflowError, match="enable_x64"):
            tnp.asarray(np.array([2**40]))
        with pytest.raises(OverflowError, match="enable_x64"):
            tnp.asarray(np.array([1e300]))
        with pytest.raises(OverflowError, match="enable_x64"):
            arr([1], "int32") + np.array([2**40])
        # Values that fit convert quietly; precision loss of floats is rounding.
        check(tnp.asarray(np.array([2**30])), "int32", False, [2**30])
        with tl.enable_x64():
            check(tnp.asarray(np.array([2**40])), "int64", False, [2**40])

    def test_explicit_64_bit_dtypes(self) -> None:
        with pytest.warns(tl.X64DtypeWarning):
            check(tnp.zeros(2, "float64"), "float32", False)
        with tl.explicit_x64_dtypes("error"), pytest.raises(ValueError, match="64"):
            tnp.asarray(1, dtype="int64")
        with tl.explicit_x64_dtypes("allow"):
            x = tnp.asarray(1, dtype="int64")
        check(x, "int64", False, 1)
        check(x + 1, "int64", False, 2)  # arrays made 64-bit keep it

    def test_negative_integer_power(self) -> None:
        with pytest.raises(TypeError, match="negative integer powers"):
            arr([2], "int32") ** -1
        with pytest.raises(TypeError):
            tnp.power(arr([2], "int8"), arr([-1], "int8"))
        half = arr([2], "float32") ** -1
        check(half, "float32", False)
        np.testing.assert_allclose(np.asarray(half), [0.5], rtol=5e-7)  # pow: 4 ulps

    def test_scatter_refuses_values_that_would_change(self) -> None:
        x = arr([1, 2, 3], "int8")
        with pytest.raises(TypeError, match="astype"):
            x.at[0].set(1.5)
        with pytest.raises(TypeError):
            x.at[0].set(arr(1, "int32"))
        with pytest.raises(OverflowError):
            x.at[0].add(1000)
        with pytest.raises(TypeError, match="float"):
            x.at[0].divide(2)


# -- functional updates -----------------------------------------------------


def test_at_updates() -> None:
    x = arr([1, 2, 3], "int8")
    check(x.at[0].set(9), "int8", False, [9, 2, 3])
    check(x.at[tnp.asarray([0, 0])].add(1), "int8", False, [3, 2, 3])
    check(x.at[1:].multiply(2), "int8", False, [1, 4, 6])
    check(x.at[2].subtract(1), "int8", False, [1, 2, 2])
    check(x.at[0].max(5), "int8", False, [5, 2, 3])
    check(x.at[2].min(0), "int8", False, [1, 2, 0])
    check(x.at[1].power(3), "int8", False, [1, 8, 3])
    check(x.at[1].get(), "int8", False, 2)
    check(arr([1.0, 2.0], "float32").at[1].divide(4), "float32", False, [1, 0.5])
    check(x, "int8", False, [1, 2, 3])  # unchanged
    w = tnp.full((2,), 1.5)
    check(w.at[0].set(2), "float32", True, [2, 1.5])


# -- reductions -------------------------------------------------------------


class TestReductions:
    def test_sum_widens_integers_like_jax(self) -> None:
        check(tnp.sum(arr([100, 100], "int8")), "int32", False, 200)
        check(tnp.sum(arr([200, 200], "uint8")), "uint32", False, 400)
        check(tnp.sum(arr([True, True], "bool")), "int32", False, 2)
        check(tnp.prod(arr([100, 100], "int16")), "int32", False, 10000)
        check(tnp.sum(arr([1, 2], "int8"), dtype="int8"), "int8", False, 3)
        with tl.enable_x64():
            check(tnp.sum(arr([1, 2], "int8")), "int64", False, 3)

    def test_float16_accumulates_in_float32(self) -> None:
        x = tnp.ones(4096, "float16")
        # In float16 a running sum stops at 2048 (2049 is not representable).
        check(tnp.sum(x), "float16", False, 4096)
        big = tnp.full((4,), 60000.0, dtype="float16")
        check(tnp.mean(big), "float16", False, 60000)
        check(tnp.var(big), "float16", False, 0)
        b = tnp.ones(512, "bfloat16")
        check(tnp.mean(b), "bfloat16", False, 1)

    def test_mean_var_std_are_inexact(self) -> None:
        check(tnp.mean(arr([1, 2], "int8")), "float32", False, 1.5)
        check(tnp.var(arr([1, 3], "int32")), "float32", False, 1.0)
        check(tnp.std(arr([1, 3], "int32"), ddof=1), "float32", False, np.sqrt(2))
        check(tnp.var(arr([1j, -1j], "complex64")), "float32", False, 1.0)

    def test_axis_keepdims_where(self) -> None:
        x = arr([[1, 2], [3, 4]], "int32")
        check(tnp.sum(x, axis=0), "int32", False, [4, 6])
        check(tnp.sum(x, axis=1, keepdims=True), "int32", False, [[3], [7]])
        mask = tnp.asarray([[True, False], [True, True]])
        check(tnp.sum(x, where=mask), "int32", False, 8)
        check(tnp.max(x, axis=(0, 1)), "int32", False, 4)
        check(tnp.min(x, where=mask, initial=10), "int32", False, 1)
        check(tnp.argmin(x, axis=1), "int32", False, [0, 0])
        check(tnp.any(x > 3), "bool", False, True)
        check(tnp.all(x > 0, axis=0), "bool", False, [True, True])
        check(tnp.cumprod(x, axis=1), "int32", False, [[1, 2], [3, 12]])
        with pytest.raises(ValueError, match="out of bounds"):
            tnp.sum(x, axis=2)

    def test_empty_max_needs_initial(self) -> None:
        with pytest.raises(ValueError, match="initial"):
            tnp.max(tnp.zeros(0))
        check(tnp.max(tnp.zeros(0), initial=-1.0), "float32", False, -1)


# -- products ---------------------------------------------------------------


def test_products() -> None:
    a = arr([[1, 2], [3, 4]], "int8")
    check(a @ a, "int8", False, [[7, 10], [15, 22]])
    check(tnp.dot(a, 2), "int8", False, [[2, 4], [6, 8]])
    z = arr([1j], "complex64")
    check(tnp.vdot(z, z), "complex64", False, 1)
    check(tnp.inner(a, a), "int8", False, [[5, 11], [11, 25]])
    check(tnp.outer(arr([1, 2], "int8"), 2), "int8", False, [[2], [4]])
    check(tnp.tensordot(a, a, 1), "int8", False, [[7, 10], [15, 22]])
    check(tnp.einsum("ij,j->i", a, arr([1, 1], "uint8")), "int16", False, [3, 7])
    out = tnp.matmul(a, a, preferred_element_type="int32")
    check(out, "int32", False, [[7, 10], [15, 22]])
    with pytest.raises(TypeError, match="narrower"):
        tnp.matmul(out, out, preferred_element_type="int8")
    mixed = tnp.dot(
        arr([5, 2, -4], "int32"),
        arr([1.0758, -1.0209, 0.9611], "float32"),
        preferred_element_type="int32",
    )
    check(mixed, "int32", False, 3)  # operands truncated first, as JAX
    # Floats of one type: their product, then converted (as JAX).
    f = arr([1.5, 1.7], "float32")
    check(tnp.dot(f, f, preferred_element_type="int32"), "int32", False, 5)
    h = arr([1.5, 1.5], "bfloat16")
    check(tnp.dot(h, h, preferred_element_type="int8"), "int8", False, 4)
    check(
        tnp.dot(f, arr([1.5, 1.5], "float16"), preferred_element_type="int32"),
        "int32",
        False,
        2,
    )
    bf = tnp.ones((2, 300), "bfloat16")
    check(bf @ tnp.ones(300, "bfloat16"), "bfloat16", False, [300, 300])
    with pytest.raises(ValueError, match="dimension"):
        tnp.matmul(a, 2)


# -- extended types ---------------------------------------------------------


def test_small_float_arithmetic_is_correct() -> None:
    x = arr([1.5, 2.0], "float8_e4m3fn")
    check(x * 2, "float8_e4m3fn", False, [3.0, 4.0])
    assert x.dtype == ml_dtypes.float8_e4m3fn
    check(tnp.exp(arr([0.0], "bfloat16")), "bfloat16", False, [1])
    with pytest.raises(tl.TypePromotionError, match="astype"):
        x + arr([1], "bfloat16")
    check(tnp.bfloat16(1.5), "bfloat16", False, 1.5)
    check(tnp.int8(3), "int8", False, 3)
    check(tnp.zeros(2, tnp.float8_e5m2), "float8_e5m2", False, [0, 0])


# -- bad input --------------------------------------------------------------


class TestBadInput:
    def test_lists_are_refused_outside_asarray(self) -> None:
        with pytest.raises(TypeError, match="add.*position 1"):
            tnp.add(arr([1], "int8"), [1, 2])
        with pytest.raises(TypeError, match="sum.*position 0"):
            tnp.sum([1, 2])
        with pytest.raises(TypeError, match="position 0"):
            tnp.sin((1.0,))

    def test_object_and_string_data(self) -> None:
        with pytest.raises(TypeError):
            tnp.asarray("abc")
        with pytest.raises(TypeError):
            tnp.asarray(np.array(["a"]))
        with pytest.raises(TypeError):
            tnp.add(np.array([object()]), 1)
        with pytest.raises(TypeError):
            tnp.asarray([1, "a"])

    def test_shapes_that_do_not_broadcast(self) -> None:
        with pytest.raises(ValueError, match=r"\(2,\) and \(3,\)"):
            tnp.ones(2) + tnp.ones(3)
        with pytest.raises(ValueError, match=r"\(2,\) and \(3,\)"):
            tnp.where(tnp.ones(2) > 0, tnp.ones(2), tnp.ones(3))

    def test_dtypes_an_op_refuses(self) -> None:
        with pytest.raises(TypeError, match="subtract does not accept dtype bool"):
            tnp.asarray(True) - tnp.asarray(False)
        with pytest.raises(TypeError, match="bitwise_and"):
            arr([1.0], "float32") & 1
        with pytest.raises(TypeError, match="floor_divide"):
            arr([1j], "complex64") // 1


# -- rank promotion ---------------------------------------------------------


def test_rank_promotion() -> None:
    a, b = tnp.ones((2, 3)), tnp.ones(3)
    check(a + b, "float32", False)
    with tl.rank_promotion("raise"):
        with pytest.raises(ValueError, match=r"\(2, 3\), \(3,\)"):
            a + b
        with pytest.raises(ValueError):
            tnp.where(True, a, b)
        check(a + 1.0, "float32", False)  # scalars never count
        check(a + tnp.asarray(1.0), "float32", False)
    with tl.rank_promotion("warn"), pytest.warns(tnp.RankPromotionWarning):
        tnp.maximum(a, b)


# -- creation ---------------------------------------------------------------


def test_creation() -> None:
    check(tnp.zeros((2,)), "float32", False, [0, 0])
    check(tnp.ones(2, "int8"), "int8", False, [1, 1])
    check(tnp.empty(2, "uint8"), "uint8", False, [0, 0])
    check(tnp.full(2, 1.5, "float16"), "float16", False, [1.5, 1.5])
    check(tnp.ones_like(arr([1, 2], "int8")), "int8", False, [1, 1])
    check(tnp.empty_like(arr([1], "int8"), dtype="float32"), "float32", False, [0])
    check(tnp.arange(3), "int32", False, [0, 1, 2])
    check(tnp.arange(0, 1, 0.5), "float32", False, [0, 0.5])
    check(tnp.arange(3, dtype="uint8"), "uint8", False, [0, 1, 2])
    check(tnp.linspace(0, 1, 3), "float32", False, [0, 0.5, 1])
    # Integer dtypes take the floor, as JAX (NumPy truncates toward zero).
    check(
        tnp.linspace(-5, 5, 7, dtype="int32"), "int32", False, [-5, -4, -2, 0, 1, 3, 5]
    )
    # JAX saturates values the dtype cannot hold ([0, 0, 2]); they raise here.
    with pytest.raises(OverflowError, match="-2.0 does not fit in uint8"):
        tnp.linspace(-2, 2, 3, dtype="uint8")
    _, step = tnp.linspace(0, 1, 6, dtype="int32", retstep=True)
    check(step, "float32", False, 0.2)
    with tl.enable_x64():
        check(tnp.linspace(tnp.int8(0), 3, 4), "float32", False, [0, 1, 2, 3])
    check(tnp.eye(2, dtype="int8"), "int8", False, [[1, 0], [0, 1]])
    check(tnp.identity(2), "float32", False, [[1, 0], [0, 1]])
    check(tnp.atleast_2d(tnp.asarray(1.5)), "float32", True, [[1.5]])
    check(tnp.array([1, 2], ndmin=2), "int32", False, [[1, 2]])
    with pytest.raises(ValueError, match="negative"):
        tnp.zeros(-1)


# -- edge cases checked against jax.numpy ------------------------------------


def test_float_to_int_astype_saturates_like_jax() -> None:
    x = tnp.asarray([-2.5, 300.0, np.nan, np.inf])
    check(x.astype("uint8"), "uint8", False, [0, 255, 0, 255])
    check(tnp.asarray([3e9, np.nan]).astype("int32"), "int32", False, [2**31 - 1, 0])


def test_python_round_gives_int32() -> None:
    check(round(tnp.asarray([1.4, 2.6])), "int32", False, [1, 3])


def test_comparison_with_none_or_string_is_false() -> None:
    x = tnp.asarray([1])
    assert (x == None) is False  # noqa: E711 - the operator is what is tested
    assert (x != "a") is True


# -- operands of types the operators do not know -----------------------------
# As jax.Array: NotImplemented, so that the other operand's own method runs.

# (operator, how Python names it in its TypeError, the other operand's method
# Python then calls)
BINARY_OPERATORS: list[tuple[Callable[[Any, Any], Any], str, str]] = [
    (operator.add, "+", "__radd__"),
    (operator.sub, "-", "__rsub__"),
    (operator.mul, "*", "__rmul__"),
    (operator.truediv, "/", "__rtruediv__"),
    (operator.floordiv, "//", "__rfloordiv__"),
    (operator.mod, "%", "__rmod__"),
    (divmod, "divmod()", "__rdivmod__"),
    (operator.pow, "** or pow()", "__rpow__"),
    (operator.matmul, "@", "__rmatmul__"),
    (operator.and_, "&", "__rand__"),
    (operator.or_, "|", "__ror__"),
    (operator.xor, "^", "__rxor__"),
    (operator.lshift, "<<", "__rlshift__"),
    (operator.rshift, ">>", "__rrshift__"),
    (operator.lt, "<", "__gt__"),
    (operator.le, "<=", "__ge__"),
    (operator.gt, ">", "__lt__"),
    (operator.ge, ">=", "__le__"),
    (operator.eq, "==", "__eq__"),
    (operator.ne, "!=", "__ne__"),
]
OPERATOR_IDS = [symbol for _, symbol, _ in BINARY_OPERATORS]


class Reflecting:
    """An operand that answers every operator itself, recording the call and
    returning the array it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []


def _answer(name: str) -> Callable[[Reflecting, Any], Any]:
    def method(self: Reflecting, other: Any) -> Any:
        self.calls.append((name, other))
        return other

    return method


for _, _, _method in BINARY_OPERATORS:
    setattr(Reflecting, _method, _answer(_method))


def in_each_mode(fn: Callable[[tnp.Array], Any], x: tnp.Array) -> dict[str, Any]:
    """``fn(x)`` run on x, under jit and under grad (whose result is
    ``fn``'s, through has_aux)."""
    return {
        "eager": fn(x),
        "jit": tl.jit(fn)(x),
        "grad": tl.grad(lambda a: (a.sum(), fn(a)), has_aux=True)(x)[1],
    }


@pytest.mark.parametrize(("op", "symbol", "method"), BINARY_OPERATORS, ids=OPERATOR_IDS)
def test_operators_leave_unknown_operands_to_their_own_methods(
    op: Callable[[Any, Any], Any], symbol: str, method: str
) -> None:
    x = arr([1.0, 2.0], "float32")
    other = Reflecting()
    for mode, out in in_each_mode(lambda a: op(a, other), x).items():
        name, given = other.calls.pop()
        assert name == method, mode
        assert isinstance(given, tnp.Array), mode
        check(out, "float32", False, [1.0, 2.0])
    assert not other.calls


@pytest.mark.parametrize(("op", "symbol", "method"), BINARY_OPERATORS, ids=OPERATOR_IDS)
def test_operators_with_unknown_operands_raise_pythons_type_error(
    op: Callable[[Any, Any], Any], symbol: str, method: str
) -> None:
    x = arr([1.0, 2.0], "float32")
    unknown = object()

    def both_orders(a: tnp.Array) -> tnp.Array:
        if op in (operator.eq, operator.ne):  # Python compares identities
            assert op(a, unknown) is (op is operator.ne)
            assert op(unknown, a) is (op is operator.ne)
            return a
        with pytest.raises(TypeError, match=re.escape(symbol)) as info:
            op(a, unknown)
        assert "'object'" in str(info.value)
        with pytest.raises(TypeError, match=re.escape(symbol)):
            op(unknown, a)
        return a

    for out in in_each_mode(both_orders, x).values():
        check(out, "float32", False, [1.0, 2.0])


def test_every_binary_operator_returns_not_implemented() -> None:
    x = arr([1, 2], "int32")
    operations = {"add", "sub", "mul", "truediv", "floordiv", "mod", "divmod"}
    operations |= {"pow", "matmul", "and", "or", "xor", "lshift", "rshift"}
    operations |= {"lt", "le", "gt", "ge", "eq", "ne"}
    binary = [
        n
        for n in dir(x)
        if n.startswith("__")
        and n.endswith("__")
        and (n[2:-2] in operations or n[2] == "r" and n[3:-2] in operations)
    ]
    assert len(binary) == 34, binary

    def each(a: tnp.Array) -> tnp.Array:
        for name in binary:
            assert getattr(a, name)(object()) is NotImplemented, name
            assert getattr(a, name)(None) is NotImplemented, name
        return a

    in_each_mode(each, arr([1.0, 2.0], "float32"))
    each(x)


def test_lists_and_tuples_are_refused_with_the_fix() -> None:
    # Not NotImplemented (as JAX): Python would repeat the list x times.
    x = tnp.asarray(2)
    for call in (
        lambda: [1, 2] * x,
        lambda: x * (1, 2),
        lambda: x + [1, 2],
        lambda: (1,) + x,
    ):
        with pytest.raises(TypeError, match=r"typelattice\.numpy\.asarray"):
            call()
    with pytest.raises(TypeError, match=r"set \(\{1\}\)"):
        x | {1}  # noqa: B018 - the operator is what is tested
    with pytest.raises(TypeError, match=r"dict \(\{1: 2\}\)"):
        {1: 2} == x  # noqa: B015


def test_a_named_tuple_with_its_own_operators_gets_them() -> None:
    class Pair(NamedTuple):
        a: int
        b: int

        def __radd__(self, other: Any) -> str:
            return "Pair.__radd__"

    assert arr([1, 2]) + Pair(1, 2) == "Pair.__radd__"


def test_reduction_edge_cases() -> None:
    flags = tnp.asarray([True, True, True])
    check(tnp.sum(flags, promote_integers=False), "int32", False, 3)
    check(tnp.var(tnp.asarray([1.0, 2.0, 4.0]), ddof=3), "float32", False, np.nan)
    check(tnp.max(tnp.zeros((0, 3)), axis=1), "float32", False, [])
    with pytest.raises(ValueError, match="initial"):
        tnp.max(tnp.zeros((0, 3)), axis=0)
    check(tnp.cumsum(tnp.asarray(2.5), axis=0), "float32", False, [2.5])
    check(tnp.sort(tnp.asarray(2.0), axis=None), "float32", True, [2.0])


def test_shapes_from_numpy_integers_and_arrays_of_rows() -> None:
    x = tnp.ones((2, 3))
    assert x.reshape(np.int64(6)).shape == (6,)
    assert x.reshape(tnp.asarray(6)).shape == (6,)
    assert tnp.concatenate(x).shape == (6,)
    assert tnp.stack(x).shape == (2, 3)


def test_dlpack_export_is_read_only() -> None:
    exported = np.from_dlpack(tnp.asarray([1, 2]))
    with pytest.raises(ValueError, match="read-only"):
        exported[0] = 7


@pytest.mark.parametrize(
    ("pytype", "expected"), [(int, "int32"), (float, "float32"), (complex, "complex64")]
)
def test_python_types_as_dtype_are_the_default_types_without_a_warning(
    pytype: type, expected: str
) -> None:
    # As JAX: int, float and complex name the default types of the mode, not
    # 64-bit requests (the suite turns any warning into an error).
    assert tnp.zeros(2, pytype).dtype == expected
    assert tnp.asarray([1, 2], dtype=pytype).dtype == expected
    assert tnp.full((2,), 1, pytype).dtype == expected
    with tl.enable_x64():
        assert tnp.zeros(2, pytype).dtype == np.dtype(pytype)


@pytest.mark.parametrize(
    "call",
    [
        lambda n: tnp.zeros((n,)),
        lambda n: tnp.full(n, 1),
        lambda n: tnp.linspace(0, 1, n),
        lambda n: tnp.take(tnp.ones((2, 2)), 0, axis=n),
        lambda n: tnp.broadcast_to(tnp.ones(2), (n, 2)),
        lambda n: tnp.diagonal(tnp.ones((2, 2)), offset=n),
        lambda n: tnp.sort(tnp.ones((2, 2)), axis=n),
    ],
    ids=["zeros", "full", "linspace", "take", "broadcast_to", "diagonal", "sort"],
)
def test_integer_arguments_that_are_traced_say_why(call: Any) -> None:
    """A traced shape, count or axis raises ConcretizationTypeError, which
    says how to make it static, not "must be an integer, got Traced<...>"."""
    with pytest.raises(tl.ConcretizationTypeError, match="static"):
        tl.jit(call)(2)


@pytest.mark.parametrize("shift", [0, 1, 3, -2, 7, -11])
def test_roll_by_a_traced_shift_is_rolls_by_its_value(shift: int) -> None:
    import typelattice as tl

    x = np.arange(10, dtype=np.int16).reshape(2, 5)
    for axis in (1, 0, None):
        roll = tl.jit(lambda a, s, ax=axis: tnp.roll(a, s, axis=ax))
        got = roll(tnp.asarray(x), shift)
        np.testing.assert_array_equal(np.asarray(got), np.roll(x, shift, axis=axis))
        assert got.dtype == np.int16
    # One shift per row, under vmap.
    shifts = tnp.asarray([shift, 1 - shift])
    got = tl.vmap(lambda r, s: tnp.roll(r, s))(tnp.asarray(x), shifts)
    want = [np.roll(x[0], shift), np.roll(x[1], 1 - shift)]
    np.testing.assert_array_equal(np.asarray(got), np.stack(want))
