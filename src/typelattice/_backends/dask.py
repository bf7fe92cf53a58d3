"""The Dask backend: every primitive builds a lazy ``dask.array`` graph.

Importing this module imports Dask; nothing imports it but the code that
asks for the backend. Nothing is computed when a primitive is applied: each
implementation adds tasks to the graph, and the values are computed when
the user asks (``.compute()``, ``np.asarray``, converting to NumPy). Each
task runs the NumPy backend's own implementation on NumPy blocks, so the
values, the casts (inside the block's kernel, in the result's dtype: an
int32 + float32 block is computed and stored as float32, half the bytes of
Dask's own float64) and the data-safety checks are the NumPy backend's. A
check fails when the graph is computed, with the NumPy backend's exception,
a note naming the primitive added.

How each primitive maps onto the graph:

- elementwise primitives: one ``map_blocks`` per primitive, block by block;
  a binary one whose operands the namespace converts first (``int32 +
  float32``) is one ``map_blocks`` with the conversion inside NumPy's ufunc
  (:meth:`DaskBackend.promoting`): no converted copy of a block, and one
  layer of the graph instead of two;
- reductions (``reduce_sum``, ``reduce_max``, ...): ``dask.array.reduction``,
  the NumPy implementation on each block, then on the partial results
  (floating point sums are added in another order than in one block:
  the values differ in the last bits);
- ``argmax``/``argmin``: the reduced axes gathered in one block each;
- shape primitives (``reshape``, ``transpose``, ``broadcast_in_dim``,
  ``concatenate``, ``slice``, ``rev``, ``squeeze``): the NumPy implementation
  on the Dask array, which Dask's ``__array_function__`` makes lazy; ``iota``
  from ``dask.array.arange``;
- ``dot_general``: ``dask.array.blockwise``, the contracted axes of each
  pair of blocks concatenated, the NumPy implementation on them;
- every other primitive (sorting, gathering and scattering, cumulative
  reductions, linear algebra, padding, dynamic slices, the control flow
  primitives): one task on the whole operands, still lazy, whose operands
  are gathered into one block when it runs (each must fit in a worker's
  memory). A ``while`` loop's predicate is computed inside that task.

Arrays are on ``'cpu'``: Dask's workers are the devices and it places the
tasks itself.
"""

# Package-internal: the implementations of the NumPy backend are reused.

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from typelattice import _dtypes
from typelattice._backends import _xp
from typelattice._backends._backend import NUMPY, Backend, use
from typelattice._lax._elementwise import convert_element_type_p
from typelattice._tracing.primitive import Primitive, ShapedArray

# (Dask has no type annotations: its modules are used untyped.)
da: Any = importlib.import_module("dask.array")
_delayed: Any = importlib.import_module("dask.delayed").delayed

__all__ = [
    "BACKEND",
    "ELEMENTWISE",
    "NAME",
    "DaskBackend",
    "copy",
    "device_of",
    "dtype_of",
    "from_numpy",
    "owns",
    "put",
    "register",
    "shape_of",
    "support_table",
    "to_numpy",
]

NAME: Final = "dask"

#: The primitives computed block by block: the result's element at an index
#: depends only on the operands' elements at that index.
ELEMENTWISE: Final = frozenset(
    """abs acos acosh add add_any and asin asinh atan atan2 atanh cbrt ceil
    clamp clz complex conj convert_element_type cos cosh digamma div eq erf
    erf_inv erfc exp exp2 expm1 floor ge gt imag integer_pow is_finite le
    lgamma log log1p logistic lt max min mul ne neg nextafter not or polygamma
    population_count pow real rem round rsqrt select_n shift_left
    shift_right_arithmetic shift_right_logical sign sin sinh sqrt sub tan tanh
    xor""".split()
)

#: Reductions whose partial results reduce again with the same primitive.
REDUCTIONS: Final = frozenset(
    "reduce_sum reduce_prod reduce_max reduce_min reduce_and reduce_or "
    "reduce_xor".split()
)

