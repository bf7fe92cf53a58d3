"""The jit cache: bounded (least recently used programs forgotten), reported
by cache_info as functools reports its caches, and found by calls with
Python scalar arguments as fast as by calls with arrays, in C too; and the
arguments jit refuses (scalars out of range, static arguments naming no
parameter), with fixes that work."""

from __future__ import annotations

import functools
import gc
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import _promotion
from typelattice._tracing.jit import DEFAULT_CACHE_SIZE, Jitted, _Entry

BUILT = _promotion._speedups is not None
needs_c = pytest.mark.skipif(not BUILT, reason=_promotion.SPEEDUPS)


def plus_one(x: Any) -> Any:
    return x + 1


def times(x: Any, y: Any) -> Any:
    return x * y + 1


def zeros(n: int) -> tnp.Array:
    return tnp.zeros(n, dtype="float32")


def describe(out: Any) -> tuple[Any, ...]:
    return (type(out), out.dtype, out.weak_type, out.shape, np.asarray(out).tobytes())


def outcome(call: Callable[[], Any]) -> Any:
    try:
        return describe(call())
    except Exception as err:  # noqa: BLE001 - the class and message are compared
        return (type(err), str(err))


@contextmanager
def python_calls() -> Iterator[list[int]]:
    """Counts the runs of the Python Jitted.__call__ (the C path's fallback)."""
    method = vars(Jitted)["__call__"]
    code = getattr(method, "fallback", method).__code__
    seen: list[int] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is code:
            seen.append(1)

    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)


# -- cache_info and the bound -----------------------------------------------------


def test_cache_info_is_functools_shaped() -> None:
    info = tl.jit(plus_one).cache_info()
    assert info._fields == functools.lru_cache(plus_one).cache_info()._fields
    assert info == (0, 0, DEFAULT_CACHE_SIZE, 0)
    assert tl.jit(plus_one, cache_size=None).cache_info().maxsize is None


def test_many_shapes_evict_the_oldest() -> None:
    f = tl.jit(plus_one, cache_size=8)
    for n in range(1, 21):
        f(zeros(n))
    assert f.cache_info() == (0, 20, 8, 8)
    for n in range(13, 21):  # the 8 most recent: all cached
        f(zeros(n))
    assert f.cache_info() == (8, 20, 8, 8)
    f(zeros(1))  # long forgotten: traced again, evicting the oldest (13)
    assert f.cache_info() == (8, 21, 8, 8)
    f(zeros(14))
    f(zeros(13))
    assert f.cache_info() == (9, 22, 8, 8)


@pytest.mark.parametrize(
    "use",
    [
        pytest.param(lambda f, x: f(x, 2), id="positional"),
        pytest.param(lambda f, x: f(x, y=2), id="keyword"),
        pytest.param(lambda f, x: f((x,), 2), id="tuple"),
    ],
)
def test_recently_used_entries_survive(use: Callable[[Any, Any], Any]) -> None:
    """Whichever path finds an entry (flat key, C or Python, or the full
    key), it becomes the most recently used."""

    def g(x: Any, y: Any) -> Any:
        leaf = x[0] if isinstance(x, tuple) else x
        return leaf * y

    f = tl.jit(g, cache_size=3)
    for n in (1, 2, 3):
        use(f, zeros(n))
    use(f, zeros(1))  # used again: now the most recent
    use(f, zeros(4))  # evicts 2, the least recently used
    assert f.cache_info() == (1, 4, 3, 3)
    use(f, zeros(1))
    use(f, zeros(3))
    use(f, zeros(4))
    assert f.cache_info() == (4, 4, 3, 3)
    use(f, zeros(2))  # forgotten
    assert f.cache_info() == (4, 5, 3, 3)


def test_memory_stays_bounded() -> None:
    """Programs of forgotten signatures are freed: no more live entries than
    cache_size, whatever the number of shapes."""
    gc.collect()
    before = sum(type(o) is _Entry for o in gc.get_objects())
    f = tl.jit(times, cache_size=16)
    for n in range(1, 301):
        f(zeros(n), 2)  # under the flat key
        f(zeros(n), y=2.0)  # under the full key only
    gc.collect()
    live = sum(type(o) is _Entry for o in gc.get_objects()) - before
    assert f.cache_info() == (0, 600, 16, 16)
    assert live == 16
    assert len(f._cache) == len(f._order) == 16
    assert len(f._fast) <= 16
    assert set(map(id, f._fast.values())) <= set(map(id, f._order))


