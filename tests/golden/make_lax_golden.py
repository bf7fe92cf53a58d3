"""Record the results of jax.lax functions: dtype, weak flag, shape, values.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_lax_golden.py

It writes ``lax_ops.json`` beside this file. ``tests/test_lax_golden.py``
replays every recorded call on ``typelattice.lax`` and compares.

The operands, the calls and the encoding live here so that the recording
and the replay build exactly the same calls. Importing this module needs only
NumPy and ml_dtypes (JAX is imported by ``main``).

Operands (labels):

- ``<code>`` (``b1 i1 u1 i4 f2 bf f4 c8``, and ``f8`` in x64 mode): a vector
  of 6 values of that dtype (``VALUES[kind][0]``); ``<code>:b`` and
  ``<code>:c`` the second and third value sets; ``<code>:s`` special floats
  (NaN, infinities, signed zeros); ``<code>:m`` the first set as a 2x3
  matrix;
- ``py:int`` ``py:float`` ``py:complex`` ``py:bool``: the Python scalars
  ``2``, ``0.5``, ``0.5+1j``, ``True`` (weak, except bool);
- ``w:i`` ``w:f`` ``w:c``: weak 0-d arrays ``asarray(2)``, ``asarray(0.5)``,
  ``asarray(0.5+1j)``.

A call's result is encoded as ``[code, shape, values]``, the code being
``typelattice.dtype_code``'s, prefixed with ``w:`` when weak; complex values
are ``[re, im]`` pairs. A tuple result is a list of those. An exception is
``"!"`` plus the nearest built-in class of the exception's MRO.

Deliberate difference (docs/lax.md): in ``typelattice.lax`` a Python scalar
takes the dtype of the arrays of its group (the operands that must share a
dtype) when that dtype holds its kind, where ``jax.lax`` gives it the default
dtype of its kind and then refuses the mix (``lax.add(int8, 2)``). For such
calls the recorder also runs JAX with the scalar converted to that dtype as a
weak value, and stores that result as ``alt``: typelattice must give it.
"""

from __future__ import annotations

import json
import platform
import sys
import warnings
from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

OUT = Path(__file__).with_name("lax_ops.json")

MODES: dict[str, bool] = {"x32": False, "x64": True}  # name -> enable_x64

DTYPES_X32 = "b1 i1 u1 i4 f2 bf f4 c8".split()
DTYPES_X64 = [*DTYPES_X32, "f8"]
PY = ["py:int", "py:float", "py:complex", "py:bool"]
WEAK = ["w:i", "w:f", "w:c"]

NP_DTYPES: dict[str, Any] = {
    "b1": np.bool_,
    "u1": np.uint8,
    "i1": np.int8,
    "i4": np.int32,
    "i8": np.int64,
    "u4": np.uint32,
    "bf": ml_dtypes.bfloat16,
    "f2": np.float16,
    "f4": np.float32,
    "f8": np.float64,
    "c8": np.complex64,
}
CODES = {np.dtype(t): code for code, t in NP_DTYPES.items()}
CODES[np.dtype(np.uint16)] = "u2"
CODES[np.dtype(np.int16)] = "i2"
CODES[np.dtype(np.uint64)] = "u8"
CODES[np.dtype(np.complex128)] = "c16"

PY_VALUES: dict[str, Any] = {
    "py:int": 2,
    "py:float": 0.5,
    "py:complex": 0.5 + 1j,
    "py:bool": True,
}
WEAK_VALUES: dict[str, Any] = {"w:i": 2, "w:f": 0.5, "w:c": 0.5 + 1j}

# Three value sets per kind. Integers: division by zero, the most negative
# value over -1, negative and too-large shift amounts. Floats: values inside
# and outside the domains of asin, log, sqrt... (NaN results are compared).
# Complex values stay off the branch cuts of atan2, where XLA's choice of
# sides for signed zeros is its own (docs/lax.md).
VALUES: dict[str, list[list[Any]]] = {
    "b": [
        [True, False, True, True, False, False],
        [True, True, False, True, False, True],
        [False, True, True, False, False, True],
    ],
    "i": [
        [7, -7, 0, "min", 5, 100],
        [2, -2, 0, -1, 0, 3],
        [9, 1, 2, 50, 7, -3],
    ],
    "u": [
        [7, 0, "max", 1, 5, 100],
        [2, 3, 0, 1, 0, 7],
        [9, 1, 2, 50, 7, 120],
    ],
    "f": [
        [-2.5, -0.5, 0.0, 0.5, 1.0, 3.75],
        [2.0, -0.75, 0.0, 0.5, -1.5, 0.25],
        [3.0, 0.25, 1.0, 2.0, 1.25, 4.0],
    ],
    "c": [
        [1 + 2j, -0.5 + 0j, 0j, 0.5 - 1.5j, 1j, -2 - 1j],
        [0.5 - 1j, 2 + 0j, 1 + 1j, 0.5 - 1.5j, 0.25 - 1j, 3 + 0j],
        [2 + 2j, 1 + 0j, 1 - 1j, 1.5 - 1.5j, 2j, 4 + 1j],
    ],
}
SPECIAL_FLOATS = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.5]
SETS = {"": 0, "b": 1, "c": 2, "m": 0}


