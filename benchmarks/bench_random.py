"""Benchmark typelattice.random against NumPy's own generator.

What it measures, in one run, for 10**6 float32 values (int32 for randint):
``typelattice.random`` (Threefry-2x32 written with typelattice.numpy
operations, eagerly and under ``typelattice.jit``) against
``numpy.random.Generator`` (PCG64, stateful: no keys, nothing to split),
whose speed is what a NumPy user gets today. Also the cost of ``split``,
which NumPy has no counterpart for (its ``spawn`` is per generator).

There is no target: the ratios say what explicit, splittable keys cost on
NumPy. It is a report, not a test.

Run it with the interpreter that has typelattice installed::

    python benchmarks/bench_random.py
"""

from __future__ import annotations

import platform
import sys
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import typelattice as tl
from _timing import best_seconds
from typelattice import random

SIZE = 10**6
ROUNDS = 5
ROUND_SECONDS = 0.3
CALIBRATION_SECONDS = 0.1


def main() -> None:
    key = random.key(0)
    rng = np.random.default_rng(0)
    # name -> (sampler of a key, NumPy's counterpart)
    cases: dict[str, tuple[Callable[[Any], Any], Callable[[], Any] | None]] = {
        "uniform": (
            lambda k: random.uniform(k, (SIZE,)),
            lambda: rng.random(SIZE, dtype=np.float32),
        ),
        "normal": (
            lambda k: random.normal(k, (SIZE,)),
            lambda: rng.standard_normal(SIZE, dtype=np.float32),
        ),
        "randint": (
            lambda k: random.randint(k, (SIZE,), 0, 1000),
            lambda: rng.integers(0, 1000, SIZE, dtype=np.int32),
        ),
        "truncated_normal": (
            lambda k: random.truncated_normal(k, -2.0, 2.0, (SIZE,)),
            None,
        ),
    }
    print(f"typelattice {tl.__version__}, NumPy {np.__version__}, {platform.machine()}")
    print(f"{SIZE} values per call; seconds are the best of {ROUNDS} rounds\n")
    print(f"{'':18}{'eager':>10}{'jit':>10}{'NumPy':>10}{'eager/NumPy':>13}")
    for name, (ours, numpy_fn) in cases.items():
        jitted = tl.jit(ours)
        if not bool((jitted(key) == ours(key)).all()):
            raise SystemExit(f"{name}: jit and eager values differ")
        timers = {
            "eager": timeit.Timer(lambda f=ours: f(key)),
            "jit": timeit.Timer(lambda f=jitted: f(key)),
        }
        if numpy_fn is not None:
            timers["numpy"] = timeit.Timer(numpy_fn)
        best = best_seconds(
            timers,
            warmup=2,
            rounds=ROUNDS,
            round_seconds=ROUND_SECONDS,
            calibration_seconds=CALIBRATION_SECONDS,
        )
        reference = best.get("numpy")
        ratio = f"{best['eager'] / reference:13.1f}" if reference else f"{'-':>13}"
        shown = f"{reference:10.4f}" if reference else f"{'-':>10}"
        print(f"{name:18}{best['eager']:10.4f}{best['jit']:10.4f}{shown}{ratio}")
    split = best_seconds(
        {"split": timeit.Timer(lambda: random.split(key))},
        warmup=10,
        rounds=ROUNDS,
        round_seconds=0.1,
        calibration_seconds=0.02,
    )["split"]
    print(f"\nsplit(key): {split * 1e6:.0f} microseconds per call")


if __name__ == "__main__":
    sys.exit(main())