def test_cache_size_zero_and_unbounded() -> None:
    traces: list[int] = []

    def g(x: Any) -> Any:
        traces.append(1)
        return x + 1

    f = tl.jit(g, cache_size=0)
    for _ in range(3):
        assert describe(f(zeros(2))) == describe(g(zeros(2)))
    assert f.cache_info() == (0, 3, 0, 0)
    assert len(traces) == 6  # traced on each call (plus the eager calls)
    h = tl.jit(plus_one, cache_size=None)
    for n in range(1, 5001):
        h(zeros(n % 5000 + 1))
    assert h.cache_info() == (0, 5000, None, 5000)


@pytest.mark.parametrize(
    ("size", "error"),
    [(-1, ValueError), (1.5, TypeError), (True, TypeError), ("8", TypeError)],
)
def test_bad_cache_size(size: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=f"cache_size must be a non-negative.*{size!r}"):
        tl.jit(plus_one, cache_size=size)


def test_clear_cache() -> None:
    f = tl.jit(times, cache_size=4)
    f(zeros(2), 2)
    f.clear_cache()
    assert f.cache_info().currsize == 0
    f(zeros(2), 2)
    assert f.cache_info() == (0, 2, 4, 1)


def test_threads_keep_the_cache_consistent() -> None:
    f = tl.jit(times, cache_size=5)
    errors: list[BaseException] = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def work(seed: int) -> None:
        try:
            for i in range(200):
                n = (seed * 7 + i) % 12 + 1
                out = f(zeros(n), i % 3) if i % 2 else f(zeros(n), y=1.5)
                assert out.shape == (n,)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(6)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors
    assert len(f._cache) == len(f._order) <= 5
    assert set(map(id, f._fast.values())) <= set(map(id, f._order))
    assert set(map(id, f._cache.values())) == set(map(id, f._order))


