"""typelattice.lax: the primitives, their rules, and what a user sees.

The values, dtypes and weak flags of every function are checked against
JAX in test_lax_golden.py; here: the registry of primitives, the Python
scalar rule and its overflow checks, errors whose suggested fix works,
data safety (results never alias the caller's buffers), agreement with
typelattice.numpy (``astype``, indexing and ``.at[]`` as gathers and
scatters) and the configuration modes.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax
from typelattice._lax._primitive import PRIMITIVES, Primitive, ShapedArray


def check(x: Any, dtype: str, weak: bool, values: Any = None) -> None:
    assert isinstance(x, tnp.Array), repr(x)
    assert (x.dtype, x.weak_type) == (np.dtype(dtype), weak), repr(x)
    if values is not None:
        np.testing.assert_array_equal(np.asarray(x), np.asarray(values, dtype=dtype))


# -- the primitives ---------------------------------------------------------


@pytest.mark.parametrize("name", list(PRIMITIVES))
def test_every_primitive_has_its_rules(name: str) -> None:
    prim = PRIMITIVES[name]
    assert prim.name == name
    assert callable(prim.impl) and callable(prim.abstract_eval)
    # Every primitive is differentiable (test_lax_rules.py checks the rules).
    assert callable(prim.jvp)


def test_rules_are_registered_on_the_primitive() -> None:
    prim = Primitive("test_double")
    try:

        @prim.def_abstract_eval
        def _abstract(x: ShapedArray) -> ShapedArray:
            return x

        @prim.def_impl
        def _impl(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
            return 2 * x

        jvp_rule = prim.def_jvp(lambda primals, tangents: tangents)
        assert prim.jvp is jvp_rule and prim.transpose is None
        out = prim.bind(tnp.asarray(np.int8([1, 2])))
        check(out, "int8", False, [2, 4])
    finally:
        del PRIMITIVES["test_double"]


def test_a_primitive_name_is_defined_once() -> None:
    with pytest.raises(ValueError, match="'add' is defined already"):
        Primitive("add")


def test_a_primitive_without_rules_cannot_be_bound() -> None:
    prim = Primitive("test_empty")
    try:
        with pytest.raises(NotImplementedError, match="test_empty has no rules"):
            prim.bind(tnp.asarray(1.0))
    finally:
        del PRIMITIVES["test_empty"]


def test_abstract_evaluation_needs_no_values() -> None:
    from typelattice._lax._dot import dot_general_p

    huge = ShapedArray((10**6, 10**6), np.dtype("bfloat16"))
    out = dot_general_p.abstract_eval(  # type: ignore[misc]
        huge,
        ShapedArray((10**6, 7), np.dtype("float32")),
        dimension_numbers=(((1,), (0,)), ((), ())),
        preferred_element_type=None,
    )
    assert out == ShapedArray((10**6, 7), np.dtype("float32"))


PUBLIC_FUNCTIONS = [
    name for name in lax.__all__ if inspect.isfunction(getattr(lax, name))
]


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_public_functions_are_documented(name: str) -> None:
    doc = inspect.getdoc(getattr(lax, name)) or ""
    assert "Args:" in doc and "Returns:" in doc and ">>> " in doc


# -- no implicit promotion --------------------------------------------------


def test_different_dtypes_raise_naming_both_and_the_fix_works() -> None:
    x, y = np.int8([1, 2]), np.int16([3, 4])
    with pytest.raises(TypeError) as info:
        lax.add(x, y)
    message = str(info.value)
    assert "int8, int16" in message
    assert "lax.convert_element_type(y, 'int8')" in message
    assert "typelattice.numpy.add" in message
    check(lax.add(x, lax.convert_element_type(y, "int8")), "int8", False, [4, 6])
    check(tnp.add(x, y), "int16", False, [4, 6])


@pytest.mark.parametrize(
    ("call", "dtype", "weak", "values"),
    [
        (lambda: lax.add(np.int8([1, 2]), 3), "int8", False, [4, 5]),
        (lambda: lax.mul(2, np.uint8([3])), "uint8", False, [6]),
        (lambda: lax.add(np.float16([1.0]), 2), "float16", False, [3.0]),
        (
            lambda: lax.sub(np.array([1], ml_dtypes.bfloat16), 0.5),
            "bfloat16",
            False,
            [0.5],
        ),
        (lambda: lax.add(tnp.asarray(1.0), 2), "float32", True, 3.0),
        (lambda: lax.add(1, 2), "int32", True, 3),
        (lambda: lax.max(1.5, 2.5), "float32", True, 2.5),
        (lambda: lax.lt(1, 2), "bool", True, True),
        (lambda: lax.clamp(0, np.int8([-5, 9]), 5), "int8", False, [0, 5]),
        (lambda: lax.bitwise_and(np.array([True]), True), "bool", False, [True]),
    ],
)
def test_python_scalars_take_the_dtype_they_meet(
    call: Callable[[], Any], dtype: str, weak: bool, values: Any
) -> None:
    check(call(), dtype, weak, values)


@pytest.mark.parametrize(
    ("call", "dtypes"),
    [
        (lambda: lax.add(np.int8([1]), 1.5), "int8, float32"),  # no float in int8
        (lambda: lax.add(np.float32([1]), 1j), "float32, complex64"),
        (lambda: lax.bitwise_and(np.array([True]), 1), "bool, int32"),
        (lambda: lax.add(1, 2.0), "int32, float32"),
        # Weak arrays are arrays: their dtype must match (as jax.lax).
        (lambda: lax.add(np.int8([1]), tnp.asarray(1)), "int8, int32"),
    ],
)
def test_scalars_that_do_not_fit_the_kind_are_refused(
    call: Callable[[], Any], dtypes: str
) -> None:
    with pytest.raises(TypeError, match=f"same dtypes, got {dtypes}"):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: lax.add(np.uint8([1]), 300),
        lambda: lax.sub(np.uint8([1]), -1),
        lambda: lax.add(np.int8([1]), 128),
        lambda: lax.add(np.float16([1.0]), 1e6),
        lambda: lax.max(np.int32([1]), 2**40),
        lambda: lax.pad(np.int8([1]), 1000, [(1, 1, 0)]),
        lambda: lax.convert_element_type(300, "uint8"),
        lambda: lax.full((2,), 300, "int8"),
    ],
)
def test_python_scalars_that_do_not_fit_raise_overflow(call: Callable[[], Any]) -> None:
    # JAX wraps or turns them into inf; typelattice refuses to change them.
    with pytest.raises(OverflowError, match="does not fit|cannot be represented"):
        call()


def test_full_and_convert_element_type_take_a_python_scalar_as_a_value() -> None:
    # Rounded to the dtype, as JAX, not first put in the default int32.
    check(lax.full((), 2**31, "float32"), "float32", False, 2147483648.0)
    check(lax.full((2,), 2**40 + 1, "bfloat16"), "bfloat16", False, [2.0**40] * 2)
    check(lax.convert_element_type(2**31, "float32"), "float32", False, 2**31)
    check(lax.full((), 2**31 - 1, "int32"), "int32", False, 2**31 - 1)
    # Only a value the dtype cannot hold raises, with a fix that works.
    with pytest.raises(OverflowError, match=r"lax.full: Python int 2147483648 .*int32"):
        lax.full((), 2**31, "int32")
    check(lax.full((), 2**31, "uint32"), "uint32", False, 2**31)
    with pytest.raises(OverflowError, match=r"float32 .*dtype='float64'"):
        lax.full((), 10**39, "float32")
    with pytest.raises(OverflowError, match=r"Python float .* float16"):
        lax.convert_element_type(1e5, "float16")
    with tl.enable_x64():
        check(lax.full((), 10**39, "float64"), "float64", False, 1e39)


def test_strict_mode_scalars_still_take_the_dtype() -> None:
    with tl.dtype_promotion("strict"):
        check(lax.add(np.int8([1]), 2), "int8", False, [3])
        check(lax.mul(np.float16([1.0]), 2), "float16", False, [2.0])
        with pytest.raises(TypeError, match="bool, int32"):
            lax.bitwise_or(np.array([True]), 1)


def test_x64_mode_gives_python_scalars_64_bits_alone() -> None:
    with tl.enable_x64(True):
        check(lax.add(1, 2), "int64", True, 3)
        check(lax.add(np.int32([1]), 2), "int32", False, [3])


def test_numpy_64_bit_inputs_are_narrowed_with_their_values_checked() -> None:
    check(lax.neg(np.float64([1.5])), "float32", False, [-1.5])
    with pytest.raises(OverflowError, match="enable_x64"):
        lax.neg(np.int64([2**40]))


def test_lists_are_refused() -> None:
    with pytest.raises(TypeError, match="position 1"):
        lax.add(np.int8([1]), [1])  # type: ignore[arg-type]


def test_primitives_are_recorded_by_jit_and_eval_shape() -> None:
    @tl.jit
    def f(x: Any) -> Any:
        return lax.neg(lax.mul(lax.convert_element_type(x, "float32"), 2))

    check(f(np.int8([1, -3])), "float32", False, [-2.0, 6.0])
    shape = tl.eval_shape(f, tl.ShapeDtypeStruct((5,), "int8"))
    assert (shape.shape, shape.dtype, shape.weak_type) == ((5,), np.float32, False)
    with pytest.raises(TypeError, match="same dtypes"):  # checked at trace time
        tl.jit(lambda x: lax.add(x, np.int16(1)))(np.int8([1]))


# -- data safety ------------------------------------------------------------

VIEWS: list[tuple[str, Callable[[Any], Any]]] = [
    ("reshape", lambda x: lax.reshape(x, (3, 2))),
    ("transpose", lambda x: lax.transpose(x, (1, 0))),
    ("slice", lambda x: lax.slice(x, (0, 0), (2, 2))),
    ("rev", lambda x: lax.rev(x, (1,))),
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2))),
    ("squeeze", lambda x: lax.squeeze(lax.expand_dims(x, (0,)), (0,))),
    ("convert_element_type", lambda x: lax.convert_element_type(x, "float32")),
    ("select_n", lambda x: lax.select_n(True, x)),
    ("real", lambda x: lax.real(lax.complex(x, x))),
    ("dynamic_slice", lambda x: lax.dynamic_slice(x, (0, 0), (2, 3))),
    ("reduce_sum", lambda x: lax.reduce_sum(x, ())),
    ("sort", lambda x: lax.sort(x, 0)),
]


@pytest.mark.parametrize(("name", "fn"), VIEWS, ids=[n for n, _ in VIEWS])
def test_results_never_alias_the_callers_buffer(
    name: str, fn: Callable[[Any], Any]
) -> None:
    buffer = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = fn(buffer)
    before = np.asarray(out).copy()
    buffer[...] = -1
    np.testing.assert_array_equal(np.asarray(out), before)
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(out)[...] = 0


def test_results_are_immutable_arrays() -> None:
    out = lax.add(np.int8([1]), 1)
    with pytest.raises(TypeError, match="immutable"):
        out[0] = 5


# -- agreement with typelattice.numpy ---------------------------------------

CONVERT_DTYPES = ["bool", "int8", "uint8", "int32", "float16", "bfloat16", "float32"]


@pytest.mark.parametrize("src", [*CONVERT_DTYPES, "complex64"])
@pytest.mark.parametrize("dst", CONVERT_DTYPES)
def test_convert_element_type_is_astype(src: str, dst: str) -> None:
    floats = np.array([-300.7, -1.5, -0.0, 0.0, 0.5, 2.0, 1e5, np.inf, np.nan])
    if src == "bool":
        values = floats > 0
    elif src in ("int8", "uint8", "int32"):
        values = np.array([-300, -1, 0, 1, 2, 127, 255, 70000]).astype(src)
    else:
        with np.errstate(over="ignore"):  # 1e5 is inf in float16
            values = floats.astype(src)
    x = tnp.asarray(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        want = tnp.astype(x, dst)
        got = lax.convert_element_type(x, dst)
    check(got, dst, False)
    # As float64: NumPy's NaN test does not know bfloat16.
    np.testing.assert_array_equal(
        np.asarray(got).astype(np.float64), np.asarray(want).astype(np.float64)
    )


def test_converting_complex_to_real_warns() -> None:
    with pytest.warns(np.exceptions.ComplexWarning, match=r"lax\.real"):
        out = lax.convert_element_type(np.complex64([1 + 2j]), "float32")
    check(out, "float32", False, [1.0])


def test_explicit_64_bit_dtypes_follow_the_configuration() -> None:
    with pytest.warns(tl.X64DtypeWarning, match="enable_x64"):
        check(lax.convert_element_type(np.int8([1]), "float64"), "float32", False)
    with tl.explicit_x64_dtypes("error"), pytest.raises(ValueError, match="float64"):
        lax.iota("float64", 3)
    with tl.enable_x64(True):
        check(lax.convert_element_type(np.int8([1]), "float64"), "float64", False)


ELEMENT = lax.GatherDimensionNumbers(
    offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)
)
ELEMENT_UPDATE = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)
ROWS = lax.GatherDimensionNumbers(
    offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
)


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(1, 6),
    data=st.data(),
)
def test_gather_is_indexing_and_scatter_is_at(size: int, data: st.DataObject) -> None:
    x = tnp.asarray(np.arange(size * 3, dtype=np.int16).reshape(size, 3))
    idx = data.draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=8))
    indices = np.array(idx, np.int32)[:, None]
    rows = lax.gather(x, indices, ROWS, (1, 3))
    np.testing.assert_array_equal(np.asarray(rows), np.asarray(x[np.array(idx)]))
    flat = tnp.ravel(x)
    updates = np.arange(1, len(idx) + 1, dtype=np.int16)
    for fn, method in [
        (lax.scatter_add, "add"),
        (lax.scatter_mul, "multiply"),
        (lax.scatter_min, "min"),
        (lax.scatter_max, "max"),
    ]:
        got = fn(flat, indices, updates, ELEMENT_UPDATE)
        want = getattr(flat.at[np.array(idx)], method)(updates)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # .set with repeated indices: the last update wins in both.
    got = lax.scatter(flat, indices, updates, ELEMENT_UPDATE)
    want = flat.at[np.array(idx)].set(updates)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_scatter_drops_and_gather_fills_out_of_range_by_mode() -> None:
    x = np.float32([0.0, 1.0, 2.0])
    far = np.int32([[5], [-1]])
    check(lax.gather(x, far, ELEMENT, (1,)), "float32", False, [2.0, 0.0])
    filled = lax.gather(x, far, ELEMENT, (1,), mode="fill", fill_value=-7)
    check(filled, "float32", False, [-7.0, -7.0])
    dropped = lax.scatter_add(x, far, np.float32([10, 20]), ELEMENT_UPDATE)
    check(dropped, "float32", False, [0.0, 1.0, 2.0])
    clipped = lax.scatter_add(x, far, np.float32([10, 20]), ELEMENT_UPDATE, mode="clip")
    check(clipped, "float32", False, [20.0, 1.0, 12.0])
    with pytest.raises(ValueError, match='"clip", "fill"'):
        lax.gather(x, far, ELEMENT, (1,), mode="wrap")


# -- shapes -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: lax.add(np.ones((2, 3)), np.ones(3)),
            TypeError,
            "same number of dimensions",
        ),
        (lambda: lax.add(np.ones(2), np.ones(3)), TypeError, "incompatible shapes"),
        (lambda: lax.reduce_sum(np.ones((2, 3)), (-1,)), ValueError, "out-of-bounds"),
        (lambda: lax.reshape(np.ones(6), (4, 2)), ValueError, "total size"),
        (lambda: lax.transpose(np.ones((2, 3)), (0, 0)), TypeError, "permutation"),
        (
            lambda: lax.concatenate([np.ones(2), np.ones((2, 1))], 0),
            TypeError,
            "numbers of dimensions",
        ),
        (lambda: lax.pad(np.ones(3), 0.0, [(-2, -2, 0)]), ValueError, "at least 0"),
        (lambda: lax.dynamic_slice(np.ones(3), (0,), (4,)), TypeError, "slice_sizes"),
        (
            lambda: lax.dot_general(
                np.ones((2, 3)), np.ones((2, 3)), (((1,), (0,)), ((), ()))
            ),
            TypeError,
            "same shape",
        ),
        (lambda: lax.sort((np.ones(3), np.ones(2))), TypeError, "equal shapes"),
        (lambda: lax.integer_pow(np.int8([2]), -1), TypeError, "negative powers"),
    ],
)
def test_bad_shapes_and_arguments_raise(
    call: Callable[[], Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        call()


def test_pad_with_interior_and_negative_edges() -> None:
    x = np.arange(1, 7, dtype=np.int8).reshape(2, 3)
    out = lax.pad(x, 0, [(1, 0, 1), (-1, 2, 1)])
    want = np.array(
        [
            [0, 0, 0, 0, 0, 0],
            [0, 2, 0, 3, 0, 0],
            [0, 0, 0, 0, 0, 0],
            [0, 5, 0, 6, 0, 0],
        ],
        np.int8,
    )
    check(out, "int8", False, want)


def test_sort_follows_the_total_order() -> None:
    out = lax.sort(np.float32([0.0, np.nan, -0.0, -np.inf, 1.0]))
    got = np.asarray(out)
    assert np.signbit(got[1]) and not np.signbit(got[2])
    np.testing.assert_array_equal(got, [-np.inf, -0.0, 0.0, 1.0, np.nan])
    keys, values = lax.sort((np.int8([2, 1, 2, 1]), np.int8([0, 1, 2, 3])))
    check(values, "int8", False, [1, 3, 0, 2])  # stable
    check(keys, "int8", False, [1, 1, 2, 2])


def test_the_docs_examples_run() -> None:
    import doctest
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "lax.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(
        doctest.DocTestParser().get_doctest("\n".join(blocks), {}, "lax.md", None, 0)
    )
    result = runner.summarize(verbose=False)
    assert result.attempted >= 5
    assert result.failed == 0


# -- programs of primitives compute into their dying temporaries -----------------


def _peak_bytes(fn: Callable[[], Any]) -> int:
    import tracemalloc

    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def test_a_program_reuses_the_memory_of_its_temporaries() -> None:
    """A chain of primitives under jit needs one new array, not one per
    operation: each result is computed into the temporary before it."""
    x = tnp.ones(1_000_000, "float32")  # 4 MB

    @tl.jit
    def f(x: Any) -> Any:
        y = lax.add(lax.mul(x, 2.0), 1.0)
        return lax.div(lax.sub(lax.mul(y, 3.0), 4.0), 5.0)

    np.testing.assert_array_equal(np.asarray(f(x)), np.full(1_000_000, 1.0))
    assert _peak_bytes(lambda: f(x)) < 6_000_000


def test_a_temporary_still_seen_through_a_view_is_not_overwritten() -> None:
    @tl.jit
    def f(x: Any) -> Any:
        y = lax.mul(x, 2.0)
        flat = lax.reshape(y, (6,))  # (a view of y's memory)
        return flat, lax.add(y, 1.0)  # (y's last use)

    x = tnp.arange(6, dtype="float32").reshape(2, 3)
    flat, plus = f(x)
    np.testing.assert_array_equal(np.asarray(flat), np.arange(6) * 2.0)
    np.testing.assert_array_equal(
        np.asarray(plus), np.arange(6).reshape(2, 3) * 2.0 + 1
    )


def test_an_operand_given_twice_may_be_overwritten() -> None:
    f = tl.jit(lambda x: lax.mul(lax.add(x, 1.0), lax.add(x, 1.0)))
    g = tl.jit(lambda x: (lambda t: lax.mul(t, t))(lax.add(x, 1.0)))
    x = tnp.arange(4, dtype="float32")
    for fn in (f, g):
        np.testing.assert_array_equal(np.asarray(fn(x)), (np.arange(4) + 1.0) ** 2)
