"""Primitives bound eagerly in C (typelattice._speedups.FastPrimitive) answer
as the Python code.

When the extension is built, ``Primitive.bind`` and the public functions of
typelattice.lax whose arguments are exactly their primitive's operands
(``lax.add``, ``lax.exp``...) are FastPrimitive objects: on arrays whose
signature has an eager plan they call the plan's function and wrap its
result in C, and they call the Python function for anything else. These
tests make the same calls through both and require the same outcome: the
result's type, dtype, weak flag, shape and bytes, or the exception's type and
message, and the warnings; and NumPy's error state left as it was.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import run_without_speedups
from typelattice import _promotion, lax
from typelattice._array import ArrayImpl
from typelattice._lax._elementwise import add_p, convert_element_type_p, exp_p, neg_p
from typelattice._lax._reductions import reduce_sum_p
from typelattice._tracing.primitive import Primitive

BUILT = _promotion._speedups is not None
needs_c = pytest.mark.skipif(not BUILT, reason=_promotion.SPEEDUPS)


def array(value: Any, dtype: Any, weak: bool = False) -> ArrayImpl:
    return ArrayImpl(np.asarray(value, dtype=dtype), weak_type=weak)


F16_MAX = float(np.finfo(np.float16).max)
F32_MAX = float(np.finfo(np.float32).max)

# Arrays of every kind, 0-d and weak ones, values that overflow, divide by
# zero or are invalid for the math functions (NumPy would warn), and shapes
# that broadcast, and that do not.
ARRAYS: list[ArrayImpl] = [
    array([True, False, True], bool),
    array([-2, 0, 5], "int8"),
    array([0, 7, 255], "uint8"),
    array([-3, 0, 9], "int32"),
    array(4, "int32", weak=True),
    array([1, 65535, 0], "uint16"),
    array([0.5, -1.5, F16_MAX], "float16"),
    array([0.5, -1.5, 3.0], ml_dtypes.bfloat16),
    array([0.25, -0.0, F32_MAX], "float32"),
    array([-1.0, 0.0, 100.0], "float32"),
    array(2.5, "float32", weak=True),
    array([2.5, 0.0, -7.0], "float32", weak=True),
    array([1 + 2j, -1j, 3], "complex64"),
    array([[1.0], [2.0]], "float32"),  # broadcasts against the (3,) operands
    array([[1.0, 2.0, 3.0]], "float32"),
    array([1.0, 2.0], "float32"),  # does not
]


def describe(value: object) -> object:
    """What must be equal between the two paths."""
    if isinstance(value, ArrayImpl):
        v = value._value
        owns = v.flags.owndata
        return ("Array", type(v), v.dtype, value.weak_type, v.shape, v.tobytes(), owns)
    if isinstance(value, tuple):
        return tuple(describe(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return (type(value), repr(value))


def outcome(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> object:
    errstate = np.geterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: object = ("returns", describe(fn(*args, **kwargs)))
        except Exception as err:
            result = ("raises", type(err), str(err))
    assert np.geterr() == errstate, (fn, args)
    return result, [(w.category, str(w.message)) for w in caught]


@contextlib.contextmanager
def python_path() -> Iterator[None]:
    """Every binding in Python: Primitive.bind is its Python function (the
    public functions bind in C only while Primitive.bind is the C one)."""
    fast = vars(Primitive)["bind"]
    if type(fast) is not getattr(_promotion._speedups, "FastPrimitive", None):
        yield
        return
    Primitive.bind = fast.fallback  # type: ignore[method-assign]
    try:
        yield
    finally:
        Primitive.bind = fast  # type: ignore[method-assign]


def both(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """The same outcome in Python and in C, whichever path made the plan."""
    with python_path():
        first = outcome(fn, *args, **kwargs)  # (makes the plan, if any)
    assert outcome(fn, *args, **kwargs) == first, (fn, args, kwargs)
    with python_path():
        assert outcome(fn, *args, **kwargs) == first, (fn, args, kwargs)


def fast_functions(nargs: int) -> dict[str, Any]:
    """lax's functions of ``nargs`` operands bound in C, by name."""
    if _promotion._speedups is None:
        return {}
    fast_type = _promotion._speedups.FastPrimitive
    return {
        name: fn
        for name, fn in vars(lax).items()
        if type(fn) is fast_type and fn.primitive is not None
        if len(inspect.signature(fn).parameters) >= nargs
        and sum(
            p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
            for p in inspect.signature(fn).parameters.values()
        )
        == nargs
    }