def kind(code: str) -> str:
    return {"b1": "b", "i1": "i", "i4": "i", "i8": "i", "u1": "u", "u4": "u"}.get(
        code, "c" if code.startswith("c") else "f"
    )


def values_of(label: str) -> np.ndarray[Any, Any]:
    """The NumPy array an array label stands for."""
    code, _, which = label.partition(":")
    dt = np.dtype(NP_DTYPES[code])
    if which == "s":
        return np.array(SPECIAL_FLOATS, dt)
    raw = VALUES[kind(code)][SETS[which]]
    if kind(code) in "iu":
        info = np.iinfo(dt)
        raw = [info.min if v == "min" else info.max if v == "max" else v for v in raw]
    out = np.array(raw).astype(dt)
    return out.reshape(2, 3) if which == "m" else out


def make_operand(xnp: Any, label: str) -> Any:
    """The operand ``label``, built with the namespace ``xnp`` (inside the
    mode's configuration: weak arrays take the mode's default width)."""
    if label in PY_VALUES:
        return PY_VALUES[label]
    if label in WEAK_VALUES:
        return xnp.asarray(WEAK_VALUES[label])
    return xnp.asarray(values_of(label))


# ------------------------------------------------------------------------ ops


class Case:
    """One recorded function: ``fn(lax, *operands)`` over operand label
    tuples; ``group`` are the positions of the operands that share a dtype
    (for the Python scalar difference above)."""

    def __init__(
        self,
        name: str,
        expr: str,
        fn: Callable[..., Any],
        combos: Callable[[str], list[tuple[str, ...]]],
        group: Sequence[int] = (0, 1),
    ) -> None:
        self.name = name
        self.expr = expr
        self.fn = fn
        self.combos = combos
        self.group = tuple(group)


UNARY = """
neg sign floor ceil round abs exp exp2 log log1p expm1 sqrt rsqrt cbrt sin cos
tan asin acos atan sinh cosh tanh asinh acosh atanh logistic erf erfc erf_inv
lgamma digamma is_finite bitwise_not population_count clz real imag conj
""".split()

BINARY = """
add sub mul div rem pow max min atan2 nextafter bitwise_and bitwise_or
bitwise_xor shift_left shift_right_logical shift_right_arithmetic eq ne lt le
gt ge complex
""".split()


def dtypes_of(mode: str) -> list[str]:
    return DTYPES_X64 if MODES[mode] else DTYPES_X32


def floats_of(mode: str) -> list[str]:
    return [c for c in dtypes_of(mode) if kind(c) == "f"]


def _unary_combos(mode: str) -> list[tuple[str, ...]]:
    labels = [*dtypes_of(mode), *(f"{c}:s" for c in floats_of(mode)), *WEAK, *PY]
    return [(label,) for label in labels]


def _binary_combos(mode: str) -> list[tuple[str, ...]]:
    codes = dtypes_of(mode)
    out: list[tuple[str, ...]] = [(c, f"{c}:b") for c in codes]
    out += [(f"{c}:s", f"{c}:b") for c in floats_of(mode)]
    if not MODES[mode]:  # mixed dtypes: only the errors' classes are recorded
        out += [(a, f"{b}:b") for a, b in combinations(codes, 2)]
    for c in codes:
        out += [(c, p) for p in PY] + [(p, f"{c}:b") for p in PY]
        out += [(c, w) for w in WEAK]
    out += [(p, p) for p in PY] + [(w, w) for w in WEAK] + [("w:f", "py:float")]
    return out


def _per_dtype(*suffixes: str) -> Callable[[str], list[tuple[str, ...]]]:
    """One call per dtype of the mode, with operands ``<code><suffix>``."""

    def combos(mode: str) -> list[tuple[str, ...]]:
        return [tuple(f"{c}{s}" for s in suffixes) for c in dtypes_of(mode)]

    return combos


def _pairs(mode: str) -> list[tuple[str, ...]]:
    codes = dtypes_of(mode)
    return [(a, f"{b}:b") for a in codes for b in codes]


def _fixed(*combos: tuple[str, ...]) -> Callable[[str], list[tuple[str, ...]]]:
    return lambda mode: list(combos)


def _unary(name: str) -> Case:
    return Case(
        name,
        f"lax.{name}(x)",
        lambda lax, x: getattr(lax, name)(x),
        _unary_combos,
        (0,),
    )


def _binary(name: str) -> Case:
    return Case(
        name,
        f"lax.{name}(x, y)",
        lambda lax, x, y: getattr(lax, name)(x, y),
        _binary_combos,
    )


def _gdn(lax: Any, **kw: Any) -> Any:
    return lax.GatherDimensionNumbers(**kw)


def _sdn(lax: Any, **kw: Any) -> Any:
    return lax.ScatterDimensionNumbers(**kw)


