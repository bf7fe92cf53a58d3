"""Pooling on lax.reduce_window against hand-written NumPy: a 2x2 max pool
(stride 2) of a (16, 32, 32, 32) float32 batch, forward, and forward plus
gradient; and a 3x3 'SAME' average pool.

Run: ``python benchmarks/bench_pooling.py``.
"""

from __future__ import annotations

import timeit
from typing import Any

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from _timing import best_seconds
from typelattice import nn

SHAPE = (16, 32, 32, 32)


def numpy_max_pool(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    b, h, w, c = x.shape
    return x.reshape(b, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def numpy_max_pool_grad(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    # The gradient of sum(max_pool(x)): 1 at each window's first largest.
    b, h, w, c = x.shape
    windows = x.reshape(b, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 5, 2, 4)
    flat = windows.reshape(*windows.shape[:4], 4)
    pick = np.argmax(flat, axis=-1)
    grad = np.zeros_like(flat)
    np.put_along_axis(grad, pick[..., None], 1.0, axis=-1)
    grad = grad.reshape(*windows.shape).transpose(0, 1, 4, 2, 5, 3)
    return grad.reshape(x.shape)


def numpy_avg_pool_same(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    view = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
    return view.sum(axis=(-2, -1)) / 9


def main() -> None:
    x_np = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    x = tnp.asarray(x_np)
    np.testing.assert_array_equal(
        np.asarray(nn.max_pool(x, (2, 2), (2, 2))), numpy_max_pool(x_np)
    )
    grad = tl.grad(lambda v: tnp.sum(nn.max_pool(v, (2, 2), (2, 2))))
    np.testing.assert_array_equal(np.asarray(grad(x)), numpy_max_pool_grad(x_np))
    np.testing.assert_allclose(
        np.asarray(nn.avg_pool(x, (3, 3), padding="SAME")),
        numpy_avg_pool_same(x_np),
        rtol=1e-5,
        atol=1e-6,
    )
    jit_grad = tl.jit(grad)
    timers = {
        "max_pool": timeit.Timer(lambda: nn.max_pool(x, (2, 2), (2, 2))),
        "numpy max_pool": timeit.Timer(lambda: numpy_max_pool(x_np)),
        "grad max_pool": timeit.Timer(lambda: grad(x)),
        "jit grad max_pool": timeit.Timer(lambda: jit_grad(x)),
        "numpy grad max_pool": timeit.Timer(lambda: numpy_max_pool_grad(x_np)),
        "avg_pool SAME": timeit.Timer(lambda: nn.avg_pool(x, (3, 3), padding="SAME")),
        "numpy avg_pool SAME": timeit.Timer(lambda: numpy_avg_pool_same(x_np)),
    }
    best = best_seconds(
        timers, warmup=2, rounds=5, round_seconds=0.2, calibration_seconds=0.02
    )
    for name, seconds in best.items():
        print(f"{name:>22}: {seconds * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