@needs_c
def test_the_operand_functions_bind_in_c() -> None:
    unary, binary = fast_functions(1), fast_functions(2)
    assert {"neg", "exp", "sqrt", "is_finite", "real", "clz"} <= set(unary)
    assert {"add", "mul", "div", "max", "eq", "shift_left", "complex"} <= set(binary)
    assert set(fast_functions(3)) == {"clamp"}
    # Functions whose arguments are not all operands keep their Python code.
    assert inspect.isfunction(lax.convert_element_type)
    assert inspect.isfunction(lax.integer_pow)
    assert inspect.isfunction(lax.reduce_sum)


@needs_c
def test_a_call_with_a_plan_runs_no_python_code() -> None:
    x = array([1.0, 2.0, 3.0], "float32")
    lax.add(x, x), lax.exp(x), add_p.bind(x, x)  # (the plans)
    calls: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        lax.add(x, x), lax.exp(x), add_p.bind(x, x)
    finally:
        sys.setprofile(None)
    assert calls == []


@needs_c
@pytest.mark.parametrize("name", sorted(fast_functions(1)))
def test_unary_functions_answer_as_python(name: str) -> None:
    fn = getattr(lax, name)
    for x in ARRAYS:
        both(fn, x)


@needs_c
@pytest.mark.parametrize("name", sorted(fast_functions(2)))
def test_binary_functions_answer_as_python(name: str) -> None:
    fn = getattr(lax, name)
    for x in ARRAYS:
        for y in ARRAYS:
            both(fn, x, y)


# Python scalars of every kind, in range and not, and those the checked
# conversion treats apart (inf, nan, ints beyond 2**1023).
SCALARS: list[Any] = [
    0,
    3,
    -129,
    300,
    70000,
    2**64,
    2**1023 + 1,
    0.0,
    -2.5,
    1e-10,
    1e6,
    F16_MAX,
    1e39,
    float("inf"),
    float("nan"),
    1j,
    2 - 3j,
    complex(1e39, 1),
    complex(float("nan"), 0),
]


@needs_c
@pytest.mark.parametrize("name", sorted(fast_functions(2)))
def test_binary_functions_with_python_scalars_answer_as_python(name: str) -> None:
    fn = getattr(lax, name)
    for x in ARRAYS:
        for s in SCALARS:
            both(fn, x, s)
            both(fn, s, x)


@needs_c
@pytest.mark.parametrize("mode", ["x64", "strict", "rank_raise"])
def test_python_scalars_answer_as_python_in_every_mode(mode: str) -> None:
    scopes = {
        "x64": tl.enable_x64,
        "strict": lambda: tl.dtype_promotion("strict"),
        "rank_raise": lambda: tl.rank_promotion("raise"),
    }
    with scopes[mode]():
        for x in ARRAYS:
            for s in SCALARS[::2]:
                both(lax.add, x, s)
                both(lax.max, s, x)


@needs_c
def test_a_call_with_a_python_scalar_runs_no_python_code() -> None:
    x = array([1.0, 2.0, 3.0], "float32")
    i = array([1, 2, 3], "int8")

    def calls_made() -> None:
        lax.mul(x, 2.0), lax.add(1, x), lax.max(i, 0), lax.add(i, 100)

    calls_made()  # (the plans and the remembered conversions)
    calls: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        calls_made()
    finally:
        sys.setprofile(None)
    assert calls == ["calls_made"]


@needs_c
def test_clamp_answers_as_python() -> None:
    for lo in ARRAYS[::3]:
        for x in ARRAYS:
            both(lax.clamp, lo, x, ARRAYS[-4])


@needs_c
def test_operands_other_than_arrays_go_to_python() -> None:
    x = array([1.0, 2.0, 3.0], "float32")
    for other in (
        2,
        2.5,
        True,
        1j,
        np.float32(1.5),
        np.ones(3, "float32"),
        [1, 2],
        None,
    ):
        both(lax.add, x, other)
        both(lax.add, other, x)
        both(lax.exp, other)
    both(lax.add, x)  # the wrong number of operands
    both(lax.add, x, x, x)
    both(lax.add, x=x, y=x)
    both(lax.exp, x, accuracy=None)
    both(lax.exp, x, accuracy="high")
    both(lax.mul, x, x, out_dtype="float32")


