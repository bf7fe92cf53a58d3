"""Record window reductions, pooling, ``pad`` and ``take_along_axis`` from
JAX and Flax: values, dtypes, weak flags and gradients.

Run with a Python that has JAX and Flax installed, from anywhere::

    python tests/golden/make_pool_pad_golden.py

It writes ``pool_pad.json`` beside this file; ``tests/test_pool_pad.py``
replays every case with typelattice (eagerly, under ``jit`` and under
``grad``) and compares. The cases, the operands and the encoding live here
so that both sides build exactly the same calls; importing this module
needs only NumPy and ml_dtypes.

A case is ``fn(lib, *operands)`` where ``lib`` has ``lax``, ``jnp`` and
``nn`` (``jax.lax``, ``jax.numpy`` and ``flax.linen``, or typelattice's),
and operand specifications ``(shape, code)``: ``f4``, ``bf``, ``f2``
floats drawn from a normal distribution, ``i4`` integers in [-9, 9],
``w:f4`` a weak float32, or ``idx:<n>`` int32 indices in [-n, n). With
``grad``, the gradient of ``sum(fn(x) * c)`` with respect to the first
operand is recorded too (``c`` drawn like a float operand, of the output's
shape). An encoded result is ``[code, shape, values]`` (``w:`` prefixed
when weak) or ``"!"`` plus the built-in class of an exception raised.
"""

from __future__ import annotations

import json
import math
import platform
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

OUT = Path(__file__).with_name("pool_pad.json")

NP_DTYPES: dict[str, Any] = {
    "b1": np.bool_,
    "i4": np.int32,
    "bf": ml_dtypes.bfloat16,
    "f2": np.float16,
    "f4": np.float32,
}
CODES = {np.dtype(t): code for code, t in NP_DTYPES.items()}


class Case(NamedTuple):
    name: str
    fn: Callable[..., Any]
    operands: tuple[tuple[tuple[int, ...], str], ...]
    grad: bool = False


CASES: dict[str, Case] = {}


def case(
    name: str,
    fn: Callable[..., Any],
    *operands: tuple[tuple[int, ...], str],
    grad: bool = False,
) -> None:
    assert name not in CASES, name
    CASES[name] = Case(name, fn, operands, grad)


def _rng(*keys: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32("/".join(map(str, keys)).encode()))


def operand_values(c: Case) -> list[tuple[np.ndarray[Any, Any], bool]]:
    """The operands of ``c`` as NumPy values and weak flags."""
    out = []
    for pos, (shape, code) in enumerate(c.operands):
        rng = _rng(c.name, pos)
        weak = code.startswith("w:")
        code = code.removeprefix("w:")
        if code.startswith("idx:"):
            n = int(code[4:])
            out.append((rng.integers(-n, n, shape).astype(np.int32), False))
        elif code == "i4":
            out.append((rng.integers(-9, 10, shape).astype(np.int32), weak))
        else:
            out.append((rng.standard_normal(shape).astype(NP_DTYPES[code]), weak))
    return out


