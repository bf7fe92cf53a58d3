"""arange, linspace and searchsorted are written on ``lax``: the same code
runs eagerly, under ``jit``, ``eval_shape`` and ``grad``. Their values are
those NumPy's ``arange`` and ``linspace`` give (the cases below were
recorded from the NumPy-computed implementation, bit for bit), their
programs hold primitives only, and creating a range under ``eval_shape``
allocates nothing of its size."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp

# Each case: 64-bit mode, the call, and per output (dtype, shape, the values
# as float.hex).
RECORDED: list[tuple[bool, Callable[[], Any], list[Any]]] = [
    (
        False,
        lambda: tnp.arange(0.1, 1, 0.3),
        [
            (
                "float32",
                (3,),
                [
                    "0x1.99999a0000000p-4",
                    "0x1.99999a0000000p-2",
                    "0x1.6666660000000p-1",
                ],
            )
        ],
    ),
    (
        False,
        lambda: tnp.arange(0.1, 2.3, 0.1),
        [
            (
                "float32",
                (22,),
                [
                    "0x1.99999a0000000p-4",
                    "0x1.99999a0000000p-3",
                    "0x1.3333340000000p-2",
                    "0x1.99999a0000000p-2",
                    "0x1.0000000000000p-1",
                    "0x1.3333340000000p-1",
                    "0x1.6666660000000p-1",
                    "0x1.99999a0000000p-1",
                    "0x1.cccccc0000000p-1",
                    "0x1.0000000000000p+0",
                    "0x1.19999a0000000p+0",
                    "0x1.3333340000000p+0",
                    "0x1.4ccccc0000000p+0",
                    "0x1.6666660000000p+0",
                    "0x1.8000000000000p+0",
                    "0x1.99999a0000000p+0",
                    "0x1.b333340000000p+0",
                    "0x1.cccccc0000000p+0",
                    "0x1.e666660000000p+0",
                    "0x1.0000000000000p+1",
                    "0x1.0ccccc0000000p+1",
                    "0x1.19999a0000000p+1",
                ],
            )
        ],
    ),
    (
        False,
        lambda: tnp.arange(-1.5, 2.7, 0.35),
        [
            (
                "float32",
                (13,),
                [
                    "-0x1.8000000000000p+0",
                    "-0x1.2666660000000p+0",
                    "-0x1.99999a0000000p-1",
                    "-0x1.cccccc0000000p-2",
                    "-0x1.99999a0000000p-4",
                    "0x1.0000000000000p-2",
                    "0x1.3333340000000p-1",
                    "0x1.e666660000000p-1",
                    "0x1.4ccccc0000000p+0",
                    "0x1.a666660000000p+0",
                    "0x1.0000000000000p+1",
                    "0x1.2ccccc0000000p+1",
                    "0x1.59999a0000000p+1",
                ],
            )
        ],
    ),
    (
        False,
        lambda: tnp.arange(1, -1, -0.1),
        [
            (
                "float32",
                (20,),
                [
                    "0x1.0000000000000p+0",
                    "0x1.cccccc0000000p-1",
                    "0x1.99999a0000000p-1",
                    "0x1.6666660000000p-1",
                    "0x1.3333340000000p-1",
                    "0x1.0000000000000p-1",
                    "0x1.99999a0000000p-2",
                    "0x1.3333340000000p-2",
                    "0x1.99999a0000000p-3",
                    "0x1.99999a0000000p-4",
                    "0x1.0000000000000p-52",
                    "-0x1.99999a0000000p-4",
                    "-0x1.99999a0000000p-3",
                    "-0x1.3333340000000p-2",
                    "-0x1.99999a0000000p-2",
                    "-0x1.0000000000000p-1",
                    "-0x1.3333340000000p-1",
                    "-0x1.6666660000000p-1",
                    "-0x1.99999a0000000p-1",
                    "-0x1.cccccc0000000p-1",
                ],
            )
        ],
    ),
    (
        False,
        lambda: tnp.arange(1e8, 1e8 + 50, 3.3),
        [
            (
                "float32",
                (16,),
                [
                    "0x1.7d78400000000p+26",
                    "0x1.7d78400000000p+26",
                    "0x1.7d78420000000p+26",
                    "0x1.7d78420000000p+26",
                    "0x1.7d78440000000p+26",
                    "0x1.7d78440000000p+26",
                    "0x1.7d78440000000p+26",
                    "0x1.7d78460000000p+26",
                    "0x1.7d78460000000p+26",
                    "0x1.7d78480000000p+26",
                    "0x1.7d78480000000p+26",
                    "0x1.7d784a0000000p+26",
                    "0x1.7d784a0000000p+26",
                    "0x1.7d784a0000000p+26",
                    "0x1.7d784c0000000p+26",
                    "0x1.7d784c0000000p+26",
                ],
            )
        ],
    ),
    (
        True,
        lambda: tnp.arange(0.1, 2.3, 0.1),
        [
            (
                "float64",
                (22,),
                [
                    "0x1.999999999999ap-4",
                    "0x1.999999999999ap-3",
                    "0x1.3333333333334p-2",
                    "0x1.999999999999ap-2",
                    "0x1.0000000000000p-1",
                    "0x1.3333333333333p-1",
                    "0x1.6666666666667p-1",
                    "0x1.999999999999ap-1",
                    "0x1.ccccccccccccdp-1",
                    "0x1.0000000000000p+0",
                    "0x1.199999999999ap+0",
                    "0x1.3333333333334p+0",
                    "0x1.4cccccccccccep+0",
                    "0x1.6666666666667p+0",
                    "0x1.8000000000001p+0",
                    "0x1.999999999999ap+0",
                    "0x1.b333333333334p+0",
                    "0x1.ccccccccccccep+0",
                    "0x1.e666666666667p+0",
                    "0x1.0000000000000p+1",
                    "0x1.0cccccccccccdp+1",
                    "0x1.199999999999ap+1",
                ],
            )
        ],
    ),
    (
        False,
        lambda: tnp.arange(-2.5, 3, 0.7, "int16"),
        [
            (
                "int16",
                (8,),
                [
                    "-0x1.0000000000000p+1",
                    "-0x1.0000000000000p+1",
                    "-0x1.0000000000000p+1",
                    "-0x1.0000000000000p+1",
                    "-0x1.0000000000000p+1",
                    "-0x1.0000000000000p+1",
                    "-0x1.0000000000000p+1",
                    "-0x1.0000000000000p+1",
                ],
            )
        ],
    ),
    (
        False,
        lambda: tnp.arange(0, 1, 0.1, "float16"),
        [
            (
                "float16",
                (10,),
                [
                    "0x0.0p+0",
                    "0x1.9980000000000p-4",
                    "0x1.9980000000000p-3",
                    "0x1.3340000000000p-2",
                    "0x1.9980000000000p-2",
                    "0x1.0000000000000p-1",
                    "0x1.3340000000000p-1",
                    "0x1.6680000000000p-1",
                    "0x1.9980000000000p-1",
                    "0x1.ccc0000000000p-1",
                ],
            )
        ],
    ),
    (
        False,
        lambda: tnp.arange(0, 1, 0.1, "bfloat16"),
        [
            (
                "bfloat16",
                (10,),
                [
                    "0x0.0p+0",
                    "0x1.9a00000000000p-4",
                    "0x1.9a00000000000p-3",
                    "0x1.3400000000000p-2",
                    "0x1.9a00000000000p-2",
                    "0x1.0000000000000p-1",
                    "0x1.3400000000000p-1",
                    "0x1.6600000000000p-1",
                    "0x1.9a00000000000p-1",
                    "0x1.cc00000000000p-1",
                ],
            )
        ],
    ),
    (
        False,
        lambda: tnp.linspace(0.1, 0.9, 13, retstep=True),
        [
            (
                "float32",
                (13,),
                [
                    "0x1.99999a0000000p-4",
                    "0x1.5555560000000p-3",
                    "0x1.ddddde0000000p-3",
                    "0x1.3333340000000p-2",
                    "0x1.7777780000000p-2",
                    "0x1.bbbbbc0000000p-2",
                    "0x1.0000000000000p-1",
                    "0x1.2222220000000p-1",
                    "0x1.4444440000000p-1",
                    "0x1.6666660000000p-1",
                    "0x1.8888880000000p-1",
                    "0x1.aaaaaa0000000p-1",
                    "0x1.cccccc0000000p-1",
                ],
            ),
            ("float32", (), ["0x1.1111120000000p-4"]),
        ],
    ),
    (
        True,
        lambda: tnp.linspace(0.1, 0.9, 13, retstep=True),
        [
            (
                "float64",
                (13,),
                [
                    "0x1.999999999999ap-4",
                    "0x1.5555555555556p-3",
                    "0x1.ddddddddddddep-3",
                    "0x1.3333333333334p-2",
                    "0x1.7777777777778p-2",
                    "0x1.bbbbbbbbbbbbcp-2",
                    "0x1.0000000000000p-1",
                    "0x1.2222222222222p-1",
                    "0x1.4444444444444p-1",
                    "0x1.6666666666666p-1",
                    "0x1.8888888888888p-1",
                    "0x1.aaaaaaaaaaaaap-1",
                    "0x1.ccccccccccccdp-1",
                ],
            ),
            ("float64", (), ["0x1.1111111111111p-4"]),
        ],
    ),
    (
        False,
        lambda: tnp.linspace(-3, 7, 11, dtype="int8"),
        [
            (
                "int8",
                (11,),
                [
                    "-0x1.8000000000000p+1",
                    "-0x1.0000000000000p+1",
                    "-0x1.0000000000000p+0",
                    "0x0.0p+0",
                    "0x1.0000000000000p+0",
                    "0x1.0000000000000p+1",
                    "0x1.8000000000000p+1",
                    "0x1.0000000000000p+2",
                    "0x1.4000000000000p+2",
                    "0x1.8000000000000p+2",
                    "0x1.c000000000000p+2",
                ],
            )
        ],
    ),
    (
        False,
        lambda: tnp.linspace(
            tnp.asarray([0.0, 1.0]), tnp.asarray([1.0, 3.0]), 4, axis=1, retstep=True
        ),
        [
            (
                "float32",
                (2, 4),
                [
                    "0x0.0p+0",
                    "0x1.5555560000000p-2",
                    "0x1.5555560000000p-1",
                    "0x1.0000000000000p+0",
                    "0x1.0000000000000p+0",
                    "0x1.aaaaac0000000p+0",
                    "0x1.2aaaac0000000p+1",
                    "0x1.8000000000000p+1",
                ],
            ),
            ("float32", (2,), ["0x1.5555560000000p-2", "0x1.5555560000000p-1"]),
        ],
    ),
]


def _hex(out: Any) -> tuple[str, tuple[int, ...], list[str]]:
    values = np.asarray(out)
    return (str(out.dtype), values.shape, [float(v).hex() for v in values.ravel()])


@pytest.mark.parametrize("case", range(len(RECORDED)))
def test_values_are_the_recorded_ones_on_every_path(case: int) -> None:
    x64, call, want = RECORDED[case]
    with tl.enable_x64(x64):
        eager = call()
        jitted = tl.jit(lambda _: call())(0)
        shapes = tl.eval_shape(lambda _: call(), 0)
    outs = eager if isinstance(eager, tuple) else (eager,)
    jits = jitted if isinstance(jitted, tuple) else (jitted,)
    abstract = shapes if isinstance(shapes, tuple) else (shapes,)
    assert [_hex(o) for o in outs] == [tuple(w) for w in want]
    assert [_hex(o) for o in jits] == [tuple(w) for w in want]
    assert [(str(s.dtype), s.shape, s.weak_type) for s in abstract] == [
        (str(o.dtype), o.shape, False) for o in outs
    ]
    assert not any(o.weak_type for o in outs + jits)


def _equations(fn: Callable[..., Any], *args: Any) -> list[str]:
    """The names of the equations of ``fn``'s record: a namespace function
    recorded whole would show as its name (a string)."""
    record = tl.make_jaxpr(fn)(*args)
    return [
        f"namespace:{e.primitive}" if isinstance(e.primitive, str) else e.primitive.name
        for e in record.eqns
    ]


def test_programs_hold_lax_primitives_only() -> None:
    x = tnp.asarray([0.5, 1.5], "float32")
    for fn, args in [
        (lambda s: tnp.arange(0.1, 2.3, 0.1) * s, (x[0],)),
        (lambda s, t: tnp.linspace(s, t, 5, axis=1), (x[0], x)),
        (lambda a, v: tnp.searchsorted(a, v, side="right"), (x, x)),
    ]:
        names = _equations(fn, *args)
        assert "iota" in names or "lt" in names or "le" in names, names
        for name in names:
            assert not name.startswith("namespace:"), names
    program = str(tl.jit(lambda s: tnp.arange(5) + s).program(1))
    assert "lax.iota" in program


def test_arange_matches_numpy_over_many_bounds() -> None:
    """start + i * delta in float64 (NumPy's fill), then rounded once."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        start = round(float(rng.uniform(-10, 10)), int(rng.integers(0, 4)))
        stop = round(float(rng.uniform(-10, 10)), 3)
        step = float(rng.choice([0.1, 0.3, -0.1, -0.35, 1 / 3, 2.5, -1e-2]))
        want = np.arange(start, stop, step)
        for x64 in (False, True):
            with tl.enable_x64(x64):
                got = np.asarray(tnp.arange(start, stop, step))
            assert got.tobytes() == want.astype(got.dtype).tobytes()


def test_arange_errors_are_the_same_on_every_path() -> None:
    cases: list[tuple[Callable[[], Any], type[Exception], str]] = [
        (lambda: tnp.arange(300, dtype="int8"), OverflowError, "value 299 "),
        (lambda: tnp.arange(0, -300, -1, "int8"), OverflowError, "value -299 "),
        (lambda: tnp.arange(1e6, dtype="float16"), OverflowError, "value 65520.0 "),
        (lambda: tnp.arange(-1.5, 3, dtype="uint8"), OverflowError, "value -1.5 "),
        (lambda: tnp.arange(0, 3, 0), ZeroDivisionError, "division by zero"),
        (lambda: tnp.arange(3, dtype="bool"), TypeError, "dtype bool"),
    ]
    for call, error, message in cases:
        for run in (call, lambda c=call: tl.eval_shape(lambda _: c(), 0)):
            with pytest.raises(error, match=message):
                run()


def test_arange_and_linspace_under_eval_shape_allocate_nothing() -> None:
    tracemalloc.start()
    try:
        with tl.enable_x64(True):
            out = tl.eval_shape(lambda _: tnp.arange(10**10), 0)
            floats = tl.eval_shape(lambda _: tnp.arange(0, 1e9, 0.1), 0)
            spaced = tl.eval_shape(lambda s: tnp.linspace(s, 1, 10**10), 0.0)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert (out.shape, str(out.dtype)) == ((10**10,), "int64")
    assert (floats.shape, str(floats.dtype)) == ((10**10,), "float64")
    assert spaced.shape == (10**10,)
    assert peak < 2_000_000, f"{peak} bytes"


def test_arange_with_traced_bounds_asks_for_concrete_ones() -> None:
    with pytest.raises(tl.ConcretizationTypeError):
        tl.jit(lambda n: tnp.arange(n))(5)


@pytest.mark.parametrize("endpoint", [True, False])
def test_grad_of_linspace_in_its_ends(endpoint: bool) -> None:
    """The values are linear in start and stop: the weights of each end."""
    num = 5
    div = num - 1 if endpoint else num
    weights = np.arange(num) / div
    if endpoint:
        weights[-1] = 1.0
    coeff = np.arange(1, num + 1, dtype=np.float32)

    def f(s: Any, t: Any) -> Any:
        return tnp.sum(tnp.linspace(s, t, num, endpoint=endpoint) * coeff)

    ds, dt = tl.grad(f, argnums=(0, 1))(0.5, 2.0)
    np.testing.assert_allclose(float(ds), float(((1 - weights) * coeff).sum()), 1e-6)
    np.testing.assert_allclose(float(dt), float((weights * coeff).sum()), 1e-6)
    step = tl.grad(lambda t: tnp.linspace(0.0, t, num, endpoint, retstep=True)[1])
    np.testing.assert_allclose(float(step(2.0)), 1 / div, 1e-6)


def test_grad_of_linspace_with_array_ends_and_axis() -> None:
    def f(s: Any) -> Any:
        return tnp.sum(tnp.linspace(s, 3.0, 4, axis=1)[:, 1])

    g = tl.grad(f)(tnp.asarray([0.0, 1.0]))
    np.testing.assert_allclose(np.asarray(g), [2 / 3, 2 / 3], 1e-6)


def test_searchsorted_orders_nans_last_on_every_path() -> None:
    a = tnp.asarray([1.0, 2.0, np.nan], "float32")
    v = tnp.asarray([np.nan, 2.0, 0.0, np.inf, -0.0], "float32")
    for side, want in (("left", [2, 1, 0, 2, 0]), ("right", [3, 2, 0, 2, 0])):
        for f in (tnp.searchsorted, tl.jit(tnp.searchsorted, static_argnums=2)):
            out = f(a, v, side)
            assert (out.dtype, out.weak_type) == (np.dtype("int32"), False)
            np.testing.assert_array_equal(np.asarray(out), want)
            np.testing.assert_array_equal(
                want, np.searchsorted(np.asarray(a), np.asarray(v), side)
            )


def test_searchsorted_with_sorter() -> None:
    a = tnp.asarray([3, 1, 2])
    v = tnp.asarray([[2, 0], [4, 1]])
    for sorter in (np.array([1, 2, 0]), np.array([-2, -1, 0]), tnp.asarray([1, 2, 0])):
        out = tnp.searchsorted(a, v, sorter=sorter)
        np.testing.assert_array_equal(np.asarray(out), [[1, 0], [3, 0]])
    jitted = tl.jit(lambda a, v, s: tnp.searchsorted(a, v, "right", s))
    out = jitted(a, v, tnp.asarray([1, 2, 0]))
    np.testing.assert_array_equal(np.asarray(out), [[2, 0], [3, 1]])
    with pytest.raises(ValueError, match="searchsorted: sorter holds indices"):
        tnp.searchsorted(a, v, sorter=np.array([0, 1, 3]))


def test_searchsorted_has_zero_derivative() -> None:
    a = tnp.asarray([0.0, 1.0, 2.0])
    g = tl.grad(lambda x: tnp.sum(tnp.searchsorted(a, x) * x))(tnp.asarray([0.5]))
    np.testing.assert_array_equal(np.asarray(g), [1.0])


def test_complex_ranges_have_numpys_length_and_values() -> None:
    """NumPy's length of a complex range is the shorter of its parts'."""
    with tl.enable_x64(True):
        for args in [(1 + 2j, 4 + 9j, 0.5 + 0.25j), (0, 3 + 3j, 1 + 1j), (0, 4, 0.5j)]:
            got = tnp.arange(*args)
            want = np.arange(*args)
            assert (got.dtype, got.shape) == (want.dtype, want.shape)
            assert np.asarray(got).tobytes() == want.tobytes()
