"""Promotion tables measured live on array libraries, and the laws they keep.

The appendix of JAX's design note on type promotion (JEP 9407) prints the
tables of NumPy, TensorFlow, PyTorch, jax.numpy and jax.lax, measured by
adding zeros of each pair of types, with
Python ``int``/``float``/``complex`` scalars standing for ``i*``/``f*``/``c*``.
:func:`measure_library` repeats that measurement on whichever of those
libraries is installed (Dask and CuPy too); :func:`compare_libraries` puts
several side by side and lists the cells where they differ;
:func:`check_laws` tests a table for commutativity and associativity over
every pair and triple of its types.

``typelattice`` is typelattice's own namespace on NumPy, and
``typelattice:torch``, ``typelattice:dask``, ``typelattice:cupy`` the same
namespace on Arrays of that library: the promise measured there is that
the lattice decides every dtype whichever library computes. Each result is
also checked to be an Array on its operands' backend and device, holding a
value of the dtype it announces; a cell where it is not says so (see
:func:`measure_library`) instead of passing for a right answer.

Each library is reached through a small adapter (how to make a zero of a
type, how to add, how to name the result's type). A library that lacks a
type, or refuses an addition, gets ``'-'`` in that cell.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import itertools
import json
import warnings
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

import numpy as np

from typelattice import __version__, _dtypes
from typelattice import numpy as tnp
from typelattice._config import enable_x64
from typelattice._tables import DEFAULT_CODES, NO_JOIN, Table, format_rows

__all__ = [
    "LIBRARIES",
    "Associativity",
    "Comparison",
    "LibraryNotInstalled",
    "check_laws",
    "compare_libraries",
    "measure_library",
]

#: The libraries :func:`measure_library` knows, by the names the CLI takes.
LIBRARIES: Final = (
    "numpy",
    "torch",
    "dask",
    "cupy",
    "tensorflow",
    "jax",
    "jax.lax",
    "array_api_strict",
    "typelattice",
    "typelattice:torch",
    "typelattice:dask",
    "typelattice:cupy",
)

# The module to import and the pip requirement that provides it. The
# libraries typelattice has a backend for are named by that backend's extra,
# which pins the versions the backend is tested with.
_INSTALL: Final = {
    "numpy": ("numpy", "numpy"),
    "torch": ("torch", "'typelattice[torch]'"),
    "dask": ("dask", "'typelattice[dask]'"),
    "cupy": ("cupy", "'typelattice[cupy]'"),
    "tensorflow": ("tensorflow", "tensorflow"),
    "jax": ("jax", "jax"),
    "jax.lax": ("jax", "jax"),
    "array_api_strict": ("array_api_strict", "array-api-strict"),
    "typelattice": ("typelattice", "typelattice"),
    "typelattice:torch": ("torch", "'typelattice[torch]'"),
    "typelattice:dask": ("dask", "'typelattice[dask]'"),
    "typelattice:cupy": ("cupy", "'typelattice[cupy]'"),
}

#: The separator of the marks a misplaced result gets (see measure_library).
_ELSEWHERE: Final = "@"
_OTHER_DTYPE: Final = "!"

# As in JAX's design note, Python scalars stand in for the weak types.
_PYTHON_ZERO: Final[dict[str, object]] = {"i*": 0, "f*": 0.0, "c*": 0j}
_PYTHON_CODE: Final[dict[type, str]] = {
    int: "i*",
    float: "f*",
    complex: "c*",
    bool: "b1",
}

#: Reports progress: (library, pairs measured, pairs in all). The first call,
#: with 0 measured, comes before the library is imported.
Progress = Callable[[str, int, int], None]


class LibraryNotInstalled(ImportError):
    """The library to measure cannot be imported; the message says how to
    install it (``pip install tensorflow``), and the command line prints it
    as a one-line error.

    >>> issubclass(LibraryNotInstalled, ImportError)
    True
    """


@dataclass(frozen=True)
class _Adapter:
    """How to measure one library (built once it is imported)."""

    version: str
    zero: Callable[[np.dtype[Any]], object]  # raises if the type is missing
    add: Callable[[object, object], object]
    result_code: Callable[[object], str]
    scope: Callable[[bool], contextlib.AbstractContextManager[object]] = field(
        default=lambda x64: contextlib.nullcontext()
    )
    #: Whether the library's result depends on the 32/64-bit mode.
    has_x64_mode: bool = False
    #: What is wrong with a result of these operands beyond its type: its
    #: place or its value's dtype (typelattice's backends), '' when nothing.
    check: Callable[[object, object, object], str] | None = None


def _name_code(name: str) -> str:
    """The code of a dtype given by name, or the name itself if unknown."""
    try:
        return _dtypes.dtype_code(_dtypes.dtype(name, canonicalize=False))
    except TypeError:
        return name


def _dtype_code(dt: np.dtype[Any], weak: bool = False) -> str:
    """The code of a dtype, or its name if it has none."""
    try:
        return _dtypes.dtype_code(dt, weak=weak)
    except TypeError:
        return dt.name


def _dtype_result(out: object) -> str:
    """The code of a result with a NumPy ``dtype`` and maybe ``weak_type``."""
    if type(out) in _PYTHON_CODE:
        return _PYTHON_CODE[type(out)]
    dt = np.dtype(out.dtype)  # type: ignore[attr-defined]
    return _dtype_code(dt, bool(getattr(out, "weak_type", False)))


def _numpy() -> _Adapter:
    def zero(dt: np.dtype[Any]) -> object:
        # ml_dtypes' types are not NumPy's own (NumPy calls them void).
        if dt.kind == "V":
            raise TypeError(f"NumPy has no {dt}")
        return np.zeros(1, dt)

    def add(x: object, y: object) -> object:
        ufunc: Any = np.add  # its stubs do not take plain objects
        return ufunc(x, y)

    return _Adapter(np.__version__, zero, add, _dtype_result)


def _jax(lax: bool) -> _Adapter:
    jax = importlib.import_module("jax")
    jnp = importlib.import_module("jax.numpy")
    op = jax.lax.add if lax else jnp.add

    def add(x: object, y: object) -> object:
        # Traced, not run: the same promotion as running jnp.add, without
        # compiling a kernel per pair (seconds per table otherwise).
        return jax.eval_shape(op, x, y)

    @contextlib.contextmanager
    def scope(x64: bool) -> Generator[None, None, None]:
        # Filtering the traceback of each refused sum costs ~8 ms, most of a
        # jax.lax table's time; nobody sees those tracebacks.
        flags = {"jax_enable_x64": x64, "jax_traceback_filtering": "off"}
        before = {name: getattr(jax.config, name) for name in flags}
        try:
            for name, value in flags.items():
                jax.config.update(name, value)
            yield
        finally:
            for name, value in before.items():
                jax.config.update(name, value)

    def zero(dt: np.dtype[Any]) -> object:
        return jnp.zeros((), dt)

    return _Adapter(jax.__version__, zero, add, _dtype_result, scope, True)


def _torch() -> _Adapter:
    torch = importlib.import_module("torch")

    def zero(dt: np.dtype[Any]) -> object:
        return torch.zeros(1, dtype=getattr(torch, dt.name))

    def result_code(out: object) -> str:
        if type(out) in _PYTHON_CODE:
            return _PYTHON_CODE[type(out)]
        return _name_code(str(out.dtype).removeprefix("torch."))  # type: ignore[attr-defined]

    return _Adapter(torch.__version__, zero, torch.add, result_code)


def _tensorflow() -> _Adapter:
    tf = importlib.import_module("tensorflow")

    def zero(dt: np.dtype[Any]) -> object:
        return tf.zeros(1, dtype=tf.as_dtype(dt))

    def result_code(out: object) -> str:
        if type(out) in _PYTHON_CODE:
            return _PYTHON_CODE[type(out)]
        return _name_code(out.dtype.name)  # type: ignore[attr-defined]

    return _Adapter(tf.__version__, zero, tf.add, result_code)


def _array_api_strict() -> _Adapter:
    xp = importlib.import_module("array_api_strict")
    by_name = xp.__array_namespace_info__().dtypes()

    def zero(dt: np.dtype[Any]) -> object:
        return xp.zeros(1, dtype=by_name[dt.name])

    def result_code(out: object) -> str:
        for name, dt in by_name.items():
            if out.dtype == dt:  # type: ignore[attr-defined]
                return _name_code(name)
        return str(out.dtype)  # type: ignore[attr-defined]

    return _Adapter(xp.__version__, zero, xp.add, result_code)


def _dask() -> _Adapter:
    dask = importlib.import_module("dask")
    da = importlib.import_module("dask.array")

    def zero(dt: np.dtype[Any]) -> object:
        # Dask's dtypes are NumPy's: ml_dtypes' types are not its own either.
        if dt.kind == "V":
            raise TypeError(f"Dask has no {dt}")
        # The result's dtype is Dask's metadata, inferred when the sum is
        # built: nothing is computed (the tests compute one cell to check).
        return da.zeros((), dtype=dt)

    return _Adapter(dask.__version__, zero, da.add, _dtype_result)


def _cupy() -> _Adapter:
    cupy = importlib.import_module("cupy")
    # A CuPy without a usable CUDA device fails on its first array: say so
    # once, rather than give a table of '-' that reads as missing types.
    cupy.zeros(1, dtype=np.float32)

    def zero(dt: np.dtype[Any]) -> object:
        if dt.kind == "V":
            raise TypeError(f"CuPy has no {dt}")
        # Shape (1,) as for NumPy: no 0-d special case in any CuPy version.
        return cupy.zeros(1, dtype=dt)

    return _Adapter(cupy.__version__, zero, cupy.add, _dtype_result)


def _typelattice(backend: str = "numpy") -> _Adapter:
    # Measured like the others: through the array namespace's zeros and add,
    # on Arrays that ``backend``'s library holds.
    version = __version__
    if backend != "numpy":
        module = importlib.import_module(_INSTALL[f"typelattice:{backend}"][0])
        version = f"{__version__} on {backend} {module.__version__}"
        # A library that cannot make arrays here (CuPy without a CUDA
        # device) fails now, with the library's reason.
        tnp.zeros((), dtype=np.float32, backend=backend)

    def zero(dt: np.dtype[Any]) -> object:
        # TypeError where the backend lacks the dtype: '-' in its cells.
        return tnp.zeros((), dtype=dt, backend=backend)

    def add(x: object, y: object) -> object:
        # Python scalars are 1, not 0: typelattice refuses a scalar that its
        # target cannot represent, and float8_e8m0fnu has no zero. The
        # dtype, which is all that is measured, does not depend on it.
        one: dict[type, object] = {int: 1, float: 1.0, complex: 1 + 0j}
        a: Any = one.get(type(x), x)
        b: Any = one.get(type(y), y)
        return tnp.add(a, b)

    def scope(x64: bool) -> contextlib.AbstractContextManager[object]:
        return enable_x64(x64)

    return _Adapter(version, zero, add, _dtype_result, scope, True, _misplaced)


def _misplaced(out: object, x: object, y: object) -> str:
    """How a result of typelattice's ``add`` falls short of its promise: an
    Array on its operands' backend and device, holding a value of the
    dtype it announces. '' when it keeps it.

    With no Array operand (two Python scalars) no backend is involved: the
    result is a 0-d NumPy-held Array, which joins any backend as a Python
    scalar does (docs/backends.md, "Mixing").
    """
    if not isinstance(out, tnp.ndarray):
        return f"{_ELSEWHERE}{type(out).__name__}"
    arrays = [v for v in (x, y) if isinstance(v, tnp.ndarray)]
    if arrays:
        backend, device = arrays[0].backend, str(arrays[0].device)
    else:
        backend, device = "numpy", str(out.device)
    if out.backend != backend:
        return f"{_ELSEWHERE}{out.backend}"
    if str(out.device) != device:
        return f"{_ELSEWHERE}{out.device}"
    # The Array's dtype is the lattice's by construction; the library's
    # value (computed, for Dask) shows whether the backend computed in it.
    value = np.asarray(out).dtype
    if value != out.dtype:
        return _OTHER_DTYPE + _dtype_code(value)
    return ""


_ADAPTERS: Final[dict[str, Callable[[], _Adapter]]] = {
    "numpy": _numpy,
    "torch": _torch,
    "tensorflow": _tensorflow,
    "jax": lambda: _jax(lax=False),
    "jax.lax": lambda: _jax(lax=True),
    "array_api_strict": _array_api_strict,
    "dask": _dask,
    "cupy": _cupy,
    "typelattice": _typelattice,
    "typelattice:torch": lambda: _typelattice("torch"),
    "typelattice:dask": lambda: _typelattice("dask"),
    "typelattice:cupy": lambda: _typelattice("cupy"),
}


def _check_installed(library: str) -> None:
    """Fail early, before a long measurement, if a library is missing."""
    if library not in _ADAPTERS:
        raise ValueError(
            f"unknown library {library!r}: expected one of {', '.join(LIBRARIES)}"
        )
    module, requirement = _INSTALL[library]
    if importlib.util.find_spec(module) is None:
        what = library if library == module else f"{library} needs {module}, which"
        raise LibraryNotInstalled(
            f"{what} is not installed; install it with: pip install {requirement}"
        )


def _adapter(library: str) -> _Adapter:
    _check_installed(library)
    module, requirement = _INSTALL[library]
    try:
        return _ADAPTERS[library]()
    except ImportError as err:
        raise LibraryNotInstalled(
            f"{library} is installed but cannot be imported: {err}"
            + (
                f"; pip install {requirement} installs what it needs"
                if requirement.startswith("'")
                else ""
            )
        ) from None
    except Exception as err:  # a library that cannot make arrays here
        raise LibraryNotInstalled(
            f"{module} is installed but cannot make arrays here, so {library} "
            f"cannot be measured: {type(err).__name__}: {err}"
        ) from None


def measure_library(
    library: str,
    codes: Sequence[str] | None = None,
    *,
    x64: bool = True,
    progress: Progress | None = None,
) -> Table:
    """A library's promotion table, measured by adding zeros of each pair.

    Arrays of zeros stand for the strong types and Python ``0``, ``0.0``,
    ``0j`` for ``i*``, ``f*``, ``c*``. A result is named by its code; a
    weakly typed result (JAX, typelattice) by ``i*``/``f*``/``c*``. JAX is
    traced with ``jax.eval_shape`` rather than run, which gives the same
    types without compiling each sum; Dask's result types are read from its
    graph, without computing it.

    ``typelattice:torch``, ``typelattice:dask`` and ``typelattice:cupy``
    make the zeros as Arrays of that library (``tnp.zeros(..., backend=)``)
    and add them with ``typelattice.numpy.add``. Each result must be an
    Array on its operands' backend and device (the sum of two Python
    scalars: a 0-d NumPy-held Array, which joins any backend) whose value,
    computed by the library, has the dtype the Array announces. A cell where
    it is not reads ``i2@numpy`` (the backend or device the result was on)
    or ``i2!i4`` (the dtype of its value): a fault to report, never a pass.

    Args:
      library: one of :data:`LIBRARIES`.
      codes: the types, as codes (by default the standard types and
        ``i* f* c*``, as in JAX's documented table).
      x64: 64-bit mode, for the libraries that have one (JAX and
        typelattice on every backend); JAX's design note measures JAX in
        64-bit mode. In 32-bit mode an array of a 64-bit type is made
        32-bit, as a user's would be, on every backend.
      progress: called after each pair (see :data:`Progress`).

    Returns:
      The table, titled with the library, its version (for typelattice on
      another library, that library's too) and the mode; ``'-'`` where the
      library lacks a type or refuses the addition.

    Raises:
      LibraryNotInstalled: the library cannot be imported (the message
        names the pip requirement, ``'typelattice[torch]'`` for a library
        typelattice has a backend for), or cannot make arrays here (CuPy
        without a CUDA device).
      ValueError: an unknown library name.
      TypeError: an unknown code.

    >>> t = measure_library('numpy', ['i1', 'u1', 'f2', 'bf'])
    >>> t.cell('i1', 'u1'), t.cell('i1', 'f2'), t.cell('bf', 'i1')
    ('i2', 'f2', '-')
    """
    order = tuple(DEFAULT_CODES if codes is None else codes)
    dtypes = {c: _dtypes.code_to_dtype(c) for c in order}  # unknown codes fail
    total = len(order) ** 2
    if progress is not None:
        progress(library, 0, total)
    adapter = _adapter(library)
    rows: list[tuple[str, ...]] = []
    # The libraries' own warnings (a 64-bit type truncated in 32-bit mode)
    # are not what the table is about: their effect shows in the cells.
    with warnings.catch_warnings(), adapter.scope(x64):
        warnings.simplefilter("ignore")
        operands: dict[str, object] = {}
        for code, dt in dtypes.items():
            if code in _PYTHON_ZERO:
                operands[code] = _PYTHON_ZERO[code]
                continue
            try:
                operands[code] = adapter.zero(dt)  # type: ignore[arg-type]
            except Exception:  # the library lacks this type
                pass
        done = 0
        for a in order:
            row: list[str] = []
            for b in order:
                row.append(_cell(adapter, operands, a, b))
                done += 1
                if progress is not None:
                    progress(library, done, total)
            rows.append(tuple(row))
    mode = f" ({'64' if x64 else '32'}-bit)" if adapter.has_x64_mode else ""
    return Table(order, tuple(rows), f"{library} {adapter.version}{mode}")


def _cell(adapter: _Adapter, operands: dict[str, object], a: str, b: str) -> str:
    if a not in operands or b not in operands:
        return NO_JOIN
    x, y = operands[a], operands[b]
    try:
        out = adapter.add(x, y)
    except Exception:  # refused: a type error, an unimplemented kernel...
        return NO_JOIN
    code = adapter.result_code(out)
    return code if adapter.check is None else code + adapter.check(out, x, y)


@dataclass(frozen=True)
class Comparison:
    """Several libraries' measured tables and the cells where they differ.

    Attributes:
      libraries: the library names, in the order given.
      tables: their tables, in the same order (same codes).
      differences: ``(row, column, values)`` for each cell whose values are
        not all equal, ``values`` in the order of ``libraries``.

    >>> c = compare_libraries(['numpy', 'typelattice'], ['i1', 'u1'])
    >>> c.libraries, [t.cell('i1', 'u1') for t in c.tables], c.differences
    (('numpy', 'typelattice'), ['i2', 'i2'], ())
    """

    libraries: tuple[str, ...]
    tables: tuple[Table, ...]
    differences: tuple[tuple[str, str, tuple[str, ...]], ...]


def compare_libraries(
    libraries: Sequence[str],
    codes: Sequence[str] | None = None,
    *,
    x64: bool = True,
    progress: Progress | None = None,
) -> Comparison:
    """Measure several libraries and find the cells where they differ.

    Args:
      libraries: names from :data:`LIBRARIES`.
      codes: the types, as codes (by default the standard types and
        ``i* f* c*``).
      x64: 64-bit mode for the libraries that have one.
      progress: called after each pair of each library.

    Returns:
      The :class:`Comparison`.

    Raises:
      LibraryNotInstalled: one of the libraries cannot be imported (checked
        before anything is measured).

    >>> c = compare_libraries(['numpy', 'typelattice'], ['i4', 'f4'])
    >>> c.differences
    (('i4', 'f4', ('f8', 'f4')), ('f4', 'i4', ('f8', 'f4')))
    """
    names = tuple(libraries)
    for name in names:
        _check_installed(name)
    tables = tuple(
        measure_library(name, codes, x64=x64, progress=progress) for name in names
    )
    order = tables[0].codes
    differences = tuple(
        (a, b, values)
        for i, a in enumerate(order)
        for j, b in enumerate(order)
        if len(set(values := tuple(t.cells[i][j] for t in tables))) > 1
    )
    return Comparison(names, tables, differences)


# -- laws -----------------------------------------------------------------------


class Associativity(NamedTuple):
    """A triple whose two groupings give different types."""

    a: str
    b: str
    c: str
    left: str  # (a + b) + c
    right: str  # a + (b + c)

    def __str__(self) -> str:
        a, b, c = self.a, self.b, self.c
        return f"({a} + {b}) + {c} = {self.left}, but {a} + ({b} + {c}) = {self.right}"


@dataclass(frozen=True)
class Laws:
    """Whether a table is commutative and associative.

    Attributes:
      title: the table's title.
      pairs: unordered pairs of distinct types compared.
      non_commutative: pairs ``(a, b)`` where ``a + b`` and ``b + a`` differ.
      triples: ordered triples ``(a, b, c)`` where both groupings are defined.
      non_associative: the triples among those whose groupings differ.
      one_sided: ordered triples where one grouping gives a type and the
        other fails (``'-'``, or a type the table does not list).

    >>> from typelattice import promotion_table
    >>> laws = check_laws(promotion_table())
    >>> laws.pairs, laws.triples, laws.non_commutative, laws.non_associative
    (153, 5832, (), ())
    """

    title: str
    pairs: int
    non_commutative: tuple[tuple[str, str], ...]
    triples: int
    non_associative: tuple[Associativity, ...]
    one_sided: int

    def sets(self) -> tuple[Associativity, ...]:
        """One counterexample per set of types, simplest first: sets of
        strong types before those with weak ones, then in table order.

        Returns:
          The counterexamples to associativity, one per set of three types;
          ``str`` of each reads ``(a + b) + c = x, but a + (b + c) = y``.

        >>> laws = check_laws(measure_library('numpy'))
        >>> [str(t) for t in laws.sets()[:2]]
        ['(u1 + i1) + f2 = f4, but u1 + (i1 + f2) = f2', \
'(u2 + i1) + f2 = f8, but u2 + (i1 + f2) = f4']
        """
        seen: dict[frozenset[str], Associativity] = {}
        for t in self.non_associative:
            seen.setdefault(frozenset((t.a, t.b, t.c)), t)
        rank = {code: i for i, code in enumerate(DEFAULT_CODES)}

        def key(t: Associativity) -> tuple[int, list[int]]:
            kinds = {t.a, t.b, t.c}
            weak = sum(code in _PYTHON_ZERO for code in kinds)
            return weak, sorted(rank.get(code, len(rank)) for code in kinds)

        return tuple(sorted(seen.values(), key=key))


def check_laws(table: Table) -> Laws:
    """Check a table for commutativity and associativity.

    Every unordered pair is checked for ``a + b == b + a``, and every ordered
    triple for ``(a + b) + c == a + (b + c)``, looking the intermediate
    result up in the table itself.

    Args:
      table: a measured or computed table.

    Returns:
      The counts and every counterexample.

    >>> laws = check_laws(measure_library('numpy'))
    >>> str(laws.sets()[0])
    '(u1 + i1) + f2 = f4, but u1 + (i1 + f2) = f2'
    >>> laws.non_commutative
    ()
    """
    index = {c: i for i, c in enumerate(table.codes)}
    cells = table.cells

    def add(a: str, b: str) -> str | None:
        i, j = index.get(a), index.get(b)
        if i is None or j is None:
            return None
        out = cells[i][j]
        return None if out == NO_JOIN else out

    non_commutative = tuple(
        (a, b)
        for a, b in itertools.combinations(table.codes, 2)
        if cells[index[a]][index[b]] != cells[index[b]][index[a]]
    )
    triples = one_sided = 0
    failures: list[Associativity] = []
    for a, b, c in itertools.product(table.codes, repeat=3):
        ab, bc = add(a, b), add(b, c)
        left = None if ab is None else add(ab, c)
        right = None if bc is None else add(a, bc)
        if left is None and right is None:
            continue
        if left is None or right is None:
            one_sided += 1
            continue
        triples += 1
        if left != right:
            failures.append(Associativity(a, b, c, left, right))
    n = len(table.codes)
    return Laws(
        table.title,
        n * (n - 1) // 2,
        non_commutative,
        triples,
        tuple(failures),
        one_sided,
    )


def format_laws(laws: Laws, examples: int = 10) -> str:
    """A few lines summing up :func:`check_laws`.

    Args:
      laws: what :func:`check_laws` found.
      examples: how many counterexamples of each law to show (one per set of
        types for associativity, simplest first).

    Returns:
      The lines, without a final newline.

    >>> laws = check_laws(measure_library('numpy', ['i1', 'i2', 'f4']))
    >>> print(format_laws(laws))  # doctest: +ELLIPSIS
    laws of numpy ...
      commutative: yes (3 pairs)
      associative: yes (27 triples)
    """
    lines = [f"laws of {laws.title}"]
    bad = laws.non_commutative
    if bad:
        lines.append(f"  commutative: no, {len(bad)} of {laws.pairs} pairs differ")
        lines += [f"    {a} + {b} differs from {b} + {a}" for a, b in bad[:examples]]
        if len(bad) > examples:
            lines.append(f"    ... and {len(bad) - examples} more pairs")
    else:
        lines.append(f"  commutative: yes ({laws.pairs} pairs)")
    sets = laws.sets()
    if sets:
        lines.append(
            f"  associative: no, {len(laws.non_associative)} of {laws.triples} "
            f"triples differ ({len(sets)} sets of types)"
        )
        lines += [f"    {t}" for t in sets[:examples]]
        if len(sets) > examples:
            lines.append(f"    ... and {len(sets) - examples} more sets")
    else:
        lines.append(f"  associative: yes ({laws.triples} triples)")
    if laws.one_sided:
        lines.append(
            f"  {laws.one_sided} triples have one grouping defined and the "
            "other refused"
        )
    return "\n".join(lines)


def misplaced_cells(table: Table) -> tuple[tuple[str, str, str], ...]:
    """The cells of a measured table whose result broke typelattice's
    promise on a backend: ``(row, column, cell)`` for each cell marked
    ``@where`` (an Array elsewhere than its operands) or ``!code`` (a value
    of another dtype than announced). Empty for every other library.

    Args:
      table: from :func:`measure_library`.

    Returns:
      The marked cells, in table order.

    >>> misplaced_cells(measure_library('typelattice', ['i1', 'u1']))
    ()
    """
    return tuple(
        (a, b, cell)
        for a, row in zip(table.codes, table.cells, strict=True)
        for b, cell in zip(table.codes, row, strict=True)
        if _ELSEWHERE in cell or _OTHER_DTYPE in cell
    )


def format_misplaced(table: Table, examples: int = 10) -> str:
    """A few lines on the marked cells of :func:`misplaced_cells`; '' when
    there are none.

    Args:
      table: from :func:`measure_library`.
      examples: how many cells to list.

    Returns:
      The lines, without a final newline.

    >>> format_misplaced(measure_library('typelattice', ['i1', 'u1']))
    ''
    """
    cells = misplaced_cells(table)
    if not cells:
        return ""
    lines = [
        f"{table.title}: {len(cells)} results came back elsewhere than their "
        f"operands' backend and device ({_ELSEWHERE}where) or hold a value of "
        f"another dtype than announced ({_OTHER_DTYPE}dtype); typelattice "
        "promises neither happens: please report it"
    ]
    lines += [f"  {a} + {b} = {cell}" for a, b, cell in cells[:examples]]
    if len(cells) > examples:
        lines.append(f"  ... and {len(cells) - examples} more")
    return "\n".join(lines)


def format_differences(comparison: Comparison, fmt: str = "text") -> str:
    """The cells where the libraries of a comparison differ, one row each.

    Args:
      comparison: from :func:`compare_libraries`.
      fmt: ``text``, ``markdown``, ``csv`` or ``html``.

    Returns:
      A table with the columns ``row``, ``col`` and one per library.

    >>> c = compare_libraries(['numpy', 'typelattice'], ['u1', 'f*'])
    >>> print(format_differences(c))
    row col numpy typelattice
     u1  f*    f8          f*
     f*  u1    f8          f*
     f*  f*    f8          f*
    """
    header = ["row", "col", *comparison.libraries]
    rows = [[a, b, *values] for a, b, values in comparison.differences]
    return format_rows(header, rows, fmt)


def comparison_json(
    comparison: Comparison, laws: Sequence[Laws] = (), indent: int | None = 1
) -> str:
    """A comparison (and optionally the laws of its tables) as JSON.

    Args:
      comparison: from :func:`compare_libraries`.
      laws: :func:`check_laws` of its tables, to include.
      indent: JSON indentation (``None`` for one line).

    Returns:
      An object with ``tables``, ``differences`` and, with ``laws``, ``laws``.

    >>> c = compare_libraries(['numpy'], ['i1', 'u1'])
    >>> data = json.loads(comparison_json(c))
    >>> data['tables'][0]['cells']
    [['i1', 'i2'], ['i2', 'u1']]
    """
    data: dict[str, Any] = {
        "tables": [
            {
                "library": name,
                "title": t.title,
                "codes": list(t.codes),
                "cells": [list(r) for r in t.cells],
            }
            for name, t in zip(comparison.libraries, comparison.tables, strict=True)
        ],
        "differences": [
            {
                "row": a,
                "col": b,
                "values": dict(zip(comparison.libraries, v, strict=True)),
            }
            for a, b, v in comparison.differences
        ],
    }
    if laws:
        data["laws"] = [
            {
                "title": law.title,
                "pairs": law.pairs,
                "non_commutative": [list(p) for p in law.non_commutative],
                "triples": law.triples,
                "non_associative": [t._asdict() for t in law.non_associative],
                "one_sided": law.one_sided,
            }
            for law in laws
        ]
    return json.dumps(data, indent=indent, ensure_ascii=False)
