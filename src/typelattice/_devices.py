"""The devices: one CPU, as JAX's CPU backend shows it.

Every typelattice array lives in the host's memory, computed by NumPy:
:func:`devices` lists the one device, ``CpuDevice(id=0)``, so that code
written for JAX (``jax.devices()``, ``x.devices()``, ``x.device``) runs
unchanged. This module is a leaf (it imports nothing of the array code):
the array base class gives every array its ``devices()`` from here.

>>> devices()
[CpuDevice(id=0)]
>>> default_backend(), device_count()
('cpu', 1)
"""

from __future__ import annotations

from typing import Any, Final

from typelattice import _config

__all__ = [
    "Device",
    "default_backend",
    "device_count",
    "device_name",
    "devices",
    "local_device_count",
    "local_devices",
    "process_count",
    "process_index",
]


class Device:
    """A device arrays live on (there is one: the host's CPU).

    Attributes:
      id: its number (0).
      platform: ``'cpu'``.
      device_kind: ``'cpu'``.
      process_index: the process that owns it (0).

    >>> d = devices()[0]
    >>> d, d.id, d.platform, d.device_kind
    (CpuDevice(id=0), 0, 'cpu', 'cpu')
    """

    __slots__ = ("device_kind", "id", "platform", "process_index")

    def __init__(self, id: int) -> None:  # noqa: A002 (JAX's attribute name)
        self.id = id
        self.platform = "cpu"
        self.device_kind = "cpu"
        self.process_index = 0

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})"

    def __str__(self) -> str:
        return f"TFRT_CPU_{self.id}"


CPU: Final = Device(0)


def device_name(device: object) -> str | None:
    """A device as the backends name it: ``'cpu'``, ``'cuda:0'``... (None
    stays None).

    Takes a name (kept as it is), this module's CPU device, a
    ``torch.device`` (its ``type`` and ``index``) or a CuPy device (its
    ``id``), recognised by their attributes: no library is imported.

    Raises:
      TypeError: anything else.

    >>> device_name(CPU), device_name('cuda:1'), device_name(None)
    ('cpu', 'cuda:1', None)
    """
    if device is None or type(device) is str:
        return device
    if device is CPU:
        return "cpu"
    kind = getattr(device, "type", None)
    if type(kind) is str:  # a torch.device
        index = getattr(device, "index", None)
        return kind if index is None else f"{kind}:{index}"
    number = getattr(device, "id", None)
    if type(number) is int and type(device).__module__.startswith("cupy"):
        return f"cuda:{number}"
    raise TypeError(
        f"{device!r:.60} is not a device: pass a name ('cpu', 'cuda', "
        "'cuda:1'), a torch.device or a CuPy device"
    )


def _check_backend(backend: object) -> None:
    if backend is not None and backend != "cpu" and backend is not CPU:
        raise RuntimeError(
            f"unknown backend {backend!r}: typelattice computes on the CPU "
            "only; pass backend='cpu' or None"
        )


def devices(backend: str | None = None) -> list[Device]:
    """The devices of a backend, as ``jax.devices``.

    Args:
      backend: ``'cpu'`` or None (the default backend, the CPU).

    Returns:
      ``[CpuDevice(id=0)]``.

    Raises:
      RuntimeError: another backend (``'gpu'``, ``'tpu'``...).

    >>> devices('cpu')
    [CpuDevice(id=0)]
    """
    _check_backend(backend)
    return [CPU]


def local_devices(
    process_index: int | None = None, backend: str | None = None
) -> list[Device]:
    """The devices of this process, as ``jax.local_devices``.

    Args:
      process_index: the process (None or 0: this one).
      backend: ``'cpu'`` or None.

    Returns:
      ``[CpuDevice(id=0)]``.

    Raises:
      ValueError: another process index.
      RuntimeError: another backend.

    >>> local_devices()
    [CpuDevice(id=0)]
    """
    if process_index not in (None, 0):
        raise ValueError(
            f"process_index={process_index!r}: typelattice runs as one process, "
            "index 0; pass process_index=None"
        )
    return devices(backend)


def device_count(backend: str | None = None) -> int:
    """How many devices there are, as ``jax.device_count``.

    Args:
      backend: ``'cpu'`` or None.

    Returns:
      1.

    >>> device_count()
    1
    """
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """How many devices this process has, as ``jax.local_device_count``.

    Args:
      backend: ``'cpu'`` or None.

    Returns:
      1.

    >>> local_device_count()
    1
    """
    return len(devices(backend))


def default_backend(backend: str | None = None, /, *, device: object = None) -> Any:  # noqa: E501
    """Scope in which new arrays are made on ``backend`` (and ``device``);
    without arguments, the platform of the default device, as
    ``jax.default_backend()``.

    Inside the scope, the creation functions of ``typelattice.numpy``
    (``zeros``, ``arange``, ``asarray`` of lists and scalars...), the keys
    of ``typelattice.random``, the parameters of ``typelattice.nn``, the
    zeros and seeds that ``grad`` makes and the results of elementwise
    functions of Python scalars alone give Arrays of that backend. Works
    as a context manager and as a decorator, for the thread and asyncio
    task that enter it; ``config.update('default_backend', name)`` and
    ``config.update('default_device', device)`` set it globally.

    Args:
      backend: ``'numpy'``, ``'torch'``, ``'cupy'`` or ``'dask'``; None to
        ask for the default device's platform.
      device: a device of that backend (``'cpu'``, ``'cuda'``,
        ``'cuda:1'``, a ``torch.device``, a CuPy device); None: the
        library's default.

    Returns:
      The scope (a context manager and decorator); without arguments,
      ``'cpu'`` or ``'gpu'``.

    Raises:
      ValueError: ``backend`` or ``device`` is not a name.

    >>> import typelattice
    >>> typelattice.default_backend()
    'cpu'
    >>> with typelattice.default_backend('numpy', device='cpu'):
    ...     typelattice.config.default_backend
    'numpy'
    """
    if backend is None:
        if device is not None:
            raise ValueError(
                "default_backend(device=...) needs the backend too: "
                "default_backend('torch', device='cuda')"
            )
        where = _config.current().default_device
        return "gpu" if where is not None and where.startswith("cuda") else "cpu"
    return _config._Settings(  # pyright: ignore[reportPrivateUsage]
        "default_backend", backend, {"default_device": device_name(device)}
    )


def process_index(backend: str | None = None) -> int:
    """The index of this process among those running the program, as
    ``jax.process_index``: 0 (typelattice runs as one process).

    Args:
      backend: ``'cpu'`` or None.

    Returns:
      0.

    Raises:
      RuntimeError: another backend.

    >>> process_index()
    0
    """
    _check_backend(backend)
    return 0


def process_count(backend: str | None = None) -> int:
    """How many processes run the program, as ``jax.process_count``: 1.

    Args:
      backend: ``'cpu'`` or None.

    Returns:
      1.

    Raises:
      RuntimeError: another backend.

    >>> process_count()
    1
    """
    _check_backend(backend)
    return 1
