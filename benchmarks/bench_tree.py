"""Benchmark typelattice's pytree flatten and unflatten against JAX's and optree's.

jit, grad, the layers and the optimisers flatten their arguments and
unflatten their results on every call, so these two are on the path of each
call. Measured here, in one run, ``flatten`` then ``unflatten`` (to the same
structure, new leaves) of:

- (a) a dict of 20 arrays;
- (b) Flax-style parameters: 3 levels of dicts, 50 arrays;
- (c) a list of 1000 scalars.

Ratios are typelattice's time over each reference's (``jax.tree_util``,
``optree``), the best of interleaved rounds; a reference that is not
installed is skipped. The structures are used again and again, as jit uses
them (typelattice compiles a structure's unflatten after a few uses).

Run it with an interpreter that has typelattice installed (and optionally
JAX and optree)::

    python benchmarks/bench_tree.py
"""

from __future__ import annotations

import importlib
import platform
import sys
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

from _timing import best_seconds
from typelattice import tree_util

ROUNDS = 5
ROUND_SECONDS = 0.2
CALIBRATION_SECONDS = 0.05


def trees() -> dict[str, Any]:
    """The measured trees, by label."""
    arrays = [np.full((4,), i, dtype=np.float32) for i in range(50)]
    flax: dict[str, Any] = {"params": {}}
    for layer in range(10):  # 10 layers of 5 arrays: 3 levels, 50 leaves
        flax["params"][f"Block_{layer}"] = {
            "Dense_0": {"kernel": arrays[5 * layer], "bias": arrays[5 * layer + 1]},
            "LayerNorm_0": {
                "scale": arrays[5 * layer + 2],
                "bias": arrays[5 * layer + 3],
            },
            "embedding": arrays[5 * layer + 4],
        }
    return {
        "(a) dict of 20 arrays": {f"w{i:02d}": arrays[i] for i in range(20)},
        "(b) Flax params, 50 arrays": flax,
        "(c) list of 1000 scalars": [float(i) for i in range(1000)],
    }


def _round_trip(
    flatten: Callable[[Any], tuple[list[Any], Any]],
    unflatten: Callable[[Any, list[Any]], Any],
    tree: Any,
) -> Callable[[], Any]:
    def run() -> Any:
        leaves, treedef = flatten(tree)
        return unflatten(treedef, leaves)

    return run


def libraries() -> dict[str, tuple[Callable[..., Any], Callable[..., Any]]]:
    """flatten and unflatten of typelattice and of each installed reference."""
    out: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
        "typelattice": (tree_util.tree_flatten, tree_util.tree_unflatten)
    }
    try:
        jtu: Any = importlib.import_module("jax.tree_util")
        out["jax"] = (jtu.tree_flatten, jtu.tree_unflatten)
    except ImportError:
        pass
    try:
        optree: Any = importlib.import_module("optree")
        out["optree"] = (optree.tree_flatten, optree.tree_unflatten)
    except ImportError:
        pass
    return out


def main() -> None:
    libs = libraries()
    print(f"Python {platform.python_version()}, NumPy {np.__version__}")
    references = [name for name in libs if name != "typelattice"]
    if not references:
        print("no reference installed (jax, optree): nothing to compare")
    for label, tree in trees().items():
        timers = {}
        for name, (flatten, unflatten) in libs.items():
            run = _round_trip(flatten, unflatten, tree)
            rebuilt = run()
            assert tree_util.tree_leaves(rebuilt) == tree_util.tree_leaves(tree)
            timers[name] = timeit.Timer(run)
        best = best_seconds(
            timers,
            warmup=50,
            rounds=ROUNDS,
            round_seconds=ROUND_SECONDS,
            calibration_seconds=CALIBRATION_SECONDS,
        )
        ours = best["typelattice"]
        cells = [f"typelattice {ours * 1e6:8.1f} us"]
        cells += [f"ours/{name} {ours / best[name]:5.2f}" for name in references]
        print(f"{label:28s} " + "   ".join(cells))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
