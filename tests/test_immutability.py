"""Arrays are immutable: nothing NumPy is handed can change an Array, and no
result shares memory with an array its caller can still change.

The namespace walk at the end calls every public function of
typelattice.numpy on writable NumPy arguments, changes the arguments
afterwards and checks that the result did not change. A new public function
fails ``test_every_public_function_has_a_sample`` until it gets a sample call
in SAMPLES (or is listed in NO_ARRAYS with the reason).
"""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.nn as nn
import typelattice.numpy as tnp
import typelattice.random as tr
from support import arr
from typelattice import _array
from typelattice._array import ArrayImpl


def unchanged(x: tnp.Array, values: Any) -> None:
    np.testing.assert_array_equal(np.asarray(x), values)


# -- NumPy's ufunc protocol -------------------------------------------------


UFUNC_METHODS: list[tuple[str, Callable[[tnp.Array], Any]]] = [
    ("at", lambda x: np.add.at(x, 0, 100)),
    ("at-unary", lambda x: np.negative.at(x, [0, 1])),
    ("at-numpy-first", lambda x: np.add.at(np.zeros(3, np.int32), [0], x)),
    ("reduce", lambda x: np.add.reduce(x)),
    ("accumulate", lambda x: np.add.accumulate(x)),
    ("reduceat", lambda x: np.add.reduceat(x, [0, 1])),
    ("outer", lambda x: np.multiply.outer(x, x)),
]


@pytest.mark.parametrize(("method", "call"), UFUNC_METHODS, ids=lambda v: v)
def test_ufunc_methods_are_refused(
    method: str, call: Callable[[tnp.Array], Any]
) -> None:
    # np.add.at ignores the read-only flag (NumPy 2.4): it must never get
    # the array's memory at all.
    x = arr([1, 2, 3])
    view = tnp.reshape(x, (3, 1))
    with pytest.raises(TypeError, match=r"x\.at\[") as info:
        call(x)
    assert method.split("-")[0] in str(info.value)
    unchanged(x, [1, 2, 3])
    unchanged(view, [[1], [2], [3]])


OUT_CALLS: list[tuple[str, Callable[[tnp.Array], Any]]] = [
    ("keyword", lambda x: np.add(1, 2, out=x)),
    ("positional", lambda x: np.add(1, 2, x)),
    ("tuple", lambda x: np.add(x, 1, out=(x,))),
    ("numpy-array", lambda x: np.add(x, 1, out=np.zeros(3, np.int32))),
    ("second-of-two", lambda x: np.divmod(x, 2, out=(None, x))),
    ("second-positional", lambda x: np.divmod(x, 2, None, x)),
    ("unary", lambda x: np.negative(x, out=x)),
    ("where", lambda x: np.add(x, 1, out=x, where=np.array([True, False, True]))),
    ("matmul", lambda x: np.matmul(x, x, out=x)),
]


@pytest.mark.parametrize(("how", "call"), OUT_CALLS, ids=lambda v: v)
def test_out_is_refused(how: str, call: Callable[[tnp.Array], Any]) -> None:
    # It ended in RecursionError before; now a TypeError naming the fix.
    x = arr([1, 2, 3])
    with pytest.raises(TypeError, match=r"out=.*x\.at\[") as info:
        call(x)
    assert "immutable" in str(info.value)
    unchanged(x, [1, 2, 3])


AT_CASES = [
    (np.add, 2),
    (np.subtract, 2),
    (np.multiply, 2),
    (np.divide, 2.0),
    (np.power, 2),
    (np.minimum, 0),
    (np.maximum, 9),
    (np.negative, None),
    (np.sqrt, None),
    (np.logaddexp, 2.0),
    (np.bitwise_or, 8),
    (np.hypot, 2.0),
]
FIXES = (
    r"x = (x(?:\.astype\('\w+'\))?\.at\[idx\]\.\w+\((?:v|tnp\.\w+|new_values)\)"
    r"|tnp\.\w+\.at\(x, idx, v, inplace=False\))"
)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize(
    ("ufunc", "v"), AT_CASES, ids=lambda u: getattr(u, "__name__", "")
)
def test_the_suggested_functional_update_works(
    ufunc: np.ufunc, v: Any, dtype: str
) -> None:
    """Also where the function changes the dtype (divide or sqrt of
    integers): the fix converts x first."""
    if dtype == "float32" and ufunc is np.bitwise_or:
        pytest.skip("bitwise_or has no float form")
    x = arr([1, 4, 3], dtype)
    idx = [0, 2]
    operands = () if v is None else (v,)
    with pytest.raises(TypeError, match=r"x\.at\[idx\]") as info:
        ufunc.at(x, idx, *operands)
    fix = re.search(FIXES, str(info.value))
    assert fix, info.value
    new_values = ufunc(np.asarray(x)[idx], *operands)  # the generic form's
    scope = {"x": x, "idx": idx, "v": v, "tnp": tnp, "new_values": new_values}
    got = eval(fix.group(1), scope)
    expected = np.array(x).astype(got.dtype)
    ufunc.at(expected, idx, *operands)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)
    unchanged(x, [1, 4, 3])


