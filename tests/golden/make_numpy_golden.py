"""Record the result dtypes and weak flags of jax.numpy functions.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_numpy_golden.py

It writes ``numpy_ops.json`` beside this file. ``tests/test_numpy_golden.py``
replays every recorded call on ``typelattice.numpy`` and compares.

The operand kinds, the op table and the result encoding live here so that the
recording and the replay build exactly the same calls. Importing this module
needs only NumPy and ml_dtypes (JAX is imported by ``main``).

Result encoding (one string per call):

- a dtype code (``typelattice.dtype_code``: ``b1 u1 … i8 bf f2 f4 f8 c8
  c16``), prefixed by ``w:`` when the result has ``weak_type=True``, e.g.
  ``i1``, ``w:f4``, ``w:b1``;
- a tuple result (``divmod``): the encodings of its items joined by ``,``;
- an exception: ``!`` and the name of the nearest built-in class in the
  exception's MRO (JAX's ``TypePromotionError`` is recorded as
  ``!ValueError``). The replay accepts that class or any subclass.
"""

from __future__ import annotations

import json
import platform
import sys
import warnings
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from itertools import product
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

OUT = Path(__file__).with_name("numpy_ops.json")

ENCODING = (
    "modes[m].results[op] lists one string per call, in row-major order of "
    "the applicable operands of mode m (every operand in modes[m].operands, "
    "or only the array ones - not py:* - when ops[op].arrays_only); binary "
    "ops: for a in operands: for b in operands: op(a, b). A string is the "
    "typelattice dtype code of the result, prefixed by 'w:' when "
    "weak_type=True; tuple results have their items' strings joined by ','; "
    "an exception is '!' plus the nearest built-in class in its MRO (a "
    "subclass is acceptable)."
)

OPERAND_ENCODING = (
    "Strong arrays: the dtype code (asarray(np.ones(2, dtype))); weak arrays: "
    "w:i w:f w:c (asarray(1), asarray(1.0), asarray(1+0j)); Python scalars: "
    "py:int py:float py:complex py:bool (1, 1.0, 1+0j, True)."
)

# --------------------------------------------------------------------- modes

# mode name -> (enable_x64, dtype_promotion)
MODES: dict[str, tuple[bool, str]] = {
    "x32": (False, "standard"),
    "x64": (True, "standard"),
    "strict_x32": (False, "strict"),
}

STRICT_OPS = (
    "add multiply subtract true_divide maximum where concatenate equal matmul"
).split()

# ------------------------------------------------------------------ operands

STRONG_X32 = "b1 u1 u2 u4 i1 i2 i4 bf f2 f4 c8".split()
STRONG_X64 = "b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c8 c16".split()
WEAK_ARRAYS = ["w:i", "w:f", "w:c"]
PY_SCALARS = ["py:int", "py:float", "py:complex", "py:bool"]

_NP_DTYPES: dict[str, Any] = {
    "b1": np.bool_,
    "u1": np.uint8,
    "u2": np.uint16,
    "u4": np.uint32,
    "u8": np.uint64,
    "i1": np.int8,
    "i2": np.int16,
    "i4": np.int32,
    "i8": np.int64,
    "bf": ml_dtypes.bfloat16,
    "f2": np.float16,
    "f4": np.float32,
    "f8": np.float64,
    "c8": np.complex64,
    "c16": np.complex128,
}
_CODES = {np.dtype(t): code for code, t in _NP_DTYPES.items()}
_WEAK_VALUES: dict[str, Any] = {"w:i": 1, "w:f": 1.0, "w:c": 1 + 0j}
_PY_VALUES: dict[str, Any] = {
    "py:int": 1,
    "py:float": 1.0,
    "py:complex": 1 + 0j,
    "py:bool": True,
}


def operand_labels(mode: str) -> list[str]:
    x64, _ = MODES[mode]
    return [*(STRONG_X64 if x64 else STRONG_X32), *WEAK_ARRAYS, *PY_SCALARS]


def make_operand(xnp: Any, label: str) -> Any:
    """The operand ``label``, built with the namespace ``xnp`` (call it inside
    the mode's configuration: weak arrays take the mode's default width)."""
    if label in _PY_VALUES:
        return _PY_VALUES[label]
    if label in _WEAK_VALUES:
        return xnp.asarray(_WEAK_VALUES[label])
    return xnp.asarray(np.ones(2, dtype=_NP_DTYPES[label]))


