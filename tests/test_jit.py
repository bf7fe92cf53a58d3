"""Abstract evaluation: tracers, eval_shape, ShapeDtypeStruct and jit.

Behaviour a user of ``jax.jit`` and ``jax.eval_shape`` relies on: tracers
are arrays without values, refusing every conversion to a Python value;
traced functions promote exactly as eager ones do; jit traces once per
abstract signature (shapes, dtypes, weak flags, static values and
configuration) and replays the program, checking run-time values.
"""

from __future__ import annotations

import collections
import copy
import functools
import operator
import pickle
import threading
import time
import tracemalloc
import warnings
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp

S = tl.ShapeDtypeStruct


def arr(values: Any, dtype: str) -> tnp.Array:
    return tnp.asarray(np.asarray(values, dtype=dtype))


def check(x: Any, dtype: str, weak: bool, values: Any = None) -> None:
    assert isinstance(x, tnp.Array), repr(x)
    assert not isinstance(x, tl.Tracer), repr(x)
    assert (x.dtype, x.weak_type) == (np.dtype(dtype), weak), repr(x)
    if values is not None:
        np.testing.assert_array_equal(np.asarray(x), np.asarray(values, dtype=dtype))


def same(eager: Any, jitted: Any) -> None:
    """``jitted`` has the dtype, weak flag, shape and values of ``eager``."""
    assert isinstance(jitted, tnp.Array), repr(jitted)
    assert (jitted.dtype, jitted.weak_type, jitted.shape) == (
        eager.dtype,
        eager.weak_type,
        eager.shape,
    ), f"eager {eager!r}, jit {jitted!r}"
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(eager))


def capture(seen: list[Any]) -> Any:
    """A function that records its arguments (tracers) and returns the first."""

    def f(*args: Any) -> Any:
        seen.extend(args)
        return args[0]

    return f


def run_jit(fun: Any, *args: Any) -> Any:
    return tl.jit(fun)(*args)


TRANSFORMS = [
    pytest.param(run_jit, id="jit"),
    pytest.param(tl.eval_shape, id="eval_shape"),
]


# -- tracers --------------------------------------------------------------------


class TestTracer:
    @pytest.mark.parametrize("transform", TRANSFORMS)
    def test_is_an_array(self, transform: Any) -> None:
        seen: list[Any] = []
        transform(capture(seen), arr([1, 2, 3], "int8"))
        (t,) = seen
        assert isinstance(t, tl.Tracer)
        assert isinstance(t, tl.Array)
        assert isinstance(t, tnp.Array)

    @pytest.mark.parametrize("transform", TRANSFORMS)
    def test_attributes(self, transform: Any) -> None:
        seen: list[Any] = []
        transform(capture(seen), arr([[1, 2, 3], [4, 5, 6]], "int8"), 2)
        t, n = seen
        assert (t.shape, t.dtype, t.weak_type) == ((2, 3), np.dtype("int8"), False)
        assert (t.ndim, t.size) == (2, 6)
        assert (n.shape, n.dtype, n.weak_type) == ((), np.dtype("int32"), True)
        assert (n.ndim, n.size) == (0, 1)

    def test_repr_shows_abstract_value(self) -> None:
        seen: list[Any] = []
        tl.eval_shape(
            capture(seen),
            arr([1, 2, 3], "int8"),
            2,
            S((2, 4), "bfloat16"),
            S((), "float32", weak_type=True),
        )
        x, n, b, w = seen
        assert repr(x) == "Traced<int8[3]>"
        assert str(x) == "Traced<int8[3]>"
        assert f"{x}" == "Traced<int8[3]>"
        assert repr(b) == "Traced<bfloat16[2,4]>"
        assert "weak" in repr(n) and "int32[]" in repr(n)
        assert "weak" in repr(w) and "float32[]" in repr(w)
        assert "weak" not in repr(x)

    @pytest.mark.parametrize("transform", TRANSFORMS)
    @pytest.mark.parametrize(
        ("x64", "expected"),
        [
            (False, ("int32", "float32", "complex64")),
            (True, ("int64", "float64", "complex128")),
        ],
        ids=["x32", "x64"],
    )
    def test_python_scalars_are_weak_default_dtypes(
        self, transform: Any, x64: bool, expected: tuple[str, str, str]
    ) -> None:
        seen: list[Any] = []
        with tl.enable_x64(x64):
            transform(capture(seen), 3, 2.5, 1j, True)
        i, f, c, b = seen
        for t, dtype in zip((i, f, c), expected, strict=True):
            assert isinstance(t, tl.Tracer)
            assert (t.dtype, t.weak_type, t.shape) == (np.dtype(dtype), True, ())
        # A Python bool is a strong bool (bool has no weak type).
        assert isinstance(b, tl.Tracer)
        assert (b.dtype, b.weak_type, b.shape) == (np.dtype(bool), False, ())

    def test_python_scalar_results_have_eager_dtypes(self) -> None:
        x = arr([1, 2, 3], "int8")
        for k in (2, 2.5, True):
            same(x * k, tl.jit(lambda x, k: x * k)(x, k))
        check(tl.jit(lambda k: k)(2), "int32", True, 2)
        check(tl.jit(lambda k: k)(2.5), "float32", True, 2.5)
        check(tl.jit(lambda k: k)(True), "bool", False, True)

    def test_len_and_iteration_use_the_static_shape(self) -> None:
        x = arr([[1, 2, 3], [4, 5, 6]], "int8")

        def f(x: Any) -> Any:
            rows = list(x)
            return tnp.asarray(len(x)), rows[0] + rows[1]

        n, total = tl.jit(f)(x)
        check(n, "int32", True, 2)
        check(total, "int8", False, [5, 7, 9])

    def test_not_hashable_or_picklable(self) -> None:
        def f(x: Any) -> Any:
            with pytest.raises(TypeError):
                hash(x)
            with pytest.raises(TypeError):
                pickle.dumps(x)
            return x

        tl.eval_shape(f, arr([1, 2], "int8"))

    def test_numpy_on_the_left_defers_to_the_tracer(self) -> None:
        x = arr([1, 2, 3], "int8")

        def f(x: Any) -> Any:
            return np.array([1, 1, 1], np.int8) + x, np.int8(2) * x

        for eager, jitted in zip(f(x), tl.jit(f)(x), strict=True):
            same(eager, jitted)


