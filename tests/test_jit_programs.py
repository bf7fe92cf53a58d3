"""How jitted programs compute: a computation repeated in a trace runs once,
transposed results are laid out as eager ones, and the values stay those of
the eager calls of the same primitives, bit for bit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from counting_backend import CountingBackend
from typelattice import lax
from typelattice._backends import use
from typelattice._tracing import tree
from typelattice._tracing.trace import Equation, Source, _shared


def same_bits(got: Any, want: Any) -> None:
    """Equal dtypes, weak flags, shapes and bytes (NaNs and signed zeros
    included)."""
    got_leaves, want_leaves = tree.leaves(got), tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert (g.dtype, g.weak_type, g.shape) == (w.dtype, w.weak_type, w.shape)
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), (g, w)


def counted(fn: Callable[..., Any], *args: Any) -> tuple[Any, dict[str, int]]:
    """``jit(fn)(*args)`` traced and run under the counting backend, and the
    calls of each primitive of one run."""
    counting = CountingBackend()
    with use(counting):
        jitted = tl.jit(fn)
        jitted(*args)
        counting.calls.clear()
        out = jitted(*args)
    return out, dict(counting.calls)


SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, np.nan, np.inf, -np.inf, 1e-40])


class TestRepeatedComputations:
    def test_computed_once(self) -> None:
        def f(x: Any) -> Any:
            return tnp.exp(x) * tnp.exp(x) + tnp.sin(x) / tnp.sin(x)

        x = tnp.asarray(SPECIAL.astype("float32"))
        out, calls = counted(f, x)
        assert calls["exp"] == 1 and calls["sin"] == 1, calls
        same_bits(out, f(x))
        same_bits(tl.jit(f)(x), f(x))

    def test_chains_of_repeats_computed_once(self) -> None:
        # As Adam's bias corrections: the same scalar steps per parameter.
        def f(count: Any, a: Any, b: Any) -> Any:
            outs = []
            for p in (a, b, a):
                c = lax.convert_element_type(count + 1, "float32")
                outs.append(p / (1 - 0.9**c))
            return outs

        args = (tnp.asarray(np.int32(3)), tnp.ones(4), tnp.arange(3.0))
        out, calls = counted(f, *args)
        assert calls["convert_element_type"] == 1 and calls["pow"] == 1, calls
        same_bits(out, f(*args))
        same_bits(tl.jit(f)(*args), f(*args))

    @pytest.mark.parametrize(
        ("first", "second"),
        [
            (np.float32(0.0), np.float32(-0.0)),
            (np.float32(np.nan), np.float32(-np.nan)),
            (np.float32(1.0), np.float32(1.0000001)),
        ],
    )
    def test_constants_that_differ_in_any_bit_are_not_shared(
        self, first: Any, second: Any
    ) -> None:
        def f(x: Any) -> Any:
            return lax.add(x, first), lax.add(x, second)

        x = tnp.asarray(SPECIAL.astype("float32"))
        same_bits(tl.jit(f)(x), f(x))
        _, calls = counted(f, x)
        assert calls["add"] == 2

    def test_parameters_that_differ_are_not_shared(self) -> None:
        def f(x: Any) -> Any:
            a = lax.convert_element_type(x, "float16")
            b = lax.convert_element_type(x, "bfloat16")
            return lax.convert_element_type(a, "float32") + lax.convert_element_type(
                b, "float32"
            )

        x = tnp.asarray(np.array([1 / 3, 1e5, -7.1], "float32"))
        same_bits(tl.jit(f)(x), f(x))

    def test_repeated_results_are_distinct_arrays(self) -> None:
        def f(x: Any) -> Any:
            return tnp.exp(x), tnp.exp(x)

        x = tnp.asarray(SPECIAL.astype("float32"))
        a, b = tl.jit(f)(x)
        same_bits((a, b), f(x))
        assert not np.shares_memory(np.asarray(a), np.asarray(b))

    def test_large_repeats_reuse_no_buffer_still_read(self) -> None:
        # Big enough for programs to compute into dying temporaries: the
        # shared value is read after one of its names is dropped.
        def f(x: Any) -> Any:
            a = tnp.exp(x) * 2
            b = tnp.exp(x) + 1
            return a - b, b * a

        x = tnp.asarray(np.linspace(-3, 3, 200_000, dtype="float32"))
        same_bits(tl.jit(f)(x), f(x))

    def test_inside_gradients(self) -> None:
        def loss(w: Any) -> Any:
            return tnp.sum(tnp.tanh(w) * tnp.tanh(w) + tnp.exp(w))

        w = tnp.asarray(np.linspace(-2, 2, 7, dtype="float32"))
        same_bits(tl.jit(tl.value_and_grad(loss))(w), tl.value_and_grad(loss)(w))


class _ByName(Equation):
    """An equation that reads its input by name only (cannot be rewritten)."""

    __slots__ = ("i", "o")

    def __init__(self, i: int, o: int) -> None:
        self.i, self.o = i, o

    def inputs(self) -> Sequence[int]:
        return (self.i,)

    def outputs(self) -> Sequence[int]:
        return (self.o,)

    def source(self, src: Source) -> str:
        return f"v{self.o} = v{self.i}"


def test_an_equation_that_cannot_be_rewritten_reads_a_second_name() -> None:
    trace = tl.jit(lambda x: (tnp.exp(x), tnp.exp(x))).program(tnp.ones(2))
    first, second = trace.eqns
    kept = _shared([first, second, _ByName(second.outputs()[0], 99)], [99])
    assert kept[0] is first and len(kept) == 3
    alias = kept[1]
    assert [*alias.inputs(), *alias.outputs()] == [*first.outputs(), *second.outputs()]


class TestLayout:
    @pytest.mark.parametrize("shape", [(3, 5), (64, 256), (2, 3, 4)])
    def test_transposed_results_are_in_c_order(self, shape: tuple[int, ...]) -> None:
        x = tnp.asarray(np.arange(np.prod(shape), dtype="float32").reshape(shape))
        order = tuple(reversed(range(len(shape))))
        eager = lax.transpose(x, order)
        out = tl.jit(lambda x: lax.transpose(x, order))(x)
        same_bits(out, eager)
        # Eagerly a view of the Array's memory (no copy), as NumPy's; in a
        # program a copy in C order, which later operations read fastest.
        assert np.shares_memory(np.asarray(eager), np.asarray(x))
        assert np.asarray(out).flags.c_contiguous
        same_bits(tl.jit(lambda x: x.T)(x), x.T)

    def test_transposed_gradients_in_an_update(self) -> None:
        # The optimiser's update of a kernel: its gradient comes transposed.
        def step(w: Any, x: Any) -> Any:
            g = tl.grad(lambda w: tnp.sum(tnp.tanh(x @ w)))(w)
            return w - 0.1 * g, 0.9 * w + 0.1 * g * g

        rng = np.random.default_rng(0)
        w = tnp.asarray(rng.standard_normal((64, 32), dtype="float32"))
        x = tnp.asarray(rng.standard_normal((16, 64), dtype="float32"))
        same_bits(tl.jit(step)(w, x), step(w, x))
