"""vmap of every namespace function: for calls of the recorded namespace
golden (``golden/make_numpy_golden.py``), ``vmap`` of the call over a
batch of examples gives the per-example results stacked: the same values,
dtype, weak flag and shapes. The batch axis is first, or in the middle of
the operands, or only the first operand is batched (the others the same
for every example, ``in_axes=None``).

No reference is needed: the vmapped call is compared with the call made
on each example.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import golden_recorder
from typelattice._lax._elementwise import convert_element_type_p

rec = golden_recorder()

# Calls per function and mode: the first combinations of operand types of
# each function (every function, a sample of its dtype combinations).
PER_OP = {"x32": 24, "x64": 8, "strict_x32": 8}
PARTS = {"x32": 4, "x64": 2, "strict_x32": 1}


def _array(v: np.ndarray[Any, Any], weak: bool) -> Any:
    """An Array of ``v``'s values and dtype, weak or not."""
    x = tnp.asarray(v)
    if weak:
        x = convert_element_type_p.bind(x, new_dtype=x.dtype, weak_type=True)
    return x


def _examples(x: Any) -> list[Any]:
    """Three examples standing for an operand: its golden value (ones),
    zeros, and the ones negated where the dtype is signed."""
    ones = np.asarray(x)
    signed = ones.dtype.kind in "ifc" or ones.dtype == ml_dtypes.bfloat16
    third = -ones if signed else ones
    return [_array(v, x.weak_type) for v in (ones, np.zeros_like(ones), third)]


def _leaves(x: Any) -> list[Any]:
    return list(x) if isinstance(x, tuple) else [x]


def _close(got: np.ndarray[Any, Any], want: np.ndarray[Any, Any]) -> bool:
    if got.dtype.kind in "biu" or got.dtype == np.dtype(bool):
        return bool(np.array_equal(got, want))
    wide = np.complex128 if got.dtype.kind == "c" else np.float64
    g, w = got.astype(wide), want.astype(wide)
    narrow = got.dtype.itemsize <= 2 or got.dtype == ml_dtypes.bfloat16
    rtol = 1e-2 if narrow else 1e-5
    return bool(np.allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True))


def _ops(mode: str) -> list[Any]:
    return [rec.OPS[name] for name in rec.ops_of_mode(mode)]


SKIPPED = "skipped"


def _batched(x: Any, axis: int) -> Any:
    """The three examples of ``x`` stacked along ``axis`` (weak if it is)."""
    stacked = np.stack([np.asarray(e) for e in _examples(x)], axis=axis)
    return _array(stacked, x.weak_type)


def check_case(op: Any, combo: tuple[str, ...], values: dict[str, Any]) -> str | None:
    operands = [values[label] for label in combo]
    positions = [i for i, x in enumerate(operands) if isinstance(x, tl.Array)]
    if not positions:
        return SKIPPED

    def f(*arrays: Any) -> Any:
        args = list(operands)
        for i, a in zip(positions, arrays, strict=True):
            args[i] = a
        return op.fn(tnp, *args)

    arrays = [operands[i] for i in positions]
    per_example: list[Any] = []
    for k in range(3):
        try:
            per_example.append(f(*[_examples(a)[k] for a in arrays]))
        except Exception:
            return SKIPPED  # (an example outside the function's domain)
    variants: list[tuple[str, Any, list[Any]]] = [
        ("front", 0, [_batched(a, 0) for a in arrays]),
        (
            "middle",
            tuple(a.ndim // 2 for a in arrays),
            [_batched(a, a.ndim // 2) for a in arrays],
        ),
    ]
    if len(arrays) > 1:
        first = [_batched(arrays[0], 0), *arrays[1:]]
        variants.append(("first only", (0,) + (None,) * (len(arrays) - 1), first))
    for label, in_axes, batch in variants:
        if label == "first only":
            wants = [f(_examples(arrays[0])[k], *arrays[1:]) for k in range(3)]
        else:
            wants = per_example
        try:
            got = tl.vmap(f, in_axes=in_axes)(*batch)
        except Exception as exc:
            return f"{label}: {type(exc).__name__}: {str(exc)[:200]}"
        got_leaves = _leaves(got)
        want_leaves = [_leaves(w) for w in wants]
        if len(got_leaves) != len(want_leaves[0]):
            return f"{label}: {len(got_leaves)} results != {len(want_leaves[0])}"
        for j, g in enumerate(got_leaves):
            ws = [w[j] for w in want_leaves]
            want_meta = (np.dtype(ws[0].dtype), bool(ws[0].weak_type))
            got_meta = (np.dtype(g.dtype), bool(g.weak_type))
            if got_meta != want_meta:
                return f"{label}: dtype/weak {got_meta} != {want_meta}"
            want = np.stack([np.asarray(w) for w in ws])
            if tuple(g.shape) != want.shape:
                return f"{label}: shape {tuple(g.shape)} != {want.shape}"
            if not _close(np.asarray(g), want):
                return f"{label}: values {np.asarray(g)!r} != {want!r}"
    return None


@pytest.mark.parametrize(
    ("mode", "part"), [(m, p) for m, n in PARTS.items() for p in range(n)]
)
def test_vmap_of_every_function_stacks_its_examples(mode: str, part: int) -> None:
    x64, promotion = rec.MODES[mode]
    failures: list[str] = []
    count = 0
    with tl.enable_x64(x64), tl.dtype_promotion(promotion):
        ops = _ops(mode)
        size = math.ceil(len(ops) / PARTS[mode])
        values: dict[str, Any] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for op in ops[part * size : (part + 1) * size]:
                checked = 0
                for combo in op.combinations(mode):
                    for label in combo:
                        if label not in values:
                            values[label] = rec.make_operand(tnp, label)
                    why = check_case(op, combo, values)
                    if why == SKIPPED:
                        continue
                    count += 1
                    if why is not None:
                        failures.append(f"{op.expr} {combo}: {why}")
                    checked += 1
                    if checked == PER_OP[mode]:
                        break
    assert count > 0
    shown = "\n".join(failures[:25])
    assert not failures, f"{len(failures)} of {count} calls differ:\n{shown}"
