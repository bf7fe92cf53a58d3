"""The :class:`Backend` type, the NumPy backend, and the scoped choice of the
backend that computes.

A backend implements primitives, and converts its arrays from and to
NumPy's; nothing else. What a primitive means is its own: the abstract
evaluation (dtypes, shapes, weak flags, the checks and their errors), the
differentiation rules and the recording under ``jit`` are registered on the
primitive (:mod:`typelattice._tracing.primitive`) and are the same whatever
computes. A backend holds, per primitive:

- an implementation, ``impl(*values, **params)``: the operands' values (the
  backend's arrays) and the primitive's parameters in, the result's value
  out (a tuple of them for a primitive of several results), of the dtype
  and shape the abstract evaluation announced;
- optionally a fast rule, ``rule(*avals, **params)``: for operands of these
  abstract values, a function of the values alone computing what the
  implementation computes (a NumPy ufunc, without the implementation's
  conversions), or None. It only saves work: its answers are the
  implementation's.

Arrays cross at the edges: ``from_numpy`` converts each operand's NumPy
value (an array holds a NumPy array), ``to_numpy`` each result. The NumPy
backend's are the identity and :func:`numpy.asarray`.

Which backend computes is scoped, as the configuration is: :func:`current`
is the NumPy backend unless :func:`use` is in force in this thread or
asyncio task. The eager plans that ``Primitive.bind`` keeps on each
primitive, which the C accelerator reads, are the NumPy backend's, and the
C accelerator binds only while no other backend is in force in any thread
(:data:`IN_USE` is empty); every other binding goes to the Python
``Primitive.bind``, which asks :func:`current`. So the backend is in force
while its scope is open: an asyncio task started inside the scope and
still running after it closed may compute with the NumPy backend from then on.

A ``jit`` program calls the implementations of the backend in force when it
is generated; a jitted function keeps one program per backend, so a call
under another backend traces again and runs that backend's implementations.

The backends of other array libraries (torch, CuPy, Dask) are not chosen
by a scope: an Array holds the library's array itself
(``typelattice._array.BackendArray``), and ``Primitive.bind`` computes
with the backend of its operands, on their native values, the results
staying on their device (docs/backends.md). Their modules are named in
:data:`MODULES` and :data:`LIBRARIES` and imported when first needed
(:func:`named`, :func:`of_native`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Generator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final

import numpy as np

if TYPE_CHECKING:
    from typelattice._tracing.primitive import Primitive

__all__ = [
    "IN_USE",
    "LIBRARIES",
    "MODULES",
    "NUMPY",
    "Backend",
    "current",
    "named",
    "of_native",
    "use",
]

Impl = Callable[..., Any]
FastRule = Callable[..., Callable[..., Any] | None]


def _same(value: Any) -> Any:
    return value


class Backend:
    """A table of primitive implementations and the conversions of arrays.

    Args:
      name: shown in errors.
      from_numpy: converts an operand's NumPy value to the backend's array.
      to_numpy: converts a result to a NumPy array.

    >>> b = Backend("doubling")
    >>> b
    Backend('doubling')
    >>> from typelattice._lax._elementwise import neg_p
    >>> b.implements(neg_p), NUMPY.implements(neg_p)
    (False, True)
    """

    __slots__ = (
        "copy",
        "device_of",
        "dtype_of",
        "fast",
        "from_numpy",
        "impls",
        "name",
        "owns",
        "put",
        "shape_of",
        "to_numpy",
    )

    name: str
    #: The implementation of each primitive this backend computes.
    impls: dict[Primitive, Impl]
    #: The fast rules, for some of them (see the module's notes).
    fast: dict[Primitive, FastRule]
    from_numpy: Callable[..., Any]
    to_numpy: Callable[[Any], Any]
    #: The functions of a backend whose arrays are held natively by
    #: Arrays (see :mod:`typelattice._backends`, the module contract); None
    #: for a backend that only computes inside :func:`use`.
    owns: Callable[[Any], bool] | None
    dtype_of: Callable[[Any], np.dtype[Any]] | None
    shape_of: Callable[[Any], tuple[int, ...]] | None
    device_of: Callable[[Any], str] | None
    put: Callable[[Any, str], Any] | None
    #: A copy of an array on its device, sharing nothing with it.
    copy: Callable[[Any], Any] | None

    def __init__(
        self,
        name: str,
        *,
        from_numpy: Callable[..., Any] = _same,
        to_numpy: Callable[[Any], Any] = np.asarray,
        owns: Callable[[Any], bool] | None = None,
        dtype_of: Callable[[Any], np.dtype[Any]] | None = None,
        shape_of: Callable[[Any], tuple[int, ...]] | None = None,
        device_of: Callable[[Any], str] | None = None,
        put: Callable[[Any, str], Any] | None = None,
        copy: Callable[[Any], Any] | None = None,
    ) -> None:
        self.name = name
        self.impls = {}
        self.fast = {}
        self.from_numpy = from_numpy
        self.to_numpy = to_numpy
        self.owns = owns
        self.dtype_of = dtype_of
        self.shape_of = shape_of
        self.device_of = device_of
        self.put = put
        self.copy = copy

    def __repr__(self) -> str:
        return f"Backend({self.name!r})"

    def def_impl(self, prim: Primitive, impl: Impl) -> Impl:
        """Register ``prim``'s implementation; returns it."""
        self.impls[prim] = impl
        # (The plans kept on the primitive name the old implementation.)
        if self is NUMPY:
            prim.eager.clear()
        prim.native.clear()
        return impl

    def def_fast(self, prim: Primitive, rule: FastRule) -> FastRule:
        """Register ``prim``'s fast rule; returns it."""
        self.fast[prim] = rule
        if self is NUMPY:
            prim.eager.clear()
        return rule

    def implements(self, prim: Primitive) -> bool:
        """Whether this backend computes ``prim``."""
        return prim in self.impls

    def promoting(
        self, prim: Primitive, dtypes: list[np.dtype[Any] | None], common: np.dtype[Any]
    ) -> Impl | None:
        """A function computing ``prim`` (without parameters) on operands of
        ``dtypes`` (None: of ``common`` already) as if each were first
        converted to ``common`` by ``convert_element_type`` without checks,
        with the conversions inside the primitive's kernel (no full-size
        converted copy); or None, as here, where the backend has none. It
        only saves work: its answers are the conversions' and the
        implementation's."""
        return None

    def impl(self, prim: Primitive) -> Impl:
        """``prim``'s implementation.

        Raises:
          NotImplementedError: this backend has none.
        """
        impl = self.impls.get(prim)
        if impl is None:
            if self is NUMPY:
                raise NotImplementedError(f"primitive {prim.name} has no rules")
            raise NotImplementedError(
                f"the {self.name} backend does not implement primitive "
                f"{prim.name}: register one with backend.def_impl(primitive, "
                "function), or compute it with the NumPy backend"
            )
        return impl


