"""Benchmark typelattice.numpy's arithmetic against NumPy (and JAX if installed).

What it measures, in one run:

1. ``x + 2`` on a 3-element int8 Array: the fixed cost of one operator
   (operand dispatch, cached promotion plan, the ufunc, wrapping the result).
   Target: at most 2.0x NumPy's ``x + 2`` on the same ndarray.
2. ``x * y + 1.5`` on two 1M-element float32 arrays: a streaming expression,
   where the per-operation overhead should vanish. The temporary ``x * y``
   lends its buffer to the addition's result (typelattice, and NumPy for its
   own temporaries, in the versions that do it with a Python float).
   Target: at most 1.05x NumPy.
3. ``x * y + y``: the same with an array, where NumPy reuses the buffer of
   ``x * y`` too. Target: at most 1.05x NumPy, on CPython 3.14 and later
   only. typelattice reuses a buffer only where it is provably dead, and
   only 3.14 lets it prove that ``x * y`` is referenced by the expression
   alone; on older versions every result gets a new buffer, and the ratio
   is printed but marked as not a target.
4. ``a + b`` with ``a`` int32 and ``b`` float32, 10M elements each. NumPy
   computes in float64, typelattice in float32 (JAX's lattice). Targets: time
   below NumPy's (ratio < 1.0), and peak memory about half NumPy's (ratio at
   most 0.60; the float32 result is half the size of NumPy's float64 one).
4. ``a + b`` with ``a`` uint32 and ``b`` int32, 10M elements each (values
   that fit int32). NumPy computes in int64, typelattice in int32 (JAX's
   32-bit lattice), after reading ``a`` to check that int32 holds its values
   (data safety: uint32 values of 2**31 and more raise). Targets: time below
   NumPy's, and the check costing at most 10% over the same operation
   without it (typelattice's own ``add`` with the plan converting ``a`` as
   it did before the check: cast in the ufunc, unread).

Every operand is created before anything is measured; NumPy's operands are
the very ndarrays inside the typelattice Arrays (read-only views, no copies)
and JAX's are made from them with ``jax.numpy.asarray``.

Times are the best of several interleaved ``timeit`` rounds (the minimum is
the least disturbed by other load; interleaving makes a change of load hit
every library alike). JAX (when ``import jax`` succeeds) runs eagerly, without
``jit``, and each JAX statement ends with ``block_until_ready()`` so that it
times finished work rather than an asynchronous dispatch. Peak memory is what
``tracemalloc`` reports for the single operation, result included: NumPy
reports its data allocations to tracemalloc, so temporaries (such as an
operand cast to the compute dtype) count as well. JAX's buffers are not
visible to tracemalloc, so JAX has no memory column.

It is a report, not a test: a missed target does not change the exit status.
The results are checked first, before anything is timed: typelattice's dtype,
weak flag and values must equal NumPy's computed at the promoted dtype, and a
wrong result makes it exit with status 1 (so it never times a wrong answer).

Operators run through the optional C extension when it is built (the report
says which; ``TYPELATTICE_NO_SPEEDUPS=1`` times the pure-Python path).

Run it with the interpreter that has typelattice installed::

    python benchmarks/bench_numpy.py

It needs NumPy and typelattice, uses about 350 MB of memory (about 650 MB
with JAX) and takes 5 to 15 seconds.
"""

from __future__ import annotations

import gc
import platform
import sys
import timeit
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import typelattice
import typelattice.numpy as tnp
from _timing import best_seconds
from typelattice import _promotion
from typelattice.numpy import _elementwise

# Timing parameters: each round runs for about ROUND_SECONDS (at least one
# call); the best of ROUNDS rounds is kept. Many short rounds find the quiet
# moments on a loaded machine better than a few long ones.
ROUNDS = 30
ROUND_SECONDS = 0.02
CALIBRATION_SECONDS = 0.02

SMALL = 3
STREAM = 1_000_000
MIXED = 10_000_000

SMALL_TARGET = 2.0  # typelattice / NumPy, at most
STREAM_TARGET = 1.05  # typelattice / NumPy, at most
MIXED_TIME_TARGET = 1.0  # typelattice / NumPy, below
MIXED_MEMORY_TARGET = 0.60  # typelattice / NumPy peak bytes, at most
CHECKED_TARGET = 1.10  # checked / unchecked typelattice, at most

LIBRARIES = ("typelattice", "numpy", "jax")