# Functions with parameters: their Python code checks the arguments, then
# Primitive.bind (C) binds with the parameters as keywords.
PARAMETRIZED: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (lax.convert_element_type, ("float16",)),
    (lax.convert_element_type, ("int8",)),
    (lax.convert_element_type, (np.dtype("bool"),)),
    (lax.convert_element_type, (ml_dtypes.bfloat16,)),
    (lax.integer_pow, (3,)),
    (lax.integer_pow, (-2,)),
    (lax.reduce_sum, ((0,),)),
    (lax.reduce_sum, ((),)),
    (lax.reduce_max, ((0,),)),
    (lax.reduce_prod, ((0,),)),
    (lax.argmax, (0, "int32")),
    (lax.cumsum, (0,)),
    (lax.broadcast_in_dim, ((4, 3), (1,))),
    (lax.broadcast_in_dim, ((2, 3), ())),
    (lax.reshape, ((3,),)),  # to its own shape: never the operand itself
    (lax.reshape, ((3, 1),)),
    (lax.transpose, ((0,),)),
    (lax.rev, ((0,),)),
    (lax.rev, ((),)),
    (lax.expand_dims, ((0,),)),
    (lax.slice, ((1,), (3,))),
    (lax.pad, (0, [(1, 2, 0)])),
    (lax.sort, ()),
]


@needs_c
@pytest.mark.parametrize(
    ("fn", "params"),
    PARAMETRIZED,
    ids=[f"{fn.__name__}{params}" for fn, params in PARAMETRIZED],
)
def test_functions_with_parameters_answer_as_python(
    fn: Callable[..., Any], params: tuple[Any, ...]
) -> None:
    for x in ARRAYS:
        both(fn, x, *params)


@needs_c
def test_bind_answers_as_python() -> None:
    x, y = array([1.0, 2.0, F32_MAX], "float32"), array(2.0, "float32", weak=True)
    f16 = np.dtype("float16")
    calls: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = [
        (add_p, (x, y), {}),
        (add_p, (y, y), {}),
        (add_p, (x,), {}),
        (add_p, (), {}),
        (add_p, (x, y), {"unknown": 1}),
        (exp_p, (x,), {}),
        (convert_element_type_p, (x,), {"new_dtype": f16, "weak_type": False}),
        (convert_element_type_p, (x,), {"weak_type": True, "new_dtype": f16}),
        (convert_element_type_p, (y,), {"new_dtype": f16, "weak_type": True}),
        # An unhashable parameter: no plan is remembered, the answer is the same.
        (reduce_sum_p, (x,), {"axes": [0]}),
        (reduce_sum_p, (x,), {"axes": (0,)}),
    ]
    for prim, args, params in calls:
        both(prim.bind, *args, **params)


@needs_c
def test_results_are_new_arrays_or_views_of_an_operand() -> None:
    raw = np.float32([1.0, 2.0, 3.0])
    x = array(raw, "float32")
    for out in (lax.add(x, x), lax.neg(x), add_p.bind(x, x)):
        assert type(out) is ArrayImpl
        assert not np.shares_memory(np.asarray(out), np.asarray(x))
    # A reshape is a view of the Array's memory (which never changes)...
    view = lax.reshape(x, (3, 1))
    assert type(view) is ArrayImpl
    assert np.shares_memory(np.asarray(view), np.asarray(x))
    assert not np.asarray(view).flags.writeable
    # ...and never of a NumPy array its caller can still write to.
    of_numpy = lax.reshape(raw, (3, 1))
    assert not np.shares_memory(np.asarray(of_numpy), raw)
    raw[0] = 7
    assert of_numpy.tolist() == view.tolist() == [[1.0], [2.0], [3.0]]


@needs_c
def test_under_a_trace_the_python_code_binds() -> None:
    """While a trace runs, constants that grow are made by the program, as
    in Python: the C path answers only when no trace runs anywhere."""
    c = array([1.0, 2.0], "float32")

    def f(t: Any) -> Any:
        return lax.add(lax.add(c, c), t), lax.broadcast_in_dim(c, (3, 2), (1,))

    x = array([0.5, 0.5], "float32")
    with python_path():
        want = outcome(tl.jit(f), x)
        shape = outcome(tl.eval_shape, f, x)
    assert outcome(tl.jit(f), x) == want
    assert outcome(tl.eval_shape, f, x) == shape
    assert outcome(tl.grad(lambda t: lax.reduce_sum(lax.exp(t), (0,))), x)[0] == (
        "returns",
        describe(lax.exp(x)),
    )


