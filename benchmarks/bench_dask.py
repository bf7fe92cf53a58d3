"""Benchmark the Dask backend against Dask's own rules.

What it measures, in one run:

- an int32 + float32 sum over an array generated lazily block by block
  (``--n`` elements in blocks of ``--chunk``; the default finishes in about
  a minute on 2 cores, ``--n 8e9`` is larger than most machines' memory):
  typelattice's graph (``convert_element_type``, ``add``, ``reduce_sum``:
  float32, as JAX) and Dask's own ``(i + f).sum()`` (float64, NumPy's
  rules) are computed, each with its wall time, and the peak resident
  memory of the process after each (``resource.getrusage``: it only grows,
  so typelattice's runs first);
- the bytes of one block of the int32 + float32 result: float32 against
  Dask's float64 (target: half);
- the cost of building the graph of one elementwise operation: the Dask
  backend's ``add`` on two float32 Dask arrays against Dask's own ``a + b``
  (target: typelattice's extra time under 10% of Dask's).

Run it with the interpreter that has typelattice and dask installed::

    python benchmarks/bench_dask.py [--n 1e9] [--chunk 2.5e7]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import resource
import sys
import time
import timeit
from typing import Any

import dask.array as da
import numpy as np

from _timing import best_seconds
from typelattice._backends import dask as tdask
from typelattice._lax._elementwise import add_p, convert_element_type_p
from typelattice._lax._reductions import reduce_sum_p

_F32 = np.dtype(np.float32)
_ADD = tdask.BACKEND.impl(add_p)
_CONVERT = tdask.BACKEND.impl(convert_element_type_p)
_SUM = tdask.BACKEND.impl(reduce_sum_p)


def _peak_mib() -> float:
    # ru_maxrss is in KiB on Linux (bytes on macOS).
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def _inputs(n: int, chunk: int) -> tuple[Any, Any]:
    # Generated block by block when computed: nothing of size n is held.
    i = da.ones(n, dtype=np.int32, chunks=chunk)
    f = da.full(n, 0.5, dtype=np.float32, chunks=chunk)
    return i, f


def ours(i: Any, f: Any) -> Any:
    """int32 + float32 summed, as the Dask backend builds it."""
    return _SUM(_ADD(_CONVERT(i, new_dtype=_F32, weak_type=False), f), axes=(0,))


def theirs(i: Any, f: Any) -> Any:
    """The same with Dask's (NumPy's) rules."""
    return (i + f).sum()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--n", type=float, default=1e9, help="elements (1e9)")
    parser.add_argument("--chunk", type=float, default=2.5e7, help="per block")
    parser.add_argument("--skip-dask", action="store_true", help="ours only")
    args = parser.parse_args(argv)
    n, chunk = int(args.n), int(args.chunk)
    dask_version = importlib.metadata.version("dask")
    print(f"python {platform.python_version()}, dask {dask_version}, ")
    print(f"numpy {np.__version__}, {n:.3g} elements in blocks of {chunk:.3g}")
    print(f"input bytes (int32 + float32, never held whole): {n * 8 / 2**30:.1f} GiB")

    small_i, small_f = _inputs(4 * chunk, chunk)
    for build in (ours, theirs):  # (thread pools and first calls warmed up)
        build(small_i, small_f).compute()
    i, f = _inputs(n, chunk)
    expected = 1.5 * n
    for name, build in (("typelattice", ours), ("dask", theirs)):
        if name == "dask" and args.skip_dask:
            continue
        graph = build(i, f)
        start = time.perf_counter()
        total = graph.compute()
        seconds = time.perf_counter() - start
        print(
            f"{name:12s} sum: {total!r} ({np.asarray(total).dtype}), rel. error "
            f"{abs(float(total) - expected) / expected:.1e}, {seconds:.1f} s, "
            f"peak RSS so far {_peak_mib():.0f} MiB"
        )

    our_block = _ADD(_CONVERT(small_i, new_dtype=_F32, weak_type=False), small_f)
    their_block = small_i + small_f
    ours_bytes = our_block.blocks[0].compute().nbytes
    theirs_bytes = their_block.blocks[0].compute().nbytes
    print(
        f"bytes per block of i32 + f32: typelattice {ours_bytes / 2**20:.0f} MiB "
        f"({our_block.dtype}), dask {theirs_bytes / 2**20:.0f} MiB "
        f"({their_block.dtype}): ratio {ours_bytes / theirs_bytes:.2f} (target 0.5)"
    )

    a = da.ones(n, dtype=np.float32, chunks=chunk)
    b = da.ones(n, dtype=np.float32, chunks=chunk)
    times = best_seconds(
        {
            "typelattice": timeit.Timer(lambda: _ADD(a, b)),
            "dask": timeit.Timer(lambda: a + b),
        },
        warmup=10,
        rounds=7,
        round_seconds=0.2,
        calibration_seconds=0.05,
    )
    extra = times["typelattice"] - times["dask"]
    print(
        f"graph building per add: typelattice {times['typelattice'] * 1e6:.0f} us, "
        f"dask {times['dask'] * 1e6:.0f} us: overhead {extra / times['dask']:.1%} "
        "of Dask's (target under 10%)"
    )


if __name__ == "__main__":
    main()
