"""Benchmark typelattice.jit against eager typelattice.numpy and hand-written NumPy.

What it measures, in one run, for one function of 20 elementwise operations
on small float32 arrays (8 elements), Python scalars and one int8 array:

1. eager: the function called with ``typelattice.numpy`` (every operation
   promotes its operands, looks up its cached plan and wraps its result).
2. jit: the same function under ``typelattice.jit`` (traced once; each call
   replays the recorded NumPy calls, whose dtypes were resolved while
   tracing). Target: at least 2x faster than eager.
3. numpy: the same function hand-written in NumPy with explicit dtypes
   (float32 constants, the int8 array cast with ``astype``). Target: jit at
   most 1.3x this.
4. tracing: the cost of the first call (trace, generate and compile the
   program), per operation.
5. scalar arguments: ``jit(f)(x, 2)`` with a Python scalar against the same
   call with a weak 0-d array (``typelattice.numpy.asarray(2)``), which
   stands for the same value and finds the same program. Target: the
   scalar call costs no more (ratio at most 1.0; 0.02 either way is the
   noise of equal work on a shared machine); the eager call is shown too.
   ``f`` is two operations on 8 float32 or int8 elements (the int8 case
   checks the scalar's value on each call, as the eager call does). A value
   new to the call has to be converted (a weak array was converted when it
   was made): one row with the weak arrays made beforehand shows that cost,
   one with them made in the call shows what it saves.

When ``import jax`` succeeds, ``jax.jit`` of the same function written with
``jax.numpy`` is timed too (``block_until_ready()`` on every call).

The results are checked first: the jitted result must equal the eager one
(dtype, weak flag, values) and NumPy's values; a wrong result exits with
status 1 before anything is timed. It is a report, not a test: a missed
target does not change the exit status.

Run it with the interpreter that has typelattice installed::

    python benchmarks/bench_jit.py
"""

from __future__ import annotations

import itertools
import platform
import sys
import time
import timeit
from typing import Any

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from _timing import best_seconds

ROUNDS = 30
ROUND_SECONDS = 0.02
CALIBRATION_SECONDS = 0.02
TRACE_REPEATS = 50

SIZE = 8
OPS = 20
SPEEDUP_TARGET = 2.0  # eager / jit, at least
NUMPY_TARGET = 1.3  # jit / hand-written NumPy, at most
SCALAR_TARGET = 1.0  # Python scalar argument / weak 0-d array argument, at most
NOISE = 0.02  # ratios of equal work differ this much from run to run here


def model(xnp: Any, x: Any, y: Any, k: Any) -> Any:
    """20 elementwise operations, written once for any jax.numpy-like module."""
    a = x * 2.0  # 1
    b = a + y  # 2
    c = xnp.tanh(b)  # 3
    d = c * c  # 4
    e = d - 0.5  # 5
    f = xnp.exp(e)  # 6
    g = f / (y + 3.0)  # 7, 8
    h = xnp.maximum(g, 0.1)  # 9
    i = xnp.sqrt(h)  # 10
    j = i * k  # 11: float32 times int8
    m = xnp.sin(j) + xnp.cos(a)  # 12, 13, 14
    n = xnp.log1p(xnp.square(m))  # 15, 16
    o = xnp.abs(n - x)  # 17, 18
    return xnp.minimum(o, 3.0) * 0.25  # 19, 20