# Whether elementwise functions compute into the buffers of temporaries here.
REUSES = _promotion._speedups is not None and _promotion._speedups.reuses_temporaries()
NOT_A_TARGET = (
    "not a target: buffers are reused only where provably dead (CPython 3.14+)"
)


@dataclass(frozen=True)
class Case:
    """One timed expression, evaluated on each library's operands."""

    label: str
    stmt: str  # e.g. "x + 2", on the names of ``operands``
    operands: dict[str, dict[str, Any]]  # library -> names bound in stmt
    expected: np.ndarray[Any, Any]  # NumPy's result at the promoted dtype
    target: float
    strict: bool = False  # the ratio must be below the target, not equal
    # Met only by computing into the buffer of a temporary, which typelattice
    # does where it can prove the temporary dead (REUSES).
    needs_reuse: bool = False

    def statement(self, library: str) -> str:
        """The timed statement; JAX's waits for its result."""
        if library == "jax":
            return f"({self.stmt}).block_until_ready()"
        return self.stmt

    def evaluate(self, library: str) -> Any:
        """The expression's value for one library."""
        return eval(self.stmt, {}, dict(self.operands[library]))

    def thunk(self, library: str) -> Callable[[], Any]:
        """A no-argument function evaluating the expression once."""
        code = compile(self.statement(library), self.label, "eval")
        names = dict(self.operands[library])
        return lambda: eval(code, {}, names)

    def is_target(self) -> bool:
        return REUSES or not self.needs_reuse

    def target_text(self) -> str:
        if not self.is_target():
            return "none"
        return f"tl/np {'<' if self.strict else '<='} {self.target:.2f}"

    def verdict(self, ratio: float) -> str:
        if not self.is_target():
            return NOT_A_TARGET
        ok = ratio < self.target if self.strict else ratio <= self.target
        return "PASS" if ok else "MISS"


def case_named(cases: list[Case], start: str) -> Case:
    """The case whose label starts with ``start`` (cases are found by name,
    so adding one does not change what another row measures)."""
    return next(c for c in cases if c.label.startswith(start))


def load_jax() -> Any | None:
    """``jax.numpy``, or None when JAX cannot be imported."""
    try:
        import jax.numpy as jnp
    except Exception:  # ImportError, or a broken jax/jaxlib installation
        return None
    return jnp


def operands(jnp: Any | None, **arrays: tnp.Array) -> dict[str, dict[str, Any]]:
    """The same data for each library: the Arrays, their ndarrays, JAX copies."""
    out: dict[str, dict[str, Any]] = {
        "typelattice": dict(arrays),
        "numpy": {name: np.asarray(a) for name, a in arrays.items()},
    }
    if jnp is not None:
        out["jax"] = {name: jnp.asarray(v) for name, v in out["numpy"].items()}
    return out


def make_cases(jnp: Any | None) -> list[Case]:
    """The timed cases, with the results NumPy gives at JAX's dtypes."""
    rng = np.random.default_rng(0)
    small = operands(jnp, x=tnp.asarray([1, 2, 3], dtype="int8"))
    stream = operands(
        jnp,
        x=tnp.asarray(rng.standard_normal(STREAM, dtype=np.float32)),
        y=tnp.asarray(rng.standard_normal(STREAM, dtype=np.float32)),
    )
    # Integers below 2**24 in magnitude are exact in float32.
    mixed = operands(
        jnp,
        a=tnp.asarray(rng.integers(-(2**20), 2**20, MIXED, dtype=np.int32)),
        b=tnp.asarray(rng.standard_normal(MIXED, dtype=np.float32)),
    )
    # Sums within int32: the same values in every library.
    signs = operands(
        jnp,
        a=tnp.asarray(rng.integers(0, 2**30, MIXED, dtype=np.uint32)),
        b=tnp.asarray(rng.integers(-(2**30), 2**30, MIXED, dtype=np.int32)),
    )
    x = small["numpy"]["x"]
    sx, sy = stream["numpy"]["x"], stream["numpy"]["y"]
    ma, mb = mixed["numpy"]["a"], mixed["numpy"]["b"]
    ua, ub = signs["numpy"]["a"], signs["numpy"]["b"]
    return [
        Case(
            f"x + 2 (int8, {SMALL} elements)",
            "x + 2",
            small,
            np.add(x, np.int8(2)),
            SMALL_TARGET,
        ),
        Case(
            f"x * y + 1.5 (float32, {STREAM // 10**6}M)",
            "x * y + 1.5",
            stream,
            np.add(np.multiply(sx, sy), np.float32(1.5)),
            STREAM_TARGET,
        ),
        Case(
            f"x * y + y (float32, {STREAM // 10**6}M)",
            "x * y + y",
            stream,
            np.add(np.multiply(sx, sy), sy),
            STREAM_TARGET,
            needs_reuse=True,
        ),
        Case(
            f"int32 + float32 ({MIXED // 10**6}M)",
            "a + b",
            mixed,
            np.add(ma.astype(np.float32), mb),
            MIXED_TIME_TARGET,
            strict=True,
        ),
        Case(
            f"uint32 + int32 ({MIXED // 10**6}M)",
            "a + b",
            signs,
            np.add(ua.astype(np.int32), ub),
            MIXED_TIME_TARGET,
            strict=True,
        ),
    ]


