"""Benchmark typelattice.nn's forward passes against hand-written NumPy.

What it measures, in one run, float32:

- ``Dense(1024).apply`` on a 1024×1024 input against ``x @ W + b`` in
  NumPy (target: within 1.1×);
- ``Conv(32, (3, 3)).apply`` ('SAME') on 32 images of 32×32×16 against a
  hand-written im2col (the nine shifted windows stacked) and one matmul in
  NumPy (target: within 1.5×);
- one jitted training step of an MLP of ``Dense`` layers (batch 256,
  64→256→10, ReLU, softmax cross-entropy; forward, backward with
  ``typelattice.value_and_grad`` and an SGD update with
  ``typelattice.optim.sgd``) against the same step written by hand in NumPy
  (target: within 1.5×);
- a jitted ``RNN(OptimizedLSTMCell(128)).apply`` over 32 steps (batch 32,
  64 features) against the same LSTM loop written by hand in NumPy (two
  matmuls per step, the four gates joined; target: within 1.5×).

Both sides use the same parameters and produce the same values (checked:
the outputs; for the training step, the loss and the new parameters).
Ratios are typelattice's time over NumPy's, the best of interleaved rounds.

Run it with the interpreter that has typelattice installed::

    python benchmarks/bench_nn.py
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
from typelattice import nn, optim, random

ROUNDS = 7
ROUND_SECONDS = 0.3
CALIBRATION_SECONDS = 0.1
TARGETS = {
    "Dense 1024x1024": 1.1,
    "Conv2D 32x32x16->32 3x3": 1.5,
    "MLP training step (jit)": 1.5,
    "LSTM 32 steps (jit)": 1.5,
}


def numpy_conv(x: np.ndarray[Any, Any], w: np.ndarray[Any, Any], b: Any) -> Any:
    """'SAME' 3×3 convolution, stride 1: im2col and one matmul."""
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    padded = np.pad(x, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    cols = np.stack(
        [padded[:, i : i + h, j : j + wd, :] for i in range(kh) for j in range(kw)],
        axis=-2,
    )
    return (cols.reshape(n * h * wd, kh * kw * c) @ w.reshape(-1, f) + b).reshape(
        n, h, wd, f
    )


class MLP(nn.Module):
    """64 -> 256 -> 10, ReLU."""

    @nn.compact
    def __call__(self, x: Any) -> Any:
        h = nn.relu(nn.Dense(256)(x))
        return nn.Dense(10)(h)


def training_step() -> tuple[Any, Any]:
    """One jitted SGD step of the MLP and the same step in NumPy, each a
    function of nothing returning the loss and the new parameters (as NumPy
    arrays)."""
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((256, 64), dtype=np.float32)
    y_np = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]
    x, y = tnp.asarray(x_np), tnp.asarray(y_np)
    model = MLP()
    params = model.init(random.key(0), x)["params"]
    opt = optim.sgd(0.1)
    state = opt.init(params)

    def loss_fn(p: Any) -> Any:
        logp = nn.log_softmax(model.apply({"params": p}, x))
        return -tnp.sum(y * logp) / x.shape[0]

    @tl.jit
    def step(p: Any, s: Any) -> Any:
        loss, grads = tl.value_and_grad(loss_fn)(p)
        updates, s = opt.update(grads, s, p)
        return optim.apply_updates(p, updates), s, loss

    w1, b1 = (np.asarray(params["Dense_0"][k]) for k in ("kernel", "bias"))
    w2, b2 = (np.asarray(params["Dense_1"][k]) for k in ("kernel", "bias"))

    def numpy_step() -> Any:
        pre = x_np @ w1 + b1
        h = np.maximum(pre, 0)
        logits = h @ w2 + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        total = e.sum(axis=1, keepdims=True)
        loss = -np.sum(y_np * (shifted - np.log(total))) / x_np.shape[0]
        d = (e / total - y_np) / x_np.shape[0]
        dh = (d @ w2.T) * (pre > 0)
        return [
            loss,
            w1 - 0.1 * (x_np.T @ dh),
            b1 - 0.1 * dh.sum(axis=0),
            w2 - 0.1 * (h.T @ d),
            b2 - 0.1 * d.sum(axis=0),
        ]

    def ours() -> Any:
        new, _, loss = step(params, state)
        return [np.asarray(loss)] + [
            np.asarray(new[a][b])
            for a in ("Dense_0", "Dense_1")
            for b in ("kernel", "bias")
        ]

    return ours, numpy_step


def lstm_forward() -> tuple[Any, Any]:
    """A jitted RNN of an OptimizedLSTMCell and the same loop in NumPy,
    each a function of nothing returning the outputs."""
    rng = np.random.default_rng(2)
    x_np = rng.standard_normal((32, 32, 64), dtype=np.float32)
    layer = nn.RNN(nn.OptimizedLSTMCell(128))
    variables = layer.init(random.key(0), x_np)
    apply = tl.jit(layer.apply)
    cell = variables["params"]["cell"]
    w_i = np.concatenate([np.asarray(cell[f"i{g}"]["kernel"]) for g in "ifgo"], 1)
    w_h = np.concatenate([np.asarray(cell[f"h{g}"]["kernel"]) for g in "ifgo"], 1)
    b_h = np.concatenate([np.asarray(cell[f"h{g}"]["bias"]) for g in "ifgo"])

    def sigmoid(z: Any) -> Any:
        return 1 / (1 + np.exp(-z))

    def numpy_lstm() -> Any:
        c = h = np.zeros((32, 128), np.float32)
        outputs = []
        for t in range(x_np.shape[1]):
            z = h @ w_h + b_h + x_np[:, t] @ w_i
            i, f, g, o = np.split(z, 4, axis=-1)
            c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
            h = sigmoid(o) * np.tanh(c)
            outputs.append(h)
        return np.stack(outputs, axis=1)

    return (lambda: np.asarray(apply(variables, x_np))), numpy_lstm


def main() -> None:
    rng = np.random.default_rng(0)
    key = random.key(0)
    cases: dict[str, tuple[Any, Any]] = {}

    x = rng.standard_normal((1024, 1024), dtype=np.float32)
    dense = nn.Dense(1024)
    dv = dense.init(key, x)
    w, b = np.asarray(dv["params"]["kernel"]), np.asarray(dv["params"]["bias"])
    cases["Dense 1024x1024"] = (lambda: dense.apply(dv, x), lambda: x @ w + b)

    xc = rng.standard_normal((32, 32, 32, 16), dtype=np.float32)
    conv = nn.Conv(32, (3, 3))
    cv = conv.init(key, xc)
    wc, bc = np.asarray(cv["params"]["kernel"]), np.asarray(cv["params"]["bias"])
    cases["Conv2D 32x32x16->32 3x3"] = (
        lambda: conv.apply(cv, xc),
        lambda: numpy_conv(xc, wc, bc),
    )

    cases["MLP training step (jit)"] = training_step()
    cases["LSTM 32 steps (jit)"] = lstm_forward()

    print(
        f"Python {sys.version.split()[0]}, NumPy {np.__version__}, {platform.machine()}"
    )
    for name, (ours, reference) in cases.items():
        for got, want in zip(_listed(ours()), _listed(reference()), strict=True):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
        best = best_seconds(
            {"typelattice": timeit.Timer(ours), "numpy": timeit.Timer(reference)},
            warmup=2,
            rounds=ROUNDS,
            round_seconds=ROUND_SECONDS,
            calibration_seconds=CALIBRATION_SECONDS,
        )
        ratio = best["typelattice"] / best["numpy"]
        verdict = "ok" if ratio <= TARGETS[name] else "over target"
        print(
            f"{name:26s} typelattice {best['typelattice'] * 1e3:8.2f} ms  "
            f"numpy {best['numpy'] * 1e3:8.2f} ms  ratio {ratio:5.2f} "
            f"(target {TARGETS[name]}x: {verdict})"
        )


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


if __name__ == "__main__":
    main()
