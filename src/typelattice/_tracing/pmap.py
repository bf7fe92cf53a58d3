"""``pmap`` on the one device: ``jit`` of a named ``vmap``.

JAX's ``pmap`` runs a function on several devices at once, the mapped axis
of the arguments spread over them. typelattice has one device (the CPU, see
:mod:`typelattice._devices`), so a mapped axis has size 1, and mapping over
it is a ``vmap`` whose axis carries ``axis_name``: the collectives
(``lax.psum``, ``pmean``, ``all_gather``...) reduce over it as they do under
a named ``vmap``. The whole is compiled once per signature by ``jit``.
Programs written for ``pmap`` (``flax.jax_utils.replicate`` on the state,
``common_utils.shard`` on the batch) run unchanged.
"""

# Package-internal: reads the prefix matching of vmap's in_axes.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Hashable, Sequence
from typing import Any, cast

from typelattice import _devices
from typelattice._tracing import tree
from typelattice._tracing.batching import _broadcast_prefix, vmap
from typelattice._tracing.jit import jit

__all__ = ["pmap"]


def _argnums(value: int | Sequence[int], what: str) -> tuple[int, ...]:
    try:
        nums = (
            (operator.index(value),)
            if not isinstance(value, Sequence)
            else tuple(operator.index(v) for v in value)
        )
    except TypeError:
        raise TypeError(
            f"pmap: {what} must be an int or a tuple of ints, got {value!r:.60}"
        ) from None
    return nums


def _check_devices(devices: Sequence[Any] | None, backend: str | None) -> None:
    _devices._check_backend(backend)
    if devices is None:
        return
    listed = list(devices)
    if len(listed) != 1 or listed[0] is not _devices.CPU:
        raise ValueError(
            f"pmap: devices={listed!r} is not available: typelattice has one "
            "device, typelattice.devices() == [CpuDevice(id=0)]; pass "
            "devices=None"
        )


def _leaf_shape(leaf: Any) -> tuple[int, ...] | None:
    shape = getattr(leaf, "shape", None)
    return None if shape is None else tuple(shape)


def pmap(
    fun: Callable[..., Any],
    axis_name: Hashable | None = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Sequence[int] = (),
    devices: Sequence[Any] | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Sequence[int] = (),
    global_arg_shapes: Any = None,
) -> Callable[..., Any]:
    """Map ``fun`` over the devices, as ``jax.pmap``, on the one device.

    The mapped axis of the arguments must have one entry per local device:
    ``typelattice.local_device_count()``, which is 1. The result is
    ``jit(vmap(fun, in_axes, out_axes, axis_name=axis_name))``, with the
    static arguments passed as they are.

    Args:
      fun: the function to map.
      axis_name: the name the collectives (``lax.psum``, ``lax.pmean``,
        ``lax.all_gather``...) take for the mapped axis.
      in_axes: the mapped axis of each positional argument, as ``vmap``'s
        (an int, None, or a tuple of prefixes of the arguments). Keyword
        arguments are mapped along axis 0.
      out_axes: where the mapped axis goes in the results, as ``vmap``'s.
      static_broadcasted_argnums: positions of arguments passed to ``fun``
        as they are (hashable; each new value compiles again).
      devices: None, or ``[typelattice.devices()[0]]``.
      backend: None or ``'cpu'``.
      axis_size: the size of the mapped axis (1) when no argument is
        mapped.
      donate_argnums: accepted for JAX's signature; no buffer is reused
        (a result never aliases an argument).
      global_arg_shapes: accepted for JAX's signature; unused.

    Returns:
      The mapped function.

    Raises:
      ValueError: a mapped axis whose size is not the number of local
        devices (1); other devices than the one.
      TypeError: argument numbers that are not ints.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> f = tl.pmap(lambda x: tl.lax.psum(x, 'i'), axis_name='i')
    >>> f(tnp.asarray([[1.0, 2.0]]))
    Array([[1., 2.]], dtype=float32)
    """
    del donate_argnums, global_arg_shapes
    if not callable(fun):
        raise TypeError(f"pmap: expected a function, got {fun!r:.60}")
    _check_devices(devices, backend)
    static = _argnums(static_broadcasted_argnums, "static_broadcasted_argnums")
    count = _devices.local_device_count()
    if axis_size is not None and axis_size != count:
        raise ValueError(
            f"pmap: axis_size={axis_size}, but there is {count} local device; "
            f"pass axis_size={count}"
        )
    compiled: dict[tuple[Any, ...], Callable[..., Any]] = {}

    def mapped(*args: Any, **kwargs: Any) -> Any:
        positions = tuple(i % len(args) for i in static if -len(args) <= i < len(args))
        values = tuple(args[i] for i in positions)
        dynamic = tuple(a for i, a in enumerate(args) if i not in positions)
        axes: Any = in_axes
        if isinstance(in_axes, tuple | list) and positions:
            listed: list[Any] = list(cast("Sequence[Any]", in_axes))
            axes = tuple(a for i, a in enumerate(listed) if i not in positions)
        _check_size(axes, dynamic, kwargs, count)
        key = (positions, values)
        run = compiled.get(key)
        if run is None:

            def body(*dyn: Any, **kw: Any) -> Any:
                full = list(dyn)
                for i, v in zip(positions, values, strict=True):
                    full.insert(i, v)
                return fun(*full, **kw)

            run = jit(
                vmap(body, in_axes=axes, out_axes=out_axes, axis_name=axis_name,
                     axis_size=axis_size if axis_size is not None else None)
            )  # fmt: skip
            compiled[key] = run
        return run(*dynamic, **kwargs)

    functools.update_wrapper(mapped, fun)
    return mapped


def _check_size(axes: Any, args: tuple[Any, ...], kwargs: Any, count: int) -> None:
    """A ValueError naming the size when a mapped axis is not ``count``
    long (vmap itself reports malformed in_axes)."""
    if isinstance(axes, list):
        axes = tuple(cast("list[object]", axes))
    if isinstance(axes, tuple) and len(cast("tuple[object, ...]", axes)) != len(args):
        return
    try:
        found = _broadcast_prefix("in_axes", (axes, 0), (args, kwargs))
    except ValueError:
        return
    for leaf, a in zip(tree.leaves((args, kwargs)), found, strict=True):
        shape = _leaf_shape(leaf)
        if a is None or shape is None or not -len(shape) <= a < len(shape):
            continue
        if shape[a] != count:
            raise ValueError(
                f"pmap: the mapped axis {a} of an argument of shape {shape} has "
                f"size {shape[a]}, but there is {count} local device "
                f"(typelattice.local_device_count() == {count}); add a leading "
                f"axis of size {count}: replicate the state with "
                "typelattice.flax.jax_utils.replicate(tree), shard a batch with "
                "flax.training.common_utils.shard(batch), or use vmap to map "
                "over a larger axis"
            )