# -- concretization ---------------------------------------------------------------


CONVERSIONS = [
    pytest.param(bool, r"bool\(\)", id="bool"),
    pytest.param(int, r"int\(\)", id="int"),
    pytest.param(float, r"float\(\)", id="float"),
    pytest.param(complex, r"complex\(\)", id="complex"),
    pytest.param(operator.index, r"operator\.index", id="index"),
    pytest.param(np.asarray, r"np\.asarray", id="np.asarray"),
    pytest.param(lambda t: t.item(), r"\.item\(\)", id="item"),
    pytest.param(lambda t: t.tolist(), r"\.tolist\(\)", id="tolist"),
]


class TestConcretization:
    def test_is_a_type_error(self) -> None:
        assert issubclass(tl.ConcretizationTypeError, TypeError)

    @pytest.mark.parametrize("transform", TRANSFORMS)
    @pytest.mark.parametrize(("convert", "what"), CONVERSIONS)
    def test_conversions_raise(self, transform: Any, convert: Any, what: str) -> None:
        def f(x: Any) -> Any:
            convert(x)
            return x

        with pytest.raises(tl.ConcretizationTypeError, match=what) as info:
            transform(f, arr(1.5, "float32"))
        message = str(info.value)
        assert "float32[]" in message  # the abstract value involved
        assert "static_argnums" in message
        assert "where" in message

    def test_python_if_raises(self) -> None:
        def f(x: Any) -> Any:
            if x > 0:
                return x
            return -x

        with pytest.raises(tl.ConcretizationTypeError, match=r"`if`"):
            tl.jit(f)(arr([1, -2], "int8"))
        # The fix the message suggests works.
        out = tl.jit(lambda x: tnp.where(x > 0, x, -x))(arr([1, -2], "int8"))
        check(out, "int8", False, [1, 2])

    def test_traced_shape_argument_raises(self) -> None:
        with pytest.raises(tl.ConcretizationTypeError, match="operator.index"):
            tl.jit(lambda n: tnp.asarray(list(range(n))))(3)
        with pytest.raises(tl.ConcretizationTypeError):
            tl.jit(lambda x, n: x.reshape(n, -1))(arr([1, 2, 3, 4], "int8"), 2)

    def test_static_argument_may_be_concrete(self) -> None:
        def f(x: Any, n: int) -> Any:
            if n > 0:
                return x * n
            return x - 1

        g = tl.jit(f, static_argnums=1)
        x = arr([1, 2], "int8")
        check(g(x, 3), "int8", False, [3, 6])
        check(g(x, 0), "int8", False, [0, 1])
        check(
            tl.jit(lambda x, n: x.reshape(n, -1), static_argnums=1)(x, 2),
            "int8",
            False,
            [[1], [2]],
        )

    def test_nonzero_needs_size(self) -> None:
        x = arr([0, 3, 0, 5], "int16")
        with pytest.raises(tl.ConcretizationTypeError, match="size"):
            tl.jit(tnp.nonzero)(x)
        with pytest.raises(tl.ConcretizationTypeError):
            tl.eval_shape(tnp.nonzero, x)
        jitted = tl.jit(lambda x: tnp.nonzero(x, size=3))(x)
        eager = tnp.nonzero(x, size=3)
        assert len(jitted) == len(eager) == 1
        same(eager[0], jitted[0])
        np.testing.assert_array_equal(np.asarray(jitted[0]), [1, 3, 0])
        (shape,) = tl.eval_shape(lambda x: tnp.nonzero(x, size=7), x)
        assert shape.shape == (7,)

    def test_boolean_mask_indexing_raises(self) -> None:
        x = arr([1, -2, 3], "int8")
        with pytest.raises(tl.ConcretizationTypeError, match="mask"):
            tl.jit(lambda x: x[x > 0])(x)
        with pytest.raises(tl.ConcretizationTypeError):
            tl.eval_shape(lambda x, m: x[m], x, arr([True, False, True], "bool"))

    def test_integer_array_indexing_works(self) -> None:
        x = arr([[1, 2, 3], [4, 5, 6]], "int8")
        idx = arr([2, 0], "int32")
        same(x[:, idx], tl.jit(lambda x, i: x[:, i])(x, idx))
        # A traced integer scalar index.
        same(x[1], tl.jit(lambda x, i: x[i])(x, 1))
        same(x[1, 2], tl.jit(lambda x, i, j: x[i, j])(x, 1, 2))

    def test_at_set_under_jit(self) -> None:
        x = arr([[1, 2, 3], [4, 5, 6]], "int8")
        f = tl.jit(lambda x, i, v: x.at[i].set(v))
        out = f(x, 1, 9)
        same(x.at[1].set(9), out)
        check(out, "int8", False, [[1, 2, 3], [9, 9, 9]])
        check(x, "int8", False, [[1, 2, 3], [4, 5, 6]])  # unchanged
        out = tl.jit(lambda x, i: x.at[:, i].add(10))(x, 0)
        same(x.at[:, 0].add(10), out)


# -- leaked tracers ---------------------------------------------------------------