@pytest.mark.parametrize(
    ("ufunc", "method", "args"),
    [
        (np.subtract, "reduce", ()),
        (np.add, "accumulate", ()),
        (np.multiply, "outer", ("x",)),
        (np.add, "reduceat", (np.array([0, 2]),)),
        (np.gcd, "reduce", ()),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_the_suggested_ufunc_method_works(
    ufunc: np.ufunc, method: str, args: tuple[Any, ...]
) -> None:
    x = arr([12, 8, 6])
    extra = tuple(x if isinstance(a, str) else a for a in args)
    with pytest.raises(TypeError, match=method) as info:
        getattr(ufunc, method)(x, *extra)
    fix = re.search(r"((?:tnp|np)\.\w+\.\w+)\((np\.asarray\(x\), )?\.\.\.\)", str(info))
    assert fix, info.value
    first = np.asarray(x) if fix.group(2) else x
    got = eval(fix.group(1), {"tnp": tnp, "np": np})(first, *extra)
    expected = getattr(ufunc, method)(np.array(x), *(np.array(e) for e in extra))
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_plain_ufunc_calls_still_work() -> None:
    x = arr([1, 2, 3], "int8")
    out = np.add(x, 1)
    assert isinstance(out, tnp.Array)
    assert out.dtype == np.int8
    unchanged(out, [2, 3, 4])
    unchanged(np.array([1, 2, 3], np.int8) + x, [2, 4, 6])
    # A ufunc the namespace lacks gets plain read-only arrays: a NumPy result.
    unchanged(np.spacing(arr([1.0], "float32")), np.spacing(np.float32([1.0])))
    # Keywords other than out are NumPy's own business.
    unchanged(np.add(x, 1, dtype=np.int16), [2, 3, 4])
    # out=None (NumPy's default, or every output None) is no output at all.
    unchanged(np.add(x, 1, out=None), [2, 3, 4])
    unchanged(np.add(x, 1, out=(None,)), [2, 3, 4])


# -- every other way out of an Array ----------------------------------------


def exported() -> Iterator[tuple[str, np.ndarray[Any, Any], tnp.Array]]:
    x = arr([1, 2, 3])
    yield "asarray", np.asarray(x), x
    x = arr([1, 2, 3])
    yield "copy=False", x.__array__(copy=False), x
    x = arr([1, 2, 3])
    yield "copy=None", x.__array__(copy=None), x
    x = arr([1, 2, 3])
    yield "dlpack", np.from_dlpack(x), x
    x = tnp.reshape(arr([[1, 2, 3]]), (3,))  # a view of another Array's data
    yield "view", np.asarray(x), x
    x = arr([1, 2, 3]) + 0  # a result of the C fast path
    yield "result", np.asarray(x), x


@pytest.mark.parametrize("case", list(exported()), ids=lambda c: c[0])
def test_exported_arrays_are_read_only(
    case: tuple[str, np.ndarray[Any, Any], tnp.Array],
) -> None:
    _, out, x = case
    with pytest.raises(ValueError, match="read-only"):
        out[0] = 99
    # The flag cannot be turned back on: the memory behind it is read-only.
    with pytest.raises(ValueError, match="WRITEABLE"):
        out.flags.writeable = True
    with pytest.raises(TypeError, match="read-only"):
        memoryview(out)[0] = 99
    with pytest.raises(ValueError, match="read-only"):
        np.copyto(out, 5)
    with pytest.raises(ValueError, match="read-only"):
        out.sort()
    unchanged(x, [1, 2, 3])


def test_numpy_functions_that_write_refuse_arrays() -> None:
    # Arrays are not ndarrays, and have no __array_function__: NumPy's
    # writing functions cannot take them.
    x = arr([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    calls: list[Callable[[], Any]] = [
        lambda: np.copyto(x, 5),  # type: ignore[arg-type]
        lambda: np.put(x, [0], [9]),  # type: ignore[arg-type]
        lambda: np.place(x, x > 0, [9]),  # type: ignore[arg-type]
        lambda: np.putmask(x, x > 0, 9),  # type: ignore[arg-type]
        lambda: np.fill_diagonal(x, 9),  # type: ignore[arg-type]
        lambda: x.__setitem__(0, 9),
    ]
    for call in calls:
        with pytest.raises((TypeError, AttributeError)):
            call()
    with (
        pytest.raises(TypeError, match="immutable"),
        pytest.warns(UserWarning, match="shuffling"),
    ):
        np.random.default_rng(0).shuffle(x)  # type: ignore[arg-type]
    unchanged(x, [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert not hasattr(x, "__array_function__")
    for name in ("data", "base", "__array_interface__", "flags", "ctypes"):
        assert not hasattr(x, name), name
    with pytest.raises(TypeError):
        memoryview(x)  # type: ignore[arg-type]


def test_writing_functions_get_read_only_data() -> None:
    x = arr([1, 2, 3])
    view = np.asarray(x)
    with pytest.raises(ValueError, match="read-only"):
        np.copyto(view, 5)
    with pytest.raises(ValueError, match="read-only"):
        np.put(view, [0], [9])
    with pytest.raises(ValueError, match="read-only"):
        np.lib.stride_tricks.as_strided(view, writeable=True)[0] = 9
    with pytest.raises(ValueError, match="read-only"):
        np.nditer(view, op_flags=[["readwrite"]])
    unchanged(x, [1, 2, 3])


def test_copies_are_writable_and_independent() -> None:
    x = arr([1, 2, 3])
    for out in (
        np.array(x),
        np.asarray(x, dtype=np.int64),
        x.__array__(copy=True),
        np.asarray(x).copy(),
    ):
        out[0] = 99
    unchanged(x, [1, 2, 3])
    with pytest.raises(ValueError, match="copy"):
        x.__array__(np.int64, copy=False)


def test_pickle_round_trip_owns_its_data() -> None:
    x = arr([1, 2, 3])
    y = pickle.loads(pickle.dumps(x))
    unchanged(y, [1, 2, 3])
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(y)[0] = 99
    assert copy.copy(x) is x and copy.deepcopy(x) is x


def test_pickle_out_of_band_buffers_are_read_only_and_not_shared() -> None:
    x = arr([1, 2, 3])
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
    assert buffers, "the data went out of band"
    for buffer in buffers:
        assert buffer.raw().readonly
    # The loader's buffers are the caller's: the loaded Array copies them.
    mine = [bytearray(b.raw()) for b in buffers]
    y = pickle.loads(data, buffers=mine)
    mine[0][:4] = b"\xff\xff\xff\xff"
    unchanged(y, [1, 2, 3])
    unchanged(x, [1, 2, 3])


# -- no public route makes an Array's memory writable ------------------------
# NumPy lets anyone holding an ndarray that owns its memory turn WRITEABLE
# back on, and np.asarray(x).base used to be the Array's own ndarray.


def _made_arrays() -> dict[str, Callable[[], tnp.Array]]:
    x = tnp.asarray(np.arange(6, dtype=np.float32))
    return {
        "list": lambda: tnp.asarray([1.0, 2.0, 3.0]),
        "numpy": lambda: tnp.asarray(np.arange(6, dtype=np.int32)),
        "0-d": lambda: tnp.asarray(np.float32(2.5)),
        "python scalar": lambda: tnp.asarray(2.5),
        "bfloat16": lambda: tnp.asarray([1, 2, 3], dtype="bfloat16"),
        "int4": lambda: tnp.asarray([1, -2, 3], dtype="int4"),
        "float8": lambda: tnp.asarray([1.5, -2.0], dtype="float8_e4m3fn"),
        "zero-size": lambda: tnp.zeros((0, 3)),
        "operator": lambda: x + 1,
        "ufunc": lambda: tnp.sin(x),
        "reduction": lambda: tnp.sum(x.reshape(2, 3), axis=0),
        "reshape": lambda: x.reshape(2, 3),
        "transpose": lambda: x.reshape(2, 3).T,
        "slice": lambda: x[1::2],
        "reversed": lambda: x[::-1],
        "at-set": lambda: x.at[0].set(9.0),
        "jit": lambda: tl.jit(lambda a: a * 2)(x),
        "jit-identity": lambda: tl.jit(lambda a: a)(x),
        "grad": lambda: tl.grad(lambda a: (a * a).sum())(x),
        "random": lambda: tr.normal(tr.key(0), (2, 3)),
        "nn-param": lambda: nn.Dense(2).init(tr.key(0), tnp.ones((1, 3)))["params"][
            "kernel"
        ],
        "unpickled": lambda: pickle.loads(pickle.dumps(x)),
    }


def _pickle_buffer(x: tnp.Array) -> Any:
    buffers: list[pickle.PickleBuffer] = []
    pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
    return buffers[0] if buffers else np.asarray(x)  # strided: pickled in-band


EXPORTS: dict[str, Callable[[tnp.Array], Any]] = {
    "asarray": np.asarray,
    "array copy=False": lambda x: np.array(x, copy=False),
    "__array__": lambda x: x.__array__(),
    "__array__ copy=False": lambda x: x.__array__(copy=False),
    "from_dlpack": np.from_dlpack,
    "memoryview": lambda x: memoryview(np.asarray(x)),
    "numpy function": lambda x: np.expand_dims(x, 0),  # type: ignore[arg-type]
    "pickle buffer": _pickle_buffer,
}


def reachable(start: Any) -> list[Any]:
    """Everything public NumPy and Python lead to from an exported object:
    bases, the ``obj`` of memoryviews, the raw memory of pickle buffers, the
    buffer and the array interface of a base that is not an array, and its
    public attributes."""
    found: list[Any] = []
    todo = [start]
    while todo:
        obj = todo.pop()
        if obj is None or any(obj is f for f in found):
            continue
        found.append(obj)
        if isinstance(obj, np.ndarray):
            todo.append(obj.base)  # pyright: ignore[reportUnknownMemberType]
        elif isinstance(obj, memoryview):
            todo.append(obj.obj)
        elif isinstance(obj, pickle.PickleBuffer):
            todo += [obj.raw(), memoryview(obj)]
        else:
            try:
                todo += [memoryview(obj), np.frombuffer(obj, np.uint8)]
            except TypeError:  # no buffer
                pass
            if hasattr(obj, "__array_interface__"):
                todo.append(np.asarray(obj))
            todo += [getattr(obj, n) for n in dir(obj) if not n.startswith("_")]
    return found


def assert_never_writable(obj: Any) -> None:
    if isinstance(obj, np.ndarray):
        assert not obj.flags.writeable
        with pytest.raises(ValueError, match="WRITEABLE"):
            obj.setflags(write=True)
        if obj.size:
            with pytest.raises(ValueError, match="read-only"):
                obj[...] = 0
    elif isinstance(obj, memoryview):
        assert obj.readonly
    else:
        assert not callable(obj), f"{obj!r}: a base gives out a method"


@pytest.mark.parametrize("export", EXPORTS.values(), ids=EXPORTS.keys())
@pytest.mark.parametrize("make", _made_arrays().values(), ids=_made_arrays().keys())
def test_no_public_route_makes_an_arrays_memory_writable(
    make: Callable[[], tnp.Array], export: Callable[[tnp.Array], Any]
) -> None:
    x = make()
    view = x.reshape(-1)
    before = np.array(x)
    try:
        exported = export(x)
    except (BufferError, ValueError):
        # DLPack and Python's buffers have no code for ml_dtypes' types.
        assert x.dtype.name in ("bfloat16", "int4", "float8_e4m3fn")
        return
    found = reachable(exported)
    for obj in found:
        assert_never_writable(obj)
    # At least the exported array and what it is over.
    assert len(found) >= 2
    np.testing.assert_array_equal(np.asarray(x), before)
    np.testing.assert_array_equal(np.asarray(view), before.reshape(-1))


def test_exports_are_views_of_the_arrays_memory() -> None:
    # No copy: every export reads the same bytes.
    x = arr([[1, 2, 3], [4, 5, 6]])
    first, second = np.asarray(x), np.asarray(x.T)
    assert np.shares_memory(first, second)
    assert first.base is not second.base
    # An export's layout is its own: changing it changes no other export.
    with warnings.catch_warnings():
        # (NumPy 2.5 deprecates setting the shape; older ones allow it)
        warnings.simplefilter("ignore", DeprecationWarning)
        first.shape = (3, 2)
    assert np.asarray(x).shape == (2, 3)
    unchanged(x, [[1, 2, 3], [4, 5, 6]])


def _layouts() -> list[np.ndarray[Any, Any]]:
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    return [
        base,
        base[::-1, :, ::-2],
        base.transpose(2, 0, 1),
        base[:, 1],
        base[0, 0, 0:0],
        np.zeros((0, 5)),
        np.array(3.5),
        base[1, 2, 3:4],
        np.arange(5, dtype=np.float32).astype(ml_dtypes.bfloat16)[::-2],
        np.arange(6).astype(ml_dtypes.int4).reshape(2, 3),
        np.arange(4, dtype=np.float32).astype(ml_dtypes.float8_e4m3fn)[1:],
        np.arange(4, dtype=np.complex64)[1::2],
        np.broadcast_to(np.arange(3.0), (4, 3)),
    ]


@pytest.mark.parametrize(
    "read_only",
    [
        pytest.param(_array._read_only_view, id="python"),
        pytest.param(
            _array.read_only,
            id="extension",
            marks=pytest.mark.skipif(
                _array.read_only is _array._read_only_view,
                reason="the C extension is not built",
            ),
        ),
    ],
)
@pytest.mark.parametrize("value", _layouts(), ids=lambda v: f"{v.dtype}{v.strides}")
def test_read_only_views_keep_the_layout(
    read_only: Callable[[np.ndarray[Any, Any]], np.ndarray[Any, Any]],
    value: np.ndarray[Any, Any],
) -> None:
    out = read_only(value)
    assert (out.shape, out.dtype) == (value.shape, value.dtype)
    if value.size:
        assert out.strides == value.strides
        assert out.ctypes.data == value.ctypes.data  # the same memory, not a copy
    np.testing.assert_array_equal(out, value, strict=True)
    for obj in reachable(out):
        assert_never_writable(obj)
        assert obj is not value


# -- results never share the caller's memory --------------------------------


class Holder:
    """An array-like whose ``__array__`` hands out its own buffer (and
    ignores ``copy``), as some libraries' objects do."""

    def __init__(self, buffer: np.ndarray[Any, Any]) -> None:
        self.buffer = buffer

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        return self.buffer


def test_array_impl_is_not_public() -> None:
    assert "ArrayImpl" not in tnp.__all__
    assert not hasattr(tnp, "ArrayImpl")
    assert isinstance(tnp.zeros(2), tnp.Array)


@pytest.mark.parametrize(
    "make",
    [
        lambda src: ArrayImpl(src),
        lambda src: tnp.asarray(Holder(src)),
        lambda src: tnp.array(Holder(src)),
        lambda src: tnp.asarray(Holder(src), dtype="float32"),
        lambda src: tnp.real(src),
        lambda src: tnp.clip(src, 0, 10),
        lambda src: tnp.real(Holder(src)),
        lambda src: tnp.reshape(Holder(src), (2, 2)),
        lambda src: tnp.add(Holder(src), 0),
    ],
)
def test_results_do_not_share_the_callers_memory(
    make: Callable[[np.ndarray[Any, Any]], tnp.Array],
) -> None:
    src = np.arange(4, dtype=np.float32)
    out = make(src)
    assert not np.shares_memory(np.asarray(out), src)
    src[:] = 77
    assert np.asarray(out).ravel().tolist() == [0, 1, 2, 3]


def test_array_impl_refuses_unsupported_dtypes() -> None:
    with pytest.raises(TypeError, match="dtype"):
        ArrayImpl(np.array(["a"]))


def test_array_results_stay_shared_without_copies() -> None:
    # Array data is owned and immutable: shape functions of Arrays are views.
    x = arr([[1, 2], [3, 4]])
    for out in (tnp.reshape(x, (4,)), tnp.transpose(x), tnp.asarray(x), x.T):
        assert np.shares_memory(np.asarray(out), np.asarray(x))
    assert tnp.asarray(x) is x


def test_identity_operations_return_new_read_only_memory() -> None:
    # positive, a no-op conversion, floor of integers: each result is its own
    # memory or the input Array's, never writable.
    x = arr([1, 2, 3])
    for out in (+x, tnp.positive(x), tnp.floor(x), tnp.real(x), tnp.round(x)):
        with pytest.raises(ValueError, match="read-only"):
            np.asarray(out)[0] = 9
    src = np.array([1, 2, 3], np.int32)
    for fn in (tnp.positive, tnp.floor, tnp.real, tnp.conj, tnp.round):
        out = fn(src)
        assert not np.shares_memory(np.asarray(out), src), fn


def test_jit_results_do_not_share_arguments() -> None:
    src = np.arange(4, dtype=np.float32)
    outs = tl.jit(lambda x: (x, tnp.real(x), x.reshape(2, 2), +x))(src)
    for out in outs:
        assert not np.shares_memory(np.asarray(out), src)


# The namespace walk. Each In is a fresh writable NumPy array per call.
class In:
    def __init__(self, values: Any, dtype: str) -> None:
        self.values = values
        self.dtype = dtype

    def make(self) -> np.ndarray[Any, Any]:
        return np.array(self.values, dtype=self.dtype)

    def __repr__(self) -> str:
        return f"In({self.dtype})"


F = In([[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]], "float32")
G = In([[0.25, 2.0, -3.0], [1.0, 0.5, 2.0]], "float32")
I = In([[3, 1, 2], [5, 4, 0]], "int32")  # noqa: E741
J = In([[1, 2, 1], [2, 1, 3]], "int32")
B = In([[True, False, True], [False, True, True]], "bool")
C = In([[1 + 2j, -1j, 3], [0.5, 2 - 1j, 1j]], "complex64")
SQ = In([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]], "float32")
V = In([1.0, 2.0, 4.0], "float32")
ROW = In([[1.0, 2.0, 4.0]], "float32")
IDX = In([0, 2], "int32")
S = In(2.5, "float32")
N = In(3, "int32")
POS = In([[0.5, 0.25, 0.75], [0.125, 0.5, 0.875]], "float32")  # in (0, 1)


def call(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return args, kwargs


UNARY_FLOAT = (
    "abs absolute acos acosh arccos arccosh asin asinh arcsin arcsinh atan "
    "atanh arctan arctanh cbrt ceil cos cosh exp exp2 expm1 floor isfinite "
    "isinf isnan log log10 log1p log2 negative positive reciprocal rint sign "
    "sin sinh sqrt square tan tanh trunc real imag conj conjugate angle"
).split()
BINARY_FLOAT = (
    "add subtract multiply divide true_divide floor_divide mod remainder fmod "
    "power float_power maximum minimum fmax fmin copysign nextafter hypot "
    "heaviside arctan2 atan2 logaddexp logaddexp2 equal not_equal less "
    "less_equal greater greater_equal logical_and logical_or logical_xor divmod"
).split()
BINARY_INT = (
    "bitwise_and bitwise_or bitwise_xor left_shift right_shift "
    "bitwise_left_shift bitwise_right_shift"
).split()
UNARY_INT = "invert bitwise_invert bitwise_not logical_not".split()

SAMPLES: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    **{name: [call(F), call(C)] for name in ("real", "imag", "conj", "conjugate")},
    **{name: [call(POS)] for name in UNARY_FLOAT if name not in ("real", "imag")},
    **{name: [call(F, G)] for name in BINARY_FLOAT},
    **{name: [call(I, J)] for name in BINARY_INT},
    **{name: [call(I)] for name in UNARY_INT},
    "acosh": [call(In([[1.5, 2.0]], "float32"))],
    "arccosh": [call(In([[1.5, 2.0]], "float32"))],
    "angle": [call(C), call(F)],
    "conj": [call(F), call(C), call(I)],
    "positive": [call(F), call(I), call(B)],
    "floor": [call(F), call(I)],
    "ceil": [call(I)],
    "trunc": [call(I)],
    "rint": [call(I)],
    "around": [call(F, 1), call(I)],
    "round": [call(F, 1), call(I), call(I, 0)],
    "clip": [call(F, 0, 2), call(F), call(I, J)],
    "where": [call(B, F, G), call(B), call(B, I, 0)],
    # Shape functions, which NumPy answers with views.
    "reshape": [call(F, (3, 2)), call(F, (2, 3))],
    "ravel": [call(F), call(ROW)],
    "transpose": [call(F)],
    "permute_dims": [call(F, (1, 0))],
    "matrix_transpose": [call(F)],
    "moveaxis": [call(F, 0, 1)],
    "swapaxes": [call(F, 0, 1)],
    "expand_dims": [call(F, 0)],
    "squeeze": [call(ROW), call(F)],
    "broadcast_to": [call(V, (2, 3)), call(F, (2, 3))],
    "broadcast_arrays": [call(V, F), call(F, F)],
    "atleast_1d": [call(V), call(S), call(V, F)],
    "atleast_2d": [call(F), call(V)],
    "atleast_3d": [call(F)],
    "flip": [call(F), call(F, 0)],
    "roll": [call(F, 1), call(F, 0)],
    "tile": [call(F, 1), call(F, 2)],
    "repeat": [call(F, 1), call(V, 2)],
    "diagonal": [call(SQ), call(F)],
    "split": [call(F, 2), call(V, 1)],
    "take": [call(V, IDX), call(F, IDX, axis=1)],
    "take_along_axis": [call(V, IDX, 0), call(F, J, 0, mode="clip")],
    "pad": [call(V, 1), call(F, ((1, 0), (0, 2)), "reflect"), call(I, 1, "edge")],
    "compress": [call(In([True, False, True], "bool"), V)],
    "nonzero": [call(B), call(F)],
    "argwhere": [call(B), call(F, size=4, fill_value=-1)],
    "flatnonzero": [call(B), call(F, size=4)],
    "sort": [call(F), call(V)],
    "argsort": [call(F)],
    "searchsorted": [call(V, S), call(V, F)],
    "concatenate": [call([F]), call([F, G])],
    "concat": [call([F, G])],
    "stack": [call([F]), call([F, G])],
    "hstack": [call([F]), call([F, G])],
    "vstack": [call([F]), call([F, G])],
    # Reductions.
    "sum": [call(F), call(F, axis=()), call(S)],
    "prod": [call(F), call(F, axis=())],
    "mean": [call(F), call(F, axis=())],
    "var": [call(F)],
    "std": [call(F)],
    "max": [call(F), call(F, axis=()), call(S)],
    "min": [call(F), call(F, axis=())],
    "amax": [call(F)],
    "amin": [call(F)],
    "all": [call(B), call(B, axis=())],
    "any": [call(B), call(B, axis=())],
    "argmax": [call(F)],
    "argmin": [call(F)],
    "cumsum": [call(F), call(V, axis=0)],
    "cumprod": [call(F)],
    "ptp": [call(F)],
    "trace": [call(SQ)],
    # Products.
    "dot": [call(V, V), call(SQ, V), call(S, V), call(V, S)],
    "vdot": [call(V, V)],
    "inner": [call(V, V), call(S, F)],
    "outer": [call(V, V)],
    "matmul": [call(SQ, SQ), call(SQ, V)],
    "tensordot": [call(SQ, SQ), call(V, V, 0), call(S, F, 0)],
    "einsum": [
        call("ij->ij", F),
        call("ij->ji", F),
        call("ii->i", SQ),
        call("ij", F),
        call("i,i->i", V, V),
    ],
    # Making arrays.
    "asarray": [call(F), call(F, dtype="float32"), call(F, dtype="int32"), call(S)],
    "array": [call(F), call(F, copy=False), call(F, ndmin=3), call([F, G])],
    "astype": [call(F, "float32"), call(F, "int8"), call(C, "complex64")],
    "full": [call((2, 3), S), call((3,), V)],
    "full_like": [call(F, S), call(F, 1.0), call(V, V)],
    "zeros_like": [call(F)],
    "ones_like": [call(F)],
    "empty_like": [call(F)],
    "arange": [call(N), call(S, N)],
    "linspace": [call(S, N, 3), call(V, F, 2)],
}
for _name in ("conj", "conjugate"):
    SAMPLES[_name] = [call(F), call(C), call(I)]
for _name in ("ceil", "floor", "trunc", "rint"):
    SAMPLES[_name] = [call(POS), call(I)]

# Public functions that take no arrays: nothing of the caller's to share.
NO_ARRAYS = {
    # Shapes, dtypes and Python values in; arrays of new memory out.
    "zeros": "shape and dtype only",
    "ones": "shape and dtype only",
    "empty": "shape and dtype only",
    "eye": "sizes and dtype only",
    "identity": "size and dtype only",
    # Answers about dtypes and shapes, not arrays.
    "broadcast_shapes": "returns a shape",
    "can_cast": "returns a bool",
    "finfo": "returns type information",
    "iinfo": "returns type information",
    "isdtype": "returns a bool",
    "issubdtype": "returns a bool",
    "promote_types": "returns a dtype",
    "result_type": "returns a dtype",
}


def public_functions() -> list[str]:
    return sorted(
        name
        for name in tnp.__all__
        if callable(getattr(tnp, name))
        and not isinstance(getattr(tnp, name), type | tnp.ScalarType)
    )


def test_every_public_function_has_a_sample() -> None:
    missing = set(public_functions()) - set(SAMPLES) - set(NO_ARRAYS)
    assert not missing, f"add sample calls to SAMPLES for {sorted(missing)}"
    stale = (set(SAMPLES) | set(NO_ARRAYS)) - set(public_functions())
    assert not stale, f"not public functions: {sorted(stale)}"


def _made(obj: Any, made: list[np.ndarray[Any, Any]], wrap: bool) -> Any:
    if isinstance(obj, In):
        value = obj.make()
        made.append(value)
        return Holder(value) if wrap else value
    if isinstance(obj, list | tuple):
        items = [_made(x, made, wrap) for x in obj]  # pyright: ignore[reportUnknownVariableType]
        return items if isinstance(obj, list) else tuple(items)
    return obj


def _results(obj: Any) -> list[tnp.Array]:
    if isinstance(obj, tnp.Array):
        return [obj]
    assert isinstance(obj, list | tuple), f"unexpected result {obj!r}"
    return [r for item in obj for r in _results(item)]  # pyright: ignore[reportUnknownVariableType]


def _scribble(value: np.ndarray[Any, Any]) -> None:
    if value.dtype == bool:
        np.logical_not(value, out=value)
    else:
        value[...] = 77


def check_sample(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], wrap: bool
) -> None:
    made: list[np.ndarray[Any, Any]] = []
    concrete = _made(args, made, wrap)
    results = _results(getattr(tnp, name)(*concrete, **kwargs))
    before = [np.array(r) for r in results]
    for r in results:
        view = np.asarray(r)
        assert not view.flags.writeable, f"{name}: writable result"
        for m in made:
            assert not np.shares_memory(view, m), f"{name}{args}: shares memory"
    for m in made:
        _scribble(m)
    for r, b in zip(results, before, strict=True):
        np.testing.assert_array_equal(np.asarray(r), b, err_msg=f"{name}{args}")


def sample_cases() -> list[Any]:
    return [
        pytest.param(name, args, kwargs, id=f"{name}-{i}")
        for name, calls in sorted(SAMPLES.items())
        for i, (args, kwargs) in enumerate(calls)
    ]


@pytest.mark.parametrize(("name", "args", "kwargs"), sample_cases())
def test_results_do_not_change_with_numpy_arguments(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    check_sample(name, args, kwargs, wrap=False)


@pytest.mark.parametrize(("name", "args", "kwargs"), sample_cases())
def test_results_do_not_change_with_array_like_arguments(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    # The same calls with objects whose __array__ gives their own buffer.
    try:
        check_sample(name, args, kwargs, wrap=True)
    except TypeError as err:
        # Only where the function refuses such objects outright.
        assert "Holder" in str(err), err


UFUNC_SAMPLES: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "reduce": call(I),
    "accumulate": call(I),
    "outer": call(IDX, IDX),
    "at": call(I, (0, 1), 1, inplace=False),
    "reduceat": call(In([1, 2, 3, 4], "int32"), IDX),
}


def ufunc_cases() -> list[Any]:
    names = [n for n in public_functions() if isinstance(getattr(tnp, n), tnp.ufunc)]
    assert "add" in names and "bitwise_xor" in names
    return [
        pytest.param(name, method, id=f"{name}.{method}")
        for name in names
        for method in UFUNC_SAMPLES
    ]


@pytest.mark.parametrize(("name", "method"), ufunc_cases())
def test_ufunc_method_results_do_not_change(name: str, method: str) -> None:
    args, kwargs = UFUNC_SAMPLES[method]
    made: list[np.ndarray[Any, Any]] = []
    concrete = _made(args, made, False)
    originals = [m.copy() for m in made]
    try:
        out = getattr(getattr(tnp, name), method)(*concrete, **kwargs)
    except TypeError as err:  # methods the dtype does not allow
        assert str(err).startswith(f"{name}."), err
        return
    for m, o in zip(made, originals, strict=True):  # .at never writes a
        np.testing.assert_array_equal(m, o)
    before = np.array(out)
    assert not any(np.shares_memory(np.asarray(out), m) for m in made)
    for m in made:
        _scribble(m)
    np.testing.assert_array_equal(np.asarray(out), before)


def test_jit_arguments_of_ndarray_subclasses_are_copied() -> None:
    src = np.ma.masked_array(np.arange(3, dtype=np.float32))
    out = tl.jit(lambda x: x)(src)
    src[0] = 77
    unchanged(out, [0, 1, 2])


def compiled_functions() -> list[str]:
    return [
        n
        for n in public_functions()
        if type(getattr(tnp, n)).__name__ == "FastElementwise"
    ]


@pytest.mark.skipif(not compiled_functions(), reason="the C extension is not built")
@pytest.mark.parametrize("name", compiled_functions())
def test_compiled_results_are_read_only_when_handed_out(name: str) -> None:
    # The C extension wraps NumPy's results directly: they follow the rules of
    # every other result.
    fn = getattr(tnp, name)
    tried = 0
    for dtype in ("int32", "float32", "bool"):
        x = arr([1, 0, 1], dtype)
        operands = [x] * fn.op.nin
        try:
            fn(*operands)  # the first call builds the plan, in Python
        except TypeError:
            continue  # a dtype the function refuses
        tried += 1
        out = fn(*operands)
        expected = fn.__wrapped__(*operands)
        for r, e in zip(_results(out), _results(expected), strict=True):
            np.testing.assert_array_equal(np.asarray(r), np.asarray(e))
            view = np.asarray(r)
            with pytest.raises(ValueError, match="read-only"):
                view[...] = 0
            with pytest.raises(ValueError, match="WRITEABLE"):
                view.flags.writeable = True
        unchanged(x, np.array([1, 0, 1], dtype))
    assert tried, f"{name} accepted none of the sample dtypes"