#: Shape primitives whose NumPy implementation Dask runs lazily itself
#: (through ``__array_function__`` and its methods).
LAZY_BY_PROTOCOL: Final = frozenset(
    "broadcast_in_dim reshape transpose squeeze rev concatenate slice".split()
)

#: The collectives, which compute nothing outside a named ``vmap``: their
#: NumPy implementation raises at once, as it does on NumPy.
UNBOUND: Final = frozenset("axis_index psum pmax pmin".split())

#: The primitives computed in one task on whole operands.
WHOLE: Final = "computed in one task on whole operands"


def owns(x: Any) -> bool:
    """Whether ``x`` is a Dask array."""
    return isinstance(x, da.Array)


def dtype_of(x: Any) -> np.dtype[Any]:
    """The dtype of Dask array ``x``."""
    dtype: np.dtype[Any] = np.dtype(x.dtype)
    return dtype


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of Dask array ``x``, of Python ints.

    Raises:
      ValueError: some of its sizes are unknown (after boolean indexing).
    """
    if any(math.isnan(d) for d in x.shape):
        raise ValueError(
            f"a Dask array of unknown size {x.shape}: call "
            "x.compute_chunk_sizes() first"
        )
    return tuple(int(d) for d in x.shape)


def device_of(x: Any) -> str:
    """``'cpu'``: Dask places the blocks on its workers itself."""
    return "cpu"


def from_numpy(a: Any, device: str | None = None) -> Any:
    """NumPy array ``a`` as a Dask array of automatic chunks (no copy).

    Raises:
      ValueError: ``device`` is not ``'cpu'``.
    """
    _check_device(device)
    return da.from_array(np.asarray(a), chunks="auto")


def to_numpy(x: Any) -> np.ndarray[Any, Any]:
    """Dask array ``x`` computed."""
    out: np.ndarray[Any, Any] = np.asarray(x.compute())
    return out


def copy(x: Any) -> Any:
    """A Dask array computing a copy of each of ``x``'s blocks (so that no
    block shares the memory of an array ``x`` was made from)."""
    return x.map_blocks(np.copy, dtype=x.dtype)


def put(x: Any, device: str) -> Any:
    """``x`` itself: Dask arrays are on ``'cpu'``."""
    _check_device(device)
    return x


def _check_device(device: str | None) -> None:
    if device not in (None, "cpu"):
        raise ValueError(
            f"the dask backend computes on device 'cpu', got device={device!r}: "
            "Dask places the blocks on its workers itself"
        )


# -- the implementations ----------------------------------------------------


class _Task:
    """A primitive's NumPy implementation as the function of Dask tasks:
    floating point warnings off (as the NumPy backend computes), a failing
    check noted with the primitive. ``keepdims`` makes it a reduction's
    function (``dask.array.reduction`` calls it with ``axis`` and
    ``keepdims``).

    Dask names a task by a hash of its function and arguments: a task
    function hashes by its primitive's name (a closure would be pickled to
    be hashed, at every operation), and pickles by that name too (for
    workers in other processes).
    """

    __slots__ = ("impl", "name", "reduces")

    def __init__(self, name: str, reduces: bool = False) -> None:
        self.name = name
        self.reduces = reduces
        self.impl = NUMPY.impl(_xp.primitives()[name])

    def __call__(self, *blocks: Any, **params: Any) -> Any:
        if self.reduces:
            return self._reduce(blocks[0], params["axis"], params["keepdims"])
        return self._compute(*blocks, **params)

    def _compute(self, *blocks: Any, **params: Any) -> Any:
        try:
            with np.errstate(all="ignore"):
                return self.impl(*blocks, **params)
        except Exception as e:
            e.add_note(f"(raised by primitive {self.name} computing a Dask array)")
            raise

    def _reduce(self, x: Any, axis: Any, keepdims: bool) -> Any:
        axes = tuple(sorted(axis))
        out = self._compute(x, axes=axes)
        return np.expand_dims(out, axes) if keepdims else out

    def __dask_tokenize__(self) -> tuple[str, str, bool]:
        return ("typelattice", self.name, self.reduces)

    def __reduce__(self) -> tuple[Any, tuple[str, bool]]:
        return (_Task, (self.name, self.reduces))

    def __repr__(self) -> str:
        return f"typelattice_{self.name}"


def _aval(x: Any) -> ShapedArray:
    return ShapedArray(shape_of(x), dtype_of(x), False)


def _out_avals(prim: Any, operands: Sequence[Any], params: dict[str, Any]) -> Any:
    out = prim.abstract_eval(*[_aval(x) for x in operands], **params)
    return tuple(out) if prim.multiple_results else (out,)


def _meta(aval: ShapedArray) -> np.ndarray[Any, Any]:
    # (given, Dask does not call the function on empty blocks to learn it)
    return np.empty((0,) * len(aval.shape), aval.dtype)


def _indexed(ops: Sequence[Any]) -> list[Any]:
    """``unify_chunks``' arguments: each array, then its axes' indices."""
    out: list[Any] = []
    for x in ops:
        out += [x, tuple(range(x.ndim))]
    return out


def _blocks(
    block: Callable[..., Any], out: ShapedArray, operands: Sequence[Any], **params: Any
) -> Any:
    """``block`` on the operands' blocks, one task per block of ``out``."""
    shape = out.shape
    ops = [x if x.shape == shape else da.broadcast_to(x, shape) for x in operands]
    if len(ops) > 1 and len({x.chunks for x in ops}) > 1:
        # Blocks of equal chunks only: the operands' own chunks may differ
        # (map_blocks pairs blocks by position, whatever their sizes).
        ops = list(da.core.unify_chunks(*_indexed(ops))[1])
    return da.map_blocks(block, *ops, dtype=out.dtype, meta=_meta(out), **params)