def test_two_threads_tracing_one_call_keep_one_entry() -> None:
    """Both threads miss and trace the same call at once (the barrier holds
    each inside its trace until the other is there too): the cache keeps one
    program, counted once, and evicting it later leaves nothing behind."""
    barrier = threading.Barrier(2, timeout=30)

    def slow(x: Any) -> Any:
        barrier.wait()  # runs while tracing only
        return x + 1

    f = tl.jit(slow, cache_size=1)
    outs: list[Any] = []
    threads = [threading.Thread(target=lambda: outs.append(f(zeros(2)))) for _ in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [o.tolist() for o in outs] == [[1.0, 1.0]] * 2
    assert f.cache_info().currsize == 1
    assert len(f._cache) == len(f._order) == 1
    barrier.reset()
    other = threading.Thread(target=barrier.wait)
    other.start()
    f(zeros(3))  # a new shape evicts the first program
    other.join()
    assert len(f._cache) == len(f._order) == 1
    assert set(map(id, f._fast.values())) <= set(map(id, f._order))


# -- Python scalar arguments --------------------------------------------------------


def test_scalars_and_weak_arrays_share_one_program() -> None:
    f = tl.jit(times)
    x = zeros(3)
    f(x, 2)
    f(x, tnp.asarray(5))
    f(x, 7)
    f(x, tnp.asarray(9))
    assert f.cache_info() == (3, 1, DEFAULT_CACHE_SIZE, 1)
    assert describe(f(x + 1, 3)) == describe(times(x + 1, 3))


SCALARS = [
    0,
    2,
    -(2**31),
    2**31 - 1,
    2**31,
    -(2**31) - 1,
    2**40,
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    2**70,
    1.5,
    -0.0,
    3.4028234663852886e38,
    3.4028235e38,
    3.4028235677973366e38,  # rounds to inf in float32
    -3.4028235677973366e38,
    1e39,
    float("inf"),
    float("-inf"),
    float("nan"),
    1e-50,
    True,
    False,
    1 + 2j,
    complex(1e39, 0),
    complex(0, -1e39),
    complex(float("nan"), 1),
]


@needs_c
@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
def test_scalar_arguments_in_c_answer_as_python(scalar: Any, x64: bool) -> None:
    """The C path converts the scalars it surely can and leaves the others
    to the Python method: either way, the same outcome."""
    python_call = vars(Jitted)["__call__"].fallback

    def g(x: Any, y: Any) -> Any:
        return y + x

    f = tl.jit(g)
    x = tnp.zeros(
        2, dtype="float32" if not isinstance(scalar, complex) else "complex64"
    )
    with tl.enable_x64(x64):
        expected = outcome(lambda: python_call(f, x, scalar))  # traces
        assert outcome(lambda: f(x, scalar)) == expected  # C
        assert outcome(lambda: python_call(f, x, scalar)) == expected  # Python
        # An int8 array: values beyond int8 refused, as eagerly (messages
        # differ: jit's names the argument, or the weak array it became).
        x = tnp.zeros(2, dtype="int8")
        if type(scalar) is int:
            jitted, eager = outcome(lambda: f(x, scalar)), outcome(lambda: g(x, scalar))
            assert jitted[0] == eager[0]
            if jitted[0] is not OverflowError:
                assert jitted == eager


def test_repeated_and_distinct_scalar_values() -> None:
    """Each call sees its own value: equal keys of different values (0.0 and
    -0.0, 1 and True, 1 and 1.0) and thousands of distinct values too."""
    python_call = getattr(vars(Jitted)["__call__"], "fallback", None)

    def pair(x: Any, k: Any) -> Any:
        return x * k, k

    f = tl.jit(pair)
    x = zeros(2) + 1
    values = [0.0, -0.0, 0.0, -0.0, 1, True, 1.0, 1, True, 2.5, float("nan"), 2.5]
    values += list(range(-1000, 1000, 3)) + [v / 7 for v in range(600)]
    for v in values:
        got = f(x, v)
        want = pair(x, tnp.asarray(v))
        assert [describe(a) for a in got] == [describe(a) for a in want], v
        if python_call is not None:
            again = python_call(f, x, v)
            assert [describe(a) for a in again] == [describe(a) for a in want]


def test_repeated_values_in_each_mode() -> None:
    """A value passed again and again keeps its mode's dtype and weak flag
    (the C path keeps the converted values of each dtype apart)."""

    def same(k: Any) -> Any:
        return k

    g = tl.jit(same)
    for value, x32, x64 in [
        (7, "int32", "int64"),
        (1.5, "float32", "float64"),
        (-0.0, "float32", "float64"),
        (True, "bool", "bool"),
        (1j, "complex64", "complex128"),
    ]:
        for _ in range(4):
            assert describe(g(value)) == describe(tnp.asarray(value))
            assert g(value).dtype == np.dtype(x32)
            with tl.enable_x64():
                assert describe(g(value)) == describe(tnp.asarray(value))
                assert g(value).dtype == np.dtype(x64)
        with pytest.raises(ValueError, match="read-only"):
            np.asarray(g(value))[...] = 0  # (shared by the calls: never written)
    assert g(7) is not g(7)


@needs_c
def test_c_path_answers_scalar_calls() -> None:
    f = tl.jit(times)
    x = zeros(3)
    f(x, 2)  # traced
    with python_calls() as seen:
        for k in (1, 2, 3, -(2**31), 2**31 - 1):
            f(x, k)
        f(x, tnp.asarray(4))  # the weak array: its own flat key, first found
        f(x, tnp.asarray(4))  # ... by Python, then by C
    assert len(seen) == 1
    assert f.cache_info() == (7, 1, DEFAULT_CACHE_SIZE, 1)
    with python_calls() as seen:
        with pytest.raises(OverflowError, match="2147483648 does not fit in int32"):
            f(x, 2**31)  # refused by Python, which says why
    assert len(seen) == 1


@needs_c
def test_c_path_hits_after_eviction_and_reinsertion() -> None:
    f = tl.jit(times, cache_size=2)
    x = zeros(1)
    with python_calls() as seen:
        f(x, 2)  # traced
        f(x, 3)
        f(x, tnp.asarray(2.0))  # (first found by Python under its flat key)
        f(x, tnp.asarray(2.5))
    assert len(seen) == 2
    with python_calls() as seen:
        f(zeros(2), 2)
        f(zeros(3), 2)  # evicts zeros(1)'s entry, and both its flat keys
        f(zeros(1), 2)  # traced again: not found by C under a stale key
        f(zeros(1), 5)
        f(zeros(3), 2)
    assert len(seen) == 3
    assert f.cache_info() == (4, 5, 2, 2)
    assert len(f._fast) == 2


@needs_c
def test_c_path_keeps_lru_order() -> None:
    f = tl.jit(plus_one, cache_size=2)
    a, b, c = zeros(1), zeros(2), zeros(3)
    f(a)
    f(b)
    with python_calls() as seen:
        f(a)  # found in C: now the most recent
    assert not seen
    f(c)  # evicts b
    with python_calls() as seen:
        f(a)
        f(c)
    assert not seen
    with python_calls() as seen:
        f(b)
    assert len(seen) == 1
    assert f.cache_info() == (3, 4, 2, 2)


def test_scalar_calls_in_scopes() -> None:
    """The scalar's dtype follows the configuration in force, scoped or not."""
    f = tl.jit(lambda y: y * 2)
    assert describe(f(3)) == describe(tnp.asarray(6))
    with tl.enable_x64():
        out = f(2**40)
        assert (out.dtype, out.weak_type, int(out)) == (np.dtype("int64"), True, 2**41)
        out = f(1e300)
        assert (out.dtype, float(out)) == (np.dtype("float64"), 2e300)
    with pytest.raises(OverflowError, match="does not fit in int32"):
        f(2**40)
    tl.config.update("enable_x64", True)
    assert f(2**40).dtype == np.dtype("int64")


# -- refused scalars: the same refusal everywhere, fixes that work -----------------


@pytest.mark.parametrize("value", [2**31, -(2**31) - 1, 2**40, 1e39, complex(1e39, 0)])
def test_eval_shape_refuses_as_jit(value: Any) -> None:
    x = zeros(3)

    def g(x: Any, y: Any) -> Any:
        return y * 2

    with pytest.raises(OverflowError) as jitted:
        tl.jit(g)(x, value)
    with pytest.raises(OverflowError) as shaped:
        tl.eval_shape(g, x, value)
    assert str(jitted.value).startswith("jit(test_eval_shape_refuses_as_jit.")
    assert str(shaped.value).startswith("eval_shape(g): ")
    # The same reason; the fixes differ where eval_shape has no static
    # arguments (it binds the value instead).
    reason = [
        str(e.value).split(": ", 1)[1].split(" Fix: ")[0] for e in (jitted, shaped)
    ]
    assert reason[0] == reason[1]
    assert repr(value) in str(shaped.value)
    assert "functools.partial" in str(shaped.value)


def test_refused_scalar_fixes_work() -> None:
    def g(y: Any) -> Any:
        return y * 2

    for value in (2**40, 1e39, complex(0, 1e39)):
        with pytest.raises(OverflowError, match="enable_x64.*static") as err:
            tl.jit(g)(value)
        assert "typelattice.enable_x64()" in str(err.value)
        with tl.enable_x64():
            assert describe(tl.jit(g)(value)) == describe(g(tnp.asarray(value)))

        def scaled(x: Any, y: Any) -> Any:
            return x * (y / 1e30)

        x = zeros(2) + 1
        static = tl.jit(scaled, static_argnums=1)(x, value)
        assert describe(static) == describe(scaled(x, value))
    with tl.enable_x64():
        with pytest.raises(OverflowError) as err:
            tl.jit(g)(2**63)
        assert "enable_x64" not in str(err.value)  # it is on: no help
        assert "static_argnums or static_argnames" in str(err.value)

        def halved(y: Any) -> Any:
            return y / 2

        static = tl.jit(halved, static_argnames="y")(y=2**63)
        assert describe(static) == describe(tnp.asarray(2.0**62))


def test_eval_shape_refuses_big_scalars_with_a_fix_that_works() -> None:
    """eval_shape has no static arguments: its message binds the value."""

    def scaled(x: Any, y: Any) -> Any:
        return x * (y / 1e30)

    x = zeros(2)
    with pytest.raises(OverflowError, match="functools.partial") as err:
        tl.eval_shape(scaled, x, 2**40)
    assert "static_argnums" not in str(err.value)
    bound = tl.eval_shape(functools.partial(scaled, y=2**40), x)
    assert (bound.shape, bound.dtype) == ((2,), np.dtype("float32"))


def test_no_message_is_built_for_accepted_calls() -> None:
    """Calls that pass their checks format no dtype (NumPy prints dtypes
    slowly, in Python): messages are built only when a check fails."""
    f = tl.jit(times)
    x = tnp.zeros(3, dtype="int8")
    y = x.astype("float32")
    f(x, 2)
    f(y, 2)
    formatted: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        code = frame.f_code
        if event == "call" and code.co_name == "__str__":
            if code.co_filename.endswith("_dtype.py"):
                formatted.append(code.co_filename)

    sys.setprofile(profile)
    try:
        for k in (3, tnp.asarray(3), 100):
            f(x, k)
            f(y, k)
        tnp.asarray([1, 2], dtype="int8") * tnp.asarray(3)
        tnp.asarray(np.asarray([1, 2], dtype="int64")) + 1
    finally:
        sys.setprofile(None)
    assert not formatted
    sys.setprofile(profile)
    try:
        with pytest.raises(OverflowError, match="does not fit in int8"):
            f(x, 300)
    finally:
        sys.setprofile(None)
    assert formatted  # (the spy sees dtypes formatted when they are)


# -- static arguments that name no parameter ---------------------------------------


def test_static_arguments_must_name_parameters() -> None:
    """Refused when jit is applied (as JAX), naming the value, what the
    function takes and the fix; the fix works."""

    def f(x: Any, y: Any) -> Any:
        return x * y

    with pytest.raises(
        ValueError,
        match=r"static_argnums=\(2,\): 2 is not the position of a parameter; f "
        r"takes 2 positional arguments \(x, y\): 0 to 1, or -2 to -1",
    ):
        tl.jit(f, static_argnums=2)
    with pytest.raises(ValueError, match=r"-3 is not the position"):
        tl.jit(f, static_argnums=(0, -3))
    with pytest.raises(
        ValueError, match=r"static_argnames=\['q'\] names no parameter of f "
    ):
        tl.jit(f, static_argnames=("y", "q"))
    with pytest.raises(TypeError, match="static_argnums must be integers.*'y'"):
        tl.jit(f, static_argnums="y")
    with pytest.raises(TypeError, match="static_argnames must be a parameter name"):
        tl.jit(f, static_argnames=1)  # type: ignore[arg-type]
    x = zeros(2) + 1
    assert describe(tl.jit(f, static_argnums=-1)(x, 3)) == describe(f(x, 3))

    def first(x: Any, /, y: Any) -> Any:
        return x * y

    with pytest.raises(ValueError, match="Use static_argnums=0 instead") as err:
        tl.jit(first, static_argnames="x")
    assert "positional-only" in str(err.value)
    assert describe(tl.jit(first, static_argnums=0)(2, x)) == describe(first(2, x))

    # Any position with *args, any name with **kwargs (but positional-only).
    def spread(*args: Any, **kwargs: Any) -> Any:
        return args[0] * kwargs.get("k", 1)

    g = tl.jit(spread, static_argnums=7, static_argnames="k")
    assert describe(g(x, k=3)) == describe(x * 3)


# -- weak operands in programs ----------------------------------------------------

BOUNDARIES = {
    "int8": [127, 128, -128, -129, 2**31 - 1],
    "uint8": [0, -1, 255, 256],
    "int16": [32767, 32768, -32769],
    "float16": [
        65504.0,
        65519.0,
        65520.0,
        1e5,
        -1e5,
        float("inf"),
        float("nan"),
        70000,
    ],
    "bfloat16": [3.3895313892515355e38, 3.39e38, 3.4e38, -3.4e38, 1e30, 300],
    "float32": [3.4028234663852886e38, 2**31 - 1, -(2**31), 1e30],
    "complex64": [1e30, 1 + 1j, complex(3e38, 1)],
}


@pytest.mark.parametrize(
    ("dtype", "value"),
    [(d, v) for d, values in BOUNDARIES.items() for v in values],
    ids=lambda p: repr(p),
)
@pytest.mark.parametrize("form", ["scalar", "weak 0-d", "weak 1-d"])
def test_weak_operands_convert_as_eagerly(dtype: str, value: Any, form: str) -> None:
    """A program converts a weak operand to the compute dtype exactly as the
    eager call does (casting what cannot change, checking the rest): same
    values, same refusals."""
    x = tnp.asarray(np.asarray([1, 2], dtype=dtype))
    if form == "scalar":
        k: Any = value
    elif form == "weak 0-d":
        k = tnp.asarray(value)
    else:
        k = tnp.broadcast_to(tnp.asarray(value), (2,))
    for x64 in (False, True):
        with tl.enable_x64(x64):
            eager = outcome(lambda: times(x, k))
            jitted = outcome(lambda: tl.jit(times)(x, k))
        if isinstance(eager[1], str):  # refused: messages differ (jit names
            assert jitted[0] is eager[0], (jitted, eager)  # the argument)
        else:
            assert jitted == eager


def test_programs_drop_intermediate_values_after_their_last_use() -> None:
    """A jitted chain of operations holds about as much memory at once as
    the eager chain (a few arrays), not one array per operation: programs
    drop each value after the last operation that reads it."""
    import tracemalloc

    def chain(x: Any) -> Any:
        for _ in range(12):
            x = x * 1.0001 + 0.5
        return x

    x = tnp.zeros(250_000)  # 1 MB of float32
    f = tl.jit(chain)
    f(x)  # traced once, outside the measurement
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        out = f(x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.shape == x.shape
    assert peak - before < 4 * x.nbytes  # 24 intermediates if all were kept
