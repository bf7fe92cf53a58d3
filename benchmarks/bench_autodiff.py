"""Benchmark typelattice's differentiation against hand-written NumPy.

What it measures, in one run, float32, a 2-layer MLP (batch 256,
64 -> 256 -> 10, ReLU, softmax cross-entropy on one-hot labels):

- ``jit(grad(loss))`` against the same gradient written by hand in NumPy
  (target: within 1.5x);
- eager ``grad(loss)`` against the eager forward pass ``loss`` (target:
  within 4x), after warm-up calls, as in a training loop: by then reverse
  mode has remembered the loss's calls and its backward pass;
- the cost of differentiation per operation: ``grad`` of a chain of
  elementwise operations, eager, against the chain itself;
- the cost of tracing ``jit(grad(loss))`` per recorded operation.

All sides compute the same values (checked). Ratios are typelattice's time
over the reference's, the best of interleaved rounds.

Run it with the interpreter that has typelattice installed::

    python benchmarks/bench_autodiff.py
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
TARGETS = {"jit(grad(loss)) / NumPy": 1.5, "grad(loss) / loss": 4.0}
CHAIN = 50


def loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    """Mean softmax cross-entropy of a 2-layer ReLU network."""
    h = tnp.maximum(x @ params["w1"] + params["b1"], 0.0)
    logits = h @ params["w2"] + params["b2"]
    shifted = logits - tnp.max(logits, axis=1, keepdims=True)
    logp = shifted - tnp.log(tnp.sum(tnp.exp(shifted), axis=1, keepdims=True))
    return -tnp.sum(y * logp) / x.shape[0]


def numpy_grad(p: dict[str, Any], x: Any, y: Any) -> dict[str, Any]:
    """The same gradient, by hand."""
    pre = x @ p["w1"] + p["b1"]
    h = np.maximum(pre, 0.0)
    logits = h @ p["w2"] + p["b2"]
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    soft = e / e.sum(axis=1, keepdims=True)
    d_logits = (soft - y) / x.shape[0]
    d_h = d_logits @ p["w2"].T
    d_pre = d_h * (pre > 0)
    return {
        "w1": x.T @ d_pre,
        "b1": d_pre.sum(axis=0),
        "w2": h.T @ d_logits,
        "b2": d_logits.sum(axis=0),
    }


def chain(x: Any) -> Any:
    for _ in range(CHAIN // 2):
        x = tnp.sin(x) * 1.01
    return tnp.sum(x)


def main() -> None:
    rng = np.random.default_rng(0)
    p_np = {
        "w1": (rng.standard_normal((64, 256)) / 8).astype(np.float32),
        "b1": np.zeros(256, np.float32),
        "w2": (rng.standard_normal((256, 10)) / 16).astype(np.float32),
        "b2": np.zeros(10, np.float32),
    }
    x_np = rng.standard_normal((256, 64)).astype(np.float32)
    y_np = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]
    params = {k: tnp.asarray(v) for k, v in p_np.items()}
    x, y = tnp.asarray(x_np), tnp.asarray(y_np)
    small = tnp.asarray(rng.standard_normal(16).astype(np.float32))

    grad_fn = tl.grad(loss)
    jitted = tl.jit(grad_fn)
    ours, theirs, eager = (
        jitted(params, x, y),
        numpy_grad(p_np, x_np, y_np),
        grad_fn(params, x, y),
    )
    for k in theirs:
        np.testing.assert_allclose(np.asarray(ours[k]), theirs[k], rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(
            np.asarray(eager[k]), theirs[k], rtol=1e-4, atol=1e-6
        )

    timers = {
        "numpy grad": timeit.Timer(lambda: numpy_grad(p_np, x_np, y_np)),
        "jit(grad)": timeit.Timer(lambda: jitted(params, x, y)),
        "grad": timeit.Timer(lambda: grad_fn(params, x, y)),
        "loss": timeit.Timer(lambda: loss(params, x, y)),
        "chain grad": timeit.Timer(lambda: tl.grad(chain)(small)),
        "chain": timeit.Timer(lambda: chain(small)),
    }
    best = best_seconds(
        timers,
        warmup=3,
        rounds=ROUNDS,
        round_seconds=ROUND_SECONDS,
        calibration_seconds=CALIBRATION_SECONDS,
    )
    ratios = {
        "jit(grad(loss)) / NumPy": best["jit(grad)"] / best["numpy grad"],
        "grad(loss) / loss": best["grad"] / best["loss"],
    }
    print(
        f"Python {sys.version.split()[0]}, NumPy {np.__version__}, {platform.machine()}"
    )
    for name, seconds in best.items():
        print(f"  {name:12s} {seconds * 1e6:9.1f} us")
    first = min(
        timeit.repeat(lambda: tl.jit(grad_fn)(params, x, y), number=1, repeat=5)
    )
    equations = len(jitted.program(params, x, y).eqns)
    print(
        f"  tracing jit(grad(loss)) (first call): {first * 1e3:.1f} ms for "
        f"{equations} recorded operations, {first / equations * 1e6:.0f} us each"
    )
    per_op = (best["chain grad"] - best["chain"]) / CHAIN
    print(
        f"  eager differentiation costs {per_op * 1e6:.1f} us per operation "
        f"({CHAIN} operations on 16 elements)"
    )
    for name, ratio in ratios.items():
        verdict = "ok" if ratio <= TARGETS[name] else "MISSED"
        print(f"{name:26s} {ratio:5.2f}x  (target {TARGETS[name]}x: {verdict})")


if __name__ == "__main__":
    main()
