"""The optional C fast paths (typelattice._speedups) answer as the Python code.

``result_type``, ``lattice_result_type`` and ``promote_types`` have a C
version that reads the memos ``_promotion`` maintains and calls the Python
function on any miss. These tests run the same calls through both and
require the same outcome: the value (dtype and its type, the weak flag and
its type), or the exception type and message, and the warnings. The C
comparisons are skipped when the extension is not built (or is disabled with
TYPELATTICE_NO_SPEEDUPS); the tests of the switch itself always run.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import os
import pickle
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import typelattice as tl
import typelattice.numpy as tnp
from support import WeakCarrier
from typelattice import _config, _dtypes, _promotion

BUILT = _promotion._speedups is not None
needs_c = pytest.mark.skipif(not BUILT, reason=_promotion.SPEEDUPS)

KINDS = ("result_type", "lattice_result_type", "promote_types")
PYTHON: dict[str, Callable[..., Any]] = {
    "result_type": _promotion._py_result_type,
    "lattice_result_type": _promotion._py_lattice_result_type,
    "promote_types": _promotion._py_promote_types,
}


def c_functions() -> dict[str, Callable[..., Any]]:
    """The public functions: the C versions when the extension is in use."""
    return {kind: getattr(_promotion, kind) for kind in KINDS}


# -- the inputs ---------------------------------------------------------------------


class SubArray(np.ndarray):  # type: ignore[type-arg]
    """An ndarray subclass: not keyed by the fast path's array rule."""


class HashRaises:
    """An argument whose hash raises ``error`` (the lookups must agree)."""

    def __init__(self, error: type[Exception]) -> None:
        self.error = error
        self.dtype = np.dtype("int8")

    def __hash__(self) -> int:
        raise self.error("no hash")

    def __repr__(self) -> str:
        return f"HashRaises({self.error.__name__})"


class RaisingHashMeta(type):
    """A metaclass whose classes cannot be hashed: the key of its instances."""

    def __hash__(cls) -> int:
        raise RuntimeError("class hash")


class OddType(metaclass=RaisingHashMeta):
    dtype = np.dtype("float32")


class Keyed:
    """An argument with its own promotion key (like typelattice's arrays)."""

    def __init__(self, key: object) -> None:
        self._promotion_key = key
        self.dtype = np.dtype("int8")

    def __repr__(self) -> str:
        return f"Keyed({self._promotion_key!r})"


class KeyRaises:
    """An argument whose promotion key cannot be read."""

    dtype = np.dtype("uint8")

    @property
    def _promotion_key(self) -> object:
        raise RuntimeError("no key")

    def __repr__(self) -> str:
        return "KeyRaises()"


def _inputs() -> list[Any]:
    out: list[Any] = []
    for dt in _dtypes.ALL_DTYPES:
        out += [dt, dt.name, dt.type, np.zeros(2, dt), np.zeros((), dt)[()]]
        out.append(getattr(tnp, dt.name))
    out += [np.dtype(">i4"), "i4", "f2", "bf", "u1", "c16", "float", "int"]
    out += [True, False, 0, 3, -(2**70), 2.5, 1j, np.int8(1), np.float64(2)]
    out += [bool, int, float, complex, None]
    out += [
        tnp.asarray(2),
        tnp.asarray(2.0),
        tnp.asarray(1j),
        tnp.asarray(np.int8(1)),
        tnp.asarray(np.zeros(2, "uint16")),
        tnp.asarray(True),
        WeakCarrier("int16"),
        WeakCarrier("float16", weak_type=False),
        np.zeros(3, "int8").view(SubArray),
    ]
    # Inputs that are rejected, or are unusual for the lookups.
    out += [
        "foo",
        np.dtype("U3"),
        np.dtype("O"),
        np.zeros(2, "U3"),
        np.datetime64(1, "s"),
        np.ndarray,
        object(),
        [1, 2],
        {},
        b"x",
        HashRaises(KeyError),
        HashRaises(TypeError),
        HashRaises(RuntimeError),
        OddType(),
        OddType,
        Keyed(["unhashable"]),
        Keyed(None),
        Keyed(np.dtypes.Int8DType),
        KeyRaises(),
    ]
    return out


