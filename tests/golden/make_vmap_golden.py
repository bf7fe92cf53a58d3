"""Record ``jax.vmap`` of jax.lax functions: dtype, weak flag, shape, values.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_vmap_golden.py

It writes ``vmap.json`` beside this file. ``tests/test_vmap_golden.py``
replays every recorded call with ``typelattice.vmap`` of ``typelattice.lax``
and compares.

The functions and operands are those of ``make_lax_golden.py`` (its cases,
labels and encoding). For the first combinations of operand types of each
case whose call JAX computes (``PER_CASE``), each array operand is batched
as two examples: its values, and its values reversed (``np.flip``); a weak
operand's batch is weak. Python scalars are closed over, never batched.
Three ways to batch (``VARIANTS``):

- ``front``: every array operand batched along a new first axis;
- ``last``: every array operand batched along a new last axis
  (``in_axes=-1``);
- ``first``: only the first array operand batched (first axis), the others
  the same for every example (``in_axes=None``).

A row is ``{"args": labels, "variant": name, "jax": encoded result}``.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np

OUT = Path(__file__).with_name("vmap.json")
PER_CASE = {"x32": 3, "x64": 1}
VARIANTS = ("front", "last", "first")


def _lax_recorder() -> ModuleType:
    """``make_lax_golden.py`` (the cases, operands and encoding)."""
    name = "_typelattice_recorder_make_lax_golden"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, Path(__file__).with_name("make_lax_golden.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


lax_rec = _lax_recorder()
CASES = lax_rec.CASES
MODES = lax_rec.MODES
encode = lax_rec.encode


def is_array(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


def batched(x: Any, axis: int) -> np.ndarray[Any, Any]:
    """Two examples of the array operand ``x`` (its values, then reversed)
    stacked along ``axis`` (-1: last)."""
    v = np.asarray(x)
    return np.stack([v, np.flip(v)], axis=axis)


def in_axes(variant: str, n: int) -> Any:
    """The in_axes of ``n`` array operands for ``variant``."""
    if variant == "front":
        return 0
    if variant == "last":
        return -1
    return (0,) + (None,) * (n - 1)


def call(
    vmap: Callable[..., Any],
    lax: Any,
    case: Any,
    operands: Sequence[Any],
    variant: str,
    make: Callable[[np.ndarray[Any, Any], bool], Any],
) -> Any:
    """``vmap`` of ``case`` over ``operands`` batched as ``variant`` says;
    ``make(values, weak)`` builds an array of the library. Returns the
    result, or None when no operand is an array."""
    positions = [i for i, x in enumerate(operands) if is_array(x)]
    if not positions:
        return None
    arrays = []
    for k, i in enumerate(positions):
        x = operands[i]
        weak = bool(getattr(x, "weak_type", False))
        if variant == "first" and k > 0:
            arrays.append(x)
            continue
        axis = -1 if variant == "last" else 0
        arrays.append(make(batched(x, axis), weak))

    def f(*given: Any) -> Any:
        args = list(operands)
        for i, a in zip(positions, given, strict=True):
            args[i] = a
        return case.fn(lax, *args)

    return vmap(f, in_axes=in_axes(variant, len(positions)))(*arrays)


def outcome(fn: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn()
        except Exception as exc:
            return exc


def main() -> None:
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax._src.lax import lax as lax_internal

    def make(values: np.ndarray[Any, Any], weak: bool) -> Any:
        x = jnp.asarray(values)
        if weak:
            x = lax_internal._convert_element_type(x, np.dtype(x.dtype), weak_type=True)
        return x

    data: dict[str, Any] = {
        "description": (
            "jax.vmap of jax.lax functions (dtype, weak flag, shape, values), "
            "recorded by tests/golden/make_vmap_golden.py"
        ),
        "versions": {
            "jax": jax.__version__,
            "numpy": np.__version__,
            "ml_dtypes": ml_dtypes.__version__,
            "python": platform.python_version(),
        },
        "modes": {},
    }
    for mode, x64 in MODES.items():
        results: dict[str, Any] = {}
        with jax.enable_x64(x64):
            for name, case in CASES.items():
                rows = []
                taken = 0
                for combo in case.combos(mode):
                    operands = [lax_rec.make_operand(jnp, label) for label in combo]
                    if not any(is_array(x) for x in operands):
                        continue
                    plain = outcome(lambda: case.fn(lax, *operands))  # noqa: B023
                    if isinstance(plain, Exception):
                        continue
                    for variant in VARIANTS:
                        got = outcome(
                            lambda: call(jax.vmap, lax, case, operands, variant, make)  # noqa: B023
                        )
                        if isinstance(got, Exception):
                            continue
                        rows.append(
                            {
                                "args": list(combo),
                                "variant": variant,
                                "jax": encode(got),
                            }
                        )
                    taken += 1
                    if taken == PER_CASE[mode]:
                        break
                results[name] = rows
        data["modes"][mode] = results
        count = sum(len(v) for v in results.values())
        print(f"{mode}: {len(results)} cases, {count} calls", file=sys.stderr)
    lines = ["{"]
    for key in ("description", "versions"):
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