def _elementwise(prim: Any) -> Callable[..., Any]:
    block = _Task(prim.name)

    def run(*operands: Any, **params: Any) -> Any:
        (out,) = _out_avals(prim, operands, params)
        return _blocks(block, out, operands, **params)

    return run


class _InKernel:
    """The task of a binary primitive on blocks converted to ``common``
    inside NumPy's ufunc (``_xp.in_kernel``, whose values are those of
    converting each block with ``convert_element_type``, then the
    primitive's implementation). Hashed and pickled by the primitive's name
    and the dtypes, as :class:`_Task` by its name."""

    __slots__ = ("dtypes", "fn", "name")

    def __init__(
        self,
        name: str,
        dtypes: tuple[np.dtype[Any] | None, ...],
        fn: Callable[..., Any],
    ) -> None:
        self.name = name
        self.dtypes = dtypes
        self.fn = fn

    def __call__(self, x: Any, y: Any) -> Any:
        try:
            with np.errstate(all="ignore"):
                return self.fn(x, y)
        except Exception as e:
            e.add_note(f"(raised by primitive {self.name} computing a Dask array)")
            raise

    def __dask_tokenize__(self) -> tuple[str, ...]:
        return ("typelattice-in-kernel", self.name, *map(str, self.dtypes))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # (by the dtypes' names: an unpickled dtype is a copy, which NumPy
        # does not count as its builtin type)
        names = tuple(None if d is None else d.name for d in self.dtypes)
        return (_in_kernel_task, (self.name, names))

    def __repr__(self) -> str:
        return f"typelattice_{self.name}_in_{self.dtypes[-1]}"


def _in_kernel_task(
    name: str, dtypes: tuple[np.dtype[Any] | str | None, ...]
) -> _InKernel:
    """The :class:`_InKernel` task of primitive ``name`` on operands of
    ``dtypes[:-1]`` converted to ``dtypes[-1]`` (dtypes or their names, as
    unpickled on a worker)."""
    prim = _xp.primitives()[name]
    *ops, common = [_BY_NAME[d] if isinstance(d, str) else d for d in dtypes]
    assert common is not None
    fn = _xp.in_kernel(prim, ops, common, np)
    assert fn is not None, f"{name} on {dtypes} has no conversions in the kernel"
    return _InKernel(name, (*ops, common), fn)