class TestLeakedTracer:
    def leak(self, transform: Any) -> Any:
        leaked: list[Any] = []

        def f(x: Any) -> Any:
            leaked.append(x * 2)
            return x + 1

        transform(f, arr([1, 2, 3], "int8"))
        (t,) = leaked
        return t

    def test_is_not_a_concretization_error(self) -> None:
        assert not issubclass(tl.UnexpectedTracerError, tl.ConcretizationTypeError)

    @pytest.mark.parametrize("transform", TRANSFORMS)
    @pytest.mark.parametrize(
        "use",
        [
            pytest.param(lambda t: t + 1, id="add"),
            pytest.param(lambda t: 1 + t, id="radd"),
            pytest.param(bool, id="bool"),
            pytest.param(int, id="int"),
            pytest.param(np.asarray, id="np.asarray"),
            pytest.param(tnp.sin, id="sin"),
            pytest.param(tnp.sum, id="sum"),
            pytest.param(lambda t: t[0], id="getitem"),
            pytest.param(lambda t: t.astype("float32"), id="astype"),
            pytest.param(lambda t: t.at[0].set(1), id="at"),
        ],
    )
    def test_use_after_trace_raises(self, transform: Any, use: Any) -> None:
        t = self.leak(transform)
        with pytest.raises(tl.UnexpectedTracerError, match="ended"):
            use(t)

    def test_passed_to_or_closed_over_by_a_jitted_function(self) -> None:
        t = self.leak(run_jit)
        x = arr([1, 2, 3], "int8")
        with pytest.raises(tl.UnexpectedTracerError):
            tl.jit(lambda y: y * 2)(t)
        with pytest.raises(tl.UnexpectedTracerError):
            tl.jit(lambda y: y + t)(x)
        with pytest.raises(tl.UnexpectedTracerError):
            tl.jit(lambda y: t)(x)
        with pytest.raises(tl.UnexpectedTracerError):
            tl.eval_shape(lambda y: tnp.stack([y, t]), x)

    def test_static_information_stays_available(self) -> None:
        t = self.leak(run_jit)
        assert (t.shape, t.dtype) == ((3,), np.dtype("int8"))
        assert repr(t) == "Traced<int8[3]>"

    def test_use_from_another_thread_while_tracing(self) -> None:
        errors: list[BaseException] = []

        def f(x: Any) -> Any:
            def other() -> None:
                try:
                    x + 1
                except Exception as exc:
                    errors.append(exc)

            thread = threading.Thread(target=other)
            thread.start()
            thread.join()
            return x

        tl.jit(f)(arr([1], "int8"))
        assert len(errors) == 1
        assert isinstance(errors[0], tl.UnexpectedTracerError)

    def test_failed_trace_leaves_no_trace_running(self) -> None:
        kept: list[Any] = []

        def f(x: Any) -> Any:
            kept.append(x)
            raise RuntimeError("boom")

        with pytest.raises(RuntimeError, match="boom"):
            tl.jit(f)(arr([1, 2], "int8"))
        # Eager code runs eagerly again, and the tracer is dead.
        check(arr([1, 2], "int8") + 1, "int8", False, [2, 3])
        check(tnp.sum(arr([1, 2], "int8")), "int32", False, 3)
        with pytest.raises(tl.UnexpectedTracerError):
            kept[0] + 1


# -- eval_shape -------------------------------------------------------------------