def _method(name: str, *args: Any, **kw: Any) -> Callable[..., Any]:
    """``lax.<name>(x, *args, **kw)``."""
    return lambda lax, x: getattr(lax, name)(x, *args, **kw)


def _on_broadcast(name: str, *args: Any) -> Callable[..., Any]:
    """``lax.<name>`` of a 0-d operand broadcast to 3 elements."""
    return lambda lax, x: getattr(lax, name)(lax.broadcast_in_dim(x, (3,), ()), *args)


def _dot_preferred(code: str) -> Callable[..., Any]:
    return lambda lax, x, y: lax.dot_general(
        x, y, (((0,), (0,)), ((), ())), preferred_element_type=NP_DTYPES[code]
    )


def _scatter_elements(name: str, mode: str | None) -> Callable[..., Any]:
    """``lax.<name>`` of y's first 4 values at elements 1, 3, 1 and 10."""
    return lambda lax, x, y: getattr(lax, name)(
        x,
        np.array([[1], [3], [1], [10]], np.int32),
        lax.slice(y, (0,), (4,)),
        _sdn(lax, **_S_ELEMENT_DN),
        mode=mode,
    )


def _vector(lax: Any, x: Any) -> Any:
    """A 0-d operand as a vector of 2 (weak flag kept); vectors as they are."""
    return x if np.ndim(x) == 1 else lax.broadcast_in_dim(x, (2,), ())