@needs_c
def test_replacing_bind_sees_every_binding() -> None:
    """Code that replaces Primitive.bind (to record the bindings) sees the
    public functions' too."""
    seen: list[str] = []
    inner = Primitive.bind

    def bind(self: Primitive, *args: Any, **params: Any) -> Any:
        seen.append(self.name)
        return inner(self, *args, **params)

    x = array([1.0, 2.0], "float32")
    lax.add(x, x)  # (a plan)
    Primitive.bind = bind  # type: ignore[method-assign]
    try:
        lax.add(x, x)
        lax.exp(x)
        tnp.sin(x)
    finally:
        Primitive.bind = inner  # type: ignore[method-assign]
    assert seen[:2] == ["add", "exp"]


def test_a_new_rule_drops_the_plans() -> None:
    x = array([1.0, 2.0], "float32")
    lax.neg(x)
    assert neg_p.eager
    neg_p.def_impl(neg_p.impl)  # type: ignore[arg-type]
    assert not neg_p.eager
    assert lax.neg(x).tolist() == [-1.0, -2.0]


def test_pure_python_mode_gives_plain_functions() -> None:
    code = (
        "import inspect, typelattice.numpy as tnp; "
        "from typelattice import lax; "
        "from typelattice._tracing.primitive import Primitive; "
        "x = tnp.asarray([1, 2, 3], dtype='int8'); "
        "print(inspect.isfunction(lax.add), inspect.isfunction(Primitive.bind)); "
        "print(repr(lax.add(x, x)), repr(lax.neg(2.0)))"
    )
    assert run_without_speedups(code) == [
        "True True",
        "Array([2, 4, 6], dtype=int8) Array(-2., dtype=float32, weak_type=True)",
    ]


OVERFLOWING: list[Callable[[], Any]] = [
    lambda: lax.add(array([F32_MAX], "float32"), array([F32_MAX], "float32")),
    lambda: lax.mul(array([F32_MAX], "float32"), array([2.0], "float32")),
    lambda: lax.div(array([1.0, 0.0], "float32"), array([0.0, 0.0], "float32")),
    lambda: lax.exp(array([1000.0], "float32")),
    lambda: add_p.bind(array([F16_MAX], "float16"), array([F16_MAX], "float16")),
    lambda: array([F32_MAX], "float32") + array([F32_MAX], "float32"),
    lambda: tnp.multiply(array([F32_MAX], "float32"), 2.0),
    lambda: lax.div(array([1, 2], "int32"), array([0, 1], "int32")),
]


@pytest.mark.parametrize("errors", ["raise", "warn", "ignore", "call"])
@pytest.mark.parametrize("call", range(len(OVERFLOWING)))
def test_numpy_error_state_of_the_caller_is_neither_used_nor_changed(
    errors: str, call: int
) -> None:
    """Results that overflow, divide by zero or are invalid never warn nor
    raise, whatever NumPy's error state, which stays the caller's."""
    fn = OVERFLOWING[call]
    seen: list[object] = []
    with np.errstate(all=errors, call=seen.append if errors == "call" else None):
        before = (np.geterr(), np.getbufsize(), np.geterrcall())
        with python_path():
            first = outcome(fn)
        assert outcome(fn) == first
        assert (np.geterr(), np.getbufsize(), np.geterrcall()) == before
    assert seen == []
    assert first[1] == []


def test_the_callers_context_variables_stay_as_they_were() -> None:
    import contextvars

    var: contextvars.ContextVar[int] = contextvars.ContextVar("var")
    token = var.set(1)
    try:
        x = array([1.0, F32_MAX], "float32")
        lax.add(x, x)
        _ = x + x
        assert var.get() == 1
        ctx = contextvars.copy_context()
        assert ctx.run(lambda: (lax.add(x, x), var.get())[1]) == 1
        assert dict(contextvars.copy_context()) == dict(ctx)
    finally:
        var.reset(token)


def test_threads_computing_at_once_get_their_own_results() -> None:
    """Large ufunc calls release the GIL: calls of other threads run
    meanwhile, and each result is its own operands' (the C path runs a
    call that cannot use its quiet context as the Python path does)."""
    import threading

    n = 1 << 20
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            a = np.full(n, float(seed), np.float32)
            x = array(a, "float32")
            for _ in range(20):
                with np.errstate(all="raise"):
                    got = lax.add(x, x)
                    op = x * x
                    assert np.geterr()["over"] == "raise"
                assert np.geterr()["over"] == "warn"
                assert np.array_equal(got._value, a + a)
                assert np.array_equal(op._value, a * a)
        except BaseException as err:  # (reported by the main thread)
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
