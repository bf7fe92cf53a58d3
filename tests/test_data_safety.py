"""Data safety: no conversion an operation makes on its own changes a value
by more than rounding, and every error says what to do, in words that work.

The class of flaw, not single cases: every pair of dtypes (the range tables
against the conversions NumPy and ml_dtypes perform), every binary function
of the namespace, every function that joins, multiplies or updates arrays,
every creation function, each with NumPy scalars and Python values. Each
suggested fix is extracted from the message and run.
"""

from __future__ import annotations

import functools
import math
import operator
import re
import warnings
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import arr
from typelattice import _core, _dtypes
from typelattice._basearray import Array
from typelattice.numpy import _elementwise, _ufuncs

ALL = list(_dtypes.ALL_DTYPES)
NAMES = [str(d) for d in ALL]


def values(x: Any) -> Any:
    """An array's values as Python numbers (a list, or one number for 0-d)."""
    return np.asarray(x).astype(object).tolist()


def u32_big() -> Array:
    return arr([7, 4_000_000_000], "uint32")


def i32() -> Array:
    return arr([1, -1], "int32")


# -- the range tables -----------------------------------------------------------


def samples(dt: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """Values of ``dt`` that decide whether a conversion can lose: its extremes,
    zero and one, and inf and nan where it has them."""
    lo, hi = _dtypes.value_range(dt)
    values: list[Any] = [lo, hi, 0, 1]
    if _dtypes.kind_of(dt) in "fc":
        values += [math.inf, -math.inf, math.nan]
    with np.errstate(all="ignore"):
        if _dtypes.kind_of(dt) in "biu":
            return np.array([int(v) for v in values[:4]], dtype=object).astype(dt)
        out = np.array(values, dtype=np.float64).astype(dt)
    # Keep only the values the dtype holds (inf and nan where it has them).
    back = out.astype(np.complex128).real
    keep = np.isnan(back) == np.isnan(np.array(values, dtype=np.float64))
    return out[keep]


@pytest.mark.parametrize("src", ALL, ids=NAMES)
def test_can_lose_range_is_exact_on_extreme_values(src: np.dtype[Any]) -> None:
    """Where the table says a conversion is safe, no value of the source
    changes by more than rounding; where it says it can lose, one does."""
    extremes = samples(src)
    wide = extremes.astype(np.complex128)
    for dst in ALL:
        if _dtypes.kind_of(src) == "c" and _dtypes.kind_of(dst) != "c":
            continue  # the imaginary part: refused as a whole (TypeError)
        lost = _core.lost_value(extremes, dst)
        if _dtypes.can_lose_range(src, dst):
            if _dtypes.kind_of(dst) != "b":
                assert lost is not None, (src, dst, extremes)
            continue
        assert lost is None, (src, dst)
        out = _core.converted(extremes, dst).astype(np.complex128)
        if _dtypes.kind_of(dst) in "iu":
            assert (out == np.trunc(wide.real)).all(), (src, dst)
        elif _dtypes.kind_of(dst) in "fc":
            for a, b in ((out, wide), (np.isnan(out), np.isnan(wide))):
                assert (np.isinf(a) == np.isinf(b)).all(), (src, dst)
            assert (np.isnan(out) == np.isnan(wide)).all(), (src, dst)


def test_widening_and_same_dtype_plans_never_read_their_operands() -> None:
    """A plan checks an operand only when its dtype can lose range in the
    compute dtype: every other plan casts (in the ufunc) or keeps."""
    checked = 0
    for x64 in (False, True):
        with tl.enable_x64(x64):
            state = _elementwise._state()
            for a in ALL:
                for b in ALL:
                    keys = (_core.aval(a, False), _core.aval(b, False))
                    try:
                        plan = _elementwise.build_plan(_ufuncs.add._op, keys, state)  # type: ignore[attr-defined]
                    except (TypeError, ValueError):
                        continue  # no join, or add refuses the dtype
                    for key, conv in zip(keys, plan.convs, strict=True):
                        loses = _dtypes.can_lose_range(key[0], plan.cd)
                        if key[0] == plan.cd:
                            assert conv.how == _elementwise.Conversion.KEEP
                        elif loses:
                            assert conv.how == _elementwise.Conversion.CHECK
                            checked += 1
                        else:
                            assert conv.how == _elementwise.Conversion.CAST
    assert checked  # uint32 and int32 in 32-bit mode, ints and float16...


def test_the_extension_shares_the_conversion_codes() -> None:
    from typelattice import _promotion

    if _promotion._speedups is None:
        pytest.skip(_promotion.SPEEDUPS)
    codes = {c.name: c.value for c in _elementwise.Conversion}
    assert _promotion._speedups.CONVERSIONS == codes
    assert _elementwise._FAST


# -- operations -----------------------------------------------------------------


def compute_dtype(fn: Any, *args: Array) -> np.dtype[Any]:
    """The dtype ``fn`` computes in for these operands (its plan's)."""
    keys = tuple(a._key for a in args)  # type: ignore[attr-defined]
    return _elementwise.build_plan(fn._op, keys, _elementwise._state()).cd


def binary_functions(kinds: str) -> dict[str, Any]:
    """The namespace's two-operand elementwise functions accepting ``kinds``."""
    out: dict[str, Any] = {}
    for name in tnp.__all__:
        fn = getattr(tnp, name)
        op = getattr(fn, "_op", None)
        if op is not None and op.nin == 2 and set(kinds) <= set(op.accept):
            out[name] = fn
    return out


@pytest.mark.parametrize("python", [False, True], ids=["fast", "python"])
def test_every_binary_function_refuses_uint32_values_int32_cannot_hold(
    python: bool,
) -> None:
    """32-bit mode joins uint32 and int32 at int32: values of 2**31 and more
    raise, whichever operand they are, in C and in Python."""
    functions = binary_functions("i")
    assert len(functions) >= 20
    for name, fn in functions.items():
        f = getattr(fn, "fallback", fn) if python else fn
        if compute_dtype(fn, u32_big(), i32()) != np.int32:
            assert name in ("divide", "true_divide", "float_power")  # float32
            continue
        for args, pos in (((u32_big(), i32()), 0), ((i32(), u32_big()), 1)):
            with pytest.raises(OverflowError) as info:
                f(*args)
            message = str(info.value)
            assert message.startswith(f"{fn._op.name}: operand {pos} (a uint32 array)")
            assert "4000000000" in message and "int32" in message, message
            assert "enable_x64" in message, message
    # Values int32 holds: the right answers, no error.
    fits = arr([7, 2**31 - 1], "uint32")
    got = fits + i32()
    assert got.dtype == np.int32
    assert np.asarray(got).tolist() == [8, 2**31 - 2]
    assert np.asarray(fits > arr([-1, -1], "int32")).tolist() == [True, True]
    assert np.asarray(tnp.maximum(fits, i32())).tolist() == [7, 2**31 - 1]


def test_operators_and_the_reflected_operand() -> None:
    with pytest.raises(OverflowError, match="operand 0 .*uint32"):
        u32_big() + i32()
    with pytest.raises(OverflowError, match="operand 1 .*uint32"):
        i32() - u32_big()
    with pytest.raises(OverflowError, match="operand 0 .*uint32"):
        _ = u32_big() < i32()
    with pytest.raises(OverflowError, match="operand 1 .*uint32"):
        _ = i32() == u32_big()


@pytest.mark.parametrize(
    ("big", "small"),
    [
        (arr([1, 100000], "int32"), arr([0.5, 0.5], "float16")),
        (arr([1, 65535], "uint16"), arr([0.5, 0.5], "float16")),
        (arr([1, 1000], "int16"), arr([0.5, 0.5], ml_dtypes.float8_e4m3fn)),
        (arr([1, 20], "int8"), arr([0.5, 0.5], ml_dtypes.float4_e2m1fn)),
    ],
    ids=["int32-float16", "uint16-float16", "int16-float8", "int8-float4"],
)
def test_integers_beyond_a_small_floats_range_raise(big: Array, small: Array) -> None:
    """int32 + float16 is float16 in the lattice: 100000 would be inf (and
    nan, or a saturated 6.0, in the smallest floats)."""
    tested = 0
    for fn in binary_functions("f").values():
        try:
            fn(big[:1], small)  # values that fit
        except TypeError:
            continue  # NumPy has no loop for the type (float4_e2m1fn)
        if compute_dtype(fn, big, small) != small.dtype:
            continue  # true_divide... of float16 compute in float16 too
        tested += 1
        with pytest.raises(OverflowError, match=f"operand 0 .*{big.dtype}"):
            fn(big, small)
        with pytest.raises(OverflowError, match=f"operand 1 .*{big.dtype}"):
            fn(small, big)
    assert tested >= 2
    # Range, not precision: what rounds is allowed.
    assert values(arr([2049], "int16") + arr([0], "float16")) == [2048]


CONVERTING: dict[str, Callable[[Array, Array], Any]] = {
    "where": lambda u, i: tnp.where(tnp.asarray([True, False]), u, i),
    "concatenate": lambda u, i: tnp.concatenate([i, u]),
    "stack": lambda u, i: tnp.stack([i, u]),
    "hstack": lambda u, i: tnp.hstack([i, u]),
    "vstack": lambda u, i: tnp.vstack([i, u]),
    "clip": lambda u, i: tnp.clip(i, u, None),
    "matmul": lambda u, i: tnp.matmul(u, i),
    "dot": lambda u, i: tnp.dot(u, i),
    "vdot": lambda u, i: tnp.vdot(u, i),
    "inner": lambda u, i: tnp.inner(u, i),
    "outer": lambda u, i: tnp.outer(u, i),
    "tensordot": lambda u, i: tnp.tensordot(u, i, axes=1),
    "einsum": lambda u, i: tnp.einsum("i,i->", u, i),
    "searchsorted": lambda u, i: tnp.searchsorted(i, u),
    "at-set": lambda u, i: i.at[1].set(u[1]),
    "at-add": lambda u, i: i.at[:].add(u),
    "at-max": lambda u, i: i.at[:].max(u),
    "ufunc-at": lambda u, i: tnp.maximum.at(i, 1, u[1], inplace=False),
    "ufunc-at-a": lambda u, i: tnp.maximum.at(u, 1, i[1], inplace=False),
    "ufunc-outer": lambda u, i: tnp.add.outer(u, i),
    "take-fill": lambda u, i: tnp.take(
        i, tnp.asarray([5]), mode="fill", fill_value=u[1]
    ),
    "nonzero-fill": lambda u, i: tnp.nonzero(i, size=3, fill_value=u[1]),
    "max-initial": lambda u, i: tnp.max(i, initial=u[1]),
    "reduce-initial": lambda u, i: tnp.subtract.reduce(i, initial=u[1]),
    "jit": lambda u, i: tl.jit(lambda a, b: a * b + 1)(u, i),
    "jit-constant": lambda u, i: tl.jit(lambda b: u * b)(i),
}


@pytest.mark.parametrize("name", sorted(CONVERTING))
def test_every_converting_function_refuses_values_that_would_change(name: str) -> None:
    with pytest.raises(OverflowError, match="4000000000.*int32"):
        CONVERTING[name](u32_big(), i32())
    # The same with values int32 holds: no error.
    CONVERTING[name](arr([7, 8], "uint32"), i32())


DTYPE_REQUESTS: dict[str, Callable[[Array], Any]] = {
    "sum": lambda x: tnp.sum(x, dtype="int8"),
    "prod": lambda x: tnp.prod(x, dtype="int8"),
    "mean": lambda x: tnp.mean(x, dtype="int8"),
    "var": lambda x: tnp.var(x, dtype="int8"),
    "cumsum": lambda x: tnp.cumsum(x, dtype="int8"),
    "cumprod": lambda x: tnp.cumprod(x, dtype="int8"),
    "add.reduce": lambda x: tnp.add.reduce(x, dtype="int8"),
    "subtract.reduce": lambda x: tnp.subtract.reduce(x, dtype="int8"),
    "maximum.reduce": lambda x: tnp.maximum.reduce(x, dtype="int8"),
    "maximum.accumulate": lambda x: tnp.maximum.accumulate(x, dtype="int8"),
    "add.reduceat": lambda x: tnp.add.reduceat(x, tnp.asarray([0]), dtype="int8"),
    "concatenate": lambda x: tnp.concatenate([x], dtype="int8"),
    "stack": lambda x: tnp.stack([x], dtype="int8"),
    "trace": lambda x: tnp.trace(
        tnp.reshape(tnp.concatenate([x, x]), (2, 2)), dtype="int8"
    ),
    "matmul": lambda x: tnp.matmul(x, x, preferred_element_type="float16"),
    "dot-of-floats": lambda x: tnp.dot(
        x.astype("float32"), x.astype("float32"), preferred_element_type="int8"
    ),
}


@pytest.mark.parametrize("name", sorted(DTYPE_REQUESTS))
def test_dtype_arguments_refuse_values_they_cannot_hold(name: str) -> None:
    """``dtype=`` asks for a result dtype; the values converted to it must
    fit (JAX wraps or saturates)."""
    big = arr([300, 100000], "int32")
    with pytest.raises(OverflowError, match="does not fit in (int8|float16)"):
        DTYPE_REQUESTS[name](big)
    DTYPE_REQUESTS[name](arr([3, 4], "int32"))


def test_weak_arrays_and_python_scalars_keep_their_values() -> None:
    with pytest.raises(OverflowError, match="weak int32 array holds 300"):
        arr([1], "int8") + tnp.asarray(300)
    with pytest.raises(OverflowError, match="Python int 1000 does not fit in uint8"):
        arr([1], "uint8") + 1000
    with pytest.raises(OverflowError, match="Python float 1e\\+39"):
        arr([1], "float32") + 1e39
    with pytest.raises(OverflowError, match="float4_e2m1fn"):
        arr([1], ml_dtypes.float4_e2m1fn) * 100.0  # would saturate at 6


@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        ("float8_e4m3fn", math.inf),  # no inf: would become nan
        ("float8_e4m3fnuz", -math.inf),
        ("float4_e2m1fn", math.nan),  # no nan: would become -0
        ("float4_e2m1fn", math.inf),  # would saturate at 6
        ("float8_e8m0fnu", 0),  # no zero and no sign: would be nan
        ("float8_e8m0fnu", -1.0),
    ],
)
def test_python_scalars_a_small_float_cannot_hold_raise(dtype: str, value: Any) -> None:
    """inf, nan, zero and negative values, where the dtype has no such value;
    the second call runs the cached plan (in C when built)."""
    dtype = getattr(ml_dtypes, dtype)
    x = tnp.asarray(np.ones(2, dtype))
    for _ in range(2):
        with pytest.raises(OverflowError, match="does not fit in"):
            x + value
        with pytest.raises(OverflowError, match="does not fit in"):
            value * x
    with pytest.raises(OverflowError, match="^asarray: "):
        tnp.asarray(value, dtype=dtype)
    with pytest.raises(OverflowError, match="^full: "):
        tnp.full(2, value, dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float8_e5m2"])
def test_python_inf_and_nan_stay_where_the_dtype_has_them(dtype: str) -> None:
    x = tnp.asarray(np.ones(2, getattr(ml_dtypes, dtype, dtype)))
    for _ in range(2):
        assert values(x + math.inf) == [math.inf, math.inf]
        assert all(math.isnan(v) for v in values(x * math.nan))


def test_rounding_within_range_is_not_refused() -> None:
    """JAX and NumPy round to the nearest value the dtype holds; so do we."""
    assert values(arr([0.0], "float32") + 16777217) == [16777216.0]
    assert values(tnp.asarray([16777217], dtype="float32")) == [16777216.0]
    got = arr([16777217], "int32") + arr([0.0], "float32")
    assert values(got) == [16777216.0]
    assert values(tnp.asarray(65519.0, dtype="float16")) == 65504.0
    assert values(tnp.asarray([1.5], dtype="int32")) == [1]  # truncated, as JAX


EXPONENTS = [
    lambda e: e,
    lambda e: np.uint64(e) if e >= 0 else np.int64(e),
    lambda e: np.asarray(e, np.uint64 if e >= 0 else np.int64),
]


@pytest.mark.parametrize("exponent", EXPONENTS, ids=["python", "numpy", "0-d"])
@pytest.mark.parametrize(
    ("dtype", "e"),
    [("float16", 70001), ("bfloat16", 257), ("float8_e4m3fn", 17)]
    + [("float4_e2m1fn", 7), ("float32", 2**40 + 1), ("float16", -70001)],
)
def test_integer_exponents_the_base_dtype_cannot_hold_keep_the_sign(
    dtype: str, e: int, exponent: Callable[[int], Any]
) -> None:
    """A concrete integer exponent is exact, as in JAX: NumPy would convert it
    to the base's dtype (70001 to inf in float16, 257 to 256 in bfloat16)."""
    with tl.enable_x64():
        got = tnp.power(arr([-1.0, 1.0], dtype), exponent(e))
        assert values(got) == [-1.0, 1.0]
        assert got.dtype == np.dtype(getattr(ml_dtypes, dtype, dtype))


@pytest.mark.parametrize("exponent", EXPONENTS, ids=["python", "numpy", "0-d"])
@pytest.mark.parametrize(
    ("dtype", "e"),
    [("uint8", 65535), ("int8", 2**40 + 1), ("int16", 40000), ("bool", 2**32 - 1)],
)
def test_integer_exponents_the_base_dtype_cannot_hold_wrap_as_products(
    dtype: str, e: int, exponent: Callable[[int], Any]
) -> None:
    """Integer powers wrap as repeated products do (JAX's integer_pow),
    whatever the size of the exponent."""
    base = [3, 2, 1, 0] if dtype != "bool" else [True, False]
    with tl.enable_x64():
        got = tnp.power(arr(base, dtype), exponent(e))
    out = np.dtype("int32" if dtype == "bool" else dtype)
    bits = 8 * out.itemsize
    wrapped = [pow(int(b), e, 2**bits) for b in base]
    signed = [
        w - 2**bits if out.kind == "i" and w >= 2 ** (bits - 1) else w for w in wrapped
    ]
    assert got.dtype == out
    assert values(got) == signed


# -- creation -------------------------------------------------------------------

CREATION: dict[str, Callable[[], Any]] = {
    "asarray-numpy-scalar": lambda: tnp.asarray(np.int64(300), dtype="int8"),
    "asarray-numpy-array": lambda: tnp.asarray(np.array([300]), dtype="int8"),
    "asarray-array": lambda: tnp.asarray(tnp.asarray([300]), dtype="int8"),
    "asarray-python": lambda: tnp.asarray(300, dtype="int8"),
    "asarray-list": lambda: tnp.asarray([1, 300], dtype="int8"),
    "asarray-float": lambda: tnp.asarray(np.array([1e6]), dtype="float16"),
    "asarray-float-to-int": lambda: tnp.asarray([1e20], dtype="int32"),
    "asarray-nan-to-int": lambda: tnp.asarray(math.nan, dtype="int32"),
    "asarray-default": lambda: tnp.asarray([2**31]),
    "array": lambda: tnp.array(np.array([300], "int16"), dtype="int8"),
    "scalar-type": lambda: tnp.int8(np.int64(300)),
    "full-numpy-scalar": lambda: tnp.full(2, np.int64(300), "int8"),
    "full-python": lambda: tnp.full(2, 300, "int8"),
    "full-array": lambda: tnp.full(2, tnp.asarray(300), "int8"),
    "full_like-numpy": lambda: tnp.full_like(tnp.zeros(2, "int8"), np.int64(300)),
    "full_like-array": lambda: tnp.full_like(tnp.zeros(2, "int8"), tnp.asarray(300)),
    "linspace-int": lambda: tnp.linspace(0, 300, 3, dtype="int8"),
    "linspace-float": lambda: tnp.linspace(0, 1e39, 3, dtype="float32"),
    "linspace-default": lambda: tnp.linspace(0, 1e39, 3),
    "arange-dtype": lambda: tnp.arange(0, 300, 100, dtype="int8"),
    "arange-float-start": lambda: tnp.arange(-1.5, 3, dtype="uint8"),
    "arange-numpy": lambda: tnp.arange(np.int64(2**40), np.int64(2**40 + 2)),
    "zeros-no-zero": lambda: tnp.zeros(2, ml_dtypes.float8_e8m0fnu),
    "zeros_like-no-zero": lambda: tnp.zeros_like(tnp.ones(2), ml_dtypes.float8_e8m0fnu),
    "eye-no-zero": lambda: tnp.eye(2, dtype=ml_dtypes.float8_e8m0fnu),
    "identity-no-zero": lambda: tnp.identity(2, dtype=ml_dtypes.float8_e8m0fnu),
    "empty-no-zero": lambda: tnp.empty(2, ml_dtypes.float8_e8m0fnu),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_functions_refuse_values_the_dtype_cannot_hold(name: str) -> None:
    with pytest.raises(OverflowError, match=r"^\w+: .* does not fit in "):
        CREATION[name]()


def test_astype_is_the_explicit_conversion_and_still_wraps() -> None:
    assert np.asarray(tnp.asarray([300]).astype("int8")).tolist() == [44]
    assert np.asarray(u32_big().astype("int32")).tolist() == [7, -294967296]
    assert np.isinf(np.asarray(tnp.asarray([1e5]).astype("float16"))).all()


# -- suggested fixes, run -------------------------------------------------------

FIX = re.compile(r"(astype|dtype|preferred_element_type)\W+'(\w+)'")


class Suggestion:
    """What a message proposes: a dtype and how to use it, and whether it
    must run in 64-bit mode; or 64-bit mode alone (the default changes)."""

    def __init__(self, message: str) -> None:
        fix = message[message.index("Fix:") :]
        first, _, rest = fix.partition("; or ")
        found = FIX.search(first)
        assert found is not None, message
        self.how, self.dtype = found.group(1), found.group(2)
        self.x64 = "enable_x64" in first
        # "; or run it inside `with typelattice.enable_x64():`": the default.
        self.x64_alone = "enable_x64" in rest

    def scope(self) -> Any:
        return tl.enable_x64(self.x64)


def suggestion(
    fn: Callable[[], Any], error: type[Exception] = OverflowError
) -> Suggestion:
    with pytest.raises(error) as info:
        fn()
    return Suggestion(str(info.value))


def test_fixes_for_operands_work() -> None:
    cases: list[tuple[Callable[..., Any], list[Array], list[Any]]] = [
        (tnp.add, [u32_big(), i32()], [8, 3_999_999_999]),
        (tnp.less, [i32(), u32_big()], [True, True]),
        (tnp.maximum, [u32_big(), i32()], [7, 4_000_000_000]),
        (
            tnp.add,
            [arr([1, 100000], "int32"), arr([0.5, 0.5], "float16")],
            [1.5, 100000.5],
        ),
        (
            tnp.add,
            [arr([1, 65535], "uint16"), arr([0.5, 0.5], "float16")],
            [1.5, 65535.5],
        ),
        (
            tnp.add,
            [arr([1, 1000], "int16"), arr([0.5, 0.5], ml_dtypes.float8_e4m3fn)],
            [1.5, 1000.5],
        ),
        (tnp.add, [arr([1], "int8"), tnp.asarray(300)], [301]),
        (
            lambda a, b: tnp.concatenate([a, b]),
            [i32(), u32_big()],
            [1, -1, 7, 4_000_000_000],
        ),
        (
            lambda a, b: tnp.where(tnp.asarray([True, False]), a, b),
            [u32_big(), i32()],
            [7, -1],
        ),
    ]
    for fn, args, expected in cases:
        fix = suggestion(functools.partial(fn, *args))
        assert fix.how == "astype", fix.how
        with fix.scope():
            got = fn(*[a.astype(fix.dtype) for a in args])
        assert values(got) == expected, (fn, fix.dtype)


def test_fixes_for_python_scalars_work() -> None:
    cases: list[tuple[Array, Any, Any]] = [
        (arr([1], "uint8"), 1000, 1001),
        (arr([1], "uint8"), -1, 0),
        (arr([1], "int32"), 2**31, 2**31 + 1),
        (arr([1], "float32"), 1e39, 1e39),
        (arr([1], "float16"), 1e6, 1e6 + 1),
    ]
    for x, scalar, expected in cases:
        fix = suggestion(functools.partial(operator.add, x, scalar))
        assert fix.how == "astype"
        with fix.scope():
            got = x.astype(fix.dtype) + scalar
        assert values(got) == [expected], (x.dtype, scalar, fix.dtype)


def test_fixes_for_64_bit_integers_keep_their_digits() -> None:
    """No integer type holds both uint64 and -1: the fix is the float that
    keeps the most digits (float32 holds the range but rounds 2**24 + 1)."""
    with tl.enable_x64():
        for x, scalar in [
            (arr([2**24 + 1], "uint64"), -1),
            (arr([2**24 + 1], "int64"), 2**64),
        ]:
            fix = suggestion(functools.partial(operator.add, x, scalar))
            assert (fix.how, fix.dtype) == ("astype", "float64")
            got = x.astype(fix.dtype) + scalar
            assert values(got) == [float(2**24 + 1 + scalar)]


def test_fixes_for_dtype_requests_work() -> None:
    cases: list[tuple[Callable[..., Any], list[Any]]] = [
        (lambda dtype=None: tnp.asarray([2**31], dtype=dtype), [2**31]),
        (lambda dtype=None: tnp.asarray(2**31, dtype=dtype), 2**31),
        (lambda dtype="int8": tnp.linspace(0, 300, 3, dtype=dtype), [0, 150, 300]),
        (lambda dtype="float32": tnp.linspace(0, 1e39, 2, dtype=dtype), [0, 1e39]),
        (lambda dtype="int8": tnp.full(2, np.int64(300), dtype), [300, 300]),
        (lambda dtype="int8": tnp.asarray(np.array([-1, 300]), dtype), [-1, 300]),
        (lambda dtype="uint8": tnp.asarray([-1.0, 2.0], dtype=dtype), [-1, 2]),
        (lambda dtype="int8": tnp.sum(arr([300, 1], "int32"), dtype=dtype), 301),
        (lambda dtype="int8": tnp.cumsum(arr([300], "int32"), dtype=dtype), [300]),
        (lambda dtype="int8": tnp.arange(0, 300, 100, dtype=dtype), [0, 100, 200]),
        (
            lambda dtype=None: tnp.arange(
                np.int64(2**40), np.int64(2**40 + 1), dtype=dtype
            ),
            [2**40],
        ),
    ]
    for fn, expected in cases:
        fix = suggestion(fn)
        assert fix.how == "dtype"
        with fix.scope():
            got = fn(dtype=fix.dtype)
        assert values(got) == expected, (expected, fix.dtype)
        if fix.x64_alone:  # the default dtype of 64-bit mode holds it too
            with tl.enable_x64():
                assert values(fn(dtype=None)) == expected


def test_fixes_for_products_and_updates_work() -> None:
    a, b = arr([[100000]], "int32"), arr([[2]], "int32")
    fix = suggestion(lambda: tnp.matmul(a, b, preferred_element_type="float16"))
    assert fix.how == "preferred_element_type"
    assert values(tnp.matmul(a, b, preferred_element_type=fix.dtype)) == [[200000]]

    x = i32()
    fix = suggestion(lambda: x.at[1].set(u32_big()[1]))
    assert fix.how == "astype" and fix.x64
    with fix.scope():
        got = x.astype(fix.dtype).at[1].set(u32_big()[1])
    assert values(got) == [1, 4_000_000_000]


def test_64_bit_input_and_explicit_messages_name_enable_x64() -> None:
    with pytest.raises(OverflowError, match="enable_x64") as info:
        tnp.asarray(np.array([2**40]))
    assert "with typelattice.enable_x64():" in str(info.value)
    with tl.enable_x64():
        assert values(tnp.asarray(np.array([2**40]))) == [2**40]


def test_complex_values_given_a_real_dtype_say_what_to_do() -> None:
    for make in (
        lambda dt: tnp.asarray(1j, dtype=dt),
        lambda dt: tnp.asarray([1 + 2j], dtype=dt),
        lambda dt: tnp.asarray(np.array([1 + 2j]), dtype=dt),
        lambda dt: tnp.full(2, 1 + 2j, dt),
    ):
        with pytest.raises(TypeError) as info:
            make("float32")
        message = str(info.value)
        assert re.match(r"^(asarray|full): ", message), message
        assert "float32" in message and "real" in message and "complex64" in message
        assert np.iscomplexobj(np.asarray(make("complex64")))
    # Zero imaginary parts lose nothing.
    assert values(tnp.asarray(np.array([2 + 0j]), dtype="float32")) == [2.0]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float16", "float32"])
@pytest.mark.parametrize(
    "value", [1j, math.nan, math.inf, -math.inf, 1e300, 2**70, -1, 300, 2.5]
)
def test_python_values_convert_or_say_why(value: Any, dtype: str) -> None:
    """Never a bare Python or NumPy message: the function, the value, the
    dtype."""
    try:
        out = tnp.asarray(value, dtype=dtype)
    except (OverflowError, TypeError) as err:
        message = str(err)
        assert message.startswith("asarray: "), message
        assert dtype in message and "Fix:" in message, message
    else:
        if isinstance(value, float) and not math.isfinite(value):
            assert _dtypes.kind_of(np.dtype(dtype)) == "f"
        else:
            assert float(out) == pytest.approx(
                math.trunc(value) if "int" in dtype else value, rel=1e-3
            )


@pytest.mark.parametrize("dtype", ["float32", "uint32"])
def test_python_round_of_a_value_int32_cannot_hold(dtype: str) -> None:
    x = tnp.asarray(3e9, dtype=dtype)
    with pytest.raises(OverflowError, match="round: .*int32") as info:
        round(x)
    assert f"round(x, 0) keeps x's dtype ({dtype})" in str(info.value)
    assert float(round(x, 0)) == 3e9


# -- errors read once -----------------------------------------------------------

FAILING: dict[str, Callable[[], Any]] = {
    "matmul": lambda: tnp.matmul(tnp.ones((2, 3)), tnp.ones((2, 3))),
    "dot": lambda: tnp.dot(tnp.ones((2, 3)), tnp.ones((2, 3))),
    "inner": lambda: tnp.inner(tnp.ones((2, 3)), tnp.ones((2, 2))),
    "tensordot": lambda: tnp.tensordot(tnp.ones((2, 3)), tnp.ones((2, 3)), axes=1),
    "einsum": lambda: tnp.einsum("ij,jk->ik", tnp.ones((2, 3)), tnp.ones((2, 3))),
    "einsum-subscripts": lambda: tnp.einsum("ij->k", tnp.ones((2, 3))),
    "concatenate": lambda: tnp.concatenate([tnp.ones((2, 3)), tnp.ones((2, 2))]),
    "stack": lambda: tnp.stack([tnp.ones(2), tnp.ones(3)]),
    "hstack": lambda: tnp.hstack([tnp.ones((2, 3)), tnp.ones((3, 3))]),
    "vstack": lambda: tnp.vstack([tnp.ones((2, 3)), tnp.ones((2, 2))]),
    "split": lambda: tnp.split(tnp.ones(5), 2),
    "diagonal": lambda: tnp.diagonal(tnp.ones((2, 2)), axis1=0, axis2=0),
    "view": lambda: tnp.ones(3, "int8").view("int32"),
    "argmax": lambda: tnp.argmax(tnp.ones((0, 2)), axis=0),
    "argmin": lambda: tnp.argmin(tnp.ones((0, 2)), axis=0),
    "add.reduce": lambda: tnp.subtract.reduce(tnp.ones((2, 2)), axis=(0, 1)),
    "array": lambda: tnp.array([[1, 2], [3]]),
    "asarray": lambda: tnp.asarray([[1, 2], [3]]),
    "reshape": lambda: tnp.reshape(tnp.ones(6), (4, 2)),
    "add": lambda: tnp.add(tnp.ones(2), tnp.ones(3)),
    "where": lambda: tnp.where(tnp.ones(2, bool), tnp.ones(3), 0),
    "broadcast_to": lambda: tnp.broadcast_to(tnp.ones(3), (2, 2)),
    "sum": lambda: tnp.sum(tnp.ones(2), axis=3),
    "take": lambda: tnp.take(tnp.ones(2), tnp.asarray([5])),
    "full": lambda: tnp.full(2, 300, "int8"),
    "searchsorted": lambda: tnp.searchsorted(tnp.ones((2, 2)), tnp.ones(2)),
    "jit": lambda: tl.jit(lambda a: tnp.matmul(a, a))(tnp.ones((2, 3))),
}


@pytest.mark.parametrize("name", sorted(FAILING))
def test_no_message_repeats_its_prefix(name: str) -> None:
    with pytest.raises(Exception) as info:  # noqa: B017 - any error; its words
        FAILING[name]()
    message = str(info.value)
    assert not re.match(r"^([\w.\[\]]+): \1:", message), message
    assert re.match(r"^[\w.\[\]]+: ", message), message  # says who speaks


# Functions whose subject is a dtype: "cannot interpret [1, 2] as a dtype" is
# their own message (the promotion API's), which names the bad value.
DTYPE_FUNCTIONS = {"can_cast", "finfo", "iinfo", "isdtype", "issubdtype"}
DTYPE_FUNCTIONS |= {"promote_types", "result_type"}
BAD_ARGUMENTS = [[1, 2], "abc", object(), None, 2.5, -7]


def namespace_functions() -> list[str]:
    return [
        name
        for name in tnp.__all__
        if callable(getattr(tnp, name))
        and not isinstance(getattr(tnp, name), type)
        and type(getattr(tnp, name)).__name__ != "ScalarType"
        and name not in DTYPE_FUNCTIONS
    ]


@pytest.mark.parametrize("name", namespace_functions())
def test_argument_errors_name_the_function(name: str) -> None:
    """A bad argument in any position gives an error that says which call it
    is (``reshape: ...``), never a bare Python or NumPy message such as
    ``'str' object cannot be interpreted as an integer``."""
    fn = getattr(tnp, name)
    speaker = re.compile(r"^([\w.]+(\[\.\.\.\])?)(: | requires | does not |\(\) )")
    for pos in range(3):
        for bad in BAD_ARGUMENTS:
            args: list[Any] = [tnp.ones((2, 2))] * (pos + 1)
            args[pos] = bad
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    fn(*args)
                except (TypeError, ValueError, IndexError, ZeroDivisionError) as err:
                    message = str(err)
                    match = speaker.match(message)
                    assert match, (name, pos, bad, message)
                    assert hasattr(tnp, match[1]) or match[1] == "x.at[...]", message


# -- dtype objects compared with anything ---------------------------------------

UNPARSEABLE = ["a b, c", "i4,x", "(2,)", "", "float33", "O", "?x", "[('a', 'i4')]"]


def test_dtype_objects_are_unequal_to_strings_numpy_cannot_parse() -> None:
    scalar_types = [getattr(tnp, n) for n in tnp.__all__]
    scalar_types = [t for t in scalar_types if isinstance(t, tnp.ScalarType)]
    assert len(scalar_types) >= 15
    for t in scalar_types:
        for text in UNPARSEABLE:
            assert (t == text) is False, (t, text)
            assert (t != text) is True, (t, text)
        # Equal to its dtype and name, with the same hash: usable as a key.
        assert t == t.dtype and t == t.dtype.name
        assert hash(t) == hash(t.dtype)
        assert {t.dtype: 1}[t] == 1
    assert tnp.bool != "a b, c"
    with pytest.raises(TypeError, match="unknown dtype 'a b, c'"):
        tl.result_type("a b, c")