#: Every dtype by its name.
_BY_NAME: Final = {dt.name: dt for dt in _dtypes.ALL_DTYPES}


class DaskBackend(Backend):
    """The Dask backend's table, which converts mixed operands of a binary
    primitive inside the task computing each block (:meth:`promoting`)."""

    __slots__ = ("made",)

    def __init__(self, name: str, **conversions: Any) -> None:
        super().__init__(name, **conversions)
        #: The implementations :func:`register` gave, by primitive.
        self.made: dict[Primitive, Callable[..., Any]] = {}

    def promoting(
        self, prim: Primitive, dtypes: list[np.dtype[Any] | None], common: np.dtype[Any]
    ) -> Callable[..., Any] | None:
        """One ``map_blocks`` computing ``prim`` on operands of ``dtypes``
        converted to ``common`` inside NumPy's ufunc on each block, where
        that equals converting each operand, then the primitive
        (``_xp.in_kernel``), and this backend still computes both with the
        implementations :func:`register` gave; else None."""
        if prim.name not in ELEMENTWISE or not _xp.kept(self, prim, self.made):
            return None
        if not _xp.kept(self, convert_element_type_p, self.made):
            return None
        if _xp.in_kernel(prim, dtypes, common, np) is None:
            return None
        block = _in_kernel_task(prim.name, (*dtypes, common))

        def run(x: Any, y: Any) -> Any:
            avals = [ShapedArray(shape_of(v), common, False) for v in (x, y)]
            return _blocks(block, prim.evaluate(avals, {}), (x, y))

        run.__name__ = repr(block)
        return _xp.guarded(self, prim, dtypes, common, self.made, run)


def _reduction(prim: Any) -> Callable[..., Any]:
    block = _Task(prim.name)
    part = _Task(prim.name, reduces=True)

    def run(x: Any, *, axes: Sequence[int]) -> Any:
        (out,) = _out_avals(prim, (x,), {"axes": axes})
        if not axes:
            return da.map_blocks(block, x, dtype=out.dtype, meta=_meta(out), axes=())
        return da.reduction(
            x,
            part,
            part,
            axis=tuple(axes),
            keepdims=False,
            dtype=out.dtype,
            meta=_meta(out),
            concatenate=True,
            name=f"typelattice-{prim.name}",
        )

    return run


def _arg_reduction(prim: Any) -> Callable[..., Any]:
    block = _Task(prim.name)

    def run(x: Any, **params: Any) -> Any:
        (out,) = _out_avals(prim, (x,), params)
        axes = tuple(params["axes"])
        whole = x.rechunk({a: -1 for a in axes})
        return da.map_blocks(
            block, whole, drop_axis=axes, dtype=out.dtype, meta=_meta(out), **params
        )

    return run


def _dot_general(prim: Any) -> Callable[..., Any]:
    block = _Task(prim.name)

    def run(lhs: Any, rhs: Any, **params: Any) -> Any:
        (out,) = _out_avals(prim, (lhs, rhs), params)
        (lc, rc), (lb, rb) = params["dimension_numbers"]
        # One index name per axis: batch axes b<k>, contracted axes c<k>
        # (absent from the result: Dask concatenates their blocks), free
        # axes l<i> and r<i>; the result's order is dot_general's.
        left = [
            f"b{lb.index(i)}" if i in lb else f"c{lc.index(i)}" if i in lc else f"l{i}"
            for i in range(lhs.ndim)
        ]
        right = [
            f"b{rb.index(i)}" if i in rb else f"c{rc.index(i)}" if i in rc else f"r{i}"
            for i in range(rhs.ndim)
        ]
        result = [f"b{k}" for k in range(len(lb))]
        result += [n for n in left if n[0] == "l"] + [n for n in right if n[0] == "r"]
        return da.blockwise(
            block,
            tuple(result),
            lhs,
            tuple(left),
            rhs,
            tuple(right),
            concatenate=True,
            dtype=out.dtype,
            meta=_meta(out),
            **params,
        )

    return run