# ------------------------------------------------------------------------ ops


class Op:
    """One recorded function: ``fn(xnp, *operands)``."""

    def __init__(
        self,
        name: str,
        arity: int,
        expr: str,
        fn: Callable[..., Any],
        arrays_only: bool = False,
    ) -> None:
        self.name = name
        self.arity = arity
        self.expr = expr
        self.fn = fn
        self.arrays_only = arrays_only

    def labels(self, mode: str) -> list[str]:
        labels = operand_labels(mode)
        if self.arrays_only:
            labels = [x for x in labels if not x.startswith("py:")]
        return labels

    def combinations(self, mode: str) -> list[tuple[str, ...]]:
        return list(product(self.labels(mode), repeat=self.arity))


def _plain(name: str, arity: int) -> Op:
    args = "x" if arity == 1 else "a, b"

    def fn(xnp: Any, *operands: Any) -> Any:
        return getattr(xnp, name)(*operands)

    return Op(name, arity, f"xnp.{name}({args})", fn)


UNARY_NAMES = """
negative positive abs absolute sign reciprocal square sqrt cbrt exp exp2 expm1
log log2 log10 log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh
arccosh arctanh floor ceil trunc rint round logical_not invert bitwise_not
isnan isinf isfinite real imag conj conjugate angle sum prod mean var std max
min argmax argmin cumsum cumprod any all sort argsort ravel transpose flip
squeeze atleast_1d zeros_like ones_like empty_like
""".split()

BINARY_NAMES = """
add subtract multiply true_divide divide floor_divide remainder mod fmod divmod
power float_power logaddexp logaddexp2 arctan2 hypot equal not_equal less
less_equal greater greater_equal logical_and logical_or logical_xor
bitwise_and bitwise_or bitwise_xor left_shift right_shift maximum minimum fmax
fmin copysign nextafter heaviside dot vdot inner outer matmul
""".split()


def _where(xnp: Any, a: Any, b: Any) -> Any:
    return xnp.where(xnp.asarray(np.array([True, False])), a, b)


OPS: dict[str, Op] = {
    op.name: op
    for op in [
        *(_plain(name, 1) for name in UNARY_NAMES),
        Op(
            "full_like_2",
            1,
            "xnp.full_like(x, 2)",
            lambda xnp, x: xnp.full_like(x, 2),
        ),
        Op(
            "reshape_flat",
            1,
            "xnp.reshape(x, (-1,))",
            lambda xnp, x: xnp.reshape(x, (-1,)),
        ),
        Op(
            "expand_dims_0",
            1,
            "xnp.expand_dims(x, 0)",
            lambda xnp, x: xnp.expand_dims(x, 0),
        ),
        Op("getitem_ellipsis", 1, "x[...]", lambda xnp, x: x[...], arrays_only=True),
        Op(
            "sum_dtype_int8",
            1,
            "xnp.sum(x, dtype='int8')",
            lambda xnp, x: xnp.sum(x, dtype="int8"),
        ),
        Op(
            "mean_dtype_float16",
            1,
            "xnp.mean(x, dtype='float16')",
            lambda xnp, x: xnp.mean(x, dtype="float16"),
        ),
        *(_plain(name, 2) for name in BINARY_NAMES),
        Op(
            "where",
            2,
            "xnp.where(xnp.asarray(np.array([True, False])), a, b)",
            _where,
        ),
        Op("clip_min", 2, "xnp.clip(a, min=b)", lambda xnp, a, b: xnp.clip(a, min=b)),
        Op(
            "concatenate",
            2,
            "xnp.concatenate([a, b])",
            lambda xnp, a, b: xnp.concatenate([a, b]),
        ),
        Op("stack", 2, "xnp.stack([a, b])", lambda xnp, a, b: xnp.stack([a, b])),
    ]
}


def ops_of_mode(mode: str) -> list[str]:
    if MODES[mode][1] == "strict":
        return list(STRICT_OPS)
    return list(OPS)


# ------------------------------------------------------------------ encoding