INPUTS = _inputs()
FLAGS: list[Any] = [True, False, 1, 0, None, np.True_, "yes"]

# By index: sampled_from hashes its elements, and some of these cannot be.
inputs_st = st.integers(0, len(INPUTS) - 1).map(INPUTS.__getitem__)


Call = tuple[str, tuple[Any, ...], dict[str, Any]]


@st.composite
def calls(draw: st.DrawFn) -> Call:
    """One call: the function, the positional and the keyword arguments."""
    kind = draw(st.sampled_from(KINDS))
    if kind == "promote_types":
        n = draw(st.sampled_from([2, 2, 2, 2, 1, 3]))
    else:
        n = draw(st.integers(0, 5))
    args = tuple(draw(st.lists(inputs_st, min_size=n, max_size=n)))
    kwargs: dict[str, Any] = {}
    extra = draw(st.integers(0, 9))
    if kind == "result_type" and extra < 6:
        kwargs["return_weak_type_flag"] = draw(st.sampled_from(FLAGS))
    elif extra == 9:
        kwargs["unexpected"] = 1
    return kind, args, kwargs


SETTINGS: list[tuple[str, object]] = [
    ("enable_x64", True),
    ("enable_x64", False),
    ("dtype_promotion", "strict"),
    ("dtype_promotion", "standard"),
    ("explicit_x64_dtypes", "warn"),
    ("explicit_x64_dtypes", "error"),
    ("explicit_x64_dtypes", "allow"),
]
SCOPES = {
    "enable_x64": tl.enable_x64,
    "dtype_promotion": tl.dtype_promotion,
    "explicit_x64_dtypes": tl.explicit_x64_dtypes,
}
settings_st = st.lists(st.sampled_from(SETTINGS), max_size=3)


@contextmanager
def scoped(scopes: list[tuple[str, object]]) -> Iterator[None]:
    """Nested scopes, each inside the previous one."""
    with ExitStack() as stack:
        for name, value in scopes:
            stack.enter_context(SCOPES[name](value))
        yield


@contextmanager
def configured(
    global_settings: list[tuple[str, object]], scopes: list[tuple[str, object]]
) -> Iterator[None]:
    """Global settings, then nested scopes (each inside the previous one)."""
    try:
        for name, value in global_settings:
            tl.config.update(name, value)
        with scoped(scopes):
            yield
    finally:
        tl.config.reset()


# -- outcomes -------------------------------------------------------------------------


def describe(value: object) -> object:
    """What must be equal between the two paths: types included."""
    if isinstance(value, tuple):
        return ("tuple", *map(describe, value))
    if isinstance(value, np.dtype):
        return ("dtype", type(value), value.str, value.name, repr(value))
    return (type(value), repr(value))


