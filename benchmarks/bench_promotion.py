"""Benchmark typelattice's dtype promotion against NumPy (and JAX if installed).

What it measures, in one run:

1. ``result_type`` with each form of argument a user may pass: the NumPy
   scalar types ``int8, uint8, float16`` with the Python type ``int``; the
   Python types ``bool, int, float, complex``; NumPy scalar types; dtypes;
   dtype names; an ml_dtypes type; typelattice.numpy's dtype objects
   (``tnp.float32``).
2. ``result_type(x, 1)``: an int8 ndarray and a Python int.
3. ``result_type(int16, x_float32, 2, 1.0)``: four mixed arguments.
4. ``promote_types(int8, uint8)``: two dtypes.
5. The time ``import typelattice`` adds to ``import numpy, ml_dtypes``,
   measured in fresh subprocesses (median of several runs): both the
   difference between the two medians and, for the verdict, the time of
   ``import typelattice`` measured inside the process that has just imported
   numpy and ml_dtypes (the difference of medians is noisy). Bytecode is
   cached in a temporary directory; when bytecode writing is disabled (as with
   PYTHONDONTWRITEBYTECODE), the uncached cost is reported as well.

Cases 1-4 are timed in microseconds per call, as the best of several
``timeit.repeat`` rounds, for typelattice, NumPy (``np.result_type`` /
``np.promote_types``) and, when ``import jax`` succeeds,
``jax.numpy.result_type`` / ``jax.numpy.promote_types``, all with the same
arguments. typelattice caches its answers, so this is the steady-state
(cached) cost an operation pays on every call. The table gives the ratios
typelattice/NumPy and typelattice/JAX and marks each case PASS or MISS
against its target (result_type <= 1.0x NumPy, promote_types <= 2.0x NumPy,
import <= 50 ms beyond numpy + ml_dtypes).

The header says which implementation of the cached lookups ran: the C
accelerator (``typelattice._speedups``) or pure Python (the extension is not
built, or ``TYPELATTICE_NO_SPEEDUPS=1`` is set, which times the Python path).

It is a report, not a test: a missed target does not change the exit status.
Only a wrong answer from typelattice (checked once, before any timing) makes
it exit with status 1, so it can never time a wrong answer.

Run it with the interpreter that has typelattice installed::

    python benchmarks/bench_promotion.py

It needs only the standard library and NumPy (plus typelattice and its
ml_dtypes dependency) and takes well under a minute.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

import typelattice
import typelattice.numpy as tnp
from _timing import best_seconds
from typelattice import _promotion

# Timing parameters: each round runs for about ROUND_SECONDS; the best of
# ROUNDS rounds is kept (the minimum is the least disturbed by other load).
ROUNDS = 15
ROUND_SECONDS = 0.05
CALIBRATION_SECONDS = 0.02
IMPORT_RUNS = 7

RESULT_TYPE_TARGET = 1.0  # typelattice / NumPy
PROMOTE_TYPES_TARGET = 2.0  # typelattice / NumPy
IMPORT_TARGET_MS = 50.0  # beyond import numpy, ml_dtypes


@dataclass(frozen=True)
class Case:
    """One timed call: the same arguments given to each library's function."""

    label: str
    kind: str  # "result_type" or "promote_types"
    args: tuple[Any, ...]
    expected: np.dtype[Any]
    target: float

    def stmt(self) -> str:
        """The timed statement: ``fn(a0, a1, ...)`` on names in the namespace."""
        return "fn(" + ", ".join(f"a{i}" for i in range(len(self.args))) + ")"

    def namespace(self, fn: Callable[..., Any]) -> dict[str, Any]:
        """Globals for :meth:`stmt`: the function and the arguments."""
        ns: dict[str, Any] = {"fn": fn}
        ns.update({f"a{i}": a for i, a in enumerate(self.args)})
        return ns


