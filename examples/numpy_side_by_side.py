"""NumPy and typelattice.numpy side by side on the cases that motivate typelattice.

Each row evaluates one expression twice, on NumPy arrays and on
typelattice.numpy Arrays holding the same values, and prints each result's
dtype and values. Nothing is hard-coded: the output is what the installed
NumPy and typelattice give.

Run: python examples/numpy_side_by_side.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice._cli import run_main

LABEL = 18  # width of the expression column
CELL = 28  # width of the NumPy column


def cell(make: Callable[[], Any]) -> str:
    """A result as ``dtype [values]`` ('weak' marks a weak-typed Array)."""
    try:
        result = make()
    except Exception as err:
        return f"{type(err).__name__}"
    weak = " weak" if getattr(result, "weak_type", False) else ""
    return f"{result.dtype}{weak} {np.asarray(result)}"


def row(
    label: str, numpy_result: Callable[[], Any], tl_result: Callable[[], Any]
) -> None:
    """Print one expression: NumPy's result, then typelattice's."""
    print(f"{label:<{LABEL}} | {cell(numpy_result):<{CELL}} | {cell(tl_result)}")


def note(text: str) -> None:
    print(f"{'':<{LABEL}}   -> {text}")


def header(title: str) -> None:
    print()
    print(title)
    print(f"{'expression':<{LABEL}} | {'NumPy':<{CELL}} | typelattice")
    print(f"{'-' * LABEL}-+-{'-' * CELL}-+-{'-' * CELL}")


def pair(values: list[Any], dtype: Any) -> tuple[np.ndarray[Any, Any], tnp.Array]:
    """The same values as a NumPy array and as a typelattice Array."""
    a = np.asarray(values, dtype=dtype)
    return a, tnp.asarray(a)


def main() -> None:
    print(
        f"NumPy {np.__version__} and typelattice {tl.__version__}: the same "
        "expression on arrays of the same values.\n"
        "Each cell is the result's dtype, then its values. 'weak' marks a "
        "typelattice result whose dtype\ncame from a Python scalar: it will "
        "defer to the width of the next array it meets."
    )

    header("32-bit mode (typelattice's default, as JAX's)")
    i32, ti32 = pair([1, 2], "int32")
    f32, tf32 = pair([0.5, 1.5], "float32")
    row("int32 + float32", lambda: i32 + f32, lambda: ti32 + tf32)
    note("NumPy picks float64 so every int32 fits; JAX's lattice stays at float32")
    i8, ti8 = pair([1, 2, 3], "int8")
    row("int8 * 2", lambda: i8 * 2, lambda: ti8 * 2)
    note("a Python int is weak in both (NumPy 2, NEP 50): the array's int8 wins")
    row("int8 * 2.0", lambda: i8 * 2.0, lambda: ti8 * 2.0)
    note("a Python float makes it floating: NumPy's default float64, here float32")
    bf16, tbf16 = pair([1.5, 2.5], ml_dtypes.bfloat16)
    row("bfloat16 + 1.0", lambda: bf16 + 1.0, lambda: tbf16 + 1.0)
    note("the weak 1.0 keeps the array's bfloat16")
    u64, i64 = np.array([1, 2], np.uint64), np.array([-3, 4], np.int64)
    row(
        "uint64 + int64",
        lambda: u64 + i64,
        lambda: tnp.asarray(u64) + tnp.asarray(i64),
    )
    note("64-bit inputs are narrowed to uint32 and int32 first (a value that")
    note("does not fit raises); their join, int64, is int32 in 32-bit mode")

    header("64-bit mode (with typelattice.enable_x64():)")
    with tl.enable_x64():
        row(
            "uint64 + int64",
            lambda: u64 + i64,
            lambda: tnp.asarray(u64) + tnp.asarray(i64),
        )
    note("no integer type holds both ranges: JAX's lattice joins uint64 and int64")
    note("at the weak float: float64 here, weak, so it defers to a float32 array")

    a, ta = pair([-1, 2], "int8")
    b, tb = pair([200, 3], "uint8")
    c, tc = pair([0.5, 1.5], "float16")
    header("Associativity: a int8 [-1 2], b uint8 [200 3], c float16 [0.5 1.5]")
    row("(a + b) + c", lambda: (a + b) + c, lambda: (ta + tb) + tc)
    row("a + (b + c)", lambda: a + (b + c), lambda: ta + (tb + tc))
    note("NumPy: a + b is int16, and int16 + float16 needs float32; b + c stays")
    note("float16. A lattice join does not depend on the grouping: float16 twice")


if __name__ == "__main__":
    # Ends as the typelattice command does: quietly when the reader of the
    # output goes away (| head).
    sys.exit(run_main(main))
