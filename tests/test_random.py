"""typelattice.random: keys, the generator, the samplers' values and errors.

The dtypes, weak flags, shapes and error classes of many calls are compared
with JAX's in test_random_golden.py. Here: what the values are. Every
statistical check uses fixed keys and generous bounds (many standard errors
wide), so it is deterministic: a failure means a broken sampler, never bad
luck.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import random
from typelattice.random import _special, _threefry

N = 100_000
# A raw key (uint32[2]): the tests below read its words; typed keys, which
# give the same numbers, are tested in test_random_keys.py.
KEY = random.PRNGKey(1234)


def values(x: tnp.Array) -> np.ndarray[Any, Any]:
    return np.asarray(x)


def equal(a: Any, b: Any) -> bool:
    """Equal arrays (dtype, shape, values), or equal typed key arrays."""
    if isinstance(a, random.KeyArray) or isinstance(b, random.KeyArray):
        return (
            isinstance(a, random.KeyArray)
            and isinstance(b, random.KeyArray)
            and equal(random.key_data(a), random.key_data(b))
        )
    return a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())


# -- the generator --------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "counter", "expected"),
    [
        # Known answers of Threefry-2x32-20 published with Random123.
        ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF,) * 2, (0xFFFFFFFF,) * 2, (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ],
)
def test_threefry_known_answers(
    key: tuple[int, int], counter: tuple[int, int], expected: tuple[int, int]
) -> None:
    k = tnp.asarray(np.array(key, dtype=np.uint32))
    c0, c1 = (tnp.asarray(np.uint32(c)) for c in counter)
    x0, x1 = _threefry.threefry2x32(k, c0, c1)
    assert (int(x0), int(x1)) == expected


def test_stream_words_are_the_blocks_hashes_in_order() -> None:
    w = values(_threefry.words(KEY, 5))
    x0, x1 = _threefry.threefry2x32(KEY, tnp.arange(3, dtype="uint32"), 0)
    assert w.tolist() == [*values(x0).tolist(), *values(x1).tolist()][:5]


def test_stream_refuses_more_words_than_it_has() -> None:
    with pytest.raises(ValueError, match="split the key"):
        _threefry.words(KEY, 2 * 2**32 + 1)


# -- keys -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "words"),
    [
        (0, [0, 0]),
        (42, [0, 42]),
        (2**40, [256, 0]),
        (2**63 - 1, [2**31 - 1, 2**32 - 1]),
        (-1, [2**32 - 1, 2**32 - 1]),
        (-(2**63), [2**31, 0]),
        (np.int16(-2), [2**32 - 1, 2**32 - 2]),
    ],
)
def test_a_key_is_the_seeds_64_bit_words(seed: int, words: list[int]) -> None:
    for x64 in (False, True):
        with tl.enable_x64(x64):
            k = random.key(seed)
            assert (str(k.dtype), k.shape) == ("key<fry>", ())
            assert values(random.key_data(k)).tolist() == words
            raw = random.PRNGKey(seed)
            assert (raw.dtype, raw.shape, raw.weak_type) == (
                np.dtype("uint32"),
                (2,),
                False,
            )
            assert equal(raw, random.key_data(k))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint32"])
def test_a_key_from_an_integer_array_is_the_key_of_its_value(dtype: str) -> None:
    for value in (0, 5, -3, 200):
        if not tl.iinfo(dtype).min <= value <= tl.iinfo(dtype).max:
            continue
        assert equal(random.key(tnp.asarray(value, dtype=dtype)), random.key(value))


def test_a_key_from_a_64_bit_array_in_x64_mode() -> None:
    with tl.enable_x64():
        for value in (-(2**63), -1, 2**40 + 3):
            assert equal(
                random.key(tnp.asarray(value, dtype="int64")), random.key(value)
            )


@pytest.mark.parametrize(
    ("seed", "error", "message"),
    [
        (1.5, TypeError, "seed must be an integer, got float"),
        (tnp.asarray(True), TypeError, "bool value"),
        (tnp.asarray(1.0), TypeError, "float32 value"),
        (tnp.arange(2), TypeError, "must be a scalar"),
        ([1], TypeError, "seed must be an integer"),
        (2**63, OverflowError, "64-bit"),
        (-(2**63) - 1, OverflowError, "64-bit"),
    ],
)
def test_bad_seeds_are_refused(seed: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        random.key(seed)


def test_a_bool_scalar_is_0_or_1_as_in_jax() -> None:
    assert equal(random.key(True), random.key(1))
    assert equal(random.fold_in(KEY, np.bool_(False)), random.fold_in(KEY, 0))


def test_split_gives_distinct_keys_of_the_asked_shape() -> None:
    keys = random.split(KEY, 1000)
    assert (keys.dtype, keys.shape) == (np.dtype("uint32"), (1000, 2))
    pairs = {tuple(row) for row in values(keys).tolist()}
    assert len(pairs) == 1000
    assert tuple(values(KEY).tolist()) not in pairs
    assert random.split(KEY, (2, 3)).shape == (2, 3, 2)
    assert random.split(KEY, 0).shape == (0, 2)
    # The first keys do not depend on how many are asked for.
    assert equal(random.split(KEY, 5)[:2], random.split(KEY))


def test_split_keys_are_not_samples_of_the_parent() -> None:
    children = set(values(random.split(KEY, 64)).ravel().tolist())
    assert children.isdisjoint(values(_threefry.words(KEY, 256)).tolist())


def test_split_keys_are_deterministic() -> None:
    assert equal(random.split(random.key(7), 4), random.split(random.key(7), 4))


@pytest.mark.parametrize(
    ("num", "error"),
    [(-1, ValueError), (2.0, TypeError), (True, TypeError), ((2, -1), ValueError)],
)
def test_split_refuses_bad_counts(num: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="num"):
        random.split(KEY, num)


def test_fold_in_gives_distinct_deterministic_keys() -> None:
    folded = [tuple(values(random.fold_in(KEY, d)).tolist()) for d in range(500)]
    assert len(set(folded)) == 500
    assert folded[3] == tuple(values(random.fold_in(KEY, 3)).tolist())
    split = {tuple(row) for row in values(random.split(KEY, 500)).tolist()}
    assert split.isdisjoint(folded)


def test_fold_in_depends_on_the_value_not_its_dtype() -> None:
    expected = random.fold_in(KEY, -5)
    for dtype in ("int8", "int16", "int32"):
        assert equal(random.fold_in(KEY, tnp.asarray(-5, dtype=dtype)), expected)
    assert equal(random.fold_in(KEY, np.int64(-5)), expected)
    with tl.enable_x64():
        assert equal(random.fold_in(KEY, tnp.asarray(-5, dtype="int64")), expected)
        big = random.fold_in(KEY, tnp.asarray(2**40, dtype="int64"))
        assert equal(big, random.fold_in(KEY, 2**40))
    assert not equal(random.fold_in(KEY, 2**32), random.fold_in(KEY, 0))


@pytest.mark.parametrize(
    ("data", "error"),
    [(1.5, TypeError), (tnp.arange(2), TypeError), (tnp.asarray(1.0), TypeError)],
)
def test_fold_in_refuses_what_is_not_an_integer_scalar(
    data: Any, error: type[Exception]
) -> None:
    with pytest.raises(error, match="fold_in: data"):
        random.fold_in(KEY, data)


def test_key_data_and_wrap_key_data_round_trip() -> None:
    keys = random.split(KEY, 3)
    assert equal(random.key_data(keys), keys)
    wrapped = random.wrap_key_data(values(keys))
    assert (str(wrapped.dtype), wrapped.shape) == ("key<fry>", (3,))
    assert equal(random.key_data(wrapped), keys)
    with pytest.raises(TypeError, match="uint32"):
        random.wrap_key_data(np.zeros(3, dtype=np.uint32))


@pytest.mark.parametrize(
    ("key", "error", "message"),
    [
        (tnp.zeros(3, dtype="uint32"), TypeError, r"uint32\[3\]"),
        (tnp.zeros(2, dtype="int32"), TypeError, r"int32\[2\]"),
        (tnp.zeros(2), TypeError, r"float32\[2\]"),
        ([0, 0], TypeError, "got list"),
        (0, TypeError, r"random.key\(seed\)"),
        (tnp.zeros((2, 2), dtype="uint32"), ValueError, "single key"),
    ],
)
def test_samplers_refuse_what_is_not_one_key(
    key: Any, error: type[Exception], message: str
) -> None:
    for sample in (
        lambda k: random.uniform(k),
        lambda k: random.normal(k),
        lambda k: random.randint(k, (), 0, 2),
        lambda k: random.split(k),
        lambda k: random.fold_in(k, 0),
    ):
        with pytest.raises(error, match=message):
            sample(key)


def test_a_numpy_key_gives_the_same_values() -> None:
    assert equal(random.normal(values(KEY), (4,)), random.normal(KEY, (4,)))


# -- determinism ---------------------------------------------------------------------


def test_values_depend_on_the_key_only() -> None:
    first = random.uniform(KEY, (1000,))
    random.normal(random.key(9), (50,))  # other work in between
    random.split(KEY)
    assert equal(random.uniform(KEY, (1000,)), first)
    assert not equal(random.uniform(random.key(1235), (1000,)), first)


def test_values_do_not_depend_on_the_mode_or_promotion_settings() -> None:
    calls = [
        lambda: random.uniform(KEY, (3, 4), minval=tnp.zeros(4), maxval=2.0),
        lambda: random.normal(KEY, (5,)),
        lambda: random.truncated_normal(KEY, -1.0, tnp.ones((2, 1)), (2, 3)),
        lambda: random.bernoulli(KEY, tnp.full((3,), 0.5), (2, 3)),
        lambda: random.randint(KEY, (2, 3), tnp.zeros(3, dtype="int32"), 7),
        lambda: random.categorical(KEY, tnp.zeros((2, 3)), shape=(4, 2)),
        lambda: random.permutation(KEY, tnp.ones((3, 4)), 1, independent=True),
        lambda: random.choice(KEY, 6, (3,), p=tnp.ones(6)),
        lambda: random.choice(KEY, 6, (3,), replace=False, p=tnp.ones(6)),
        lambda: random.fold_in(KEY, 3),
    ]
    reference = [call() for call in calls]
    with tl.dtype_promotion("strict"), tl.rank_promotion("raise"):
        for call, expected in zip(calls, reference, strict=True):
            assert equal(call(), expected)


# -- dtypes by mode --------------------------------------------------------------


def test_defaults_follow_the_mode() -> None:
    with tl.enable_x64():
        assert random.uniform(KEY).dtype == np.dtype("float64")
        assert random.normal(KEY).dtype == np.dtype("float64")
        assert random.randint(KEY, (), 0, 3).dtype == np.dtype("int64")
        assert random.permutation(KEY, 3).dtype == np.dtype("int64")
    assert random.uniform(KEY).dtype == np.dtype("float32")
    assert random.randint(KEY, (), 0, 3).dtype == np.dtype("int32")


def test_an_explicit_64_bit_dtype_in_32_bit_mode_follows_the_setting() -> None:
    with pytest.warns(tl.X64DtypeWarning, match="uniform.*float64"):
        assert random.uniform(KEY, (2,), "float64").dtype == np.dtype("float32")
    with pytest.warns(tl.X64DtypeWarning, match="randint"):
        assert random.randint(KEY, (2,), 0, 5, "int64").dtype == np.dtype("int32")
    with tl.explicit_x64_dtypes("error"), pytest.raises(ValueError, match="float64"):
        random.normal(KEY, (2,), "float64")
    with tl.explicit_x64_dtypes("allow"):
        assert random.normal(KEY, (2,), "float64").dtype == np.dtype("float64")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert random.uniform(KEY, (2,), float).dtype == np.dtype("float32")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: random.uniform(KEY, (2,), "int32"),
            ValueError,
            "dtype argument to `uniform` must be a float dtype, got int32",
        ),
        (
            lambda: random.normal(KEY, (2,), "bool"),
            ValueError,
            "must be a float or complex dtype, got bool",
        ),
        (
            lambda: random.truncated_normal(KEY, -1, 1, (2,), "complex64"),
            ValueError,
            "must be a float dtype, got complex64",
        ),
        (
            lambda: random.randint(KEY, (2,), 0, 5, "float32"),
            TypeError,
            "randint only accepts integer dtypes, got float32",
        ),
        (
            lambda: random.bernoulli(KEY, 1),
            TypeError,
            "`p` must have a floating dtype, got int32",
        ),
        (
            lambda: random.categorical(KEY, tnp.zeros(3, dtype="int32")),
            ValueError,
            "float dtype, got int32",
        ),
    ],
)
def test_wrong_dtypes_are_refused_as_in_jax(
    call: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: random.uniform(KEY, (2,), minval=[0.0, 1.0]), TypeError, "asarray"),
        (lambda: random.uniform(KEY, (2,), minval=1j), TypeError, "real part"),
        (lambda: random.uniform(KEY, (2,), maxval=tnp.ones(3)), ValueError, r"\(2,\)"),
        (lambda: random.uniform(KEY, (-1,)), ValueError, "negative"),
        (lambda: random.uniform(KEY, (2,), maxval=1e300), OverflowError, "1e\\+300"),
        (
            lambda: random.truncated_normal(KEY, -2, 1e39, (2,), "bfloat16"),
            OverflowError,
            "bfloat16",
        ),
        (lambda: random.randint(KEY, (2,), 0.0, 5), TypeError, "minval.astype"),
        (lambda: random.randint(KEY, (2,), 0, True), TypeError, "maxval"),
        (lambda: random.choice(KEY, 5, 3), TypeError, r"shape=\(3,\)"),
        (lambda: random.choice(KEY, 3, (4,), replace=False), ValueError, "size 4"),
        (lambda: random.permutation(KEY, 2.0), TypeError, "x must be an int"),
        (lambda: random.permutation(KEY, -1), ValueError, "negative"),
        (lambda: random.categorical(KEY, tnp.zeros(3), axis=1), ValueError, "axis 1"),
    ],
)
def test_bad_arguments_are_refused_with_their_name(
    call: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        call()


def test_the_fixes_that_errors_name_work() -> None:
    five = tnp.asarray(5.0)
    with pytest.raises(TypeError, match=r"maxval.astype\('int32'\)"):
        random.randint(KEY, (2,), 0, five)
    assert random.randint(KEY, (2,), 0, five.astype("int32")).dtype == np.dtype("int32")
    with pytest.raises(TypeError, match=r"astype\('float32'\)"):
        random.bernoulli(KEY, tnp.ones(2, dtype="int32"))
    assert random.bernoulli(KEY, tnp.ones(2, dtype="int32").astype("float32")).all()
    assert random.choice(KEY, 5, (3,)).shape == (3,)


# -- floats -------------------------------------------------------------------------


@pytest.mark.parametrize("x64", [False, True])
def test_uniform_moments_and_range(x64: bool) -> None:
    with tl.enable_x64(x64):
        x = values(random.uniform(KEY, (N,), minval=-3.0, maxval=5.0))
    assert x.dtype == (np.float64 if x64 else np.float32)
    assert x.min() >= -3.0 and x.max() < 5.0
    assert abs(x.mean() - 1.0) < 0.05  # standard error 0.007
    assert abs(x.var() - 64 / 12) < 0.1


def test_uniform_float64_has_more_than_float32_resolution() -> None:
    with tl.enable_x64():
        x = values(random.uniform(KEY, (1000,)))
    assert not np.array_equal(x, x.astype(np.float32).astype(np.float64))


def test_uniform_bounds_broadcast() -> None:
    lo = tnp.asarray([0.0, 10.0, 20.0])
    x = values(random.uniform(KEY, (1000, 3), minval=lo, maxval=lo + 1))
    assert (x.min(axis=0) >= [0, 10, 20]).all() and (x.max(axis=0) < [1, 11, 21]).all()


@pytest.mark.parametrize(
    "dtype", ["bfloat16", "float16", "float32", "float8_e4m3fn", "float8_e5m2"]
)
@pytest.mark.parametrize(
    ("lo", "hi"), [(0.0, 1.0), (-1.0, 1.0), (0.1, 0.7), (100.0, 101.0)]
)
def test_uniform_never_returns_maxval(dtype: str, lo: float, hi: float) -> None:
    # JAX returns maxval for a quarter of bfloat16 draws in [100, 101).
    x = random.uniform(KEY, (N,), dtype, lo, hi)
    lo_, hi_ = tnp.asarray(lo, dtype=dtype), tnp.asarray(hi, dtype=dtype)
    assert x.dtype == np.dtype(dtype)
    if bool(lo_ == hi_):  # 100 and 101 are both 96 in float8_e5m2
        assert bool((x == lo_).all())
        return
    assert bool((x >= lo_).all()) and bool((x < hi_).all())
    # ... while the largest value below it still occurs.
    if dtype != "float32":
        assert bool((x == tnp.nextafter(hi_, lo_)).any())


def test_uniform_with_an_empty_range_gives_minval() -> None:
    x = random.uniform(KEY, (5,), minval=2.0, maxval=2.0)
    assert values(x).tolist() == [2.0] * 5


def test_half_precision_is_the_float32_draw_rounded_once() -> None:
    wide = random.uniform(KEY, (1000,), "float32", -1.0, 1.0)
    narrow = random.uniform(KEY, (1000,), "bfloat16", -1.0, 1.0)
    rounded = tnp.minimum(
        wide.astype("bfloat16"), tnp.nextafter(tnp.asarray(1.0, dtype="bfloat16"), -1.0)
    )
    assert equal(narrow, rounded)


def _moments(x: np.ndarray[Any, Any]) -> tuple[float, float, float, float]:
    x = x.astype(np.float64)
    m, v = x.mean(), x.var()
    z = (x - m) / math.sqrt(v)
    return m, v, float((z**3).mean()), float((z**4).mean())


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_normal_moments(dtype: str) -> None:
    with tl.enable_x64():
        x = random.normal(KEY, (N,), dtype)
    assert x.dtype == np.dtype(dtype)
    m, v, skew, kurt = _moments(values(x))
    assert abs(m) < 0.02 and abs(v - 1) < 0.03  # standard errors 0.003, 0.0045
    assert abs(skew) < 0.05 and abs(kurt - 3) < 0.1
    # Both halves of the Box-Muller pairs are used, and independent.
    a, b = values(x)[: N // 2], values(x)[N // 2 :]
    assert abs(np.corrcoef(a.astype(float), b.astype(float))[0, 1]) < 0.02


def test_normal_odd_sizes_and_scalars() -> None:
    assert random.normal(KEY, (3, 5)).shape == (3, 5)
    assert random.normal(KEY).shape == ()
    assert random.normal(KEY, (0,)).shape == (0,)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_normal_has_unit_variance_split_between_parts(dtype: str) -> None:
    with tl.enable_x64():
        z = values(random.normal(KEY, (N,), dtype))
    assert z.dtype == np.dtype(dtype)
    assert abs(np.mean(np.abs(z) ** 2) - 1) < 0.03
    assert abs(z.real.var() - 0.5) < 0.02 and abs(z.imag.var() - 0.5) < 0.02
    assert abs(np.corrcoef(z.real, z.imag)[0, 1]) < 0.02


def _truncated_moments(a: float, b: float) -> tuple[float, float]:
    """Mean and variance of a standard normal truncated to (a, b)."""

    def pdf(x: float) -> float:
        return 0.0 if math.isinf(x) else math.exp(-x * x / 2) / math.sqrt(2 * math.pi)

    def cdf(x: float) -> float:
        return (1 + math.erf(x / math.sqrt(2))) / 2

    z = cdf(b) - cdf(a)
    mean = (pdf(a) - pdf(b)) / z
    a_term = 0.0 if math.isinf(a) else a * pdf(a)
    b_term = 0.0 if math.isinf(b) else b * pdf(b)
    return mean, 1 + (a_term - b_term) / z - mean**2


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize(
    ("a", "b"), [(-2.0, 2.0), (0.0, math.inf), (1.0, 3.0), (-math.inf, -0.5)]
)
def test_truncated_normal_bounds_and_moments(dtype: str, a: float, b: float) -> None:
    with tl.enable_x64():
        x = random.truncated_normal(KEY, a, b, (N,), dtype)
        lo, hi = tnp.asarray(a, dtype=dtype), tnp.asarray(b, dtype=dtype)
        assert bool((x > lo).all()) and bool((x < hi).all())
    assert x.dtype == np.dtype(dtype)
    mean, var = _truncated_moments(a, b)
    assert abs(values(x).astype(float).mean() - mean) < 0.02
    assert abs(values(x).astype(float).var() - var) < 0.03


def test_truncated_normal_shape_comes_from_the_bounds() -> None:
    x = random.truncated_normal(KEY, tnp.asarray([-1.0, 0.0, 1.0]), 2.0)
    assert x.shape == (3,)
    x = random.truncated_normal(KEY, tnp.zeros((1, 3)), 2.0, (4, 3))
    assert x.shape == (4, 3) and bool((x > 0).all())
    with pytest.raises(ValueError, match=r"lower \(1, 3\)"):
        random.truncated_normal(KEY, tnp.zeros((1, 3)), 2.0, (3,))


def test_erf_is_accurate() -> None:
    grid = [x / 64 for x in range(-64 * 7, 64 * 7 + 1)] + [math.inf, -math.inf]
    with tl.enable_x64():
        got = values(_special.erf(tnp.asarray(np.array(grid))))
    want = np.array([math.erf(x) for x in grid])
    # Within 10 units in the last place (2**-52 relative each).
    assert np.all(np.abs(got - want) <= 10 * 2**-52 * np.abs(want))
    got32 = values(_special.erf(tnp.asarray(np.array(grid, dtype=np.float32))))
    assert np.abs(got32 - want).max() < 1e-6


def test_erfinv_inverts_erf() -> None:
    y = np.linspace(-0.999999, 0.999999, 4001)
    with tl.enable_x64():
        x = values(_special.erfinv(tnp.asarray(y)))
        assert values(_special.erfinv(tnp.asarray([-1.0, 1.0]))).tolist() == [
            -math.inf,
            math.inf,
        ]
    assert np.abs(np.array([math.erf(v) for v in x]) - y).max() < 1e-15
    x32 = values(_special.erfinv(tnp.asarray(y.astype(np.float32))))
    back = np.array([math.erf(v) for v in x32.astype(float)])
    assert np.abs(back - y.astype(np.float32)).max() < 3e-7


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_bernoulli_frequency(p: float) -> None:
    x = random.bernoulli(KEY, p, (N,))
    assert x.dtype == np.dtype(bool) and not x.weak_type
    assert abs(values(x).mean() - p) < 0.006  # standard error 0.0015


def test_bernoulli_per_element_probabilities() -> None:
    p = tnp.asarray([0.1, 0.5, 0.9], dtype="bfloat16")
    x = values(random.bernoulli(KEY, p, (N // 10, 3)))
    assert np.all(np.abs(x.mean(axis=0) - [0.1, 0.5, 0.9]) < 0.02)


# -- integers --------------------------------------------------------------------------


def test_randint_is_uniform_on_its_range() -> None:
    x = values(random.randint(KEY, (N,), -3, 7))
    counts = Counter(x.tolist())
    assert sorted(counts) == list(range(-3, 7))
    assert all(abs(c - N / 10) < 600 for c in counts.values())  # sd 95


@pytest.mark.parametrize(
    ("lo", "hi", "dtype", "expected"),
    [
        (0, 256, "uint8", (0, 255)),
        (-1000, 1000, "int8", (-128, 127)),
        (-(2**40), 2**40, "int16", (-(2**15), 2**15 - 1)),
        (-(2**31), 2**31, "int32", None),
        (0, 2**32, "uint32", None),
        (5, 5, "int32", (5, 5)),
        (7, 3, "int32", (7, 7)),
    ],
)
def test_randint_clips_bounds_to_the_dtype(
    lo: int, hi: int, dtype: str, expected: tuple[int, int] | None
) -> None:
    x = random.randint(KEY, (N,), lo, hi, dtype)
    assert x.dtype == np.dtype(dtype)
    got = values(x).astype(np.int64)
    if expected is None:  # the whole range: both signs, and the extremes' bits
        info = tl.iinfo(dtype)
        mid = (int(info.min) + int(info.max)) / 2
        assert abs(got.mean() - mid) < 0.02 * (int(info.max) - int(info.min))
        assert got.min() < int(info.min) + 2**26 and got.max() > int(info.max) - 2**26
    else:
        assert (int(got.min()), int(got.max())) == expected


def test_randint_array_bounds_of_other_integer_types() -> None:
    hi = tnp.asarray([10, 200], dtype="uint8")
    x = values(
        random.randint(KEY, (1000, 2), tnp.asarray(-5, dtype="int8"), hi, "int8")
    )
    assert x[:, 0].min() == -5 and x[:, 0].max() == 9
    assert x[:, 1].max() == 127  # 200 is above int8: its maximum is drawn too


def test_randint_64_bit_uses_all_its_bits() -> None:
    with tl.enable_x64():
        x = values(random.randint(KEY, (N,), 0, 2**40, "int64"))
        full = values(random.randint(KEY, (N,), -(2**63), 2**63, "int64"))
    assert x.dtype == np.int64 and x.min() >= 0 and x.max() < 2**40
    assert abs(x.mean() / 2**39 - 1) < 0.02 and x.max() > 2**39
    assert (full < 0).mean() == pytest.approx(0.5, abs=0.01)


def test_categorical_frequencies_follow_softmax() -> None:
    logits = tnp.asarray([1.0, 0.0, -1.0, 2.0, -math.inf])
    probs = np.exp([1.0, 0.0, -1.0, 2.0, -np.inf])
    probs /= probs.sum()
    x = values(random.categorical(KEY, logits, shape=(N,)))
    freq = np.bincount(x, minlength=5) / N
    assert np.all(np.abs(freq - probs) < 0.01) and freq[4] == 0


def test_categorical_batches_and_axes() -> None:
    logits = tnp.log(tnp.asarray([[0.9, 0.1], [0.2, 0.8]]))
    x = values(random.categorical(KEY, logits, shape=(N // 10, 2)))
    assert np.all(np.abs(x.mean(axis=0) - [0.1, 0.8]) < 0.02)
    y = values(random.categorical(KEY, logits.T, axis=0, shape=(N // 10, 2)))
    assert np.all(np.abs(y.mean(axis=0) - [0.1, 0.8]) < 0.02)


def test_categorical_without_replacement_gives_distinct_categories() -> None:
    keys = random.split(KEY, 200)
    logits = tnp.zeros((3, 6))
    for k in keys:
        x = values(random.categorical(k, logits, shape=(6, 3), replace=False))
        assert all(sorted(x[:, b].tolist()) == list(range(6)) for b in range(3))


def test_permutation_is_a_permutation() -> None:
    p = values(random.permutation(KEY, 1000))
    assert sorted(p.tolist()) == list(range(1000)) and p.tolist() != list(range(1000))
    x = tnp.arange(12).reshape(3, 4)
    rows = values(random.permutation(KEY, x, axis=1))
    assert sorted(rows[0].tolist()) == [0, 1, 2, 3]
    assert (rows - rows[:, :1] == rows[0] - rows[0, 0]).all()  # same for all rows


def test_independent_permutations_differ_by_line() -> None:
    x = tnp.broadcast_to(tnp.arange(8), (50, 8))
    p = values(random.permutation(KEY, x, axis=1, independent=True))
    assert all(sorted(row) == list(range(8)) for row in p.tolist())
    assert len({tuple(row) for row in p.tolist()}) > 45


def test_every_order_is_equally_likely() -> None:
    lines = tnp.broadcast_to(tnp.arange(3), (6000, 3))
    shuffled = random.permutation(KEY, lines, axis=1, independent=True)
    orders = Counter(tuple(row) for row in values(shuffled).tolist())
    assert len(orders) == 6 and all(abs(c - 1000) < 150 for c in orders.values())


def test_choice_without_replacement_has_unique_values() -> None:
    x = values(random.choice(KEY, 1000, (500,), replace=False))
    assert len(set(x.tolist())) == 500 and x.min() >= 0 and x.max() < 1000
    p = tnp.asarray([0.0, 1.0, 1.0, 1.0, 5.0])
    y = values(random.choice(KEY, 5, (4,), replace=False, p=p))
    assert sorted(y.tolist()) == [1, 2, 3, 4]


def test_choice_follows_the_probabilities() -> None:
    p = tnp.asarray([0.0, 0.1, 0.2, 0.7])
    x = values(random.choice(KEY, 4, (N,), p=p))
    assert np.all(np.abs(np.bincount(x, minlength=4) / N - [0, 0.1, 0.2, 0.7]) < 0.01)
    u = values(random.choice(KEY, 4, (N,)))
    assert np.all(np.abs(np.bincount(u, minlength=4) / N - 0.25) < 0.01)


def test_choice_from_an_array_along_an_axis() -> None:
    a = tnp.arange(20).reshape(4, 5)
    x = values(random.choice(KEY, a, (2, 3), axis=1))
    assert x.shape == (4, 2, 3)
    assert ((x - x[0]) == np.arange(0, 20, 5)[:, None, None]).all()
    assert random.choice(KEY, a, (0,)).shape == (0, 5)


# -- tracing ---------------------------------------------------------------------------


def test_eval_shape_gives_dtypes_without_values() -> None:
    out = tl.eval_shape(lambda k: random.normal(k, (3,)), KEY)
    assert out == tl.ShapeDtypeStruct((3,), np.dtype("float32"))
    out = tl.eval_shape(lambda k: random.split(k, 4), KEY)
    assert out == tl.ShapeDtypeStruct((4, 2), np.dtype("uint32"))
    seeded = tl.eval_shape(lambda s: random.randint(random.key(s), (2,), 0, 5), 3)
    assert seeded == tl.ShapeDtypeStruct((2,), np.dtype("int32"))


SAMPLERS = {
    "split": lambda k: random.split(k, 3),
    "fold_in": lambda k: random.fold_in(k, 11),
    "uniform": lambda k: random.uniform(k, (4,), "bfloat16", -1.0, 1.0),
    "normal": lambda k: random.normal(k, (5,)),
    "complex normal": lambda k: random.normal(k, (3,), "complex64"),
    "truncated_normal": lambda k: random.truncated_normal(k, -1.0, 2.0, (4,)),
    "bernoulli": lambda k: random.bernoulli(k, 0.3, (6,)),
    "randint": lambda k: random.randint(k, (6,), -5, 300, "int16"),
    "categorical": lambda k: random.categorical(k, tnp.zeros((2, 4)), shape=(3, 2)),
    "permutation": lambda k: random.permutation(k, tnp.ones((2, 3)), 1, True),
    "choice": lambda k: random.choice(k, 7, (3,), replace=False),
    "choice p": lambda k: random.choice(k, 4, (5,), p=tnp.ones(4)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_gives_the_eager_values(name: str) -> None:
    sample = SAMPLERS[name]
    jitted = tl.jit(sample)
    for k in (KEY, random.key(5)):
        assert equal(jitted(k), sample(k))
    assert tl.eval_shape(sample, KEY) == tl.ShapeDtypeStruct(
        sample(KEY).shape, sample(KEY).dtype
    )


def test_jit_with_a_traced_seed_and_data() -> None:
    def fn(seed: tnp.Array, step: tnp.Array) -> tnp.Array:
        return random.uniform(random.fold_in(random.key(seed), step), (3,))

    jitted = tl.jit(fn)
    for seed, step in [(1, 2), (-7, 40)]:
        expected = fn(tnp.asarray(seed), tnp.asarray(step))
        assert equal(jitted(tnp.asarray(seed), tnp.asarray(step)), expected)
        assert equal(
            expected, random.uniform(random.fold_in(random.key(seed), step), (3,))
        )
