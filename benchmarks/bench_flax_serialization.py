"""Benchmark ``typelattice.flax.serialization`` against Flax's on one tree.

A tree of parameters like a small transformer's (about 8 MiB: 12 layers of
a 128x512 and a 512x128 float32 kernel, their biases, a bfloat16 embedding),
written with ``to_bytes`` and read back into a target with ``from_bytes``.
typelattice checks each restored array's shape and dtype against the
target (Flax does not), and both write the same bytes (checked here when
Flax is installed). Run it with the interpreter that has typelattice and
msgpack installed (Flax, JAX and optax optional: ``pip install
'typelattice[bench]'``)::

    python benchmarks/bench_flax_serialization.py
"""

from __future__ import annotations

import platform
import timeit
from typing import Any

import numpy as np

import typelattice.numpy as tnp
from _timing import best_seconds
from typelattice.flax import serialization

LAYERS = 12


def make_tree(asarray: Any, bfloat16: Any) -> dict[str, Any]:
    """The parameters, each array made by ``asarray`` from fixed values."""
    rng = np.random.default_rng(0)
    tree: dict[str, Any] = {
        "embed": asarray(rng.standard_normal((1000, 128)).astype(bfloat16))
    }
    for i in range(LAYERS):
        tree[f"layer_{i}"] = {
            "up": {
                "kernel": asarray(rng.standard_normal((128, 512), np.float32)),
                "bias": asarray(np.zeros(512, np.float32)),
            },
            "down": {
                "kernel": asarray(rng.standard_normal((512, 128), np.float32)),
                "bias": asarray(np.zeros(128, np.float32)),
            },
        }
    return tree


def main() -> None:
    import ml_dtypes

    ours = make_tree(tnp.asarray, ml_dtypes.bfloat16)
    data = serialization.to_bytes(ours)
    timers = {
        "typelattice to_bytes": timeit.Timer(lambda: serialization.to_bytes(ours)),
        "typelattice from_bytes": timeit.Timer(
            lambda: serialization.from_bytes(ours, data)
        ),
    }
    try:
        import jax.numpy as jnp
        from flax import serialization as flax_serialization
    except ImportError:
        print("(Flax is not installed: typelattice only)")
    else:
        theirs = make_tree(jnp.asarray, ml_dtypes.bfloat16)
        assert flax_serialization.to_bytes(theirs) == data, "the bytes differ"
        timers["flax to_bytes"] = timeit.Timer(
            lambda: flax_serialization.to_bytes(theirs)
        )
        timers["flax from_bytes"] = timeit.Timer(
            lambda: flax_serialization.from_bytes(theirs, data)
        )
    best = best_seconds(
        timers, warmup=2, rounds=5, round_seconds=0.3, calibration_seconds=0.05
    )
    print(f"{len(data) / 2**20:.1f} MiB, Python {platform.python_version()}")
    for name, seconds in best.items():
        print(f"{name:24s} {seconds * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