class TestEvalShape:
    def test_nested_structures(self) -> None:
        x = arr([1, 2, 3], "int8")

        def f(pair: Any, mapping: Any, k: Any, nothing: Any = None) -> Any:
            (a, b), c = pair
            assert nothing is None
            return {
                "sum": a + b,
                "list": [mapping["w"] * k, None],
                "tuple": (c, (mapping["v"],)),
            }, None

        out = tl.eval_shape(
            f,
            ((x, S((3,), "float32")), [S((2, 2), "bfloat16")]),
            {"w": S((4,), "bfloat16", weak_type=True), "v": S((), "bool")},
            2.0,
            nothing=None,
        )
        assert out == (
            {
                "sum": S((3,), "float32"),
                # Weak bfloat16 times a Python float: both weak, so the
                # strong counterparts join (float32) and the result is weak.
                "list": [S((4,), "float32", weak_type=True), None],
                "tuple": ([S((2, 2), "bfloat16")], (S((), "bool"),)),
            },
            None,
        )
        assert isinstance(out, tuple)
        assert isinstance(out[0]["list"], list)
        assert isinstance(out[0]["tuple"], tuple)

    def test_namedtuple_structure(self) -> None:
        Pair = collections.namedtuple("Pair", "a b")
        out = tl.eval_shape(lambda p: Pair(p.b * 2, p.a), Pair(arr([1], "int8"), 2.5))
        assert type(out) is Pair
        assert out == Pair(S((), "float32", weak_type=True), S((1,), "int8"))

    def test_results_match_eager(self) -> None:
        x = arr([[1, 2, 3], [4, 5, 6]], "int8")
        y = arr([0.5, 1.5, 2.5], "bfloat16")

        def f(x: Any, y: Any, k: Any) -> Any:
            return (
                x * k,
                x + y,
                tnp.tanh(y) * 2.0,
                x.sum(axis=0),
                x.mean(),
                x.T @ x,
                (x > 2) & (x < 6),
                tnp.where(x > 2, y, 0.5),
            )

        shapes = tl.eval_shape(f, x, y, 3)
        for shape, eager in zip(shapes, f(x, y, 3), strict=True):
            assert shape == S(eager.shape, eager.dtype, eager.weak_type), repr(eager)

    def test_shape_dtype_struct_weak_flag_promotes(self) -> None:
        x = S((3,), "int8")
        weak = S((), "int32", weak_type=True)
        strong = S((), "int32")
        assert tl.eval_shape(operator.add, x, weak) == S((3,), "int8")
        assert tl.eval_shape(operator.add, x, strong) == S((3,), "int32")
        assert tl.eval_shape(operator.add, weak, weak) == weak

    def test_python_scalars_are_weak(self) -> None:
        assert tl.eval_shape(lambda k: k, 2) == S((), "int32", weak_type=True)
        assert tl.eval_shape(lambda k: k, 2.5) == S((), "float32", weak_type=True)
        assert tl.eval_shape(lambda k: k, 1j) == S((), "complex64", weak_type=True)
        assert tl.eval_shape(lambda k: k, True) == S((), "bool")
        with tl.enable_x64(True):
            assert tl.eval_shape(lambda k: k, 2) == S((), "int64", weak_type=True)
        x = S((2,), "uint8")
        assert tl.eval_shape(operator.mul, x, 2) == S((2,), "uint8")
        assert tl.eval_shape(operator.mul, x, 2.0) == S((2,), "float32", weak_type=True)

    def test_numpy_inputs_are_canonicalized(self) -> None:
        big = np.arange(3, dtype=np.int64)
        assert tl.eval_shape(lambda a: a, big) == S((3,), "int32")
        assert tl.eval_shape(lambda a: a, np.float64(1.5)) == S((), "float32")
        with tl.enable_x64(True):
            assert tl.eval_shape(lambda a: a, big) == S((3,), "int64")

    def test_shape_dtype_struct_int64_in_32_bit_mode(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", tl.X64DtypeWarning)
            out = tl.eval_shape(lambda a: a + 1, S((3,), "int64"))
        assert out == S((3,), "int32")

    def test_huge_elementwise_computes_nothing(self) -> None:
        x = S((100_000, 100_000), "int8")  # 10 GB if it were allocated

        def f(x: Any) -> Any:
            return x * 2, tnp.sin(x * 2 + 1.5) > 0, tnp.maximum(x, -x) // 3

        tracemalloc.start()
        start = time.perf_counter()
        try:
            out = tl.eval_shape(f, x)
        finally:
            elapsed = time.perf_counter() - start
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        assert elapsed < 5
        assert peak < 10_000_000
        small = arr([[1, 2], [3, 4]], "int8")
        for shape, eager in zip(out, f(small), strict=True):
            assert shape == S(x.shape, eager.dtype, eager.weak_type)

    def test_non_array_argument(self) -> None:
        with pytest.raises(TypeError, match="str"):
            tl.eval_shape(lambda a: a, "abc")
        with pytest.raises(TypeError, match="str"):
            tl.eval_shape(lambda a: a, {"k": [arr([1], "int8"), "x"]})
        with pytest.raises(TypeError, match="object"):
            tl.eval_shape(lambda a: a, object())

    def test_non_array_result(self) -> None:
        with pytest.raises(TypeError, match="str"):
            tl.eval_shape(lambda a: "text", arr([1], "int8"))

    def test_constant_results(self) -> None:
        out = tl.eval_shape(
            lambda a: (1, 2.5, True, tnp.zeros(2, "int8")), S((), "int8")
        )
        assert out == (
            S((), "int32", weak_type=True),
            S((), "float32", weak_type=True),
            S((), "bool"),
            S((2,), "int8"),
        )

    def test_keyword_arguments(self) -> None:
        out = tl.eval_shape(lambda a, *, b: a * b, S((2,), "int16"), b=S((2,), "int8"))
        assert out == S((2,), "int16")

    def test_inside_jit(self) -> None:
        def f(x: Any) -> Any:
            shape = tl.eval_shape(lambda y: y.sum(axis=0), x)
            return tnp.zeros(shape.shape, shape.dtype) + x[0]

        check(tl.jit(f)(arr([[1, 2], [3, 4]], "int8")), "int32", False, [1, 2])

    def test_inner_eval_shape_may_close_over_outer_tracers(self) -> None:
        def f(x: Any) -> Any:
            inner = tl.eval_shape(lambda k: x * k, 2)
            return tnp.zeros(inner.shape, inner.dtype)

        check(tl.jit(f)(arr([1, 2], "int8")), "int8", False, [0, 0])


# -- ShapeDtypeStruct -------------------------------------------------------------


class TestShapeDtypeStruct:
    def test_attributes(self) -> None:
        s = S([2, np.int64(3)], np.float32)
        assert s.shape == (2, 3)
        assert all(type(d) is int for d in s.shape)
        assert s.dtype == np.dtype("float32")
        assert s.weak_type is False
        assert (s.ndim, s.size) == (2, 6)
        assert S((), "bfloat16").size == 1
        assert S((4, 0), "int8").size == 0

    def test_equality_and_hash(self) -> None:
        a = S((2, 3), "float32")
        for spelling in (np.float32, np.dtype("float32"), "f4"):
            b = S([2, 3], spelling)
            assert a == b and hash(a) == hash(b)
        assert a != S((2, 3), "float32", weak_type=True)
        assert a != S((3, 2), "float32")
        assert a != S((2, 3), "float64")
        assert a != (2, 3)
        assert len({a, S((2, 3), "f4"), S((2, 3), "float32", weak_type=True)}) == 2

    def test_repr(self) -> None:
        assert (
            repr(S((2, 3), "float32"))
            == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
        )
        assert repr(S((), "int32", weak_type=True)) == (
            "ShapeDtypeStruct(shape=(), dtype=int32, weak_type=True)"
        )
        # The dtype asked for, not canonicalized.
        assert "int64" in repr(S((1,), "int64"))

    def test_immutable(self) -> None:
        s = S((2,), "int8")
        with pytest.raises(AttributeError):
            s.shape = (3,)  # type: ignore[misc]
        with pytest.raises(AttributeError):
            s.weak_type = True  # type: ignore[misc]
        with pytest.raises(AttributeError):
            s.extra = 1  # type: ignore[attr-defined]
        assert s == S((2,), "int8")

    def test_attributes_cannot_be_deleted(self) -> None:
        s = S((2,), "int8")
        with pytest.raises(AttributeError, match="immutable"):
            del s.shape
        assert s.shape == (2,)

    @pytest.mark.parametrize(
        "duplicate",
        [copy.copy, copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))],
        ids=["copy", "deepcopy", "pickle"],
    )
    def test_copy_and_pickle(self, duplicate: Any) -> None:
        s = S((2, 3), "bfloat16", weak_type=True)
        assert duplicate(s) == s

    @pytest.mark.parametrize(
        ("shape", "dtype", "error", "match"),
        [
            ((-1,), "int8", ValueError, "negative"),
            ((2, -3), "int8", ValueError, "negative"),
            ((1.5,), "int8", TypeError, "integers"),
            (("2",), "int8", TypeError, "integers"),
            ((2,), None, TypeError, "dtype"),
            ((2,), "not_a_dtype", TypeError, "not_a_dtype"),
        ],
    )
    def test_validation(self, shape: Any, dtype: Any, error: Any, match: str) -> None:
        with pytest.raises(error, match=match):
            S(shape, dtype)