_ELEMENT_DN = dict(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
_ROW_DN = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_S_ELEMENT_DN = dict(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)
_S_ROW_DN = dict(
    update_window_dims=(1,),
    inserted_window_dims=(0,),
    scatter_dims_to_operand_dims=(0,),
)


def _window(op: str, *args: Any) -> Callable[..., Any]:
    """``lax.reduce_window(x, identity, lax.<op>, *args)``, the identity of
    ``op`` in x's dtype (a strong NumPy scalar)."""

    def fn(lax: Any, x: Any) -> Any:
        dt = np.dtype(x.dtype)
        if op == "add" or dt.kind == "c":
            init: Any = 0
        elif dt.kind == "b":
            init = op == "min"
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            init = info.min if op == "max" else info.max
        else:
            init = -np.inf if op == "max" else np.inf
        return lax.reduce_window(x, np.array(init, dt), getattr(lax, op), *args)

    return fn


def _cases() -> list[Case]:
    I32 = np.int32  # noqa: N806
    cases = [*(_unary(n) for n in UNARY), *(_binary(n) for n in BINARY)]
    cases += [
        Case(
            "round_even",
            "lax.round(x, 1)",
            lambda lax, x: lax.round(x, 1),
            _unary_combos,
            (0,),
        ),
        Case(
            "integer_pow_3",
            "lax.integer_pow(x, 3)",
            lambda lax, x: lax.integer_pow(x, 3),
            _unary_combos,
            (0,),
        ),
        Case(
            "integer_pow_-2",
            "lax.integer_pow(x, -2)",
            lambda lax, x: lax.integer_pow(x, -2),
            _unary_combos,
            (0,),
        ),
        Case(
            "integer_pow_0",
            "lax.integer_pow(x, 0)",
            lambda lax, x: lax.integer_pow(x, 0),
            _unary_combos,
            (0,),
        ),
        Case(
            "convert",
            "lax.convert_element_type(x, y.dtype)",
            lambda lax, x, y: lax.convert_element_type(x, y.dtype),
            lambda m: [
                *_pairs(m),
                *((f"{a}:s", f"{b}:b") for a in floats_of(m) for b in dtypes_of(m)),
            ],
            (0,),
        ),
        Case(
            "convert_py",
            "lax.convert_element_type(x, y.dtype)",
            lambda lax, x, y: lax.convert_element_type(x, y.dtype),
            lambda m: [
                (p, f"{c}:b")
                for p in PY
                for c in dtypes_of(m)
                if not (p == "py:int" and c == "b1")
            ],
            (0,),
        ),
        Case(
            "bitcast",
            "lax.bitcast_convert_type(x, y.dtype)",
            lambda lax, x, y: lax.bitcast_convert_type(x, y.dtype),
            _pairs,
            (0,),
        ),
        Case(
            "bitcast_m",
            "lax.bitcast_convert_type(x.reshape(3,2), y.dtype)",
            lambda lax, x, y: lax.bitcast_convert_type(lax.reshape(x, (3, 2)), y.dtype),
            _pairs,
            (0,),
        ),
        Case(
            "select",
            "lax.select(p, x, y)",
            lambda lax, p, x, y: lax.select(p, x, y),
            lambda m: (
                [("b1", c, f"{c}:b") for c in dtypes_of(m)]
                + [("b1", c, p) for c in dtypes_of(m) for p in PY[:2]]
                + [("b1", "f4", "i4:b"), ("b1", "w:f", "w:f"), ("i4", "f4", "f4:b")]
            ),
            (1, 2),
        ),
        Case(
            "select_n_int",
            "lax.select_n(i % 3, x, y, z)",
            lambda lax, x, y, z: lax.select_n(
                np.array([0, 1, 2, 5, -1, 1], I32), x, y, z
            ),
            _per_dtype("", ":b", ":c"),
            (0, 1, 2),
        ),
        Case(
            "clamp",
            "lax.clamp(y, x, z)",
            lambda lax, lo, x, hi: lax.clamp(lo, x, hi),
            lambda m: (
                [(f"{c}:b", c, f"{c}:c") for c in dtypes_of(m)]
                + [
                    (p, c, q)
                    for c in dtypes_of(m)
                    for p, q in (("py:int", "py:int"), ("py:float", "py:float"))
                ]
                + [("w:f", "w:f", "w:f"), ("f4", "f4:b", "i4")]
            ),
            (0, 1, 2),
        ),
        # Structural.
        Case(
            "broadcast_in_dim",
            "lax.broadcast_in_dim(x, (4, 2, 3), (1, 2))",
            lambda lax, x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "broadcast_scalar",
            "lax.broadcast_in_dim(x, (2,), ())",
            lambda lax, x: lax.broadcast_in_dim(x, (2,), ()),
            _fixed(*((w,) for w in [*WEAK, *PY])),
            (0,),
        ),
        Case(
            "broadcast_in_dim_bad",
            "lax.broadcast_in_dim(x, (2, 4), (0, 1))",
            lambda lax, x: lax.broadcast_in_dim(x, (2, 4), (0, 1)),
            _fixed(("f4:m",)),
            (0,),
        ),
        Case(
            "broadcast",
            "lax.broadcast(x, (2,))",
            lambda lax, x: lax.broadcast(x, (2,)),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "reshape",
            "lax.reshape(x, (3, 2))",
            lambda lax, x: lax.reshape(x, (3, 2)),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "reshape_dims",
            "lax.reshape(x, (3, 2), (1, 0))",
            lambda lax, x: lax.reshape(x, (3, 2), (1, 0)),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "reshape_bad",
            "lax.reshape(x, (4, 2))",
            lambda lax, x: lax.reshape(x, (4, 2)),
            _fixed(("f4:m",)),
            (0,),
        ),
        Case(
            "reshape_minus_one",
            "lax.reshape(x, (-1, 2))",
            lambda lax, x: lax.reshape(x, (-1, 2)),
            _fixed(("f4:m",)),
            (0,),
        ),
        Case(
            "transpose",
            "lax.transpose(x, (1, 0))",
            lambda lax, x: lax.transpose(x, (1, 0)),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "transpose_bad",
            "lax.transpose(x, (0, 0))",
            lambda lax, x: lax.transpose(x, (0, 0)),
            _fixed(("f4:m",)),
            (0,),
        ),
        Case(
            "squeeze",
            "lax.squeeze(x.reshape(1, 6, 1), (0, 2))",
            lambda lax, x: lax.squeeze(lax.reshape(x, (1, 6, 1)), (0, 2)),
            _per_dtype(""),
            (0,),
        ),
        Case(
            "squeeze_bad",
            "lax.squeeze(x, (1,))",
            lambda lax, x: lax.squeeze(x, (1,)),
            _fixed(("f4:m",)),
            (0,),
        ),
        Case(
            "expand_dims",
            "lax.expand_dims(x, (0, -1))",
            lambda lax, x: lax.expand_dims(x, (0, -1)),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "concatenate_0",
            "lax.concatenate([x, y], 0)",
            lambda lax, x, y: lax.concatenate(
                [lax.reshape(x, (2, 3)), lax.reshape(y, (2, 3))], 0
            ),
            lambda m: [(c, f"{c}:b") for c in dtypes_of(m)] + [("f4", "i4:b")],
            (0, 1),
        ),
        Case(
            "concatenate_1",
            "lax.concatenate([x, y], 1)",
            lambda lax, x, y: lax.concatenate([x, y], 1),
            lambda m: [(f"{c}:m", f"{c}:m") for c in dtypes_of(m)],
            (0, 1),
        ),
        Case(
            "concatenate_weak",
            "lax.concatenate([vec(x), vec(y)], 0)",
            lambda lax, x, y: lax.concatenate([_vector(lax, x), _vector(lax, y)], 0),
            _fixed(
                ("w:f", "w:f"), ("w:f", "f4:b"), ("w:i", "w:i"), ("w:f", "py:float")
            ),
            (0, 1),
        ),
        Case(
            "concatenate_rank",
            "lax.concatenate([x, y], 0)",
            lambda lax, x, y: lax.concatenate([x, y], 0),
            _fixed(("f4", "py:float"), ("f4:m", "f4")),
            (0, 1),
        ),
        Case(
            "pad",
            "lax.pad(x, y, [(1, -1, 1)])",
            lambda lax, x, y: lax.pad(x, y, [(1, -1, 1)]),
            lambda m: (
                [
                    (c, p)
                    for c in dtypes_of(m)
                    for p in ("py:int", "py:float", "py:bool")
                ]
                + [("f4", "w:f"), ("f4", "i4"), ("w:f", "w:f")]
            ),
            (0, 1),
        ),
        Case(
            "pad_m",
            "lax.pad(x, y[0], [(1, 1, 0), (0, -2, 1)])",
            lambda lax, x, y: lax.pad(
                x, lax.reshape(lax.slice(y, (0,), (1,)), ()), [(1, 1, 0), (0, -2, 1)]
            ),
            _per_dtype(":m", ":b"),
            (0, 1),
        ),
        Case(
            "pad_bad",
            "lax.pad(x, 0.0, [(-2, -1, 0), (0, 0, 0)])",
            lambda lax, x: lax.pad(x, 0.0, [(-2, -1, 0), (0, 0, 0)]),
            _fixed(("f4:m",)),
            (0,),
        ),
        Case(
            "rev",
            "lax.rev(x, (0, 1))",
            lambda lax, x: lax.rev(x, (0, 1)),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "rev_neg",
            "lax.rev(x, (-1,))",
            lambda lax, x: lax.rev(x, (-1,)),
            _fixed(("f4:m",)),
            (0,),
        ),
        Case(
            "iota",
            "lax.iota(x.dtype, 5)",
            lambda lax, x: lax.iota(x.dtype, 5),
            _per_dtype(""),
            (),
        ),
        Case(
            "full",
            "lax.full((2, 3), y)",
            lambda lax, y: lax.full((2, 3), y),
            _fixed(*((p,) for p in [*PY, *WEAK])),
            (),
        ),
        Case(
            "full_dtype",
            "lax.full((2,), 1, x.dtype)",
            lambda lax, x: lax.full((2,), 1, x.dtype),
            _per_dtype(""),
            (),
        ),
        Case(
            "slice",
            "lax.slice(x, (1,), (6,), (2,))",
            lambda lax, x: lax.slice(x, (1,), (6,), (2,)),
            _per_dtype(""),
            (0,),
        ),
        Case(
            "slice_m",
            "lax.slice(x, (0, 1), (2, 3))",
            lambda lax, x: lax.slice(x, (0, 1), (2, 3)),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "slice_bad",
            "lax.slice(x, (5,), (4,))",
            lambda lax, x: lax.slice(x, (5,), (4,)),
            _fixed(("f4",)),
            (0,),
        ),
        Case(
            "slice_in_dim",
            "lax.slice_in_dim(x, -2, None, 1, axis=1)",
            lambda lax, x: lax.slice_in_dim(x, -2, None, 1, axis=1),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "dynamic_slice",
            "lax.dynamic_slice(x, (i,), (3,)) for i in 2, 5, -2",
            lambda lax, x: [lax.dynamic_slice(x, (i,), (3,)) for i in (2, 5, -2)],
            _per_dtype(""),
            (0,),
        ),
        Case(
            "dynamic_slice_arr",
            "lax.dynamic_slice(x, [int8 1, int8 0], (2, 2))",
            lambda lax, x: lax.dynamic_slice(x, (np.int8(1), np.int8(0)), (2, 2)),
            _fixed(("f4:m",), ("w:f",)),
            (0,),
        ),
        Case(
            "dynamic_slice_bad",
            "lax.dynamic_slice(x, (0, 0), (3, 1))",
            lambda lax, x: lax.dynamic_slice(x, (0, 0), (3, 1)),
            _fixed(("f4:m",)),
            (0,),
        ),
        Case(
            "dynamic_update_slice",
            "lax.dynamic_update_slice(x, y[:2], (i,)) for i in 3, 5, -1",
            lambda lax, x, y: [
                lax.dynamic_update_slice(x, lax.slice(y, (0,), (2,)), (i,))
                for i in (3, 5, -1)
            ],
            lambda m: [(c, f"{c}:b") for c in dtypes_of(m)] + [("f4", "i4:b")],
            (0, 1),
        ),
        Case(
            "dynamic_update_slice_weak",
            "lax.dynamic_update_slice(bcast(x), bcast(y), (1,))",
            lambda lax, x, y: lax.dynamic_update_slice(
                lax.broadcast_in_dim(x, (4,), ()),
                lax.broadcast_in_dim(y, (2,), ()),
                (1,),
            ),
            _fixed(("w:f", "w:f"), ("w:f", "py:float")),
            (0, 1),
        ),
        # Reductions.
        *(
            Case(
                f"{r}_{tag}",
                f"lax.{r}(x, {axes})",
                _method(r, axes),
                _per_dtype(":m"),
                (0,),
            )
            for r in (
                "reduce_sum",
                "reduce_prod",
                "reduce_max",
                "reduce_min",
                "reduce_and",
                "reduce_or",
                "reduce_xor",
            )
            for tag, axes in (("0", (0,)), ("1", (1,)), ("01", (0, 1)), ("none", ()))
        ),
        *(
            Case(
                f"{r}_weak",
                f"lax.{r}(bcast(x), (0,))",
                _on_broadcast(r, (0,)),
                _fixed(("w:i",), ("w:f",)),
                (0,),
            )
            for r in ("reduce_sum", "reduce_max", "reduce_and")
        ),
        Case(
            "reduce_max_special",
            "lax.reduce_max(x, (0,))",
            lambda lax, x: lax.reduce_max(x, (0,)),
            lambda m: [(f"{c}:s",) for c in floats_of(m)],
            (0,),
        ),
        Case(
            "reduce_bad_axis",
            "lax.reduce_sum(x, (2,))",
            lambda lax, x: lax.reduce_sum(x, (2,)),
            _fixed(("f4:m",)),
            (0,),
        ),
        Case(
            "reduce_max_empty",
            "lax.reduce_max(x[:0], (0,))",
            lambda lax, x: lax.reduce_max(lax.slice(x, (0,), (0,)), (0,)),
            _per_dtype(""),
            (0,),
        ),
        Case(
            "reduce_min_empty",
            "lax.reduce_min(x[:0], (0,))",
            lambda lax, x: lax.reduce_min(lax.slice(x, (0,), (0,)), (0,)),
            lambda m: [(c,) for c in dtypes_of(m) if c != "c8"],
            (0,),
        ),
        Case(
            "argmax",
            "lax.argmax(x, 1, int32)",
            lambda lax, x: lax.argmax(x, 1, np.int32),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "argmin",
            "lax.argmin(x, 1, uint8)",
            lambda lax, x: lax.argmin(x, 1, np.uint8),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "argmax_special",
            "lax.argmax(x, 0, int32), lax.argmin(...)",
            lambda lax, x: [lax.argmax(x, 0, np.int32), lax.argmin(x, 0, np.int32)],
            lambda m: [(f"{c}:s",) for c in floats_of(m)],
            (0,),
        ),
        Case(
            "argmax_bad",
            "lax.argmax(x, 1, float32)",
            lambda lax, x: lax.argmax(x, 1, np.float32),
            _fixed(("f4:m",)),
            (0,),
        ),
        Case(
            "argmax_weak",
            "lax.argmax(bcast(x), 0, int32)",
            lambda lax, x: lax.argmax(lax.broadcast_in_dim(x, (3,), ()), 0, np.int32),
            _fixed(("w:f",)),
            (0,),
        ),
        *(
            Case(
                f"{c}_{tag}",
                f"lax.{c}(x, {axis}, reverse={rev})",
                _method(c, axis, reverse=rev),
                _per_dtype(":m"),
                (0,),
            )
            for c in ("cumsum", "cumprod", "cummax", "cummin")
            for tag, axis, rev in (("1", 1, False), ("0r", 0, True))
        ),
        *(
            Case(
                f"reduce_window_{op}{tag}",
                f"lax.reduce_window(x, identity, {op}, {args})",
                _window(op, *args),
                _per_dtype(":m"),
                (0,),
            )
            for op in ("add", "max", "min")
            for tag, args in (
                ("", ((2, 2), (1, 1), "SAME")),
                ("_strided", ((1, 2), (2, 2), [(1, 0), (0, 1)], (1, 2), (2, 1))),
            )
        ),
        *(
            Case(
                f"reduce_window_{op}_special",
                f"lax.reduce_window(x, identity, {op}, (2,), (2,), 'VALID')",
                _window(op, (2,), (2,), "VALID"),
                lambda m: [(f"{c}:s",) for c in floats_of(m)],
                (0,),
            )
            for op in ("max", "min")
        ),
        *(
            Case(
                f"reduce_window_{op}_weak",
                f"lax.reduce_window(bcast(x), identity, {op}, (2,), (1,), 'SAME')",
                lambda lax, x, op=op: _window(op, (2,), (1,), "SAME")(
                    lax, lax.broadcast_in_dim(x, (3,), ())
                ),
                _fixed(("w:i",), ("w:f",)),
                (0,),
            )
            for op in ("add", "max")
        ),
        Case(
            "reduce_window_init",
            "lax.reduce_window(x, init, add, (2,), (1,), 'VALID'), init not 0",
            lambda lax, x, i: lax.reduce_window(x, i, lax.add, (2,), (1,), "VALID"),
            _fixed(
                *((c, i) for c in ("f4", "bf", "i4") for i in ("py:int", "py:float")),
                ("f4", "w:f"),
                ("f4", "w:i"),
                ("i4", "w:i"),
            ),
        ),
        Case(
            "reduce_window_bad_dims",
            "lax.reduce_window(x, 0, add, (2,), (1,), 'VALID') of a matrix",
            lambda lax, x: lax.reduce_window(x, 0, lax.add, (2,), (1,), "VALID"),
            _fixed(("f4:m",)),
            (0,),
        ),
        Case(
            "cumsum_weak",
            "lax.cumsum(bcast(x))",
            lambda lax, x: lax.cumsum(lax.broadcast_in_dim(x, (3,), ())),
            _fixed(("w:f",), ("w:i",)),
            (0,),
        ),
        Case(
            "sort",
            "lax.sort(x)",
            lambda lax, x: lax.sort(x),
            lambda m: (
                [(c,) for c in dtypes_of(m)] + [(f"{c}:s",) for c in floats_of(m)]
            ),
            (0,),
        ),
        Case(
            "sort_0",
            "lax.sort(x, dimension=0)",
            lambda lax, x: lax.sort(x, dimension=0),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "sort_two",
            "lax.sort((x, y), num_keys=1)",
            lambda lax, x, y: lax.sort((x, y), num_keys=1),
            lambda m: [(c, "f4:b") for c in dtypes_of(m)],
            (),
        ),
        Case(
            "sort_keys2",
            "lax.sort((x > 0, y), num_keys=2)",
            lambda lax, x, y: lax.sort(
                (lax.gt(x, lax.convert_element_type(0, x.dtype)), y), num_keys=2
            ),
            lambda m: [("f4", f"{c}:b") for c in dtypes_of(m)],
            (),
        ),
        # Contractions.
        Case(
            "dot_general",
            "lax.dot_general(x.reshape(2,3), y.reshape(3,2), (((1,),(0,)),((),())))",
            lambda lax, x, y: lax.dot_general(
                lax.reshape(x, (2, 3)), lax.reshape(y, (3, 2)), (((1,), (0,)), ((), ()))
            ),
            _pairs,
            (0, 1),
        ),
        Case(
            "dot_general_batch",
            "lax.dot_general(x.reshape(2,3), y.reshape(2,3), "
            "(((1,),(1,)),((0,),(0,))))",
            lambda lax, x, y: lax.dot_general(
                lax.reshape(x, (2, 3)),
                lax.reshape(y, (2, 3)),
                (((1,), (1,)), ((0,), (0,))),
            ),
            _per_dtype("", ":b"),
            (0, 1),
        ),
        *(
            Case(
                f"dot_general_pref_{pref}",
                f"lax.dot_general(x, y, ..., preferred_element_type={pref})",
                _dot_preferred(pref),
                _per_dtype("", ":b"),
                (0, 1),
            )
            for pref in ("i4", "f4", "bf", "c8")
        ),
        Case(
            "dot_general_scalar",
            "lax.dot_general(x, y, (((),()),((),())))",
            lambda lax, x, y: lax.dot_general(x, y, (((), ()), ((), ()))),
            _fixed(
                ("i1", "py:int"),
                ("f4", "py:float"),
                ("py:float", "py:float"),
                ("w:f", "w:f"),
            ),
            (0, 1),
        ),
        Case(
            "dot_general_bad",
            "lax.dot_general(x.reshape(2,3), y.reshape(2,3), (((1,),(0,)),((),())))",
            lambda lax, x, y: lax.dot_general(
                lax.reshape(x, (2, 3)), lax.reshape(y, (2, 3)), (((1,), (0,)), ((), ()))
            ),
            _fixed(("f4", "f4:b")),
            (0, 1),
        ),
        # Gather and scatter.
        Case(
            "gather",
            "lax.gather(x, [[4],[0],[9],[-1]], element dn, (1,))",
            lambda lax, x: lax.gather(
                x, np.array([[4], [0], [9], [-1]], I32), _gdn(lax, **_ELEMENT_DN), (1,)
            ),
            _per_dtype(""),
            (0,),
        ),
        Case(
            "gather_fill",
            "... mode='fill'",
            lambda lax, x: lax.gather(
                x,
                np.array([[4], [0], [9], [-1]], I32),
                _gdn(lax, **_ELEMENT_DN),
                (1,),
                mode="fill",
            ),
            _per_dtype(""),
            (0,),
        ),
        Case(
            "gather_rows",
            "lax.gather(x, [[1],[0],[1]], row dn, (1, 3))",
            lambda lax, x: lax.gather(
                x, np.array([[1], [0], [1]], I32), _gdn(lax, **_ROW_DN), (1, 3)
            ),
            _per_dtype(":m"),
            (0,),
        ),
        Case(
            "gather_weak",
            "lax.gather(bcast(x), ...)",
            lambda lax, x: lax.gather(
                lax.broadcast_in_dim(x, (3,), ()),
                np.array([[1]], I32),
                _gdn(lax, **_ELEMENT_DN),
                (1,),
            ),
            _fixed(("w:f",), ("w:i",)),
            (0,),
        ),
        *(
            Case(
                f"{s}_{tag}",
                f"lax.{s}(x, [[1],[3],[1],[10]], y[:4], element dn, mode={mode})",
                _scatter_elements(s, mode),
                lambda m: [(c, f"{c}:b") for c in dtypes_of(m)] + [("f4", "i4:b")],
                (0, 2),
            )
            for s in (
                "scatter",
                "scatter_add",
                "scatter_mul",
                "scatter_min",
                "scatter_max",
            )
            for tag, mode in (("drop", None), ("clip", "clip"))
        ),
        Case(
            "scatter_rows",
            "lax.scatter_add(x, [[1]], y.reshape(1,3)... row dn)",
            lambda lax, x, y: lax.scatter_add(
                x,
                np.array([[1]], I32),
                lax.reshape(lax.slice(y, (0,), (3,)), (1, 3)),
                _sdn(lax, **_S_ROW_DN),
            ),
            lambda m: [(f"{c}:m", f"{c}:b") for c in dtypes_of(m)],
            (0, 2),
        ),
        Case(
            "scatter_weak",
            "lax.scatter(bcast(x), [[1]], bcast(y)...)",
            lambda lax, x, y: lax.scatter(
                lax.broadcast_in_dim(x, (3,), ()),
                np.array([[1]], I32),
                lax.broadcast_in_dim(y, (1,), ()),
                _sdn(lax, **_S_ELEMENT_DN),
            ),
            _fixed(("w:f", "w:f"), ("w:f", "f4")),
            (0, 2),
        ),
    ]
    return cases


CASES: dict[str, Case] = {case.name: case for case in _cases()}


# ------------------------------------------------------------------ encoding


def builtin_bases(exc: BaseException) -> list[str]:
    """Names of the built-in classes in the MRO of ``exc``, nearest first."""
    return [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"]


def _value(v: Any) -> Any:
    if isinstance(v, complex):
        return [v.real, v.imag]
    return v


def encode(result: Any) -> Any:
    if isinstance(result, BaseException):
        return f"!{builtin_bases(result)[0]}"
    if isinstance(result, list | tuple):
        return [encode(r) for r in result]
    dt = np.dtype(result.dtype)
    code = CODES.get(dt, f"?{dt.name}")
    weak = getattr(result, "weak_type", None)
    if weak is None:
        weak = bool(result.aval.weak_type)
    values = np.asarray(result)
    if dt.kind == "f" or dt in (np.dtype(ml_dtypes.bfloat16),):
        flat = [float(v) for v in values.astype(np.float64).ravel()]
    elif dt.kind == "c":
        flat = [complex(v) for v in values.astype(np.complex128).ravel()]
    elif dt.kind == "b":
        flat = [bool(v) for v in values.ravel()]
    else:
        flat = [int(v) for v in values.ravel()]
    return [
        f"w:{code}" if weak else code,
        list(values.shape),
        [_value(v) for v in flat],
    ]


def outcome(lax: Any, case: Case, operands: Sequence[Any]) -> Any:
    """The result of ``case`` on ``operands``, or the exception it raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return case.fn(lax, *operands)
        except Exception as exc:
            return exc


# ---------------------------------------------------------------------- main


def _alt_operands(
    jnp: Any, case: Case, combo: tuple[str, ...], operands: list[Any]
) -> list[Any] | None:
    """The operands with each Python scalar of the group converted to the
    dtype of the group's first array, when that dtype holds it (else None)."""
    from jax._src.lax import lax as lax_internal

    peers = [operands[i] for i in case.group if i < len(combo) and combo[i] not in PY]
    scalars = [
        i
        for i in case.group
        if i < len(combo) and combo[i] in PY and combo[i] != "py:bool"
    ]
    if not peers or not scalars:
        return None
    peer = np.dtype(peers[0].dtype)
    out = list(operands)
    for i in scalars:
        if np.dtype(jnp.result_type(jnp.zeros((), peer), operands[i])) != peer:
            return None
        out[i] = lax_internal._convert_element_type(operands[i], peer, weak_type=True)
    return out


def main() -> None:
    import jax
    import jax.numpy as jnp
    from jax import lax

    data: dict[str, Any] = {
        "description": (
            "Results of jax.lax functions (dtype, weak flag, shape, values), "
            "recorded by tests/golden/make_lax_golden.py"
        ),
        "versions": {
            "jax": jax.__version__,
            "numpy": np.__version__,
            "ml_dtypes": ml_dtypes.__version__,
            "python": platform.python_version(),
        },
        "cases": {name: case.expr for name, case in CASES.items()},
        "modes": {},
    }
    for mode, x64 in MODES.items():
        results: dict[str, Any] = {}
        with jax.enable_x64(x64), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, case in CASES.items():
                rows = []
                for combo in case.combos(mode):
                    operands = [make_operand(jnp, label) for label in combo]
                    got = outcome(lax, case, operands)
                    row: dict[str, Any] = {"args": list(combo), "jax": encode(got)}
                    if isinstance(got, Exception):
                        alt = _alt_operands(jnp, case, combo, operands)
                        if alt is not None:
                            row["alt"] = encode(outcome(lax, case, alt))
                    rows.append(row)
                results[name] = rows
        data["modes"][mode] = results
        count = sum(len(v) for v in results.values())
        print(f"{mode}: {len(results)} cases, {count} calls", file=sys.stderr)
    lines = ["{"]
    for key in ("description", "versions", "cases"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(data[key])},")
    lines.append('  "modes": {')
    for i, (mode, results) in enumerate(data["modes"].items()):
        lines.append(f"    {json.dumps(mode)}: {{")
        items = list(results.items())
        for j, (name, rows) in enumerate(items):
            comma = "," if j < len(items) - 1 else ""
            body = json.dumps(rows, separators=(",", ":"))
            lines.append(f"      {json.dumps(name)}: {body}{comma}")
        lines.append("    }" + ("," if i < len(data["modes"]) - 1 else ""))
    lines.append("  }")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