#: The first backend, and the default: the implementations registered with
#: ``Primitive.def_impl`` and ``Primitive.def_fast``, on NumPy arrays.
NUMPY: Final = Backend("numpy")

_active: ContextVar[Backend] = ContextVar("typelattice_backend", default=NUMPY)

#: The backends other than NumPy's in force, in any thread: while it is
#: empty, every binding computes with the NumPy backend (hot paths test it
#: before asking :func:`current`, and the C accelerator binds only then).
IN_USE: Final[list[Backend]] = []


def current() -> Backend:
    """The backend computing in this thread (or task).

    >>> current()
    Backend('numpy')
    """
    return _active.get()


@contextmanager
def use(backend: Backend) -> Generator[Backend]:
    """Compute with ``backend`` in this thread (or task) inside the scope.

    Raises:
      TypeError: ``backend`` is not a :class:`Backend`.

    >>> with use(Backend("empty")) as b:
    ...     current()
    Backend('empty')
    >>> current()
    Backend('numpy')
    """
    if not isinstance(backend, Backend):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(
            f"use(backend) takes a Backend, got {backend!r:.60}; the default "
            "one is typelattice._backends.NUMPY"
        )
    token = _active.set(backend)
    other = backend is not NUMPY
    if other:
        IN_USE.append(backend)
    try:
        yield backend
    finally:
        if other:
            IN_USE.remove(backend)
        _active.reset(token)


# -- the backends whose arrays Arrays hold ----------------------------------
#
# A backend of another array library is a module (imported when first
# needed: importing typelattice never imports torch, CuPy or Dask) that
# defines NAME, owns, dtype_of, shape_of, device_of, from_numpy, to_numpy,
# put and BACKEND (docs/backends.md, "Writing a backend").

#: The module of each backend, by the backend's name.
MODULES: Final[dict[str, str]] = {
    "torch": "typelattice._backends.torch",
    "cupy": "typelattice._backends.cupy",
    "dask": "typelattice._backends.dask",
}

#: The backend of each array library's arrays, by the top-level module of
#: their type (``type(x).__module__``'s first part).
LIBRARIES: Final[dict[str, str]] = {"torch": "torch", "cupy": "cupy", "dask": "dask"}

_LOADED: dict[str, Backend] = {"numpy": NUMPY}

_FIELDS: Final = ("owns", "dtype_of", "shape_of", "device_of", "put", "copy")


def named(name: str) -> Backend:
    """The backend called ``name``, its module imported on first use.

    Raises:
      ValueError: no backend has that name.
      ImportError: its library is not installed (naming the extra).

    >>> named('numpy')
    Backend('numpy')
    """
    found = _LOADED.get(name)
    if found is not None:
        return found
    module_name = MODULES.get(name)
    if module_name is None:
        known = ", ".join(repr(n) for n in ["numpy", *MODULES])
        raise ValueError(f"unknown backend {name!r}: the backends are {known}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ImportError(
            f"the {name} backend needs its library: pip install "
            f"'typelattice[{name}]' ({err})"
        ) from err
    backend: Backend = module.BACKEND
    # The module's functions complete a backend made with the first fields.
    for field in _FIELDS:
        if getattr(backend, field) is None:
            setattr(backend, field, getattr(module, field))
    _LOADED[name] = backend
    return backend


def of_native(x: object) -> Backend | None:
    """The backend holding arrays of ``x``'s library (by its type's
    module), when ``x`` is one of them; None for anything else."""
    top = type(x).__module__.partition(".")[0]
    name = LIBRARIES.get(top)
    if name is None:
        return None
    backend = named(name)
    owns = backend.owns
    return backend if owns is not None and owns(x) else None