def unchecked_add(*args: tnp.Array) -> Any:
    """typelattice's ``add`` as it ran before the data-safety check: a twin
    of it whose plan for these operands casts every operand in the ufunc,
    unread (the check's ``Conversion.CHECK`` made ``CAST``)."""
    # add's own Op (its primitive), as a new cache key
    op = _elementwise.Op("add", np.add, 2, prim=tnp.add._op.prim)  # type: ignore[attr-defined]
    twin = _elementwise.make_binary(op)
    twin(*args)  # builds and caches its plan
    memo = _elementwise._state().memo  # pyright: ignore[reportPrivateUsage]
    key = (op, *(a._key for a in args))  # type: ignore[attr-defined]
    plan: _elementwise.Plan = memo[key]
    check, cast = _elementwise.Conversion.CHECK, _elementwise.Conversion.CAST
    convs = tuple(c._replace(how=cast) if c.how == check else c for c in plan.convs)
    assert convs != plan.convs, "the operands need no check: nothing to compare"
    memo[key] = plan._replace(convs=convs)
    return twin


def check_overhead(case: Case) -> float:
    """Seconds of ``add`` (checked) over its unchecked twin, same operands."""
    names = case.operands["typelattice"]
    bound = {
        "checked": {"add": tnp.add, **names},
        "unchecked": {"add": unchecked_add(*names.values()), **names},
    }
    timers = {k: timeit.Timer("add(a, b)", globals=g) for k, g in bound.items()}
    if not np.array_equal(
        np.asarray(eval("add(a, b)", {}, bound["unchecked"])), case.expected
    ):
        raise AssertionError("the unchecked twin gives another result")
    best = best_seconds(
        timers,
        warmup=3,
        rounds=ROUNDS,
        round_seconds=ROUND_SECONDS,
        calibration_seconds=CALIBRATION_SECONDS,
    )
    return best["checked"] / best["unchecked"]


def check(case: Case) -> str | None:
    """What is wrong with typelattice's result (None when it is right)."""
    try:
        got = case.evaluate("typelattice")
    except Exception as err:
        return f"{case.label}: raised {type(err).__name__}: {err}"
    want = case.expected
    if not isinstance(got, tnp.Array):
        return f"{case.label}: expected an Array, got {type(got).__name__}"
    if got.dtype != want.dtype or got.weak_type:
        return (
            f"{case.label}: expected dtype {want.dtype} (strong), got "
            f"{got.dtype}{' (weak)' if got.weak_type else ''}"
        )
    if got.shape != want.shape or not np.array_equal(np.asarray(got), want):
        return f"{case.label}: values differ from NumPy's computed in {want.dtype}"
    return None


def dtype_of(case: Case, library: str) -> str:
    """The result dtype a library gives (or the exception it raises)."""
    try:
        return str(case.evaluate(library).dtype)
    except Exception as err:
        return type(err).__name__


def time_calls(case: Case, libraries: list[str]) -> dict[str, float]:
    """Seconds per evaluation for each library: best of ROUNDS rounds."""
    timers = {
        lib: timeit.Timer(case.statement(lib), globals=dict(case.operands[lib]))
        for lib in libraries
    }
    best = best_seconds(
        timers,
        warmup=3,
        rounds=ROUNDS,
        round_seconds=ROUND_SECONDS,
        calibration_seconds=CALIBRATION_SECONDS,
    )
    return best


def peak_bytes(fn: Callable[[], Any]) -> int:
    """Peak bytes traced by tracemalloc while ``fn()`` runs, result included."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak - before


def show_time(seconds: float) -> str:
    """A time in the unit that suits it, 9 characters wide."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:7.3f}us"
    return f"{seconds * 1e3:7.3f}ms"


