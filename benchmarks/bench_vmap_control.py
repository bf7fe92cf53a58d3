"""Benchmark ``vmap`` of ``typelattice.lax.scan`` under ``jit`` against a
Python loop of ``jit(scan)`` calls, one per example, and against
``jax.jit(jax.vmap(jax.lax.scan))``.

What it measures, in one run: a batch of 32 sequences of 50 steps of a
small recurrent cell, ``h = tanh(h @ W + x)`` with a hidden state of 16
float32 values, returning the last states and every step's state.

1. jit(vmap(scan)): one scan whose body is the cell batched (each step one
   matrix product over the batch).
2. loop of jit(scan): ``jit(scan)`` called on each example in turn, the
   results stacked. Target: jit(vmap(scan)) at least 5x faster.
3. jax.jit(jax.vmap(jax.lax.scan)), when ``import jax`` succeeds (reported
   only).

The results are checked first (they agree within float32 rounding); a wrong
result exits with status 1 before anything is timed. It is a report, not a
test: a missed target does not change the exit status.

Run it with the interpreter that has typelattice (and, optionally, JAX)::

    python benchmarks/bench_vmap_control.py
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

BATCH, STEPS, HIDDEN = 32, 50, 16


def load_jax() -> Any:
    try:
        import jax
    except ImportError:
        return None
    return jax


def main() -> int:
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((HIDDEN, HIDDEN)) * 0.2).astype(np.float32)
    h0 = rng.standard_normal((BATCH, HIDDEN)).astype(np.float32)
    xs = rng.standard_normal((BATCH, STEPS, HIDDEN)).astype(np.float32)
    tw, th0, txs = (tnp.asarray(v) for v in (w, h0, xs))

    def run(w: Any, h: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> Any:
            h = tnp.tanh(h @ w + x)
            return h, h

        return lax.scan(step, h, xs)

    batched = tl.jit(tl.vmap(run, in_axes=(None, 0, 0)))
    one = tl.jit(run)

    def looped() -> Any:
        outs = [one(tw, th0[i], txs[i]) for i in range(BATCH)]
        return tnp.stack([o[0] for o in outs]), tnp.stack([o[1] for o in outs])

    jax = load_jax()
    print(
        f"Python {platform.python_version()}, NumPy {np.__version__}, "
        + (f"JAX {jax.__version__}" if jax is not None else "no JAX")
    )
    got_h, got_hs = batched(tw, th0, txs)
    want_h, want_hs = looped()
    if not np.allclose(np.asarray(got_hs), np.asarray(want_hs), atol=1e-5):
        print("jit(vmap(scan)) and the loop disagree", file=sys.stderr)
        return 1
    namespace: dict[str, Any] = dict(
        batched=batched, looped=looped, tw=tw, th0=th0, txs=txs
    )
    timers = {
        "jit(vmap(scan))": timeit.Timer("batched(tw, th0, txs)", globals=namespace),
        "loop of jit(scan)": timeit.Timer("looped()", globals=namespace),
    }
    if jax is not None:
        jnp = jax.numpy

        def jax_run(w: Any, h: Any, xs: Any) -> Any:
            def step(h: Any, x: Any) -> Any:
                h = jnp.tanh(h @ w + x)
                return h, h

            return jax.lax.scan(step, h, xs)

        jax_fn = jax.jit(jax.vmap(jax_run, in_axes=(None, 0, 0)))
        jargs = [jnp.asarray(v) for v in (w, h0, xs)]
        _, jhs = jax_fn(*jargs)
        if not np.allclose(np.asarray(jhs), np.asarray(got_hs), atol=1e-4):
            print("jit(vmap(scan)) and JAX's disagree", file=sys.stderr)
            return 1
        namespace.update(jax_fn=jax_fn, jargs=jargs)
        timers["jax.jit(vmap(scan))"] = timeit.Timer(
            "jax.block_until_ready(jax_fn(*jargs))", globals={**namespace, "jax": jax}
        )
    best = best_seconds(
        timers, warmup=3, rounds=5, round_seconds=0.3, calibration_seconds=0.05
    )
    for name, seconds in best.items():
        print(f"{name:20s} {seconds * 1e3:8.3f} ms per batch")
    ratio = best["loop of jit(scan)"] / best["jit(vmap(scan))"]
    print(f"loop of jit(scan) / jit(vmap(scan)): {ratio:5.2f}x  (target >= 5)")
    if jax is not None:
        ratio = best["jit(vmap(scan))"] / best["jax.jit(vmap(scan))"]
        print(f"jit(vmap(scan)) / jax.jit(vmap(scan)): {ratio:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
