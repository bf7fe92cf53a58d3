"""A tour of typelattice's promotion rules next to NumPy's.

Run: python examples/promotion_tour.py
"""

from __future__ import annotations

import sys

import numpy as np

import typelattice as tl
from typelattice._cli import run_main


def show(label: str, *args: object) -> None:
    theirs = np.result_type(*args)
    ours = tl.result_type(*args, return_weak_type_flag=True)
    weak = " (weak)" if ours[1] else ""
    print(f"{label:<34} numpy: {theirs!s:<10} typelattice: {ours[0]}{weak}")


def main() -> None:
    int8 = np.zeros(3, np.int8)
    print("Mixing types (32-bit mode, the default):")
    show("int32 array + float32 array", np.zeros(2, np.int32), np.zeros(2, np.float32))
    show("int8 array * 2", int8, 2)
    show("int8 array * 2.0", int8, 2.0)
    show("uint64 + int64", np.zeros(1, np.uint64), np.zeros(1, np.int64))
    show("bfloat16 + 1.0", np.dtype("bfloat16"), 1.0)
    print()
    print("NumPy's table is not associative; the lattice is:")
    i1, u1, f2 = np.dtype("int8"), np.dtype("uint8"), np.dtype("float16")
    left = np.promote_types(np.promote_types(i1, u1), f2)
    right = np.promote_types(i1, np.promote_types(u1, f2))
    print(f"  numpy:       (i1 u1) f2 = {left},  i1 (u1 f2) = {right}")
    left = tl.promote_types(tl.promote_types(i1, u1), f2)
    right = tl.promote_types(i1, tl.promote_types(u1, f2))
    print(f"  typelattice: (i1 u1) f2 = {left},  i1 (u1 f2) = {right}")
    print()
    with tl.enable_x64():
        show("64-bit mode: int8 array * 2.0", int8, 2.0)
        show(
            "64-bit mode: uint64 + int64", np.zeros(1, np.uint64), np.zeros(1, np.int64)
        )
    with tl.dtype_promotion("strict"):
        try:
            tl.result_type("int32", "float32")
        except tl.TypePromotionError as err:
            print(f"strict mode: {err}")


if __name__ == "__main__":
    # Ends as the typelattice command does: quietly when the reader of the
    # output goes away (| head).
    sys.exit(run_main(main))
