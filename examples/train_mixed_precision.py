"""Mixed-precision training with typelattice: bfloat16 compute, float32
parameters, end to end.

Two models are trained on generated data (nothing is downloaded):

- an MLP on points of three interleaved spirals;
- a small CNN on 12x12 images of noisy strokes (horizontal, vertical,
  diagonal, anti-diagonal), four classes.

Each is trained twice from the same initial parameters: computing in
bfloat16 (layers with ``dtype='bfloat16'``, parameters kept in float32 by
``param_dtype``) and in float32. The script prints the loss per epoch (with
a progress bar on a terminal), the final accuracies of both runs, and the dtypes of the
activations, parameters, gradients and optimiser state of the mixed run:
the parameters, their gradients and the optimiser's state stay float32
while the layers compute in bfloat16.

Run it with the interpreter that has typelattice installed::

    python examples/train_mixed_precision.py            # about a minute
    python examples/train_mixed_precision.py --quick    # a few seconds
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import nn, optim, random
from typelattice._cli import progress_on, run_main
from typelattice._tracing import tree

# -- data -------------------------------------------------------------------------


def spirals(n: int, rng: np.random.Generator) -> tuple[Any, Any]:
    """``n`` points of three interleaved spirals (2 features), and labels."""
    labels = rng.integers(0, 3, n)
    radius = rng.uniform(0.1, 1.0, n)
    angle = 3.5 * radius + labels * (2 * np.pi / 3) + rng.normal(0, 0.12, n)
    points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return points.astype(np.float32), labels


def strokes(n: int, rng: np.random.Generator, size: int = 12) -> tuple[Any, Any]:
    """``n`` images (size x size, one channel) of a noisy stroke: horizontal,
    vertical, diagonal or anti-diagonal, at a random place."""
    labels = rng.integers(0, 4, n)
    images = rng.normal(0, 0.35, (n, size, size, 1))
    line = np.arange(size)
    for i, (label, offset) in enumerate(
        zip(labels, rng.integers(2, size - 2, n), strict=True)
    ):
        if label == 0:
            images[i, offset, :, 0] += 1.0
        elif label == 1:
            images[i, :, offset, 0] += 1.0
        elif label == 2:
            images[i, line, (line + offset) % size, 0] += 1.0
        else:
            images[i, line, (offset - line) % size, 0] += 1.0
    return images.astype(np.float32), labels


# -- models -----------------------------------------------------------------------


class MLP(nn.Module):
    """Two hidden layers of 64 units."""

    dtype: Any = None

    @nn.compact
    def __call__(self, x: Any) -> Any:
        x = nn.relu(nn.Dense(64, dtype=self.dtype)(x))
        x = nn.relu(nn.Dense(64, dtype=self.dtype)(x))
        return nn.Dense(3, dtype=self.dtype)(x)


class CNN(nn.Module):
    """Two convolutions, a mean over the image, a dense layer."""

    dtype: Any = None

    @nn.compact
    def __call__(self, x: Any) -> Any:
        x = nn.relu(nn.Conv(8, (3, 3), dtype=self.dtype)(x))
        x = nn.relu(nn.Conv(16, (3, 3), strides=(2, 2), dtype=self.dtype)(x))
        x = tnp.mean(x, axis=(1, 2))
        return nn.Dense(4, dtype=self.dtype)(x)


# -- training ---------------------------------------------------------------------


def cross_entropy(logits: Any, labels: Any) -> Any:
    """Mean softmax cross-entropy, computed in float32."""
    logp = nn.log_softmax(logits.astype("float32"))
    return -tnp.mean(tnp.sum(nn.one_hot(labels, logits.shape[-1]) * logp, axis=-1))


def batches(n: int, size: int, rng: np.random.Generator) -> Iterator[Any]:
    order = rng.permutation(n)
    for start in range(0, n - size + 1, size):
        yield order[start : start + size]


def progress(epoch: int, epochs: int, done: int, total: int, loss: float) -> None:
    """The epoch's progress bar, redrawn in place on a terminal; in a pipe
    or a log file, one line when the epoch ends (no carriage returns)."""
    line = f"  epoch {epoch + 1:2d}/{epochs}"
    if progress_on(sys.stdout):
        width = 24
        filled = width * done // total
        bar = "#" * filled + "." * (width - filled)
        end = "\n" if done == total else ""
        print(f"\r{line} [{bar}] loss {loss:.4f}", end=end, flush=True)
    elif done == total:
        print(f"{line} loss {loss:.4f}", flush=True)


def train(
    model: nn.Module,
    params: Any,
    data: tuple[Any, Any],
    test: tuple[Any, Any],
    epochs: int,
    batch: int,
    learning_rate: float,
    seed: int,
) -> tuple[float, dict[str, str]]:
    """Train with Adam; the test accuracy, and the dtypes seen."""
    opt = optim.adam(learning_rate)
    opt_state = opt.init(params)

    def loss_fn(p: Any, x: Any, y: Any) -> Any:
        return cross_entropy(model.apply({"params": p}, x), y)

    @tl.jit
    def step(p: Any, s: Any, x: Any, y: Any) -> Any:
        loss, grads = tl.value_and_grad(loss_fn)(p, x, y)
        updates, s = opt.update(grads, s, p)
        return optim.apply_updates(p, updates), s, loss

    x_all, y_all = data
    rng = np.random.default_rng(seed)
    steps = len(x_all) // batch
    for epoch in range(epochs):
        total = 0.0
        for i, idx in enumerate(batches(len(x_all), batch, rng)):
            params, opt_state, loss = step(
                params, opt_state, tnp.asarray(x_all[idx]), tnp.asarray(y_all[idx])
            )
            total += float(loss)
            progress(epoch, epochs, i + 1, steps, total / (i + 1))
    x_test, y_test = test
    logits = model.apply({"params": params}, tnp.asarray(x_test))
    accuracy = float(np.mean(np.asarray(tnp.argmax(logits, axis=-1)) == y_test))
    grads = tl.grad(loss_fn)(
        params, tnp.asarray(x_all[:batch]), tnp.asarray(y_all[:batch])
    )
    dtypes = {
        "activations": str(logits.dtype),
        "parameters": _dtypes_of(params),
        "gradients": _dtypes_of(grads),
        "optimiser state": _dtypes_of(opt_state),
    }
    return accuracy, dtypes


def _dtypes_of(x: Any) -> str:
    return ", ".join(sorted({str(leaf.dtype) for leaf in tree.leaves(x)}))


def experiment(
    name: str,
    make: Callable[[Any], nn.Module],
    data: tuple[Any, Any],
    test: tuple[Any, Any],
    epochs: int,
    batch: int,
    learning_rate: float,
) -> tuple[float, float]:
    """Train ``make(dtype)`` in bfloat16 and in float32 from the same
    parameters; print and return both accuracies."""
    sample = tnp.asarray(data[0][:batch])
    params = make(None).init(random.key(0), sample)["params"]
    results = {}
    for dtype in ("bfloat16", "float32"):
        print(f"{name}, computing in {dtype}:")
        start = time.perf_counter()
        accuracy, dtypes = train(
            make(dtype), params, data, test, epochs, batch, learning_rate, seed=1
        )
        seconds = time.perf_counter() - start
        print(f"  test accuracy {100 * accuracy:.1f}%  ({seconds:.1f} s)")
        if dtype == "bfloat16":
            for what, dt in dtypes.items():
                print(f"  {what:16s} {dt}")
        results[dtype] = accuracy
    gap = 100 * abs(results["bfloat16"] - results["float32"])
    print(
        f"{name}: bfloat16 {100 * results['bfloat16']:.1f}% vs float32 "
        f"{100 * results['float32']:.1f}% ({gap:.1f} points apart)\n"
    )
    return results["bfloat16"], results["float32"]


def main(argv: list[str] | None = None) -> dict[str, tuple[float, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (tests)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    n, epochs = (600, 2) if args.quick else (3000, 12)
    results = {
        "MLP": experiment(
            "MLP on spirals",
            lambda dt: MLP(dtype=dt),
            spirals(n, rng),
            spirals(1000, rng),
            epochs,
            batch=50,
            learning_rate=1e-2,
        ),
        "CNN": experiment(
            "CNN on strokes",
            lambda dt: CNN(dtype=dt),
            strokes(n // 2, rng),
            strokes(500, rng),
            epochs,
            batch=50,
            learning_rate=1e-2,
        ),
    }
    return results


if __name__ == "__main__":

    def run() -> None:
        main()

    # Ends as the typelattice command does: quietly when the reader of the
    # output goes away (| head).
    sys.exit(run_main(run))