def main() -> int:
    """Check, measure and print the report. Returns the exit status."""
    jnp = load_jax()
    libraries = [lib for lib in LIBRARIES if lib != "jax" or jnp is not None]

    print("typelattice.numpy arithmetic benchmark")
    print(
        f"  Python {platform.python_version()}, NumPy {np.__version__}, "
        f"typelattice {typelattice.__version__}, "
        + (f"JAX {sys.modules['jax'].__version__}" if jnp is not None else "no JAX")
    )
    print(f"  elementwise fast path: {_promotion.SPEEDUPS}")
    print(
        "  buffers of temporaries: "
        + ("reused" if REUSES else "not reused (provable on CPython 3.14+ only)")
    )
    print(
        f"  time = best of {ROUNDS} interleaved timeit rounds of "
        f"~{ROUND_SECONDS * 1e3:.0f} ms; memory = tracemalloc peak of one "
        "operation (MB = 10^6 bytes)"
    )
    if jnp is None:
        print("  JAX is not installed (import jax failed): skipping the JAX column")
    else:
        print("  JAX: eager jax.numpy, each statement ends in block_until_ready()")
    print()

    cases = make_cases(jnp)
    wrong = [problem for case in cases if (problem := check(case)) is not None]
    if wrong:
        print("typelattice gives a wrong result; nothing was measured:")
        for line in wrong:
            print(f"  {line}")
        return 1

    print("Result dtypes (typelattice checked against NumPy at that dtype):")
    for case in cases:
        line = f"  {case.label:<32} {case.stmt:<12}"
        line += "".join(f" {lib}={dtype_of(case, lib)}" for lib in libraries)
        print(line)
    print()

    header = f"{'case':<32} {'typelattice':>11} {'numpy':>9} {'tl/np':>6}"
    if jnp is not None:
        header += f" {'jax':>9} {'tl/jax':>6}"
    header += f"  {'target':<13} result"
    print(header)
    print("-" * len(header))
    for case in cases:
        seconds = time_calls(case, libraries)
        ratio = seconds["typelattice"] / seconds["numpy"]
        row = (
            f"{case.label:<32} {show_time(seconds['typelattice']):>11}"
            f" {show_time(seconds['numpy']):>9} {ratio:>6.2f}"
        )
        if jnp is not None:
            row += (
                f" {show_time(seconds['jax']):>9}"
                f" {seconds['typelattice'] / seconds['jax']:>6.2f}"
            )
        row += f"  {case.target_text():<13} {case.verdict(ratio)}"
        print(row)

    checked = case_named(cases, "uint32 + int32")
    ratio = check_overhead(checked)
    label = f"{checked.label} check"
    target = f"chk/unchk <= {CHECKED_TARGET:.2f}"
    row = f"{label:<32} {'':>11} {'':>9} {ratio:>6.2f}"
    if jnp is not None:
        row += f" {'':>9} {'':>6}"
    row += f"  {target:<13} {'PASS' if ratio <= CHECKED_TARGET else 'MISS'}"
    print(row)
    print(
        "  (the same typelattice add with the plan's check of the uint32 "
        "operand off: its cost before the check)"
    )

    mixed = case_named(cases, "int32 + float32")
    peaks = {lib: peak_bytes(mixed.thunk(lib)) for lib in ("typelattice", "numpy")}
    ratio = peaks["typelattice"] / peaks["numpy"]
    label = f"int32 + float32 ({MIXED // 10**6}M) memory"
    row = (
        f"{label:<32} {peaks['typelattice'] / 1e6:>8.1f} MB"
        f" {peaks['numpy'] / 1e6:>6.1f} MB {ratio:>6.2f}"
    )
    if jnp is not None:
        row += f" {'n/a':>9} {'':>6}"
    target = f"tl/np <= {MIXED_MEMORY_TARGET:.2f}"
    row += f"  {target:<13} {'PASS' if ratio <= MIXED_MEMORY_TARGET else 'MISS'}"
    print(row)
    sizes = ", ".join(
        f"{lib} {dt} {mixed.expected.size * np.dtype(dt).itemsize / 1e6:.0f} MB"
        for lib in ("typelattice", "numpy")
        for dt in [dtype_of(mixed, lib)]
    )
    print(f"  (the results alone: {sizes})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
