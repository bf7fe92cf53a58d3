"""The Dask backend: lazy graphs, the lattice's dtypes block by block, the
data-safety checks raised when computed, and ``dask.distributed``.

Until Arrays hold Dask arrays themselves, the backend is driven through the
``use`` scope (operands converted from NumPy, results back), and a backend
that keeps its results' graphs instead of computing them shows what the
primitives build."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import typelattice as tl  # noqa: E402
import typelattice.numpy as tnp  # noqa: E402
from typelattice import lax  # noqa: E402
from typelattice._backends import Backend, use  # noqa: E402
from typelattice._backends import dask as tdask  # noqa: E402
from typelattice._lax._elementwise import add_p, convert_element_type_p  # noqa: E402
from typelattice._lax._reductions import reduce_sum_p  # noqa: E402


class Kept:
    """A Dask backend whose results are not computed: each result's graph
    is kept (in ``graphs``) and NumPy zeros of its dtype and shape stand for
    it."""

    def __init__(self) -> None:
        self.graphs: list[Any] = []
        self.backend = tdask.register(
            Backend("dask-kept", from_numpy=tdask.from_numpy, to_numpy=self._keep)
        )

    def _keep(self, x: Any) -> np.ndarray[Any, Any]:
        self.graphs.append(x)
        return np.zeros(tdask.shape_of(x), tdask.dtype_of(x))


@pytest.fixture
def kept() -> Iterator[Kept]:
    k = Kept()
    with use(k.backend):
        yield k


class Counter:
    """Blocks made by a function that counts its calls: a graph that was
    computed has called it."""

    def __init__(self) -> None:
        self.calls = 0

    def block(self, x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        self.calls += 1
        return x


def _counted(values: np.ndarray[Any, Any], chunks: int) -> tuple[Any, Counter]:
    counter = Counter()
    source = da.from_array(values, chunks=chunks)
    meta = np.empty(0, values.dtype)  # (else Dask calls it to learn its type)
    return source.map_blocks(counter.block, dtype=values.dtype, meta=meta), counter


def test_results_are_lazy_until_computed() -> None:
    values = np.arange(12, dtype=np.int32)
    x, counter = _counted(values, 4)
    f = tdask.BACKEND.impl(convert_element_type_p)(
        x, new_dtype=np.dtype(np.float32), weak_type=False
    )
    total = tdask.BACKEND.impl(reduce_sum_p)(tdask.BACKEND.impl(add_p)(f, f), axes=(0,))
    assert isinstance(total, da.Array)
    assert counter.calls == 0
    assert total.dtype == np.float32
    assert float(total.compute()) == 2 * values.sum()
    assert counter.calls == 3  # one per block


def test_every_primitive_under_the_numpy_namespace_builds_graphs(kept: Kept) -> None:
    x = tnp.arange(6, dtype="float32").reshape(2, 3)
    _ = tnp.sort(tnp.sum(tnp.sin(x) @ x.T, axis=0))
    assert kept.graphs
    assert all(isinstance(g, da.Array) for g in kept.graphs)


def test_a_data_safety_check_fails_when_computed_naming_the_operation(
    kept: Kept,
) -> None:
    big = tnp.asarray(np.array([1, 4_000_000_000], np.uint32))
    small = tnp.asarray(np.array([1, 2], np.int32))
    _ = big + small  # 32-bit mode: joined at int32, the values checked
    (checked,) = [g for g in kept.graphs if g.dtype == np.int32][:1]
    with pytest.raises(OverflowError, match="add: operand 0.*4000000000") as info:
        checked.compute()
    assert "convert_element_type" in " ".join(info.value.__notes__)


def test_the_same_error_as_the_numpy_backend_when_converted() -> None:
    big = tnp.asarray(np.array([1, 4_000_000_000], np.uint32))
    small = tnp.asarray(np.array([1, 2], np.int32))
    with pytest.raises(OverflowError) as numpy_error:
        _ = big + small
    with use(tdask.BACKEND), pytest.raises(OverflowError) as dask_error:
        _ = big + small
    assert str(dask_error.value) == str(numpy_error.value)


def test_int32_plus_float32_blocks_are_float32_half_of_dasks_float64() -> None:
    n, chunk = 40_000, 10_000
    i = da.arange(n, chunks=chunk, dtype=np.int32)
    f = da.ones(n, chunks=chunk, dtype=np.float32)
    impl = tdask.BACKEND.impl
    ours = impl(add_p)(
        impl(convert_element_type_p)(
            i, new_dtype=np.dtype(np.float32), weak_type=False
        ),
        f,
    )
    theirs = i + f  # Dask's (NumPy's) rules
    assert ours.dtype == np.float32 and theirs.dtype == np.float64
    assert ours.numblocks == (n // chunk,)
    ours_block = ours.blocks[1].compute()
    theirs_block = theirs.blocks[1].compute()
    assert ours_block.dtype == np.float32
    assert ours_block.nbytes * 2 == theirs_block.nbytes
    np.testing.assert_array_equal(ours_block, theirs_block.astype(np.float32))


def test_the_cast_runs_in_the_task_of_the_operation() -> None:
    """convert_element_type and add fuse into one task per block, as Dask's
    own int32 + float32: no full-size float32 copy of the int32 operand."""
    dask = pytest.importorskip("dask")
    i = da.ones(40, dtype=np.int32, chunks=10)
    f = da.full(40, 0.5, dtype=np.float32, chunks=10)
    impl = tdask.BACKEND.impl
    cast = impl(convert_element_type_p)(
        i, new_dtype=np.dtype(np.float32), weak_type=False
    )
    (ours,) = dask.optimize(impl(add_p)(cast, f))
    (theirs,) = dask.optimize(i + f)
    assert len(dict(ours.__dask_graph__())) == 4
    assert len(dict(theirs.__dask_graph__())) == 4
    np.testing.assert_array_equal(ours.compute(), np.full(40, 1.5, np.float32))


def test_the_namespace_gives_the_lattices_dtype_and_values() -> None:
    x = tnp.asarray(np.arange(5, dtype=np.int32))
    y = tnp.asarray(np.linspace(0, 1, 5, dtype=np.float32))
    expected = tnp.cumsum(x * y) / tnp.max(x)
    with use(tdask.BACKEND):
        got = tnp.cumsum(x * y) / tnp.max(x)
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def test_reductions_over_many_blocks_match_numpy() -> None:
    values = np.arange(-50, 50, dtype=np.int16).reshape(10, 10)
    x = da.from_array(values, chunks=3)
    impl = tdask.BACKEND.impl
    from typelattice._lax._reductions import argmax_p, reduce_max_p

    np.testing.assert_array_equal(
        impl(reduce_sum_p)(x, axes=(1,)).compute(),
        values.sum(axis=1, dtype=np.int16),
    )
    np.testing.assert_array_equal(
        impl(reduce_max_p)(x, axes=(0, 1)).compute(), values.max()
    )
    got = impl(argmax_p)(x, axes=(0,), index_dtype=np.dtype(np.int32)).compute()
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, values.argmax(axis=0))


def test_dot_general_over_blocks_matches_numpy() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 7, 5)).astype(np.float32)
    b = rng.standard_normal((3, 5, 4)).astype(np.float32)
    with use(tdask.BACKEND):
        got = lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
    want = lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    from typelattice._lax._dot import dot_general_p

    lazy = tdask.BACKEND.impl(dot_general_p)(
        da.from_array(a, chunks=(1, 4, 2)),
        da.from_array(b, chunks=(1, 3, 2)),
        dimension_numbers=(((2,), (1,)), ((0,), (0,))),
        preferred_element_type=None,
    )
    assert lazy.numblocks == (3, 2, 2)
    np.testing.assert_allclose(lazy.compute(), np.asarray(want), rtol=1e-6)


def _loss(w: Any) -> Any:
    return tnp.sum(tnp.tanh(w * tnp.arange(4, dtype="int32")) ** 2)


def test_a_distributed_cluster_computes_a_chunked_reduction_and_a_gradient() -> None:
    distributed = pytest.importorskip("dask.distributed")
    w = tnp.asarray(np.array([0.5, -1.0, 2.0, 0.25], np.float32))
    want = tl.grad(_loss)(w)
    values = np.arange(100_000, dtype=np.int32)
    with (
        distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=2,
            processes=False,
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster),
    ):
        x = da.from_array(values, chunks=10_000)
        total = tdask.BACKEND.impl(reduce_sum_p)(x, axes=(0,))
        assert int(total.compute()) == int(values.sum(dtype=np.int32))
        with use(tdask.BACKEND):
            got = tl.grad(_loss)(w)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_native_dask_arrays() -> None:
    values = np.arange(8, dtype=np.int32)
    x = tnp.asarray(da.from_array(values, chunks=4))
    assert x.backend == "dask"
    y = x + tnp.ones(8, dtype="float32", backend="dask")
    assert y.backend == "dask" and y.dtype == np.float32  # pyright: ignore
    np.testing.assert_array_equal(np.asarray(y), values + np.float32(1))


def test_the_module_contract() -> None:
    x = da.ones((2, 3), chunks=1, dtype=np.float16)
    assert tdask.owns(x) and not tdask.owns(np.ones(3))
    assert tdask.dtype_of(x) == np.float16
    assert tdask.shape_of(x) == (2, 3)
    assert tdask.device_of(x) == "cpu"
    assert tdask.put(x, "cpu") is x
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        tdask.shape_of(x[x > 0])
    with pytest.raises(ValueError, match="'cuda'"):
        tdask.from_numpy(np.ones(2), "cuda")
    table = tdask.support_table()
    assert set(table) >= {"add", "sort", "while", "dot_general"}
    assert table["add"]["bfloat16"].startswith("yes")
