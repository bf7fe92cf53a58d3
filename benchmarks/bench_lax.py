"""Eager ``typelattice.lax`` calls against the NumPy call computing the same.

A primitive bound eagerly decides its checks, result dtype and weak flag
once per signature (the operands' dtypes, weak flags and shapes, and the
parameters) and then only calls its NumPy function and wraps the result;
with the C accelerator (``typelattice._speedups``), ``Primitive.bind`` and
the functions whose arguments are all operands (``lax.add``, ``lax.exp``)
do that in C. Rows with a target print PASS or MISS; the others show where
the remaining time is (argument checks and conversions in Python).

Run: ``python benchmarks/bench_lax.py`` (with ``TYPELATTICE_NO_SPEEDUPS=1``
for the pure-Python path).
"""

from __future__ import annotations

import sys
import timeit
from dataclasses import dataclass
from typing import Any

import numpy as np

import typelattice.numpy as tnp
from _timing import best_seconds
from typelattice import _promotion, lax
from typelattice._lax._elementwise import add_p

N = 1000
WARMUP = 200
ROUNDS = 7
ROUND_SECONDS = 0.05
CALIBRATION_SECONDS = 0.005


@dataclass(frozen=True)
class Case:
    label: str
    lax_call: str  # evaluated with x, y (float32 Arrays of N elements)
    numpy_call: str  # evaluated with xn, yn (their NumPy values)
    target: float | None = None  # the largest ratio that passes

    def verdict(self, ratio: float) -> str:
        if self.target is None:
            return ""
        return f"<= {self.target:.1f}x  {'PASS' if ratio <= self.target else 'MISS'}"


CASES = [
    Case("eager lax.add(x, y), 1K float32", "lax.add(x, y)", "np.add(xn, yn)", 1.5),
    Case("eager add_p.bind(x, y)", "add_p.bind(x, y)", "np.add(xn, yn)"),
    Case("eager lax.exp(x)", "lax.exp(x)", "np.exp(xn)"),
    Case("eager lax.mul(x, 2.0)", "lax.mul(x, 2.0)", "np.multiply(xn, two)"),
    Case(
        "eager lax.convert_element_type f16",
        "lax.convert_element_type(x, 'float16')",
        "xn.astype(np.float16)",
    ),
    Case("eager lax.reduce_sum(x, (0,))", "lax.reduce_sum(x, (0,))", "np.sum(xn, 0)"),
    Case(
        "eager lax.broadcast_in_dim (4, 1K)",
        "lax.broadcast_in_dim(x, (4, N), (1,))",
        "np.broadcast_to(xn, (4, N)).copy()",
    ),
    Case("tnp.add(x, y) (for reference)", "tnp.add(x, y)", "np.add(xn, yn)"),
]


def main() -> int:
    xn = np.linspace(0.0, 1.0, N, dtype=np.float32)
    yn = np.linspace(1.0, 2.0, N, dtype=np.float32)
    env: dict[str, Any] = {
        "np": np,
        "lax": lax,
        "tnp": tnp,
        "add_p": add_p,
        "N": N,
        "xn": xn,
        "yn": yn,
        "two": np.float32(2.0),
        "x": tnp.asarray(xn),
        "y": tnp.asarray(yn),
    }
    print(f"typelattice.lax eager calls vs NumPy ({_promotion.SPEEDUPS})")
    print(f"{'operation':<38} {'lax':>9} {'numpy':>9} {'ratio':>6}  target")
    for case in CASES:
        timers = {
            "lax": timeit.Timer(case.lax_call, globals=env),
            "numpy": timeit.Timer(case.numpy_call, globals=env),
        }
        seconds = best_seconds(
            timers,
            warmup=WARMUP,
            rounds=ROUNDS,
            round_seconds=ROUND_SECONDS,
            calibration_seconds=CALIBRATION_SECONDS,
        )
        ratio = seconds["lax"] / seconds["numpy"]
        print(
            f"{case.label:<38} {seconds['lax'] * 1e6:>7.2f}us"
            f" {seconds['numpy'] * 1e6:>7.2f}us {ratio:>6.2f}  {case.verdict(ratio)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
