"""Record JAX's derivatives of ``jax.lax.linalg`` functions: the JVPs of
``qr`` and ``triangular_solve`` on fixed operands.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_linalg_golden.py

It writes ``linalg.json`` beside this file; ``tests/test_lax_linalg.py``
computes the same JVPs with ``typelattice`` and compares (to a few ulps:
the decompositions are LAPACK's on both sides, not the same calls).
Importing this module needs only NumPy (JAX is imported by ``main``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).parent

#: name -> (function of (lax, operand), shape, dtype); the operand and its
#: tangent are drawn by ``operands``.
CASES: dict[str, tuple[Callable[[Any, Any], Any], tuple[int, ...], str]] = {
    "qr_reduced": (
        lambda lax, x: lax.linalg.qr(x, full_matrices=False),
        (4, 3),
        "float64",
    ),
    "qr_square": (lambda lax, x: lax.linalg.qr(x), (3, 3), "float64"),
    "qr_batched": (
        lambda lax, x: lax.linalg.qr(x, full_matrices=False),
        (2, 5, 3),
        "float64",
    ),
    "qr_complex": (
        lambda lax, x: lax.linalg.qr(x, full_matrices=False),
        (4, 2),
        "complex128",
    ),
    "triangular_solve_right": (
        lambda lax, x: lax.linalg.triangular_solve(x[..., :3, :3] + 3 * np.eye(3), x),
        (3, 3),
        "float64",
    ),
    "triangular_solve_left_lower_transposed": (
        lambda lax, x: lax.linalg.triangular_solve(
            x[..., :3] + 3 * np.eye(3),
            x,
            left_side=True,
            lower=True,
            transpose_a=True,
        ),
        (3, 4),
        "float64",
    ),
}


def operands(name: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The operand and its tangent of a case (fixed draws)."""
    _, shape, dtype = CASES[name]
    rng = np.random.default_rng(sorted(CASES).index(name))
    x, t = rng.standard_normal(shape), rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
        t = t + 1j * rng.standard_normal(shape)
    return x.astype(dtype), t.astype(dtype)


def encode(values: Any) -> Any:
    array = np.asarray(values)
    if np.iscomplexobj(array):
        return [array.real.tolist(), array.imag.tolist()]
    return array.tolist()


def main() -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    from jax import lax

    out: dict[str, Any] = {"jax": jax.__version__, "cases": {}}
    for name, (fn, _, _) in CASES.items():
        x, t = operands(name)
        primal, tangent = jax.jvp(lambda x, fn=fn: fn(lax, x), (x,), (t,))
        flat = primal if isinstance(primal, tuple) else (primal,)
        flat_t = tangent if isinstance(tangent, tuple) else (tangent,)
        out["cases"][name] = {
            "primal": [encode(p) for p in flat],
            "tangent": [encode(d) for d in flat_t],
        }
    (HERE / "linalg.json").write_text(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
