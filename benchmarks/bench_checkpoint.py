"""Benchmark rematerialisation: memory and time of ``grad`` with every layer
checkpointed, against the same ``grad`` without.

A 20-layer MLP (width 512, batch 256, float32, tanh), ``grad`` of the mean
square of its output with respect to all its parameters, eager and under
``jit``. Measured in one run:

- the peak of the memory allocated while one gradient is computed
  (tracemalloc, which traces NumPy's allocations; the parameters and
  inputs, made before, are not counted, the gradients are): checkpointed
  over plain, target at most 0.5 eagerly;
- the memory the forward pass leaves held for the backward pass (what
  ``vjp`` returns holds: the residuals), checkpointed over plain;
- under ``jit``, the most bytes of intermediate values the program holds
  at once, from its equations (each dropped after its last reader): the
  measured peak there is mostly the gradients themselves;
- the time of one gradient, checkpointed over plain (the backward pass
  runs every layer's forward pass again).

Both sides compute the same gradients (checked). Run it with the
interpreter that has typelattice installed::

    python benchmarks/bench_checkpoint.py
"""

from __future__ import annotations

import gc
import platform
import sys
import timeit
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from _timing import best_seconds

LAYERS = 20
WIDTH = 512
BATCH = 256
TARGET = 0.5


def layer(p: tuple[Any, Any], x: Any) -> Any:
    """One dense layer with tanh."""
    w, b = p
    return tnp.tanh(x @ w + b)


def make_loss(wrap: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    """The loss with each layer given to ``wrap`` (identity or checkpoint)."""
    step = wrap(layer)

    def loss(params: list[tuple[Any, Any]], x: Any) -> Any:
        for p in params:
            x = step(p, x)
        return tnp.mean(x * x)

    return loss


def peak_bytes(fun: Callable[[], Any]) -> int:
    """The peak of the memory traced while ``fun`` runs (the result kept)."""
    gc.collect()
    tracemalloc.start()
    try:
        result = fun()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


def held_by_vjp(loss: Callable[..., Any], params: Any, x: Any) -> int:
    """The bytes allocated by ``vjp``'s forward pass that its result holds."""
    gc.collect()
    tracemalloc.start()
    try:
        kept = tl.vjp(loss, params, x)
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del kept
    return held


def main() -> None:
    rng = np.random.default_rng(0)
    scale = np.float32(1.0 / np.sqrt(WIDTH))
    params = [
        (
            tnp.asarray(rng.standard_normal((WIDTH, WIDTH), np.float32) * scale),
            tnp.asarray(np.zeros(WIDTH, np.float32)),
        )
        for _ in range(LAYERS)
    ]
    x = tnp.asarray(rng.standard_normal((BATCH, WIDTH), np.float32))
    policy = tl.checkpoint_policies.dots_saveable
    variants = {
        "plain": tl.grad(make_loss(lambda f: f)),
        "checkpoint": tl.grad(make_loss(tl.checkpoint)),
        "checkpoint(dots_saveable)": tl.grad(
            make_loss(lambda f: tl.checkpoint(f, policy=policy))
        ),
        "jit plain": tl.jit(tl.grad(make_loss(lambda f: f))),
        "jit checkpoint": tl.jit(tl.grad(make_loss(tl.checkpoint))),
    }
    want = variants["plain"](params, x)
    for fun in variants.values():  # (warm-up, and the same gradients)
        got = fun(params, x)
        for (gw, gb), (ww, wb) in zip(got, want, strict=True):
            np.testing.assert_allclose(
                np.asarray(gw), np.asarray(ww), rtol=1e-4, atol=1e-6
            )
            np.testing.assert_allclose(
                np.asarray(gb), np.asarray(wb), rtol=1e-4, atol=1e-6
            )
    print(f"Python {platform.python_version()}, NumPy {np.__version__}")
    print(f"{LAYERS}-layer MLP, width {WIDTH}, batch {BATCH}, float32, tanh")
    peaks = {
        name: peak_bytes(lambda f=fun: f(params, x)) for name, fun in variants.items()
    }
    for name, peak in peaks.items():
        print(f"  peak {name:28s} {peak / 2**20:8.1f} MiB")
    ratio = peaks["checkpoint"] / peaks["plain"]
    print(f"  peak checkpoint / plain          {ratio:.2f} (target <= {TARGET})")
    dots = peaks["checkpoint(dots_saveable)"] / peaks["plain"]
    print(f"  peak dots_saveable / plain       {dots:.2f}")
    jit_ratio = peaks["jit checkpoint"] / peaks["jit plain"]
    print(f"  peak jit checkpoint / jit plain  {jit_ratio:.2f}")
    held = {
        name: held_by_vjp(make_loss(wrap), params, x)
        for name, wrap in (("plain", lambda f: f), ("checkpoint", tl.checkpoint))
    }
    for name, n in held.items():
        print(f"  held after forward {name:18s} {n / 2**20:8.1f} MiB")
    print(
        f"  held checkpoint / plain          {held['checkpoint'] / held['plain']:.2f}"
    )
    programs = {
        name: variants[name].program(params, x)
        for name in ("jit plain", "jit checkpoint")
    }
    lives = {name: p.live_peak() for name, p in programs.items()}
    for name, n in lives.items():
        print(f"  program live peak {name:19s} {n / 2**20:8.1f} MiB")
    print(
        "  program live peak ratio          "
        f"{lives['jit checkpoint'] / lives['jit plain']:.2f}"
    )
    timers = {
        name: timeit.Timer(lambda f=fun: f(params, x)) for name, fun in variants.items()
    }
    best = best_seconds(
        timers, warmup=1, rounds=3, round_seconds=0.5, calibration_seconds=0.2
    )
    for name in variants:
        print(f"  time {name:28s} {best[name] * 1e3:8.1f} ms")
    print(
        f"  time checkpoint / plain          {best['checkpoint'] / best['plain']:.2f}"
    )
    print(
        "  time dots_saveable / plain       "
        f"{best['checkpoint(dots_saveable)'] / best['plain']:.2f}"
    )
    print(
        "  time jit checkpoint / jit plain  "
        f"{best['jit checkpoint'] / best['jit plain']:.2f}"
    )
    sys.exit(0 if ratio <= TARGET else 1)


if __name__ == "__main__":
    main()