# -- jit: results -----------------------------------------------------------------


def multi_op(a: Any, b: Any, c: Any, k: Any, w: Any) -> Any:
    t = a * k + b
    u = tnp.tanh(c) * w - a
    return (
        t,
        u,
        (t * u).sum(),
        tnp.maximum(a, 3),
        a // 2,
        tnp.where(a > 1, b, w),
        c.mean(),
        a.astype("float32") / k,
        a @ a,
        -a,
    )


class TestJitResults:
    @pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
    def test_match_eager(self, x64: bool) -> None:
        with tl.enable_x64(x64):
            a = arr([1, 2, 3], "int8")
            b = arr([0.5, 1.5, 2.5], "bfloat16")
            c = arr([0.125, 0.25, 0.5], "float32")
            jitted = tl.jit(multi_op)
            eager = multi_op(a, b, c, 3, 2.5)
            for _ in range(2):  # the trace, then the cached program
                out = jitted(a, b, c, 3, 2.5)
                assert len(out) == len(eager)
                for e, j in zip(eager, out, strict=True):
                    same(e, j)
            # Other values, same program.
            eager = multi_op(a, b, c, -2, 0.75)
            for e, j in zip(eager, jitted(a, b, c, -2, 0.75), strict=True):
                same(e, j)
            assert jitted.cache_info().misses == 1

    def test_weak_inputs_stay_weak(self) -> None:
        w = tnp.asarray(2.5)
        same(w * 2, tl.jit(lambda w: w * 2)(w))
        same(w * 2, tl.jit(lambda w, k: w * k)(w, 2))
        check(tl.jit(lambda w: w)(w), "float32", True, 2.5)

    def test_constant_and_scalar_outputs(self) -> None:
        f = tl.jit(lambda x: (1, 2.5, True, tnp.zeros(2, "int8"), np.float32(1), x))
        for _ in range(2):
            i, fl, b, z, n, x = f(arr([7], "int8"))
            check(i, "int32", True, 1)
            check(fl, "float32", True, 2.5)
            check(b, "bool", False, True)
            check(z, "int8", False, [0, 0])
            check(n, "float32", False, 1)
            check(x, "int8", False, [7])
        with tl.enable_x64(True):
            check(tl.jit(lambda x: 1)(arr([7], "int8")), "int64", True, 1)

    def test_none_and_empty_outputs(self) -> None:
        x = arr([1], "int8")
        assert tl.jit(lambda x: None)(x) is None
        assert tl.jit(lambda x: ())(x) == ()
        assert tl.jit(lambda x: {"a": None, "b": []})(x) == {"a": None, "b": []}

    def test_non_array_output(self) -> None:
        with pytest.raises(TypeError, match="str"):
            tl.jit(lambda x: "text")(arr([1], "int8"))

    def test_pytree_arguments_and_outputs(self) -> None:
        Pair = collections.namedtuple("Pair", "a b")
        x = arr([1, 2, 3], "int8")

        def f(p: Any, d: Any) -> Any:
            return (
                Pair(p.a + d["k"][0], [p.b, None]),
                {"z": d["k"][1] * 2, "y": p.a},
            )

        g = tl.jit(f)
        out = g(Pair(x, 2.0), {"k": (x, 3)})
        assert type(out) is tuple and type(out[0]) is Pair
        assert type(out[0].b) is list and out[0].b[1] is None
        assert sorted(out[1]) == ["y", "z"]
        check(out[0].a, "int8", False, [2, 4, 6])
        check(out[0].b[0], "float32", True, 2.0)
        check(out[1]["z"], "int32", True, 6)
        check(out[1]["y"], "int8", False, [1, 2, 3])
        # Another structure traces again.
        g(Pair(x, 2.0), {"k": [x, 3]})
        assert g.cache_info().misses == 2

    def test_dynamic_keyword_arguments(self) -> None:
        seen: list[Any] = []

        def f(x: Any, y: Any = 1) -> Any:
            seen.append(y)
            return x * y

        g = tl.jit(f)
        x = arr([1, 2], "int8")
        check(g(x, y=3), "int8", False, [3, 6])
        check(g(x=x, y=4), "int8", False, [4, 8])
        check(g(x, y=2.5), "float32", True, [2.5, 5])
        assert all(isinstance(y, tl.Tracer) for y in seen)
        assert seen[0].weak_type

    def test_numpy_array_arguments(self) -> None:
        f = tl.jit(lambda x, y: x + y)
        i64 = np.array([1, 2], np.int64)
        u8 = np.array([3, 4], np.uint8)
        same(tnp.asarray(i64) + tnp.asarray(u8), f(i64, u8))
        check(f(i64, u8), "int32", False, [4, 6])
        check(f(np.float64(1.5), 1), "float32", False, 2.5)
        bf = np.array([1.5], dtype=tnp.bfloat16)
        check(f(bf, 1.0), "bfloat16", False, [2.5])
        with tl.enable_x64(True):
            check(f(i64, u8), "int64", False, [4, 6])
        with pytest.raises(TypeError):
            f(np.array(["a"]), 1)

    def test_results_do_not_alias_numpy_arguments(self) -> None:
        source = np.array([1, 2, 3], np.int8)
        out = tl.jit(lambda x: (x, x.reshape(3, 1)))(source)
        source[0] = 100
        check(out[0], "int8", False, [1, 2, 3])
        check(out[1], "int8", False, [[1], [2], [3]])

    def test_non_array_argument_suggests_static(self) -> None:
        f = tl.jit(lambda x, mode: x)
        with pytest.raises(TypeError, match="static_argnums"):
            f(arr([1], "int8"), "fast")
        with pytest.raises(TypeError, match="static_argnums"):
            f(arr([1], "int8"), mode="fast")
        with pytest.raises(TypeError, match="static_argnums"):
            f(arr([1], "int8"), object())

    def test_not_a_function(self) -> None:
        with pytest.raises(TypeError):
            tl.jit(3)  # type: ignore[call-overload]

    def test_error_while_tracing_is_not_cached(self) -> None:
        calls: list[int] = []

        def f(x: Any) -> Any:
            calls.append(1)
            return x + "s"

        g = tl.jit(f)
        for expected in (1, 2):
            with pytest.raises(TypeError):
                g(arr([1], "int8"))
            assert len(calls) == expected
            assert g.cache_info().currsize == 0


