"""Benchmark typelattice.vmap against the same computation batched by hand
in NumPy.

What it measures, in one run, float32, batch 128:

- a per-example MLP loss (16 -> 64 -> 4, tanh, squared error against a
  target), vmapped over examples with shared parameters
  (``in_axes=(None, 0, 0)``), eagerly and under ``jit``;
- an elementwise and reduction function of one example (a normalised
  soft-threshold of a vector of 256), vmapped, eagerly and under ``jit``.

Each is compared with the hand-batched NumPy program computing the same
values (checked). Target: within 1.2x under ``jit``; eager ``vmap`` traces
the function on each call, and its ratio is shown too, as is that of the
function batched by hand in typelattice under ``jit`` (the same program:
what is left is the cost of calling a jitted function). Ratios are
typelattice's time over NumPy's, the best of interleaved rounds.

Run it with the interpreter that has typelattice installed::

    python benchmarks/bench_vmap.py
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

ROUNDS = 7
ROUND_SECONDS = 0.3
CALIBRATION_SECONDS = 0.1
TARGET = 1.2
BATCH = 128


def mlp_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    """Squared error of a 1-hidden-layer tanh network on one example."""
    h = tnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return tnp.sum((out - y) ** 2)


def numpy_mlp_loss(p: dict[str, Any], x: Any, y: Any) -> Any:
    h = np.tanh(x @ p["w1"] + p["b1"])
    out = h @ p["w2"] + p["b2"]
    return np.sum((out - y) ** 2, axis=1)


def batched_mlp_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    """``mlp_loss`` batched by hand, in typelattice."""
    h = tnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return tnp.sum((out - y) ** 2, axis=1)


def batched_shrink_by_hand(v: Any) -> Any:
    """``shrink`` batched by hand, in typelattice."""
    t = tnp.sign(v) * tnp.maximum(tnp.abs(v) - 0.1, 0.0)
    return t / (tnp.max(tnp.abs(t), axis=1, keepdims=True) + 1e-3)


def shrink(v: Any) -> Any:
    """A soft-threshold of one vector, normalised by its largest entry."""
    t = tnp.sign(v) * tnp.maximum(tnp.abs(v) - 0.1, 0.0)
    return t / (tnp.max(tnp.abs(t)) + 1e-3)


def numpy_shrink(v: Any) -> Any:
    t = np.sign(v) * np.maximum(np.abs(v) - np.float32(0.1), np.float32(0.0))
    return t / (np.max(np.abs(t), axis=1, keepdims=True) + np.float32(1e-3))


def main() -> None:
    rng = np.random.default_rng(0)

    def f32(*shape: int) -> Any:
        return rng.standard_normal(shape).astype(np.float32)

    np_params = {"w1": f32(16, 64), "b1": f32(64), "w2": f32(64, 4), "b2": f32(4)}
    params = {k: tnp.asarray(v) for k, v in np_params.items()}
    np_x, np_y, np_v = f32(BATCH, 16), f32(BATCH, 4), f32(BATCH, 256)
    x, y, v = tnp.asarray(np_x), tnp.asarray(np_y), tnp.asarray(np_v)

    batched_loss = tl.vmap(mlp_loss, in_axes=(None, 0, 0))
    jit_loss = tl.jit(batched_loss)
    batched_shrink = tl.vmap(shrink)
    jit_shrink = tl.jit(batched_shrink)
    # The same programs batched by hand, under jit: what vmap can reach.
    jit_hand_loss = tl.jit(batched_mlp_loss)
    jit_hand_shrink = tl.jit(batched_shrink_by_hand)

    for ours, ref in (
        (batched_loss(params, x, y), numpy_mlp_loss(np_params, np_x, np_y)),
        (jit_loss(params, x, y), numpy_mlp_loss(np_params, np_x, np_y)),
        (batched_shrink(v), numpy_shrink(np_v)),
        (jit_shrink(v), numpy_shrink(np_v)),
        (jit_hand_loss(params, x, y), numpy_mlp_loss(np_params, np_x, np_y)),
        (jit_hand_shrink(v), numpy_shrink(np_v)),
    ):
        np.testing.assert_allclose(np.asarray(ours), ref, rtol=2e-5, atol=2e-5)

    g = {**globals(), **locals()}
    timers = {
        name: timeit.Timer(code, globals=g)
        for name, code in {
            "mlp numpy": "numpy_mlp_loss(np_params, np_x, np_y)",
            "mlp vmap": "batched_loss(params, x, y)",
            "mlp jit(vmap)": "jit_loss(params, x, y)",
            "mlp jit(by hand)": "jit_hand_loss(params, x, y)",
            "shrink numpy": "numpy_shrink(np_v)",
            "shrink vmap": "batched_shrink(v)",
            "shrink jit(vmap)": "jit_shrink(v)",
            "shrink jit(by hand)": "jit_hand_shrink(v)",
        }.items()
    }
    best = best_seconds(
        timers,
        warmup=20,
        rounds=ROUNDS,
        round_seconds=ROUND_SECONDS,
        calibration_seconds=CALIBRATION_SECONDS,
    )
    print(f"Python {platform.python_version()}, NumPy {np.__version__}")
    print(f"batch {BATCH}, float32; target for jit(vmap): within {TARGET}x")
    for what in ("mlp", "shrink"):
        ref = best[f"{what} numpy"]
        print(f"{what}: NumPy by hand {ref * 1e6:8.1f} us")
        for kind in ("vmap", "jit(vmap)", "jit(by hand)"):
            t = best[f"{what} {kind}"]
            mark = "  ok" if t / ref <= TARGET else "  SLOW"
            mark = mark if kind == "jit(vmap)" else ""
            print(f"  {kind:12s} {t * 1e6:8.1f} us  {t / ref:5.2f}x{mark}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
