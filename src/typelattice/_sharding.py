"""Shardings on one device, as ``jax.sharding`` (the public names are in
:mod:`typelattice.sharding`).

JAX programs say how arrays are laid out across a mesh of devices: a
:class:`Mesh` names the axes of a grid of devices, a :class:`PartitionSpec`
says which mesh axis splits each axis of an array, and a
:class:`NamedSharding` pairs the two. typelattice computes on one device
(``typelattice.devices()``): these objects are built and checked as JAX's
(a spec names only the mesh's axes, each once; a mesh holds devices), so
that the same programs run, and every array stays whole on that device.

>>> import numpy as np, typelattice as tl
>>> from typelattice._sharding import Mesh, NamedSharding, PartitionSpec
>>> mesh = Mesh(np.array(tl.devices()).reshape(1, 1), ('data', 'model'))
>>> s = NamedSharding(mesh, PartitionSpec('data', None))
>>> s.is_fully_replicated, s.device_set
(True, {CpuDevice(id=0)})
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Sequence
from types import TracebackType
from typing import Any, Final

import numpy as np

from typelattice import _devices
from typelattice._tracing import tree

__all__ = [
    "Mesh",
    "NamedSharding",
    "P",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "check_tree",
    "get_mesh",
    "set_mesh",
    "with_sharding_constraint",
]


def _entry_names(entry: Any) -> tuple[Any, ...]:
    """The names in one entry of a PartitionSpec (a name, a tuple, None)."""
    if isinstance(entry, tuple):
        names: tuple[Any, ...] = entry  # pyright: ignore[reportUnknownVariableType]
        return names
    return (entry,)


class PartitionSpec(tuple[Any, ...]):
    """How each axis of an array would be split across a device mesh: one
    entry per axis, a mesh axis name, a tuple of names, or None (not split).
    A tuple, so it compares equal to the tuple of its entries.

    Args:
      *entries: one per array axis (trailing axes left out are not split).

    Raises:
      TypeError: an entry is not a name, a tuple of names or None.

    >>> spec = PartitionSpec('data', None)
    >>> spec, spec == ('data', None)
    (PartitionSpec('data', None), True)
    """

    __slots__ = ()

    def __new__(cls, *entries: Any) -> PartitionSpec:
        for entry in entries:
            for name in _entry_names(entry):
                if name is not None and not isinstance(name, str):
                    raise TypeError(
                        f"PartitionSpec: each entry must be a mesh axis name, a "
                        f"tuple of names or None, got {entry!r:.60}"
                    )
        return super().__new__(cls, entries)

    def __repr__(self) -> str:
        entries: tuple[Any, ...] = tuple(self)
        return f"PartitionSpec{entries!r}"

    def __getnewargs__(self) -> tuple[Any, ...]:  # (pickles: the entries)
        return tuple(self)

    def _axis_names(self) -> list[str]:
        out: list[str] = []
        for entry in self:
            out += [n for n in _entry_names(entry) if n is not None]
        return out


#: ``typelattice.P``, as ``jax.P``: the short name of PartitionSpec.
P = PartitionSpec


class Mesh:
    """A grid of devices with named axes (``jax.sharding.Mesh``); usable as
    a ``with`` block that makes it the mesh in effect.

    Args:
      devices: an array (or nested sequence) of typelattice devices, one
        axis per name.
      axis_names: the name of each axis (a string for a 1-d mesh).

    Raises:
      TypeError: an element is not a typelattice device, or a name is not a
        string.
      ValueError: the names do not match the axes, a name repeats, or a
        device repeats.

    >>> import numpy as np, typelattice as tl
    >>> mesh = Mesh(np.array(tl.devices()), 'data')
    >>> mesh.shape, mesh.size, mesh.axis_names
    ({'data': 1}, 1, ('data',))
    """

    def __init__(self, devices: Any, axis_names: str | Sequence[str]) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        for name in names:
            if not isinstance(name, str):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise TypeError(
                    f"Mesh: axis names must be strings, got {name!r:.60} in "
                    f"{names!r:.80}"
                )
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh: the axis names {names} repeat a name")
        grid = np.empty(np.shape(np.asarray(devices, dtype=object)), dtype=object)
        grid[...] = np.asarray(devices, dtype=object)
        if grid.ndim != len(names):
            raise ValueError(
                f"Mesh: devices of shape {grid.shape} need {grid.ndim} axis "
                f"names, got {len(names)}: {names}"
            )
        flat = list(grid.flat)
        for d in flat:
            if not isinstance(d, _devices.Device):
                raise TypeError(
                    f"Mesh: {d!r:.60} is not a device; build the mesh from "
                    "typelattice.devices()"
                )
        if len({id(d) for d in flat}) != len(flat):
            raise ValueError(f"Mesh: a device appears twice in {flat}")
        grid.flags.writeable = False
        self.devices: np.ndarray[Any, np.dtype[Any]] = grid
        self.axis_names: tuple[str, ...] = names

    @property
    def shape(self) -> dict[str, int]:
        """The size of each axis, by name."""
        return dict(zip(self.axis_names, self.devices.shape, strict=True))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        """The size of each axis."""
        return tuple(self.devices.shape)

    @property
    def size(self) -> int:
        """The number of devices."""
        return int(self.devices.size)

    @property
    def empty(self) -> bool:
        """Whether the mesh holds no device."""
        return self.size == 0

    @property
    def device_ids(self) -> np.ndarray[Any, np.dtype[Any]]:
        """The devices' ids, in the mesh's shape."""
        ids = [d.id for d in self.devices.flat]
        return np.array(ids, dtype=int).reshape(self.devices.shape)

    @property
    def local_devices(self) -> list[_devices.Device]:
        """The devices of this process (all of them)."""
        return list(self.devices.flat)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Mesh)
            and self.axis_names == other.axis_names
            and self.devices.shape == other.devices.shape
            and all(
                a is b
                for a, b in zip(self.devices.flat, other.devices.flat, strict=True)
            )
        )

    def __hash__(self) -> int:
        return hash((self.axis_names, tuple(id(d) for d in self.devices.flat)))

    def __repr__(self) -> str:
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape.items())
        return f"Mesh(axis_sizes={{{axes}}})"

    def __enter__(self) -> Mesh:
        _MESHES.append(self)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        _MESHES.pop()


_MESHES: Final[list[Mesh]] = []


def get_mesh() -> Mesh | None:
    """The mesh in effect (the innermost ``with mesh:`` or ``set_mesh``),
    or None.

    Returns:
      The mesh, or None outside any.

    >>> get_mesh() is None
    True
    """
    return _MESHES[-1] if _MESHES else None


@contextlib.contextmanager
def set_mesh(mesh: Mesh) -> Generator[Mesh]:
    """Make ``mesh`` the mesh in effect inside a ``with`` block
    (``jax.set_mesh``).

    Args:
      mesh: a :class:`Mesh`.

    Returns:
      A context manager yielding the mesh.

    Raises:
      TypeError: ``mesh`` is not a Mesh.

    >>> import numpy as np, typelattice as tl
    >>> with tl.set_mesh(Mesh(np.array(tl.devices()), 'data')) as mesh:
    ...     get_mesh() is mesh
    True
    >>> get_mesh() is None
    True
    """
    if not isinstance(mesh, Mesh):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(f"set_mesh: expected a Mesh, got {mesh!r:.60}")
    with mesh:
        yield mesh


class Sharding:
    """How an array is laid out across devices (the base class of
    ``jax.sharding``'s shardings). On one device every array is whole
    there: each sharding is fully replicated and addressable.

    >>> import typelattice as tl
    >>> s = SingleDeviceSharding(tl.devices()[0])
    >>> isinstance(s, Sharding), s.is_fully_replicated, s.num_devices
    (True, True, 1)
    """

    @property
    def device_set(self) -> set[_devices.Device]:
        """The devices the array lives on."""
        raise NotImplementedError

    @property
    def addressable_devices(self) -> set[_devices.Device]:
        """The devices of this process the array lives on."""
        return self.device_set

    @property
    def is_fully_replicated(self) -> bool:
        """Whether each device holds the whole array (True on one device)."""
        return True

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process holds every shard (True: one process)."""
        return True

    @property
    def num_devices(self) -> int:
        """The number of devices."""
        return len(self.device_set)

    @property
    def memory_kind(self) -> str | None:
        """The kind of memory (None: the device's default)."""
        return None

    def check_shape(self, shape: Sequence[int], where: str = "sharding") -> None:
        """Check that an array of ``shape`` can have this sharding.

        Args:
          shape: the array's shape.
          where: what the message names.

        Raises:
          ValueError: the sharding names more axes than the array has.

        >>> import typelattice as tl
        >>> SingleDeviceSharding(tl.devices()[0]).check_shape((2, 3))
        """
        del shape, where

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of one device's shard of an array of ``global_shape``.

        Args:
          global_shape: the array's shape.

        Returns:
          The same shape (one device holds the whole array).

        >>> import typelattice as tl
        >>> SingleDeviceSharding(tl.devices()[0]).shard_shape((2, 3))
        (2, 3)
        """
        self.check_shape(global_shape)
        return tuple(global_shape)


class SingleDeviceSharding(Sharding):
    """The whole array on one device (``jax.sharding.SingleDeviceSharding``).

    Args:
      device: a typelattice device.

    Raises:
      TypeError: ``device`` is not a typelattice device.

    >>> import typelattice as tl
    >>> SingleDeviceSharding(tl.devices()[0]).device_set
    {CpuDevice(id=0)}
    """

    def __init__(self, device: _devices.Device) -> None:
        if not isinstance(device, _devices.Device):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                f"SingleDeviceSharding: {device!r:.60} is not a device; pass "
                "typelattice.devices()[0]"
            )
        self._device = device

    @property
    def device_set(self) -> set[_devices.Device]:
        """The one device."""
        return {self._device}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding) and other._device is self._device

    def __hash__(self) -> int:
        return hash(("SingleDeviceSharding", id(self._device)))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r})"


class NamedSharding(Sharding):
    """An array split along a mesh's named axes
    (``jax.sharding.NamedSharding``): ``spec`` gives, per array axis, the
    mesh axes that split it.

    Args:
      mesh: a :class:`Mesh`.
      spec: a :class:`PartitionSpec` naming only ``mesh``'s axes, each at
        most once.

    Raises:
      TypeError: ``mesh`` is not a Mesh or ``spec`` not a PartitionSpec.
      ValueError: ``spec`` names an axis the mesh lacks, or one twice.

    >>> import numpy as np, typelattice as tl
    >>> mesh = Mesh(np.array(tl.devices()), ('data',))
    >>> NamedSharding(mesh, PartitionSpec('data'))
    NamedSharding(mesh=Mesh(axis_sizes={'data': 1}), spec=PartitionSpec('data',))
    >>> NamedSharding(mesh, PartitionSpec('model'))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: NamedSharding: PartitionSpec('model',) names the axis 'model', ...
    """

    def __init__(self, mesh: Mesh, spec: PartitionSpec) -> None:
        if not isinstance(mesh, Mesh):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"NamedSharding: expected a Mesh, got {mesh!r:.60}")
        if not isinstance(spec, PartitionSpec):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                f"NamedSharding: expected a PartitionSpec, got {spec!r:.60}; "
                "wrap the axis names: PartitionSpec('data', None)"
            )
        used = spec._axis_names()  # pyright: ignore[reportPrivateUsage]
        for name in used:
            if name not in mesh.axis_names:
                raise ValueError(
                    f"NamedSharding: {spec!r} names the axis {name!r}, which the "
                    f"mesh (axes {mesh.axis_names}) lacks"
                )
            if used.count(name) > 1:
                raise ValueError(
                    f"NamedSharding: {spec!r} uses the mesh axis {name!r} more "
                    "than once"
                )
        self.mesh = mesh
        self.spec = spec

    @property
    def device_set(self) -> set[_devices.Device]:
        """The mesh's devices."""
        return set(self.mesh.devices.flat)

    def check_shape(self, shape: Sequence[int], where: str = "sharding") -> None:
        """Check that an array of ``shape`` can have this sharding.

        Args:
          shape: the array's shape.
          where: what the message names.

        Raises:
          ValueError: the spec has more entries than the array has axes, or
            an axis does not split evenly over its mesh axes.

        >>> import numpy as np, typelattice as tl
        >>> mesh = Mesh(np.array(tl.devices()), ('data',))
        >>> s = NamedSharding(mesh, PartitionSpec('data', None))
        >>> s.check_shape((4,))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: sharding: PartitionSpec('data', None) has 2 entries, more than ...
        """
        if len(self.spec) > len(shape):
            raise ValueError(
                f"{where}: {self.spec!r} has {len(self.spec)} entries, more than "
                f"the {len(shape)} axes of an array of shape {tuple(shape)}"
            )
        sizes = self.mesh.shape
        for axis, entry in enumerate(self.spec):
            names = _entry_names(entry)
            parts = int(np.prod([sizes[n] for n in names if n is not None]))
            if shape[axis] % parts:
                raise ValueError(
                    f"{where}: axis {axis} of an array of shape {tuple(shape)} "
                    f"does not split into {parts} equal parts ({self.spec!r})"
                )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, NamedSharding)
            and self.mesh == other.mesh
            and tuple(self.spec) == tuple(other.spec)
        )

    def __hash__(self) -> int:
        return hash((self.mesh, tuple(self.spec)))

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


