"""Primitive implementations for any NumPy-compatible array library.

A library whose arrays follow NumPy's protocols (``__array_ufunc__`` and
``__array_function__``: a NumPy ufunc or function given its arrays computes
with the library and returns its arrays), such as CuPy, runs most of the
NumPy backend's own implementations unchanged: ``np.sin(x)`` on a CuPy array
is ``cupy.sin(x)``, on the device. So one implementation serves every such
library, and its answers, casts and data-safety errors are the NumPy
backend's by construction; :func:`register` installs them for a namespace
``xp`` (the library's module, e.g. ``cupy``; ``numpy`` itself in the tests).

Two things cannot go through the protocols, and are computed on the host,
exactly (the operands copied to NumPy, the NumPy implementation, the result
copied back):

- the control flow primitives, whose sub-programs run on NumPy values;
- the primitives named in :data:`ON_HOST` (their NumPy implementations make
  NumPy arrays of their own, which the protocols cannot carry).

A dtype the library lacks is declared once per backend (its ``MISSING``
literal, dtype name -> reason); :func:`support_table` derives the support
table from these declarations and the registrations.

An :class:`XpBackend` also converts mixed operands inside the ufunc's own
kernel (:meth:`XpBackend.promoting`): ``int32 + float32`` is one call of
the library's ``add`` computing in float32, each element converted as the
loop reads it, instead of a full-size float32 copy of the int32 operand and
then the add (twice the memory traffic, on a GPU the cost that counts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

# (loaded for their primitives: lax and the namespace define them all)
import typelattice.lax  # noqa: F401  # pyright: ignore[reportUnusedImport]
import typelattice.numpy  # noqa: F401  # pyright: ignore[reportUnusedImport]
from typelattice import _dtypes
from typelattice._backends._backend import NUMPY, Backend, use
from typelattice._lax._elementwise import convert_element_type_p
from typelattice._lax._primitive import PRIMITIVES
from typelattice._tracing.primitive import ShapedArray

if TYPE_CHECKING:
    from typelattice._tracing.primitive import Primitive

__all__ = [
    "CONTROL",
    "EXACT_IN_KERNEL",
    "ON_HOST",
    "XpBackend",
    "guarded",
    "in_kernel",
    "kept",
    "on_host",
    "primitives",
    "register",
    "support_table",
]

#: The control flow primitives: their sub-programs take NumPy values.
CONTROL: Final = frozenset({"cond", "while", "scan"})

#: The primitives computed on the host for a namespace other than NumPy,
#: besides the control flow: their NumPy implementations build NumPy arrays
#: of their own (``np.asarray`` of a result, ``np.empty``, constants made
#: with ``np.array``), call functions of SciPy-like vectorized Python
#: scalars, or use ufunc methods CuPy lacks (``maximum.accumulate``,
#: ``bitwise_and.reduce``, ``add.at``, ``reduce(initial=)``). Measured with
#: CuPy 14.2 on an H200: every other primitive ran the recorded JAX examples
#: of lax and the namespace on the device, through the protocols.
ON_HOST: Final = frozenset(
    {
        *CONTROL,
        *"""argmax argmin bitcast_convert_type clz complex convert_element_type
        cummax cummin cumprod cumsum div dot_general erf erf_inv erfc gather iota
        lgamma nextafter pad pow reduce_and reduce_max reduce_min reduce_or
        reduce_xor scatter-add scatter-max scatter-min scatter-mul sort""".split(),
    }
)


#: The dtypes a library other than NumPy may convert operands to inside its
#: ufunc's kernel (:func:`in_kernel`): every conversion the lattice makes to
#: one of them (from a dtype below it) is exact, or one rounding to nearest
#: of IEEE arithmetic, which a device computes as NumPy's cast on the host
#: does (the backend's ``convert_element_type`` runs on the host). Not
#: float16 or bfloat16: a device library converts to those through types
#: of its own, which no test on the host can compare with NumPy's casts.
EXACT_IN_KERNEL: Final = frozenset(
    """bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64
    complex64 complex128""".split()
)


def primitives() -> Mapping[str, Any]:
    """Every primitive (lax and the namespace, loaded above, define them)."""
    return PRIMITIVES


def on_host(
    impl: Callable[..., Any],
    to_host: Callable[[Any], Any],
    to_device: Callable[[Any], Any],
    several: bool,
) -> Callable[..., Any]:
    """``impl`` (the NumPy backend's) on a device's arrays: the operands
    copied to the host, the result copied back. Exact: the values are the
    NumPy backend's. The NumPy backend computes inside (a sub-program of a
    control flow primitive binds primitives)."""

    def computed(*operands: Any, **params: Any) -> Any:
        values = [to_host(x) for x in operands]
        with use(NUMPY):
            out = impl(*values, **params)
        if several:
            return tuple(to_device(v) for v in out)
        return to_device(out)

    computed.__name__ = f"on_host_{getattr(impl, '__name__', 'impl')}"
    return computed


def register(
    backend: Backend,
    xp: ModuleType,
    *,
    to_host: Callable[[Any], Any] | None = None,
    to_device: Callable[[Any], Any] | None = None,
    host: frozenset[str] = ON_HOST,
) -> Backend:
    """Give ``backend`` an implementation of every primitive on ``xp``'s
    arrays.

    Args:
      backend: the backend to fill.
      xp: the array library's namespace (``numpy``, ``cupy``).
      to_host: a device array to a NumPy array (default the backend's
        ``to_numpy``).
      to_device: a NumPy array to a device array (default the backend's
        ``from_numpy``).
      host: the primitives computed on the host when ``xp`` is not NumPy
        (the control flow primitives always are).

    Returns:
      ``backend``.

    >>> import numpy as np
    >>> from typelattice import lax
    >>> b = register(Backend("xp-numpy"), np)
    >>> from typelattice._lax._elementwise import add_p
    >>> b.implements(add_p)
    True
    """
    to_host = to_host or backend.to_numpy
    to_device = to_device or backend.from_numpy
    for name, prim in primitives().items():
        impl = NUMPY.impl(prim)
        rule = NUMPY.fast.get(prim)
        if name in CONTROL or (xp.__name__ != "numpy" and name in host):
            impl = on_host(impl, to_host, to_device, prim.multiple_results)
        elif rule is not None and not prim.multiple_results:
            impl = _by_ufunc(impl, rule, xp)
            if isinstance(backend, XpBackend):
                backend.by_ufunc.add(prim)
        if isinstance(backend, XpBackend):
            backend.made[prim] = impl
        backend.def_impl(prim, impl)
    return backend


def _by_ufunc(
    impl: Callable[..., Any], rule: Callable[..., Any], xp: ModuleType
) -> Callable[..., Any]:
    """``impl``, calling ``xp``'s ufunc itself for operands of the dtypes
    where the NumPy backend's fast rule says that ufunc is the whole
    implementation (the operands' own dtype, no widening, no checks): the
    implementation's layers cost more than a small operation on a GPU.

    Sound as the fast rule is: its answers are the implementation's, and
    ``xp``'s ufunc of the same name computes the same function (the
    implementation calls it too, through ``__array_ufunc__``). Fast rules of
    elementwise primitives read the operands' dtypes only; the choice is
    kept per tuple of dtypes, for calls without parameters.
    """
    chosen: dict[tuple[Any, ...], Callable[..., Any]] = {}

    def pick(dtypes: tuple[Any, ...]) -> Callable[..., Any]:
        found = rule(*[ShapedArray((), np.dtype(dt), False) for dt in dtypes])
        if type(found) is np.ufunc:
            own = getattr(xp, found.__name__, None)
            if own is not None:
                return own  # type: ignore[no-any-return]
        return impl

    def computed(*operands: Any, **params: Any) -> Any:
        if params:
            return impl(*operands, **params)
        key = tuple([x.dtype for x in operands])
        fn = chosen.get(key)
        if fn is None:
            fn = chosen[key] = pick(key)
        return fn(*operands)

    computed.__name__ = f"by_ufunc_{getattr(impl, '__name__', 'impl')}"
    return computed


class XpBackend(Backend):
    """A backend computing with the NumPy-compatible namespace ``xp``, which
    converts mixed operands inside its ufuncs' kernels (:meth:`promoting`).

    Args:
      name: shown in errors.
      xp: the array library's namespace (``numpy``, ``cupy``).
      converts_to: the names of the dtypes ``xp``'s ufuncs may convert
        operands to inside their kernels (:func:`in_kernel`); by default
        every NumPy type for NumPy itself, none for another library.
      **conversions: ``from_numpy``, ``to_numpy`` and the functions of a
        backend whose arrays Arrays hold (:class:`Backend`).

    >>> import numpy as np
    >>> b = register(XpBackend("xp-numpy", np), np)
    >>> from typelattice._lax._elementwise import add_p
    >>> f = b.promoting(add_p, [np.dtype("int32"), None], np.dtype("float32"))
    >>> f(np.int32([16777217, -3]), np.float32([0.0, 0.5]))
    array([ 1.6777216e+07, -2.5000000e+00], dtype=float32)
    """

    __slots__ = ("_chosen", "by_ufunc", "converts_to", "made", "xp")

    def __init__(
        self,
        name: str,
        xp: ModuleType,
        *,
        converts_to: frozenset[str] | None = None,
        **conversions: Any,
    ) -> None:
        super().__init__(name, **conversions)
        self.xp = xp
        if converts_to is None:
            converts_to = _NUMPY_TYPES if xp.__name__ == "numpy" else frozenset()
        self.converts_to = converts_to
        #: The implementations :func:`register` gave, by primitive.
        self.made: dict[Primitive, Callable[..., Any]] = {}
        #: The primitives whose implementation it made of ``xp``'s ufuncs
        #: (computed on the device, not on the host).
        self.by_ufunc: set[Primitive] = set()
        self._chosen: dict[tuple[Any, ...], Callable[..., Any] | None] = {}

    def promoting(
        self, prim: Primitive, dtypes: list[np.dtype[Any] | None], common: np.dtype[Any]
    ) -> Callable[..., Any] | None:
        """``prim`` on operands of ``dtypes`` converted to ``common`` inside
        ``xp``'s ufunc (:func:`in_kernel`), or None; decided once per
        primitive and dtypes. Only for a primitive whose implementation is
        still the one :func:`register` made of ``xp``'s ufunc (not computed
        on the host, not replaced since), and while the conversion's is
        still the one it gave too."""
        if prim not in self.by_ufunc or not kept(self, prim, self.made):
            return None
        if not kept(self, convert_element_type_p, self.made):
            return None
        key = (prim, *dtypes, common)
        try:
            return self._chosen[key]
        except KeyError:
            pass
        fn = None
        if common.name in self.converts_to:
            fn = in_kernel(prim, dtypes, common, self.xp)
        if fn is not None:
            fn = guarded(self, prim, dtypes, common, self.made, fn)
        return self._chosen.setdefault(key, fn)


def kept(
    backend: Backend, prim: Primitive, made: Mapping[Primitive, Callable[..., Any]]
) -> bool:
    """Whether ``backend`` still computes ``prim`` with the implementation
    ``made`` records (a user may have replaced it since)."""
    own = made.get(prim)
    return own is not None and backend.impls.get(prim) is own


def guarded(
    backend: Backend,
    prim: Primitive,
    dtypes: list[np.dtype[Any] | None],
    common: np.dtype[Any],
    made: Mapping[Primitive, Callable[..., Any]],
    fn: Callable[..., Any],
) -> Callable[..., Any]:
    """``fn`` (``prim`` on operands of ``dtypes`` converted to ``common``
    in one kernel) while ``backend`` computes ``prim`` and
    ``convert_element_type`` with the implementations ``made`` records;
    once either was replaced, the conversions and then ``prim`` by the
    backend's implementations of the moment. (The namespace keeps the
    function in its plans: a replacement made later still counts.)"""
    own, conversion = made[prim], made[convert_element_type_p]
    impls = backend.impls

    def computed(x: Any, y: Any) -> Any:
        if impls.get(prim) is own and impls.get(convert_element_type_p) is conversion:
            return fn(x, y)
        convert = backend.impl(convert_element_type_p)
        ops = [
            v if dt is None else convert(v, new_dtype=common)
            for v, dt in zip((x, y), dtypes, strict=True)
        ]
        return backend.impl(prim)(*ops)

    computed.__name__ = getattr(fn, "__name__", "in_kernel")
    return computed


#: NumPy's own types (``isbuiltin`` 1; 2 is a type of ml_dtypes, whose ufunc
#: loops are ml_dtypes' own, where they exist: not computed in the kernel).
_NUMPY_TYPES: Final = frozenset(
    dt.name for dt in _dtypes.ALL_DTYPES if np.dtype(dt).isbuiltin == 1
)


def in_kernel(
    prim: Primitive,
    dtypes: list[np.dtype[Any] | None],
    common: np.dtype[Any],
    xp: ModuleType,
) -> Callable[..., Any] | None:
    """``xp``'s ufunc computing the binary primitive ``prim`` in ``common``
    on operands of ``dtypes`` (None: of ``common`` already), each converted
    inside the ufunc's loop; or None where that is not what converting each
    operand with ``convert_element_type`` (without checks) and then
    computing ``prim`` gives.

    It is, by construction, where the NumPy backend's fast rules say so:
    ``prim``'s rule on two ``common`` operands is a ufunc (then the
    implementation is that ufunc, no widening, no correction), and
    ``convert_element_type``'s rule from each operand's dtype is ``astype``
    (no saturation of floats becoming integers, no complex becoming real),
    the cast a ufunc's loop applies to an operand of another dtype
    (``casting='unsafe'``: every conversion, as ``astype``). NumPy's ufunc
    is told the loop by ``signature=(common, common, None)``; another
    library's by ``dtype=common``, which CuPy reads as the loop whose result
    has that dtype (so not for comparisons, whose result is bool).

    Args:
      prim: a primitive of two operands, without parameters.
      dtypes: the operands' dtypes, None for those of ``common``.
      common: the dtype both are converted to.
      xp: the array library's namespace.

    Returns:
      A function of the two arrays, or None.

    >>> import numpy as np
    >>> from typelattice._lax._elementwise import rem_p, sub_p
    >>> i8, f32 = np.dtype("int8"), np.dtype("float32")
    >>> f = in_kernel(sub_p, [i8, None], f32, np)
    >>> f(np.int8([-128, 5]), np.float32([0.5, -0.0]))
    array([-128.5,    5. ], dtype=float32)
    >>> in_kernel(rem_p, [i8, None], f32, np) is None  # (rem is fmod and more)
    True
    """
    rule = NUMPY.fast.get(prim)
    if rule is None or len(dtypes) != 2 or prim.multiple_results:
        return None
    both = [ShapedArray((), common, False)] * 2
    try:
        plain = rule(*both)
        out = prim.evaluate(both, {})
    except Exception:  # (a dtype the primitive refuses: compute() says why)
        return None
    if type(plain) is not np.ufunc:
        return None
    convert = NUMPY.fast[convert_element_type_p]
    for dt in dtypes:
        aval = ShapedArray((), common if dt is None else dt, False)
        if convert(aval, new_dtype=common) is None:
            return None
    fn = getattr(xp, plain.__name__, None)
    if fn is None:
        return None
    if xp.__name__ == "numpy":
        return _numpy_in_kernel(fn, common)
    if out.dtype != common:
        return None
    return _library_in_kernel(fn, common)


def _numpy_in_kernel(fn: np.ufunc, common: np.dtype[Any]) -> Callable[..., Any]:
    signature = (common, common, None)

    def computed(x: Any, y: Any) -> Any:
        out: Any = fn(x, y, signature=signature, casting="unsafe")
        # (0-d operands give a NumPy scalar: the implementation's is an array)
        if type(out) is np.ndarray:
            return out
        return np.asarray(out)

    computed.__name__ = f"{fn.__name__}_in_{common.name}"
    return computed


def _library_in_kernel(fn: Any, common: np.dtype[Any]) -> Callable[..., Any]:
    def computed(x: Any, y: Any) -> Any:
        return fn(x, y, dtype=common, casting="unsafe")

    computed.__name__ = f"{getattr(fn, '__name__', 'ufunc')}_in_{common.name}"
    return computed


def support_table(
    backend: Backend,
    missing: Mapping[str, str],
    host: frozenset[str] = ON_HOST,
) -> dict[str, dict[str, str]]:
    """Primitive name -> dtype name -> 'yes', 'emulated: ...' or 'no: ...',
    derived from ``backend``'s registrations, the primitives it computes
    on the host (``host``) and its missing dtypes (``missing``, dtype name
    -> reason).

    >>> import numpy as np
    >>> b = register(Backend("xp-numpy"), np)
    >>> table = support_table(b, {"bfloat16": "no bfloat16"}, frozenset({"sort"}))
    >>> table["add"]["float32"], table["add"]["bfloat16"]
    ('yes', 'no: no bfloat16')
    >>> table["sort"]["int8"]
    'emulated: computed on the host'
    """
    names = [d.name for d in _dtypes.ALL_DTYPES]
    table: dict[str, dict[str, str]] = {}
    for name, prim in sorted(primitives().items()):
        if not backend.implements(prim):
            table[name] = dict.fromkeys(names, "no: not implemented")
            continue
        row: dict[str, str] = {}
        for dt in names:
            if dt in missing:
                row[dt] = f"no: {missing[dt]}"
            elif name in host:
                row[dt] = "emulated: computed on the host"
            else:
                row[dt] = "yes"
        table[name] = row
    return table