def cotangent(c: Case, shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
    return _rng(c.name, "ct").standard_normal(shape).astype(dtype)


# -- the cases ----------------------------------------------------------------

_X = ((2, 5, 6, 3), "f4")
_XB = ((2, 5, 6, 3), "bf")

for _pool in ("max_pool", "min_pool", "avg_pool"):
    for _tag, _args in (
        ("", ((2, 2),)),
        ("_strided_same", ((3, 2), (2, 2), "SAME")),
        ("_pairs", ((2, 3), (1, 2), ((1, 0), (2, 1)))),
    ):
        case(
            f"{_pool}{_tag}",
            lambda lib, x, p=_pool, a=_args: getattr(lib.nn, p)(x, *a),
            _X,
            grad=True,
        )
        case(
            f"{_pool}{_tag}_bf16",
            lambda lib, x, p=_pool, a=_args: getattr(lib.nn, p)(x, *a),
            _XB,
        )
for _tag, _shape, _code in (
    ("", _X[0], "f4"),
    ("_bf16", _XB[0], "bf"),
    ("_unbatched", (5, 6, 3), "f4"),
    ("_two_batch_axes", (2, 2, 5, 3), "f4"),
):
    case(
        f"avg_pool_exclude_pad{_tag}",
        lambda lib, x: lib.nn.avg_pool(
            x, (3, 2), (2, 1), "SAME", count_include_pad=False
        ),
        (_shape, _code),
        grad=_code == "f4",
    )
case(
    "max_pool_1d",
    lambda lib, x: lib.nn.max_pool(x, (3,), (2,), "SAME"),
    ((2, 7, 2), "f4"),
    grad=True,
)
case(
    "max_pool_unbatched",
    lambda lib, x: lib.nn.max_pool(x, (2, 2)),
    ((4, 5, 2), "f4"),
    grad=True,
)
case(
    "avg_pool_f16",
    lambda lib, x: lib.nn.avg_pool(x, (2, 2), (2, 2)),
    ((1, 4, 4, 2), "f2"),
)
case("max_pool_int", lambda lib, x: lib.nn.max_pool(x, (2,)), ((1, 5, 1), "i4"))
case("avg_pool_weak", lambda lib, x: lib.nn.avg_pool(x, (2,)), ((1, 5, 1), "w:f4"))
case(
    "pool_sum",
    lambda lib, x: lib.nn.pool(x, 0.0, lib.lax.add, (2, 2), (1, 1), "SAME"),
    _X,
    grad=True,
)

# lax.reduce_window beyond pooling: dilations, and gradients.
case(
    "reduce_window_sum_dilated",
    lambda lib, x: lib.lax.reduce_window(
        x, 0.0, lib.lax.add, (2, 2), (2, 1), [(1, 2), (0, 1)], (2, 1), (1, 2)
    ),
    ((4, 5), "f4"),
    grad=True,
)
case(
    "reduce_window_max_base_dilated",
    lambda lib, x: lib.lax.reduce_window(
        x, -np.inf, lib.lax.max, (2, 3), (1, 2), "SAME", (2, 2)
    ),
    ((4, 5), "f4"),
    grad=True,
)
case(
    "reduce_window_min_padded",
    lambda lib, x: lib.lax.reduce_window(
        x, np.inf, lib.lax.min, (3, 3), (2, 2), [(2, 2), (1, 0)]
    ),
    ((4, 5), "f4"),
    grad=True,
)
case(
    "reduce_window_int_sum",
    lambda lib, x: lib.lax.reduce_window(x, 0, lib.lax.add, (3,), (1,), "SAME"),
    ((6,), "i4"),
)

# jnp.pad, every mode.
_PADS: list[tuple[str, Any, dict[str, Any]]] = [
    ("constant", ((1, 2), (3, 0)), {}),
    ("constant", 2, {"constant_values": 1.5}),
    ("constant", ((1, 2), (2, 1)), {"constant_values": ((1.0, 2.0), (-3.0, 4.0))}),
    ("edge", ((2, 1), (0, 3)), {}),
    ("wrap", ((4, 1), (2, 7)), {}),
    ("reflect", ((2, 5), (1, 4)), {}),
    ("reflect", ((2, 5), (1, 4)), {"reflect_type": "odd"}),
    ("symmetric", ((3, 4), (2, 6)), {}),
    ("symmetric", ((3, 4), (2, 6)), {"reflect_type": "odd"}),
    ("linear_ramp", ((2, 3), (1, 2)), {}),
    ("linear_ramp", ((2, 3), (1, 2)), {"end_values": ((1.0, -2.0), (0.5, 3.0))}),
    ("maximum", ((1, 2), (2, 1)), {}),
    ("minimum", ((1, 2), (2, 1)), {"stat_length": 2}),
    ("mean", ((1, 2), (2, 1)), {}),
    ("mean", ((1, 2), (2, 1)), {"stat_length": ((1, 2), (2, 3))}),
    ("median", ((1, 2), (2, 1)), {}),
    ("median", ((2, 0), (0, 2)), {"stat_length": 2}),
    ("empty", ((1, 1), (0, 2)), {}),
]
for _i, (_mode, _width, _kw) in enumerate(_PADS):
    for _code in ("f4", "bf", "i4", "w:f4"):
        if _code == "i4" and _kw.get("constant_values") is not None:
            continue  # (float constants do not fit an integer array)
        if _code == "i4" and "end_values" in _kw:
            continue
        case(
            f"pad_{_i}_{_mode}_{_code}",
            lambda lib, x, m=_mode, w=_width, k=_kw: lib.jnp.pad(x, w, m, **k),
            ((3, 4), _code),
            grad=_code == "f4",
        )
case(
    "pad_1d_reflect_long",
    lambda lib, x: lib.jnp.pad(x, (7, 9), "reflect"),
    ((3,), "f4"),
    grad=True,
)
case(
    "pad_1d_wrap_long",
    lambda lib, x: lib.jnp.pad(x, (7, 9), "wrap"),
    ((3,), "f4"),
    grad=True,
)
case("pad_length1_reflect", lambda lib, x: lib.jnp.pad(x, 2, "reflect"), ((1, 2), "f4"))
case("pad_3d_edge", lambda lib, x: lib.jnp.pad(x, 1, "edge"), ((2, 2, 2), "i4"))

# jnp.take_along_axis (with a mode: typelattice's default raises).
for _mode in ("fill", "clip"):
    case(
        f"take_along_axis_{_mode}",
        lambda lib, x, i, m=_mode: lib.jnp.take_along_axis(x, i, 1, mode=m),
        ((3, 4), "f4"),
        ((3, 6), "idx:6"),
        grad=True,
    )
case(
    "take_along_axis_in_bounds",
    lambda lib, x, i: lib.jnp.take_along_axis(x, i, 0, mode="fill"),
    ((4, 3), "f4"),
    ((2, 3), "idx:4"),
    grad=True,
)
case(
    "take_along_axis_broadcast",
    lambda lib, x, i: lib.jnp.take_along_axis(x, i, -1, mode="clip"),
    ((2, 1, 5), "f4"),
    ((1, 3, 4), "idx:5"),
    grad=True,
)
case(
    "take_along_axis_none",
    lambda lib, x, i: lib.jnp.take_along_axis(x, i, None, mode="fill", fill_value=-1),
    ((2, 3), "i4"),
    ((5,), "idx:8"),
)
case(
    "take_along_axis_weak",
    lambda lib, x, i: lib.jnp.take_along_axis(x, i, 0, mode="clip"),
    ((4,), "w:f4"),
    ((3,), "idx:5"),
)


# -- encoding -----------------------------------------------------------------


def encode(result: Any, weak: bool | None = None) -> Any:
    if isinstance(result, BaseException):
        names = [c.__name__ for c in type(result).__mro__ if c.__module__ == "builtins"]
        return f"!{names[0]}"
    dt = np.dtype(result.dtype)
    if weak is None:
        weak = getattr(result, "weak_type", None)
        if weak is None:
            weak = bool(result.aval.weak_type)
    values = np.asarray(result)
    code = CODES.get(dt, f"?{dt.name}")
    if dt.kind in "iub":
        flat: list[Any] = [int(v) for v in values.ravel()]
    else:
        flat = [
            v if math.isfinite(v) else str(v)
            for v in (float(u) for u in values.astype(np.float64).ravel())
        ]
    return [f"w:{code}" if weak else code, list(values.shape), flat]


# ---------------------------------------------------------------------- main


def main() -> None:
    from types import SimpleNamespace

    import flax
    import jax
    import jax.numpy as jnp
    from flax import linen
    from flax.linen import pooling
    from jax._src.lax.lax import _convert_element_type

    # (Flax keeps min_pool in flax.linen.pooling, not in flax.linen.)
    nn = SimpleNamespace(**vars(linen), min_pool=pooling.min_pool)
    lib = SimpleNamespace(lax=jax.lax, jnp=jnp, nn=nn)
    rows: dict[str, Any] = {}
    for name, c in CASES.items():
        ops = []
        for value, weak in operand_values(c):
            a = jnp.asarray(value)
            if weak:
                a = _convert_element_type(a, a.dtype, weak_type=True)
            ops.append(a)
        try:
            out = c.fn(lib, *ops)
        except Exception as exc:
            rows[name] = {"out": encode(exc)}
            continue
        row: dict[str, Any] = {"out": encode(out)}
        if c.grad:
            ct = jnp.asarray(cotangent(c, out.shape, out.dtype))

            def loss(x: Any, c: Case = c, ops: list[Any] = ops, ct: Any = ct) -> Any:
                return jnp.sum(c.fn(lib, x, *ops[1:]) * ct)

            try:
                row["grad"] = encode(jax.grad(loss)(ops[0]))
            except Exception as exc:
                row["grad"] = encode(exc)
        rows[name] = row
    versions = {
        "jax": jax.__version__,
        "flax": flax.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }
    lines = ["{"]
    lines.append(f'  "versions": {json.dumps(versions)},')
    lines.append('  "cases": {')
    items = list(rows.items())
    for j, (name, body) in enumerate(items):
        comma = "," if j < len(items) - 1 else ""
        lines.append(
            f"    {json.dumps(name)}: {json.dumps(body, separators=(',', ':'))}{comma}"
        )
    lines.append("  }")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{len(items)} cases written to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