def make_cases() -> list[Case]:
    """The timed cases, with typelattice's expected answers."""
    x_int8 = np.zeros(3, np.int8)
    x_float32 = np.zeros(3, np.float32)
    return [
        Case(
            "result_type(int8, uint8, float16, int)",
            "result_type",
            (np.int8, np.uint8, np.float16, int),  # the types, not values
            np.dtype("float16"),
            RESULT_TYPE_TARGET,
        ),
        Case(
            "result_type(bool, int, float, complex)",
            "result_type",
            (bool, int, float, complex),
            np.dtype("complex64"),
            RESULT_TYPE_TARGET,
        ),
        Case(
            "result_type(np.int8, np.uint8)",
            "result_type",
            (np.int8, np.uint8),
            np.dtype("int16"),
            RESULT_TYPE_TARGET,
        ),
        Case(
            "result_type(int32, float32)",
            "result_type",
            (np.dtype("int32"), np.dtype("float32")),
            np.dtype("float32"),
            RESULT_TYPE_TARGET,
        ),
        Case(
            "result_type('int8', 'uint8')",
            "result_type",
            ("int8", "uint8"),
            np.dtype("int16"),
            RESULT_TYPE_TARGET,
        ),
        Case(
            "result_type(bfloat16, np.float32)",
            "result_type",
            (ml_dtypes.bfloat16, np.float32),
            np.dtype("float32"),
            RESULT_TYPE_TARGET,
        ),
        Case(
            "result_type(tnp.float32, tnp.int8)",
            "result_type",
            (tnp.float32, tnp.int8),
            np.dtype("float32"),
            RESULT_TYPE_TARGET,
        ),
        Case(
            "result_type(int8 array, 1)",
            "result_type",
            (x_int8, 1),
            np.dtype("int8"),
            RESULT_TYPE_TARGET,
        ),
        Case(
            "result_type(int16, f32 array, 2, 1.0)",
            "result_type",
            (np.dtype("int16"), x_float32, 2, 1.0),
            np.dtype("float32"),
            RESULT_TYPE_TARGET,
        ),
        Case(
            "promote_types(int8, uint8)",
            "promote_types",
            (np.dtype("int8"), np.dtype("uint8")),
            np.dtype("int16"),
            PROMOTE_TYPES_TARGET,
        ),
    ]


def load_jax() -> Any | None:
    """``jax.numpy``, or None when JAX cannot be imported."""
    try:
        import jax.numpy as jnp
    except Exception:  # ImportError, or a broken jax/jaxlib installation
        return None
    return jnp


def functions(lib: Any) -> dict[str, Callable[..., Any]]:
    """A library's result_type and promote_types, by case kind."""
    return {"result_type": lib.result_type, "promote_types": lib.promote_types}


def check_answers(cases: list[Case]) -> list[str]:
    """typelattice's wrong answers (empty when all are right)."""
    wrong = []
    for case in cases:
        fn = functions(typelattice)[case.kind]
        try:
            got: object = fn(*case.args)
        except Exception as err:  # report it like a wrong answer
            got = f"{type(err).__name__}: {err}"
        if not (isinstance(got, np.dtype) and got == case.expected):
            wrong.append(f"{case.label}: expected {case.expected}, got {got!r}")
    return wrong


def time_calls(case: Case, fns: dict[str, Callable[..., Any]]) -> dict[str, float]:
    """Microseconds per call of each ``fn(*case.args)``: best of ROUNDS rounds.

    The libraries' rounds are interleaved, so a change in machine load
    during the measurement affects all of them alike and not just one.
    """
    timers = {
        name: timeit.Timer(case.stmt(), globals=case.namespace(fn))
        for name, fn in fns.items()
    }
    best = best_seconds(
        timers,
        warmup=100,
        rounds=ROUNDS,
        round_seconds=ROUND_SECONDS,
        calibration_seconds=CALIBRATION_SECONDS,
    )
    return {name: seconds * 1e6 for name, seconds in best.items()}


_BASE_SCRIPT = """\
import time
t0 = time.perf_counter()
import numpy, ml_dtypes
t1 = time.perf_counter()
print(t1 - t0, 0.0)
"""

_FULL_SCRIPT = """\
import time
t0 = time.perf_counter()
import numpy, ml_dtypes
t1 = time.perf_counter()
import typelattice
t2 = time.perf_counter()
print(t2 - t0, t2 - t1)
"""


def _run_import(script: str, env: dict[str, str]) -> tuple[float, float]:
    """(total import seconds, seconds after numpy + ml_dtypes) in a new process."""
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.split()
    return float(out[0]), float(out[1])


@dataclass(frozen=True)
class ImportTimes:
    """Median import times in milliseconds."""

    base_ms: float  # import numpy, ml_dtypes
    full_ms: float  # import numpy, ml_dtypes; import typelattice
    increment_ms: float  # the typelattice part of full, timed in-process
    base_spread_ms: float  # max - min of the base runs: the noise level

    @property
    def difference_ms(self) -> float:
        """full - base, across processes (noisy: numpy's own import varies)."""
        return self.full_ms - self.base_ms


def measure_import(env: dict[str, str]) -> ImportTimes:
    """Median import times over IMPORT_RUNS fresh processes of each kind."""
    _run_import(_FULL_SCRIPT, env)  # warm-up: bytecode caches, OS file cache
    _run_import(_BASE_SCRIPT, env)
    base, full, increment = [], [], []
    for _ in range(IMPORT_RUNS):  # interleaved, so drifting load hits both
        base.append(_run_import(_BASE_SCRIPT, env)[0])
        total, part = _run_import(_FULL_SCRIPT, env)
        full.append(total)
        increment.append(part)
    return ImportTimes(
        statistics.median(base) * 1e3,
        statistics.median(full) * 1e3,
        statistics.median(increment) * 1e3,
        (max(base) - min(base)) * 1e3,
    )