def outcome(xnp: Any, op: Op, operands: Sequence[Any]) -> Any:
    """The result of ``op`` on ``operands``, or the exception it raised.
    Warnings are silenced: only dtypes matter here, not log(0)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return op.fn(xnp, *operands)
        except Exception as exc:
            return exc


def builtin_bases(exc: BaseException) -> list[str]:
    """Names of the built-in classes in the MRO of ``exc``, nearest first."""
    return [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"]


def encode(result: Any) -> str:
    if isinstance(result, BaseException):
        return f"!{builtin_bases(result)[0]}"
    if isinstance(result, tuple):
        return ",".join(encode(r) for r in result)
    dtype = getattr(result, "dtype", None)
    if dtype is None:
        return f"?{type(result).__name__}"
    code = _CODES.get(np.dtype(dtype), f"?{np.dtype(dtype).name}")
    weak = getattr(result, "weak_type", None)
    if weak is None:
        return f"?{code} ({type(result).__name__} without weak_type)"
    return f"w:{code}" if weak else code


def run_mode(
    xnp: Any,
    scope: Callable[[str], AbstractContextManager[Any]],
    mode: str,
    op: Op,
) -> list[tuple[tuple[str, ...], Any]]:
    """(operand labels, outcome) of every call of ``op`` in ``mode``, where
    ``scope(mode)`` configures ``xnp`` for the mode."""
    out = []
    with scope(mode), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = {label: make_operand(xnp, label) for label in op.labels(mode)}
        for combo in op.combinations(mode):
            out.append((combo, outcome(xnp, op, [values[x] for x in combo])))
    return out


# ---------------------------------------------------------------------- main


def _dump(data: dict[str, Any]) -> str:
    """JSON with one line per op: compact, and diffs stay readable."""
    lines = ["{"]
    for key, value in data.items():
        if key == "ops":
            lines.append('  "ops": {')
            for i, (name, spec) in enumerate(value.items()):
                comma = "," if i < len(value) - 1 else ""
                lines.append(f"    {json.dumps(name)}: {json.dumps(spec)}{comma}")
            lines.append("  },")
        elif key != "modes":
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)},")
    lines.append('  "modes": {')
    modes = list(data["modes"].items())
    for i, (mode, body) in enumerate(modes):
        lines.append(f"    {json.dumps(mode)}: {{")
        lines.append(f'      "operands": {json.dumps(body["operands"])},')
        lines.append('      "results": {')
        results = list(body["results"].items())
        for j, (name, values) in enumerate(results):
            comma = "," if j < len(results) - 1 else ""
            compact = json.dumps(values, separators=(",", ":"))
            lines.append(f"        {json.dumps(name)}: {compact}{comma}")
        lines.append("      }")
        lines.append("    }" + ("," if i < len(modes) - 1 else ""))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    import jax
    import jax.numpy as jnp

    def scope(mode: str) -> AbstractContextManager[Any]:
        x64, promotion = MODES[mode]
        stack = ExitStack()
        stack.enter_context(jax.enable_x64(x64))
        stack.enter_context(jax.numpy_dtype_promotion(promotion))
        return stack

    needed = [*UNARY_NAMES, *BINARY_NAMES, "full_like", "reshape", "expand_dims"]
    missing = [name for name in needed if not hasattr(jnp, name)]
    if missing:
        raise SystemExit(f"jax.numpy lacks {missing}")

    data: dict[str, Any] = {
        "description": (
            "Result dtype and weak_type of jax.numpy functions, recorded by "
            "tests/golden/make_numpy_golden.py"
        ),
        "encoding": ENCODING,
        "operand_encoding": OPERAND_ENCODING,
        "versions": {
            "jax": jax.__version__,
            "numpy": np.__version__,
            "ml_dtypes": ml_dtypes.__version__,
            "python": platform.python_version(),
        },
        "mode_config": {
            m: {"enable_x64": x64, "dtype_promotion": p}
            for m, (x64, p) in MODES.items()
        },
        "ops": {
            op.name: (
                {"arity": op.arity, "expr": op.expr}
                | ({"arrays_only": True} if op.arrays_only else {})
            )
            for op in OPS.values()
        },
        "modes": {},
    }
    for mode in MODES:
        results = {}
        for name in ops_of_mode(mode):
            calls = run_mode(jnp, scope, mode, OPS[name])
            results[name] = [encode(r) for _, r in calls]
        data["modes"][mode] = {"operands": operand_labels(mode), "results": results}
        count = sum(len(v) for v in results.values())
        print(f"{mode}: {len(results)} ops, {count} calls", file=sys.stderr)
    OUT.write_text(_dump(data))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