def _as_sharding(value: Any, where: str) -> Sharding | None:
    """A sharding argument as a Sharding (a PartitionSpec with the mesh in
    effect; None stays None)."""
    if value is None or isinstance(value, Sharding):
        return value
    if isinstance(value, PartitionSpec):
        mesh = get_mesh()
        if mesh is None:
            raise ValueError(
                f"{where}: the PartitionSpec {value!r} needs a mesh; use it "
                "inside `with mesh:` or pass NamedSharding(mesh, spec)"
            )
        return NamedSharding(mesh, value)
    raise TypeError(
        f"{where}: expected a Sharding, a PartitionSpec or None, got {value!r:.60}"
    )


def _is_sharding_leaf(x: Any) -> bool:
    return x is None or isinstance(x, Sharding | PartitionSpec)


def check_tree(shardings: Any, values: Any, where: str) -> None:
    """Check ``shardings`` against ``values``: a sharding (or None) for
    each subtree of a prefix of ``values``, each fitting the shapes of the
    arrays there.

    Args:
      shardings: a pytree prefix of ``values`` with shardings,
        PartitionSpecs or None as leaves.
      values: the pytree of arrays (or of values with a ``shape``).
      where: what the messages name.

    Raises:
      ValueError: ``shardings`` is not a prefix of ``values``, or a
        sharding names more axes than an array has.
      TypeError: a leaf of ``shardings`` is not a sharding.
    """
    leaves, structure = tree.flatten(shardings, is_leaf=_is_sharding_leaf)
    try:
        subtrees = structure.flatten_up_to(values)
    except ValueError as err:
        raise ValueError(
            f"{where}: the shardings must be a pytree prefix of the values ({err})"
        ) from None
    for leaf, subtree in zip(leaves, subtrees, strict=True):
        sharding = _as_sharding(leaf, where)
        if sharding is None:
            continue
        for value in tree.leaves(subtree):
            shape = getattr(value, "shape", None)
            sharding.check_shape(() if shape is None else tuple(shape), where)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x``, its layout constrained to ``shardings``
    (``jax.lax.with_sharding_constraint``): checked, then returned as it is
    (one device holds every array whole).

    Args:
      x: a pytree of arrays.
      shardings: a pytree prefix of ``x`` with shardings or PartitionSpecs
        (these with a mesh in effect) as leaves.

    Returns:
      ``x``.

    Raises:
      ValueError: ``shardings`` is not a prefix of ``x`` or does not fit
        the shapes of its arrays.

    >>> import numpy as np, typelattice as tl
    >>> mesh = Mesh(np.array(tl.devices()), ('data',))
    >>> x = tl.numpy.ones((2, 3))
    >>> s = NamedSharding(mesh, PartitionSpec('data'))
    >>> tl.lax.with_sharding_constraint(x, s) is x
    True
    """
    check_tree(shardings, x, "with_sharding_constraint")
    return x


# Reprs and pickles use the public module.
for _cls in (Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding):
    _cls.__module__ = "typelattice.sharding"
del _cls