def report_import(title: str, times: ImportTimes) -> None:
    """Print one import measurement with its verdict.

    The verdict uses the in-process time of ``import typelattice`` after
    ``import numpy, ml_dtypes``: exactly the extra cost, and unlike the
    difference of two medians it is not swamped by the run-to-run noise of
    NumPy's own import.
    """
    print(f"import typelattice, {title} (median of {IMPORT_RUNS} processes):")
    print(
        f"  import numpy, ml_dtypes                       {times.base_ms:7.1f} ms"
        f"   (spread {times.base_spread_ms:.1f} ms)"
    )
    print(f"  import numpy, ml_dtypes; import typelattice   {times.full_ms:7.1f} ms")
    print(
        f"  difference of the two medians                 {times.difference_ms:7.1f} ms"
    )
    print(
        f"  extra cost of import typelattice (in-process) {times.increment_ms:7.1f} ms"
        f"   target <= {IMPORT_TARGET_MS:.0f} ms   "
        f"{verdict(times.increment_ms, IMPORT_TARGET_MS)}"
    )


def verdict(value: float, target: float) -> str:
    """PASS when ``value`` is within ``target``."""
    return "PASS" if value <= target else "MISS"


def describe(value: object) -> str:
    """A short name for an answer or an exception."""
    return str(value) if isinstance(value, np.dtype) else repr(value)


def answer(fn: Callable[..., Any], args: tuple[Any, ...]) -> str:
    """What ``fn(*args)`` returns (or raises), for the answers listing."""
    try:
        return describe(fn(*args))
    except Exception as err:
        return type(err).__name__


def main() -> int:
    """Check, time and print the report. Returns the exit status."""
    cases = make_cases()
    jnp = load_jax()

    print("typelattice promotion benchmark")
    print(
        f"  Python {platform.python_version()}, NumPy {np.__version__}, "
        f"typelattice {typelattice.__version__}, "
        + (f"JAX {sys.modules['jax'].__version__}" if jnp is not None else "no JAX")
    )
    # The C accelerator (typelattice._speedups) or the pure-Python lookups.
    print(f"  cached lookups: {_promotion.SPEEDUPS}")
    print(
        f"  us/call = best of {ROUNDS} timeit rounds of ~{ROUND_SECONDS * 1e3:.0f} ms"
        f"; import = median of {IMPORT_RUNS} fresh processes"
    )
    if jnp is None:
        print("  JAX is not installed (import jax failed): skipping the JAX column")
    print()

    wrong = check_answers(cases)
    if wrong:
        print("typelattice gives a wrong answer; nothing was timed:")
        for line in wrong:
            print(f"  {line}")
        return 1

    print("Answers (typelattice checked against the expected dtype):")
    for case in cases:
        line = (
            f"  {case.label:<38} typelattice={case.expected}"
            f"  numpy={answer(functions(np)[case.kind], case.args)}"
        )
        if jnp is not None:
            line += f"  jax={answer(functions(jnp)[case.kind], case.args)}"
        print(line)
    print()

    header = f"{'case':<38} {'typelattice':>11} {'numpy':>9} {'tl/np':>6}"
    if jnp is not None:
        header += f" {'jax':>9} {'tl/jax':>6}"
    header += f"  {'target':<13} result"
    print(header)
    print("-" * len(header))
    for case in cases:
        fns = {
            "typelattice": functions(typelattice)[case.kind],
            "numpy": functions(np)[case.kind],
        }
        if jnp is not None:
            fns["jax"] = functions(jnp)[case.kind]
        us = time_calls(case, fns)
        ratio = us["typelattice"] / us["numpy"]
        row = (
            f"{case.label:<38} {us['typelattice']:>9.3f}us {us['numpy']:>7.3f}us"
            f" {ratio:>6.2f}"
        )
        if jnp is not None:
            row += f" {us['jax']:>7.3f}us {us['typelattice'] / us['jax']:>6.2f}"
        target = f"tl/np <= {case.target:.1f}"
        row += f"  {target:<13} {verdict(ratio, case.target)}"
        print(row)
    print()

    # Bytecode is cached as in a normal installation, but in a temporary
    # directory (PYTHONPYCACHEPREFIX), so nothing is written next to sources.
    with tempfile.TemporaryDirectory() as pycache:
        env = dict(os.environ, PYTHONPYCACHEPREFIX=pycache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        report_import("bytecode cached", measure_import(env))
    if sys.flags.dont_write_bytecode:
        # As this environment runs it: sources without a __pycache__ (an
        # editable install, say) are compiled again by every process.
        print()
        report_import(
            "bytecode writing disabled, as here", measure_import(dict(os.environ))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