def outcome(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Any) -> object:
    """The value or the exception of ``fn(*args, **kwargs)``, and its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("returns", describe(fn(*args, **kwargs)))
        except Exception as err:
            result = ("raises", type(err), str(err))
    return result, [(w.category, str(w.message)) for w in caught]


def forget_cached() -> None:
    """Empty the memos of the state in force (both paths read them)."""
    state = _config.current()
    state.memo.clear()
    state.promotion_memo.clear()


Memos = tuple[dict[Any, Any], dict[Any, Any]]


def saved_memos() -> Memos:
    state = _config.current()
    return dict(state.memo), dict(state.promotion_memo)


def restore_memos(saved: Memos) -> None:
    state = _config.current()
    for memo, contents in zip((state.memo, state.promotion_memo), saved, strict=True):
        memo.clear()
        memo.update(contents)


def check_calls(call_list: list[Call], order: list[int]) -> None:
    """Make the calls ``call_list[i]`` for ``i`` in ``order``, each through
    the C path and, from the same memo contents, through the Python path: the
    outcomes and the memo contents left behind must be the same.

    The memos are emptied first, then filled by the calls themselves, so
    later calls find entries stored by earlier ones for other arguments.
    (Not compared with the answer from empty memos: the Python cache
    conflates some arguments, and the C path must reproduce it as it is.)
    """
    forget_cached()
    c = c_functions()
    for i in order:
        kind, args, kwargs = call_list[i]
        before = saved_memos()
        got_c = outcome(c[kind], args, kwargs)
        after_c = saved_memos()
        restore_memos(before)
        got_py = outcome(PYTHON[kind], args, kwargs)
        assert got_c == got_py, (kind, args, kwargs)
        assert after_c == saved_memos(), (kind, args, kwargs)


@st.composite
def call_plans(draw: st.DrawFn) -> tuple[list[Call], list[int]]:
    """Calls, and an order to make them in (each one at least once)."""
    call_list = draw(st.lists(calls(), min_size=1, max_size=6))
    indices = st.integers(0, len(call_list) - 1)
    order = [*range(len(call_list)), *draw(st.lists(indices, max_size=8))]
    return call_list, draw(st.permutations(order))


# -- the C path against the Python path ------------------------------------------------


@needs_c
@settings(max_examples=400, deadline=None)
@given(settings_st, settings_st, call_plans())
def test_same_outcomes(
    global_settings: list[tuple[str, object]],
    scopes: list[tuple[str, object]],
    plan: tuple[list[Call], list[int]],
) -> None:
    with configured(global_settings, scopes):
        check_calls(*plan)


@needs_c
@settings(max_examples=100, deadline=None)
@given(st.lists(settings_st, min_size=2, max_size=4), call_plans())
def test_nested_scopes(
    levels: list[list[tuple[str, object]]], plan: tuple[list[Call], list[int]]
) -> None:
    """At every depth of nested scopes, and again after leaving them."""
    with ExitStack() as outer:
        for level in levels:
            outer.enter_context(scoped(level))
            check_calls(*plan)
    check_calls(*plan)


@needs_c
def test_global_changes_reach_the_c_path() -> None:
    c = c_functions()
    x = np.zeros(2, "int64")
    assert c["result_type"](1.0, x) == np.dtype("float32")
    tl.config.update("enable_x64", True)
    assert c["result_type"](1.0, x) == np.dtype("float64")
    assert c["promote_types"](int, float) == np.dtype("float64")
    tl.config.update("dtype_promotion", "strict")
    with pytest.raises(tl.TypePromotionError):
        c["promote_types"]("int8", "uint8")
    with pytest.raises(tl.TypePromotionError):
        c["result_type"](x, 1.0)
    tl.config.reset()
    assert c["result_type"](1.0, x) == np.dtype("float32")
    assert c["promote_types"]("int8", "uint8") == np.dtype("int16")


def _mode_calls() -> list[Call]:
    x8 = np.zeros(2, "int8")
    x64 = np.zeros(2, "int64")
    return [
        ("result_type", (x8, 1), {}),
        ("result_type", (x64, 1.0), {"return_weak_type_flag": True}),
        ("result_type", ("int16", np.zeros(2, "float32"), 2, 1.0), {}),
        ("result_type", (1, 1.0), {"return_weak_type_flag": True}),
        ("result_type", (tnp.asarray(2), "uint8"), {}),
        ("result_type", ("bool", 1), {}),
        ("result_type", (None,), {}),
        ("lattice_result_type", (x8, 1), {}),
        ("lattice_result_type", (tnp.asarray(2), tnp.asarray(3)), {}),
        ("promote_types", ("int8", "uint8"), {}),
        ("promote_types", (np.dtype("uint32"), np.dtype("int32")), {}),
        ("promote_types", (int, "bfloat16"), {}),
    ]


MODES: list[list[tuple[str, object]]] = [
    [],
    [("enable_x64", True)],
    [("dtype_promotion", "strict")],
    [("enable_x64", True), ("dtype_promotion", "strict")],
    [("explicit_x64_dtypes", "allow")],
]


def _no_warnings(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> object:
    # No catch_warnings here: it is not thread-safe. These calls do not warn.
    try:
        return ("returns", describe(fn(*args, **kwargs)))
    except Exception as err:
        return ("raises", type(err), str(err))


def _expected_by_mode(call_list: list[Call]) -> list[list[object]]:
    out = []
    for mode in MODES:
        with configured([], mode):
            forget_cached()
            out.append([_no_warnings(PYTHON[k], a, kw) for k, a, kw in call_list])
    return out


@needs_c
def test_threads_see_their_own_scopes() -> None:
    """Threads in different modes (one in none) call both paths at once."""
    call_list = _mode_calls()
    expected = _expected_by_mode(call_list)
    c = c_functions()
    start = threading.Barrier(len(MODES))
    failures: list[str] = []

    def run(m: int) -> None:
        try:
            with scoped(MODES[m]):
                start.wait()
                for _ in range(200):
                    for i, (kind, args, kwargs) in enumerate(call_list):
                        for fn in (c[kind], PYTHON[kind]):
                            got = _no_warnings(fn, args, kwargs)
                            if got != expected[m][i]:
                                failures.append(
                                    f"{MODES[m]}: {fn}{args}: {got} != {expected[m][i]}"
                                )
                                return
        except Exception as err:  # pragma: no cover - reported below
            failures.append(repr(err))

    threads = [threading.Thread(target=run, args=(m,)) for m in range(len(MODES))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


@needs_c
def test_asyncio_tasks_see_their_own_scopes() -> None:
    call_list = _mode_calls()
    expected = _expected_by_mode(call_list)
    c = c_functions()

    async def run(m: int) -> bool:
        with scoped(MODES[m]):
            for _ in range(20):
                for i, (kind, args, kwargs) in enumerate(call_list):
                    for fn in (c[kind], PYTHON[kind]):
                        if _no_warnings(fn, args, kwargs) != expected[m][i]:
                            return False
                    await asyncio.sleep(0)
        return True

    async def main() -> list[bool]:
        return list(await asyncio.gather(*(run(m) for m in range(len(MODES)))))

    assert asyncio.run(main()) == [True] * len(MODES)


@needs_c
@pytest.mark.parametrize("kind", ["result_type", "lattice_result_type"])
def test_unexpected_memo_entries_go_to_python(kind: str) -> None:
    """Entries of another shape under a result_type key: Python decides."""

    class Marker:
        dtype = np.dtype("int8")

    memo = _config.current().memo
    for entry in [("a", "b"), "abc", ("x", True, "y", "z"), None]:
        memo[(Marker,)] = entry
        try:
            assert outcome(c_functions()[kind], (Marker(),), {}) == outcome(
                PYTHON[kind], (Marker(),), {}
            )
        finally:
            del memo[(Marker,)]


# Each argument form, in the calls of the promotion benchmark and more.
FORM_CALLS: dict[str, tuple[Any, ...]] = {
    "Python types": (bool, int, float, complex),
    "NumPy scalar types and int": (np.int8, np.uint8, np.float16, int),
    "dtypes": (np.dtype("int8"), np.dtype("uint8")),
    "strings": ("int8", "uint8", "float16"),
    "ml_dtypes types": (ml_dtypes.bfloat16, np.float32),
    "narrow ml_dtypes types": (ml_dtypes.int4, ml_dtypes.int4),
    "typelattice.numpy dtypes": (tnp.float32, tnp.int8, tnp.bfloat16),
    "values": (True, 3, 2.5, 1j, np.int8(1)),
    "arrays": (np.zeros(2, "int16"), tnp.asarray([1, 2], "uint8"), tnp.asarray(2.0)),
    "None": (None, "int8"),
}


@needs_c
@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("args", FORM_CALLS.values(), ids=list(FORM_CALLS))
@pytest.mark.parametrize("kind", ["result_type", "lattice_result_type"])
def test_every_argument_form_is_answered_in_c(
    kind: str, args: tuple[Any, ...], x64: bool
) -> None:
    """Once an answer is cached, the C path gives it without calling Python."""
    python_calls: list[tuple[Any, ...]] = []

    def python(*call_args: Any, **kwargs: Any) -> Any:
        python_calls.append(call_args)
        return PYTHON[kind](*call_args, **kwargs)

    fast = _promotion._speedups.FastPath(kind, python)  # type: ignore[union-attr, arg-type]
    with tl.enable_x64(x64):
        forget_cached()
        expected = outcome(PYTHON[kind], args, {})
        assert outcome(fast, args, {}) == expected
        assert python_calls == []  # the Python call above cached it
        forget_cached()
        for _ in range(3):
            assert outcome(fast, args, {}) == expected
        assert python_calls == [args]  # the first call only


@needs_c
def test_fast_paths_stand_for_the_python_functions() -> None:
    import typelattice.numpy as tnp_module

    for kind in KINDS:
        fast = getattr(_promotion, kind)
        py = PYTHON[kind]
        assert isinstance(fast, _promotion._speedups.FastPath)
        assert fast.kind == kind
        assert fast.fallback is py
        assert fast.__wrapped__ is py  # type: ignore[attr-defined]
        assert fast.__name__ == py.__name__  # type: ignore[attr-defined]
        assert fast.__qualname__ == py.__qualname__  # type: ignore[attr-defined]
        assert fast.__module__ == "typelattice._promotion"
        assert fast.__doc__ == py.__doc__
        assert inspect.signature(fast) == inspect.signature(py)
        assert pickle.loads(pickle.dumps(fast)) is fast
        assert getattr(tl, kind) is fast
    assert tnp_module.result_type is tl.result_type
    assert tnp_module.promote_types is tl.promote_types


@needs_c
def test_fast_path_arguments() -> None:
    fast_path = _promotion._speedups.FastPath
    with pytest.raises(ValueError, match="kind must be"):
        fast_path("join", PYTHON["result_type"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be callable"):
        fast_path("result_type", 3)  # type: ignore[arg-type]


# -- the switch ---------------------------------------------------------------------


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "TYPELATTICE_NO_SPEEDUPS"}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**environ, **env},
        check=False,
    )


REPORT = (
    "import inspect, typelattice as tl; from typelattice import _promotion as p; "
    "print(p.SPEEDUPS); print(inspect.isfunction(tl.result_type)); "
    "print(tl.result_type('int8', 2), tl.promote_types('int8', 'uint8'))"
)


@pytest.mark.parametrize("value", ["1", "true", " YES "])
def test_environment_variable_selects_python(value: str) -> None:
    out = _run(REPORT, TYPELATTICE_NO_SPEEDUPS=value)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "pure Python (TYPELATTICE_NO_SPEEDUPS is set)",
        "True",
        "int8 int16",
    ]


@pytest.mark.parametrize("value", [None, "", "0", "off"])
def test_default_uses_the_extension_when_built(value: str | None) -> None:
    out = _run(REPORT) if value is None else _run(REPORT, TYPELATTICE_NO_SPEEDUPS=value)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[2] == "int8 int16"
    # (built, whether or not this process runs with it: the suite also runs
    # with TYPELATTICE_NO_SPEEDUPS=1)
    if importlib.util.find_spec("typelattice._speedups") is not None:
        assert lines[:2] == ["C (typelattice._speedups)", "False"]
    else:
        assert lines[0].startswith("pure Python") and lines[1] == "True"


def test_bad_environment_value() -> None:
    out = _run("import typelattice", TYPELATTICE_NO_SPEEDUPS="maybe")
    assert out.returncode != 0
    assert "TYPELATTICE_NO_SPEEDUPS='maybe'" in out.stderr


def test_public_names_match_the_choice() -> None:
    for kind in KINDS:
        if BUILT:
            assert getattr(_promotion, kind).__wrapped__ is PYTHON[kind]
        else:
            assert getattr(_promotion, kind) is PYTHON[kind]