# -- jit: caching ------------------------------------------------------------------


class TestJitCache:
    def test_cache_info(self) -> None:
        traces: list[int] = []

        @tl.jit
        def f(x: Any, y: Any) -> Any:
            traces.append(1)
            return x + y

        a = arr([1, 2, 3], "int8")
        info = f.cache_info()
        assert (info.hits, info.misses, info.currsize) == (0, 0, 0)
        check(f(a, 1), "int8", False, [2, 3, 4])
        info = f.cache_info()
        assert isinstance(info, tl.CacheInfo)
        assert (info.hits, info.misses, info.currsize) == (0, 1, 1)
        check(f(a, 2), "int8", False, [3, 4, 5])  # another value: same program
        check(f(arr([4, 5, 6], "int8"), 2), "int8", False, [6, 7, 8])
        info = f.cache_info()
        assert (info.hits, info.misses, info.currsize) == (2, 1, 1)
        assert len(traces) == 1

    @pytest.mark.parametrize(
        ("second", "dtype", "weak"),
        [
            pytest.param((arr([1, 2], "int8"), 1), "int8", False, id="shape"),
            pytest.param((arr([1, 2, 3], "int16"), 1), "int16", False, id="dtype"),
            pytest.param(
                (arr([1, 2, 3], "int8"), arr(1, "int32")), "int32", False, id="strong"
            ),
            pytest.param((arr([1, 2, 3], "int8"), 1.0), "float32", True, id="float"),
            pytest.param((arr([1, 2, 3], "int8"), True), "int8", False, id="bool"),
        ],
    )
    def test_new_abstract_signature_retraces(
        self, second: tuple[Any, Any], dtype: str, weak: bool
    ) -> None:
        traces: list[int] = []

        def f(x: Any, y: Any) -> Any:
            traces.append(1)
            return x + y

        g = tl.jit(f)
        check(g(arr([1, 2, 3], "int8"), 1), "int8", False, [2, 3, 4])
        out = g(*second)
        same(f(*second), out)
        check(out, dtype, weak)
        assert len(traces) == 3  # two traces, plus the eager call
        assert g.cache_info().misses == 2
        assert g.cache_info().currsize == 2

    def test_weak_array_and_python_scalar_share_a_program(self) -> None:
        g = tl.jit(lambda x, y: x + y)
        a = arr([1, 2], "int16")
        check(g(a, 2), "int16", False, [3, 4])
        check(g(a, tnp.asarray(5)), "int16", False, [6, 7])
        assert g.cache_info().misses == 1

    def test_enable_x64_retraces(self) -> None:
        g = tl.jit(lambda x, y: x * y)
        a = arr([1, 2], "int16")
        check(g(a, 2.0), "float32", True, [2, 4])
        with tl.enable_x64(True):
            check(g(a, 2.0), "float64", True, [2, 4])
        check(g(a, 2.0), "float32", True, [2, 4])
        info = g.cache_info()
        assert (info.hits, info.misses) == (1, 2)

    def test_dtype_promotion_retraces(self) -> None:
        g = tl.jit(lambda x, y: x + y)
        a, b = arr([1, 2], "int16"), arr(2, "int32")
        check(g(a, b), "int32", False, [3, 4])
        with tl.dtype_promotion("strict"), pytest.raises(tl.TypePromotionError):
            g(a, b)
        check(g(a, b), "int32", False, [3, 4])

    def test_rank_promotion_warns_while_tracing(self) -> None:
        g = tl.jit(lambda x, y: x + y)
        a, b = arr([1, 2, 3], "int8"), arr([[1], [2]], "int8")
        with tl.rank_promotion("warn"):
            with pytest.warns(tnp.RankPromotionWarning):
                out = g(a, b)
            check(out, "int8", False, [[2, 3, 4], [3, 4, 5]])
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                g(a, b)  # the cached program: traced already
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            g(a, b)  # allowed again (another configuration)
        with tl.rank_promotion("raise"), pytest.raises(ValueError, match="rank"):
            g(a, b)

    def test_clear_cache(self) -> None:
        traces: list[int] = []

        def f(x: Any) -> Any:
            traces.append(1)
            return x * 2

        g = tl.jit(f)
        a = arr([1], "int8")
        g(a)
        g(a)
        assert len(traces) == 1
        g.clear_cache()
        assert g.cache_info().currsize == 0
        check(g(a), "int8", False, [2])
        assert len(traces) == 2
        assert g.cache_info().currsize == 1

    def test_side_effects_only_while_tracing(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        log: list[Any] = []

        @tl.jit
        def f(x: Any) -> Any:
            print("tracing", x)
            log.append(x.shape)
            return x + 1

        a = arr([1, 2], "int8")
        for _ in range(3):
            check(f(a), "int8", False, [2, 3])
        assert capsys.readouterr().out == "tracing Traced<int8[2]>\n"
        assert log == [(2,)]
        f(arr([1, 2, 3], "int8"))
        assert capsys.readouterr().out == "tracing Traced<int8[3]>\n"
        assert log == [(2,), (3,)]


# -- jit: static arguments ---------------------------------------------------------


class TestJitStatic:
    def test_static_argnums(self) -> None:
        seen: list[Any] = []

        def f(x: Any, n: Any) -> Any:
            seen.append(n)
            return tnp.tile(x, n)

        g = tl.jit(f, static_argnums=1)
        x = arr([1, 2], "int8")
        check(g(x, 2), "int8", False, [1, 2, 1, 2])
        check(g(x, 2), "int8", False, [1, 2, 1, 2])
        check(g(x, 3), "int8", False, [1, 2, 1, 2, 1, 2])
        assert seen == [2, 3]  # plain Python ints, one trace each
        info = g.cache_info()
        assert (info.hits, info.misses) == (1, 2)

    def test_negative_static_argnums(self) -> None:
        seen: list[Any] = []

        def f(x: Any, n: Any) -> Any:
            seen.append(n)
            return x.reshape(n)

        g = tl.jit(f, static_argnums=-1)
        x = arr([1, 2, 3, 4], "int8")
        check(g(x, (2, 2)), "int8", False, [[1, 2], [3, 4]])
        check(g(x, (4, 1)), "int8", False, [[1], [2], [3], [4]])
        assert seen == [(2, 2), (4, 1)]

    def test_static_argnames(self) -> None:
        seen: list[Any] = []

        def f(x: Any, *, mode: str = "add") -> Any:
            seen.append(mode)
            return x + 1 if mode == "add" else x * 3

        g = tl.jit(f, static_argnames="mode")
        x = arr([1, 2], "int8")
        check(g(x, mode="add"), "int8", False, [2, 3])
        check(g(x, mode="mul"), "int8", False, [3, 6])
        check(g(x, mode="mul"), "int8", False, [3, 6])
        check(g(x), "int8", False, [2, 3])
        assert seen == ["add", "mul", "add"]

    def test_static_argnums_given_by_keyword(self) -> None:
        seen: list[Any] = []

        def f(x: Any, n: Any) -> Any:
            seen.append(n)
            return x.reshape(n, -1)

        x = arr([1, 2, 3, 4], "int8")
        check(tl.jit(f, static_argnums=1)(x, n=2), "int8", False, [[1, 2], [3, 4]])
        check(tl.jit(f, static_argnames="n")(x, 4), "int8", False, [[1], [2], [3], [4]])
        assert seen == [2, 4]

    def test_unhashable_static_argument(self) -> None:
        def f(x: Any, n: Any) -> Any:
            return x.reshape(n)

        x = arr([1, 2, 3, 4], "int8")
        with pytest.raises(TypeError, match=r"hashable.*list|list.*hashable"):
            tl.jit(f, static_argnums=1)(x, [2, 2])
        with pytest.raises(TypeError, match="'n'"):
            tl.jit(f, static_argnames="n")(x, n=[2, 2])
        check(tl.jit(f, static_argnums=1)(x, (2, 2)), "int8", False, [[1, 2], [3, 4]])

    def test_static_values_of_another_type_retrace(self) -> None:
        def f(x: Any, k: Any) -> Any:
            return x * k

        g = tl.jit(f, static_argnums=1)
        x = arr([1, 2], "int8")
        same(f(x, 2), g(x, 2))
        same(f(x, 2.0), g(x, 2.0))  # float32, weak: not the int8 program
        same(f(x, True), g(x, True))


# -- jit: forms ---------------------------------------------------------------------


class TestJitForms:
    def test_decorator_forms(self) -> None:
        @tl.jit
        def double(x: Any) -> Any:
            """Twice x."""
            return x * 2

        @tl.jit(static_argnums=1)
        def repeat(x: Any, n: int) -> Any:
            return tnp.tile(x, n)

        x = arr([1, 2], "int8")
        check(double(x), "int8", False, [2, 4])
        check(repeat(x, 2), "int8", False, [1, 2, 1, 2])
        assert double.__name__ == "double"
        assert double.__doc__ == "Twice x."

    def test_jit_of_namespace_functions_and_partials(self) -> None:
        x = arr([1, 2], "int8")
        same(tnp.sin(x), tl.jit(tnp.sin)(x))
        same(tnp.sum(x, axis=0), tl.jit(functools.partial(tnp.sum, axis=0))(x))
        same(tnp.sum(x, axis=0), tl.jit(tnp.sum, static_argnames="axis")(x, axis=0))

    def test_nested_jit(self) -> None:
        inner = tl.jit(lambda x, y: x * y)
        outer = tl.jit(lambda x: inner(x, 2) + 1)
        x = arr([1, 2, 3], "int8")
        check(outer(x), "int8", False, [3, 5, 7])
        check(outer(x), "int8", False, [3, 5, 7])
        check(tl.jit(inner)(x, 3), "int8", False, [3, 6, 9])
        assert outer.cache_info().misses == 1
        # The inner function is still usable on its own.
        check(inner(x, 2), "int8", False, [2, 4, 6])

    def test_nested_jit_matches_direct_call(self) -> None:
        power = tl.jit(lambda b, n: b**n)
        base = tnp.asarray(3)  # weak int32
        direct = power(base, 2)
        same(direct, tl.jit(lambda b: power(b, 2))(base))

    def test_nested_jit_arguments_are_traced(self) -> None:
        scale = tl.jit(lambda x, n: x * int(n))
        x = arr([1, 2], "int8")
        with pytest.raises(tl.ConcretizationTypeError):
            scale(x, 2)
        with pytest.raises(tl.ConcretizationTypeError):
            tl.jit(lambda x: scale(x, 2))(x)

    def test_method_decorator(self) -> None:
        class Scaler:
            def __init__(self, k: int) -> None:
                self.k = k

            def __hash__(self) -> int:
                return hash(self.k)

            def __eq__(self, other: object) -> bool:
                return isinstance(other, Scaler) and other.k == self.k

            @functools.partial(tl.jit, static_argnums=0)
            def scale(self, x: Any) -> Any:
                return x * self.k

            @tl.jit
            def plain(self, x: Any) -> Any:
                return x

        x = arr([1, 2], "int8")
        check(Scaler(3).scale(x), "int8", False, [3, 6])
        check(Scaler(4).scale(x), "int8", False, [4, 8])
        check(Scaler(3).scale(x), "int8", False, [3, 6])
        assert Scaler.scale.cache_info().misses == 2
        # self is not an array: as in JAX, it must be static.
        with pytest.raises(TypeError, match="static_argnums"):
            Scaler(3).plain(x)


# -- jit: values checked when the program runs -------------------------------------


class TestJitRunTimeChecks:
    def test_python_int_out_of_int32_range(self) -> None:
        g = tl.jit(lambda x, n: x + n)
        a = arr([0, -1], "int32")
        with pytest.raises(OverflowError):
            g(a, 2**31)
        with pytest.raises(OverflowError):
            g(a, -(2**31) - 1)
        check(g(a, 2**31 - 1), "int32", False, [2**31 - 1, 2**31 - 2])
        check(g(a, -(2**31) + 1), "int32", False, [-(2**31) + 1, -(2**31)])
        with tl.enable_x64(True):
            b = arr([1, 2], "int64")
            check(g(b, 2**40), "int64", False, [2**40 + 1, 2**40 + 2])

    def test_weak_int_converted_at_run_time(self) -> None:
        g = tl.jit(lambda x, n: x + n)
        a = arr([1, 2], "int8")
        check(g(a, 3), "int8", False, [4, 5])
        with pytest.raises(OverflowError, match="300"):
            g(a, 300)
        with pytest.raises(OverflowError):
            g(a, -129)
        check(g(a, 4), "int8", False, [5, 6])
        assert g.cache_info().misses == 1  # the same program checked each value
        with pytest.raises(OverflowError):
            a + 300  # eagerly too

    def test_weak_float_overflow_at_run_time(self) -> None:
        g = tl.jit(lambda x, y: x * y)
        h = arr([1, 2], "float16")
        check(g(h, 2.0), "float16", False, [2, 4])
        with pytest.raises(OverflowError):
            g(h, 1e6)
        with pytest.raises(OverflowError):
            h * 1e6
        assert g.cache_info().misses == 1

    def test_negative_integer_exponent(self) -> None:
        g = tl.jit(lambda x, n: x**n)
        a = arr([1, 2, 3], "int8")
        check(g(a, 2), "int8", False, [1, 4, 9])
        with pytest.raises(TypeError, match="negative"):
            g(a, -1)
        with pytest.raises(TypeError):
            g(a, arr([2, -1, 1], "int8"))
        inverse = g(arr([1.0, 2.0], "float32"), -1)
        check(inverse, "float32", False)
        np.testing.assert_allclose(np.asarray(inverse), [1, 0.5], rtol=5e-7)  # 4 ulps
        with pytest.raises(TypeError):
            a**-1


# -- programs -----------------------------------------------------------------------


class TestProgram:
    def test_shows_resolved_dtypes(self) -> None:
        g = tl.jit(lambda x, y: x * y + 1)
        shown = str(g.program(arr([1, 2, 3], "int8"), 2))
        assert "int8" in shown
        assert "multiply" in shown and "add" in shown
        assert "weak" in shown  # the Python scalar
        shown = str(g.program(arr([1, 2], "uint16"), 2.5))
        assert "uint16" in shown and "float32" in shown
        shown = str(g.program(S((4, 4), "bfloat16"), 2))
        assert "bfloat16[4,4]" in shown

    def test_dead_code_is_dropped(self) -> None:
        def f(x: Any, y: Any) -> Any:
            unused = tnp.cos(x.astype("float16")) * 3  # noqa: F841
            total = x.sum()  # noqa: F841
            return x * y

        shown = str(tl.jit(f).program(arr([1, 2, 3], "int8"), 2))
        assert "multiply" in shown
        for name in ("cos", "sum", "float16", "astype"):
            assert name not in shown, shown
        check(tl.jit(f)(arr([1, 2, 3], "int8"), 2), "int8", False, [2, 4, 6])

    def test_static_arguments(self) -> None:
        g = tl.jit(lambda x, n: tnp.tile(x, n), static_argnums=1)
        assert "int8[6]" in str(g.program(arr([1, 2, 3], "int8"), 2))