def _iota() -> Callable[..., Any]:
    def run(*, dtype: Any, shape: Sequence[int], dimension: int) -> Any:
        # int64 counts cast to the dtype (integers wrap, as the NumPy
        # backend's and XLA's), broadcast lazily.
        counts = da.arange(shape[dimension], chunks="auto").astype(dtype)
        view = [1] * len(shape)
        view[dimension] = shape[dimension]
        return da.broadcast_to(counts.reshape(view), tuple(shape))

    return run


def _whole_task(
    several: bool, impl: Callable[..., Any], params: dict[str, Any], *values: Any
) -> Any:
    with use(NUMPY), np.errstate(all="ignore"):
        out = impl(*[np.asarray(v) for v in values], **params)
    return tuple(out) if several else out


def _whole(prim: Any) -> Callable[..., Any]:
    """``prim`` on whole operands, in one lazy task per application."""
    block = _Task(prim.name)
    several = prim.multiple_results

    def run(*operands: Any, **params: Any) -> Any:
        outs = _out_avals(prim, operands, params)
        fn = functools.partial(_whole_task, several, block, params)
        task = _delayed(fn, pure=False, nout=len(outs) if several else None)(*operands)
        tasks = task if several else (task,)
        arrays = tuple(
            da.from_delayed(t, shape=a.shape, dtype=a.dtype, meta=_meta(a))
            for t, a in zip(tasks, outs, strict=True)
        )
        return arrays if several else arrays[0]

    return run


def how(name: str) -> str:
    """How the Dask backend computes primitive ``name`` (for the support
    table).

    >>> how("add"), how("sort")
    ('yes: block by block', 'yes: computed in one task on whole operands')
    """
    if name in ELEMENTWISE:
        return "yes: block by block"
    if name in REDUCTIONS:
        return "yes: a tree reduction of the blocks"
    if name in ("argmax", "argmin"):
        return "yes: the reduced axes in one block"
    if name in LAZY_BY_PROTOCOL or name in ("iota", "dot_general"):
        return "yes: block by block"
    if name in UNBOUND:
        return "yes: inside a named vmap only, as on NumPy"
    return f"yes: {WHOLE}"


def register(backend: Backend) -> Backend:
    """Give ``backend`` every primitive on Dask arrays, lazily."""
    for name, prim in _xp.primitives().items():
        impl = NUMPY.impl(prim)
        if name in ELEMENTWISE:
            fn = _elementwise(prim)
        elif name in REDUCTIONS:
            fn = _reduction(prim)
        elif name in ("argmax", "argmin"):
            fn = _arg_reduction(prim)
        elif name in LAZY_BY_PROTOCOL or name in UNBOUND:
            fn = impl
        elif name == "iota":
            fn = _iota()
        elif name == "dot_general":
            fn = _dot_general(prim)
        else:
            fn = _whole(prim)
        if isinstance(backend, DaskBackend):
            backend.made[prim] = fn
        backend.def_impl(prim, fn)
    return backend


BACKEND: Final = DaskBackend(NAME, from_numpy=from_numpy, to_numpy=to_numpy)
register(BACKEND)


def support_table() -> dict[str, dict[str, str]]:
    """Primitive name -> dtype name -> 'yes: how' (Dask holds every dtype
    NumPy does, those of ml_dtypes included).

    >>> support_table()["reduce_sum"]["float32"]
    'yes: a tree reduction of the blocks'
    """
    table = _xp.support_table(BACKEND, {}, frozenset())
    return {name: dict.fromkeys(row, how(name)) for name, row in table.items()}
