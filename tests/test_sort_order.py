"""``lax.sort`` computes XLA's total order (-inf < ... < -0.0 < 0.0 < ... <
inf < NaN, stable) whichever way the NumPy backend takes: NumPy's own sort
where its comparison is that order, the explicit keys otherwise. Both are
compared here with the order written out, over many arrays with ties,
zeros of both signs and NaNs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typelattice as tl
from typelattice import lax
from typelattice._lax._reductions import _sort_keys  # pyright: ignore[reportPrivateUsage]


def _reference(xs: list[Any], dimension: int, num_keys: int) -> list[Any]:
    moved = [np.moveaxis(x, dimension, -1) for x in xs]
    keys = [k for x in moved[:num_keys] for k in _sort_keys(x)]
    order = np.lexsort(keys[::-1], axis=-1)
    return [
        np.moveaxis(np.take_along_axis(x, order, axis=-1), -1, dimension) for x in moved
    ]


def _draw(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> Any:
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)
    pool = np.array([-2.5, -1.0, 1.0, 3.0, np.inf, -np.inf], dtype)
    special = np.array([0.0, -0.0, np.nan, -np.nan], dtype)
    x = rng.choice(pool, shape)
    mask = rng.random(shape) < (0.3 if rng.random() < 0.5 else 0.0)
    return np.where(mask, rng.choice(special, shape), x).astype(dtype)


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "uint16", "int64", "float16", "float32", "float64"]
)
def test_sort_is_the_total_order_on_every_path(dtype: str) -> None:
    rng = np.random.default_rng(7)
    for trial in range(60):
        shape = ((7,), (3, 5), (2, 3, 4))[trial % 3]
        dimension = int(rng.integers(0, len(shape)))
        n = 1 + trial % 3
        xs = [_draw(rng, dtype, shape)] + [
            rng.integers(0, 100, shape).astype(np.int32) for _ in range(n - 1)
        ]
        num_keys = 1 if n == 1 else int(rng.integers(1, n + 1))
        with tl.enable_x64(True):
            got = lax.sort(
                xs if n > 1 else xs[0], dimension=dimension, num_keys=num_keys
            )
        got_list = list(got) if n > 1 else [got]
        for g, w in zip(got_list, _reference(xs, dimension, num_keys), strict=True):
            assert g.dtype == w.dtype
            # Bit for bit: -0.0 and 0.0, NaNs and their signs in place.
            assert np.asarray(g).tobytes() == w.tobytes(), (xs, dimension, num_keys)
