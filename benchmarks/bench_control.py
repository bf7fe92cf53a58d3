"""Benchmark ``typelattice.lax.scan`` under ``jit`` against a Python loop of
eager calls and against ``jax.jit`` of ``jax.lax.scan``.

What it measures, in one run: 1000 steps of a small recurrent cell,
``h = tanh(W @ h + U @ x + b)`` with a hidden state of 32 float32 values
and inputs of 16, returning the last state and every step's state.

1. jit(scan): ``typelattice.jit`` of ``lax.scan`` over the cell (the body
   traced once; each step runs its compiled program).
2. eager loop: the same cell called eagerly in a Python loop over the
   1000 inputs, the states stacked at the end. Target: jit(scan) at least
   5x faster.
3. jax.jit(jax.lax.scan), when ``import jax`` succeeds
   (``block_until_ready()`` on every call). Target: jit(scan) at most 1.5x
   its time.

The results are checked first (the three agree within float32 rounding);
a wrong result exits with status 1 before anything is timed. It is a
report, not a test: a missed target does not change the exit status.

Run it with the interpreter that has typelattice (and, optionally, JAX)::

    python benchmarks/bench_control.py
"""

from __future__ import annotations

import platform
import sys
import timeit
from typing import Any

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from _timing import best_seconds
from typelattice import lax

STEPS, HIDDEN, INPUT = 1000, 32, 16


def cell(xnp: Any, w: Any, u: Any, b: Any, h: Any, x: Any) -> Any:
    """One step, written once for any jax.numpy-like module."""
    return xnp.tanh(w @ h + u @ x + b)


def load_jax() -> Any:
    try:
        import jax
    except ImportError:
        return None
    return jax


def main() -> int:
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((HIDDEN, HIDDEN)) * 0.2).astype(np.float32)
    u = (rng.standard_normal((HIDDEN, INPUT)) * 0.2).astype(np.float32)
    b = (rng.standard_normal(HIDDEN) * 0.1).astype(np.float32)
    h0 = np.zeros(HIDDEN, np.float32)
    xs = rng.standard_normal((STEPS, INPUT)).astype(np.float32)
    tw, tu, tb, th0, txs = (tnp.asarray(v) for v in (w, u, b, h0, xs))
    rows = [tnp.asarray(x) for x in xs]

    def scanned(w: Any, u: Any, b: Any, h0: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> Any:
            h = cell(tnp, w, u, b, h, x)
            return h, h

        return lax.scan(step, h0, xs)

    jitted = tl.jit(scanned)

    def eager() -> Any:
        h, hs = th0, []
        for x in rows:
            h = cell(tnp, tw, tu, tb, h, x)
            hs.append(h)
        return h, tnp.stack(hs)

    jax = load_jax()
    print(
        f"Python {platform.python_version()}, NumPy {np.__version__}, "
        + (f"JAX {jax.__version__}" if jax is not None else "no JAX")
    )
    got_h, got_hs = jitted(tw, tu, tb, th0, txs)
    want_h, want_hs = eager()
    if not np.allclose(np.asarray(got_hs), np.asarray(want_hs), atol=1e-5):
        print("jit(scan) and the eager loop disagree", file=sys.stderr)
        return 1
    namespace: dict[str, Any] = dict(
        jitted=jitted, eager=eager, tw=tw, tu=tu, tb=tb, th0=th0, txs=txs
    )
    timers = {
        "jit(scan)": timeit.Timer("jitted(tw, tu, tb, th0, txs)", globals=namespace),
        "eager loop": timeit.Timer("eager()", globals=namespace),
    }
    if jax is not None:
        jnp = jax.numpy

        def jax_scanned(w: Any, u: Any, b: Any, h0: Any, xs: Any) -> Any:
            def step(h: Any, x: Any) -> Any:
                h = cell(jnp, w, u, b, h, x)
                return h, h

            return jax.lax.scan(step, h0, xs)

        jax_fn = jax.jit(jax_scanned)
        jargs = [jnp.asarray(v) for v in (w, u, b, h0, xs)]
        _, jhs = jax_fn(*jargs)
        if not np.allclose(np.asarray(jhs), np.asarray(got_hs), atol=1e-4):
            print("jit(scan) and jax.jit(jax.lax.scan) disagree", file=sys.stderr)
            return 1
        namespace.update(jax_fn=jax_fn, jargs=jargs)
        timers["jax.jit(scan)"] = timeit.Timer(
            "jax.block_until_ready(jax_fn(*jargs))", globals={**namespace, "jax": jax}
        )
    best = best_seconds(
        timers, warmup=3, rounds=5, round_seconds=0.3, calibration_seconds=0.05
    )
    for name, seconds in best.items():
        print(f"{name:16s} {seconds * 1e3:8.3f} ms per {STEPS} steps")
    print(
        f"eager loop / jit(scan):      {best['eager loop'] / best['jit(scan)']:5.2f}x"
        "  (target >= 5)"
    )
    if jax is not None:
        ratio = best["jit(scan)"] / best["jax.jit(scan)"]
        print(f"jit(scan) / jax.jit(scan):   {ratio:5.2f}x  (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