def model_numpy(x: np.ndarray, y: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The same function hand-written in NumPy, every dtype explicit."""
    f32 = np.float32
    a = x * f32(2.0)
    b = a + y
    c = np.tanh(b)
    d = c * c
    e = d - f32(0.5)
    f = np.exp(e)
    g = f / (y + f32(3.0))
    h = np.maximum(g, f32(0.1))
    i = np.sqrt(h)
    j = i * k.astype(f32)
    m = np.sin(j) + np.cos(a)
    n = np.log1p(np.square(m))
    o = np.abs(n - x)
    return np.minimum(o, f32(3.0)) * f32(0.25)


def scaled(x: Any, k: Any) -> Any:
    """Two operations with a scalar argument."""
    return x * k + 1


def operands() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, SIZE).astype(np.float32)
    y = rng.uniform(0, 1, SIZE).astype(np.float32)
    k = rng.integers(-5, 5, SIZE).astype(np.int8)
    return x, y, k


def load_jax() -> Any:
    try:
        import jax
    except Exception:
        return None
    return jax


def main() -> int:
    x, y, k = operands()
    tx, ty, tk = tnp.asarray(x), tnp.asarray(y), tnp.asarray(k)

    def eager(x: Any, y: Any, k: Any) -> Any:
        return model(tnp, x, y, k)

    jitted = tl.jit(eager)
    jax = load_jax()

    print("typelattice.jit benchmark")
    print(
        f"  Python {platform.python_version()}, NumPy {np.__version__}, "
        f"typelattice {tl.__version__}, "
        + (f"JAX {jax.__version__}" if jax is not None else "no JAX")
    )
    print(
        f"  {OPS} elementwise operations on {SIZE}-element float32 arrays; time = "
        f"best of {ROUNDS} interleaved timeit rounds of ~{ROUND_SECONDS * 1e3:.0f} ms"
    )
    print()

    want = eager(tx, ty, tk)
    got = jitted(tx, ty, tk)
    plain = model_numpy(x, y, k)
    problems = []
    if (got.dtype, got.weak_type) != (want.dtype, want.weak_type):
        problems.append(f"jit gave {got!r}, eager {want!r}")
    elif not np.array_equal(np.asarray(got), np.asarray(want)):
        problems.append(f"jit values {got!r} differ from eager {want!r}")
    if want.dtype != plain.dtype or not np.allclose(np.asarray(want), plain):
        problems.append(f"eager {want!r} differs from NumPy {plain!r}")
    if problems:
        print("wrong results; nothing was measured:")
        for line in problems:
            print(f"  {line}")
        return 1

    namespace = {
        "eager": eager,
        "jitted": jitted,
        "model_numpy": model_numpy,
        "tx": tx,
        "ty": ty,
        "tk": tk,
        "x": x,
        "y": y,
        "k": k,
    }
    timers = {
        "eager": timeit.Timer("eager(tx, ty, tk)", globals=namespace),
        "jit": timeit.Timer("jitted(tx, ty, tk)", globals=namespace),
        "numpy": timeit.Timer("model_numpy(x, y, k)", globals=namespace),
    }
    if jax is not None:
        jax_fn = jax.jit(lambda x, y, k: model(jax.numpy, x, y, k))
        jx, jy, jk = (jax.numpy.asarray(v) for v in (x, y, k))
        namespace.update(jax_fn=jax_fn, jx=jx, jy=jy, jk=jk)
        timers["jax.jit"] = timeit.Timer(
            "jax_fn(jx, jy, jk).block_until_ready()", globals=namespace
        )
    best = best_seconds(
        timers,
        warmup=20,
        rounds=ROUNDS,
        round_seconds=ROUND_SECONDS,
        calibration_seconds=CALIBRATION_SECONDS,
    )

    scalar_rows = time_scalar_arguments(tx, tk)

    traces = []
    for _ in range(TRACE_REPEATS):
        fresh = tl.jit(eager)
        start = time.perf_counter()
        fresh(tx, ty, tk)
        traces.append(time.perf_counter() - start)
    trace_seconds = min(traces)

    print(f"{'function':<10} {'µs/call':>9}")
    print("-" * 20)
    for name, seconds in best.items():
        print(f"{name:<10} {seconds * 1e6:>9.2f}")
    print()
    speedup = best["eager"] / best["jit"]
    vs_numpy = best["jit"] / best["numpy"]
    verdict_speed = "PASS" if speedup >= SPEEDUP_TARGET else "MISS"
    verdict_numpy = "PASS" if vs_numpy <= NUMPY_TARGET else "MISS"
    print(
        f"jit speed-up over eager:       {speedup:5.2f}x "
        f"(target >= {SPEEDUP_TARGET}x)  {verdict_speed}"
    )
    print(
        f"jit / hand-written NumPy:      {vs_numpy:5.2f}x "
        f"(target <= {NUMPY_TARGET}x)  {verdict_numpy}"
    )
    if jax is not None:
        print(f"jit / jax.jit:                 {best['jit'] / best['jax.jit']:5.2f}x")
    print(
        f"tracing (first call):         {trace_seconds * 1e3:6.2f} ms, "
        f"{trace_seconds / OPS * 1e6:.0f} µs per operation (best of {TRACE_REPEATS})"
    )
    print()
    print("scalar arguments: jit(f)(x, k), f(x, k) = x * k + 1")
    print(
        f"{'x':<8} {'k':<16} {'scalar µs':>9} {'weak 0-d µs':>11} "
        f"{'eager µs':>8} {'scalar/weak':>11} {'scalar/eager':>12}"
    )
    print("-" * 81)
    for x_name, k_name, scalar, weak, eager in scalar_rows:
        ratio = scalar / weak
        verdict = "PASS" if ratio <= SCALAR_TARGET + NOISE else "MISS"
        print(
            f"{x_name:<8} {k_name:<16} {scalar * 1e6:>9.2f} {weak * 1e6:>11.2f} "
            f"{eager * 1e6:>8.2f} {ratio:>10.2f}x {scalar / eager:>11.2f}x  "
            f"{verdict} (target <= {SCALAR_TARGET}x, +-{NOISE} noise)"
        )
    return 0


def time_scalar_arguments(
    tx: Any, tk: Any
) -> list[tuple[str, str, float, float, float]]:
    """Seconds per call of jit(scaled) with a Python scalar, with the weak
    0-d array of the same value, and of the eager call, per case. Each
    timer takes its argument from a cycle (one value, or many: a new value
    on each call), so all three pay the same for picking it. With a new
    value on each call, the weak arrays are (1) made beforehand, one per
    value, or (2) made in the call, as code with a changing value would."""
    jitted = tl.jit(scaled)
    many = [i / 8 + 0.0625 for i in range(4096)]  # distinct, exact in float32
    # (x, label, values, the weak argument: premade, or made in the call)
    cases = [
        ("float32", "2", tx, [2], "premade"),
        ("float32", "2.5", tx, [2.5], "premade"),
        ("int8", "3", tk, [3], "premade"),
        ("float32", "new floats (1)", tx, many, "premade"),
        ("float32", "new floats (2)", tx, many, "made"),
    ]
    namespace: dict[str, Any] = {"jitted": jitted, "scaled": scaled, "tnp": tnp}
    timers: dict[str, timeit.Timer] = {}
    for i, (_, _, x, values, weak_form) in enumerate(cases):
        weak = [tnp.asarray(k) for k in values]
        assert all(w.weak_type and w.ndim == 0 for w in weak)
        for k, w in zip(values[:3], weak, strict=False):
            want = scaled(x, k)
            for got in (jitted(x, k), jitted(x, w)):
                same = (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
                if not same or not np.array_equal(np.asarray(got), np.asarray(want)):
                    raise SystemExit(f"jit gave {got!r}, eager {want!r}")
        namespace.update(
            {
                f"x{i}": x,
                f"k{i}": itertools.cycle(values),
                f"w{i}": itertools.cycle(weak),
                f"e{i}": itertools.cycle(values),
            }
        )
        timers[f"scalar{i}"] = timeit.Timer(
            f"jitted(x{i}, next(k{i}))", globals=namespace
        )
        weak_arg = (
            f"next(w{i})" if weak_form == "premade" else f"tnp.asarray(next(e{i}))"
        )
        timers[f"weak{i}"] = timeit.Timer(
            f"jitted(x{i}, {weak_arg})", globals=namespace
        )
        timers[f"eager{i}"] = timeit.Timer(
            f"scaled(x{i}, next(e{i}))", globals=namespace
        )
    best = best_seconds(
        timers,
        warmup=20,
        rounds=ROUNDS,
        round_seconds=ROUND_SECONDS,
        calibration_seconds=CALIBRATION_SECONDS,
    )
    return [
        (x_name, k_name, best[f"scalar{i}"], best[f"weak{i}"], best[f"eager{i}"])
        for i, (x_name, k_name, _, _, _) in enumerate(cases)
    ]


if __name__ == "__main__":
    sys.exit(main())
