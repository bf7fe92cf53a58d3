"""Cases where a computation on another library's arrays (or a scope's
backend) once answered otherwise than the NumPy backend: each must give
the same dtype, weak flag, values or error on every path, on every call
(the first one makes a plan; later ones run from it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import boxed_backend
import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax

boxed_backend.register()

#: Every native result checked against its abstract evaluation.
pytestmark = pytest.mark.usefixtures("checked_native")


def _natives(values: np.ndarray[Any, Any]) -> list[Any]:
    """``values`` on the boxed backend, and on torch when installed."""
    found = [tnp.asarray(values, backend="boxed", device="box:0")]
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        found.append(tnp.asarray(values, backend="torch", device="cpu"))
    return found


def test_a_python_int_beyond_2_to_the_1023_is_refused_on_native_float64() -> None:
    # The NumPy backend refuses a Python int above 2**1023 as a float64
    # operand; a native array's plan must refuse it too, on every call.
    big = 2**1023 + 1
    with tl.enable_x64():
        values = np.array([1.0, 2.0], "float64")
        held = tnp.asarray(values)
        assert tnp.add(held, 3).tolist() == [4.0, 5.0]  # (the plan made)
        for _ in range(2):  # (then the C path runs it: the same answer)
            with pytest.raises(OverflowError, match="Python int"):
                tnp.add(held, big)
            assert tnp.add(held, 2**1023).tolist() == [2.0**1023] * 2
        for x in _natives(values):
            for _ in range(2):
                with pytest.raises(OverflowError, match="Python int"):
                    tnp.add(x, big)
                with pytest.raises(OverflowError, match="Python int"):
                    tnp.multiply(big, x)
            assert np.asarray(tnp.add(x, 2**1023)).tolist() == [2.0**1023] * 2


def test_python_scalars_alone_follow_the_scope_on_every_call() -> None:
    # The first call makes the plan; the later ones must place their
    # result where the scope says too (and outside it, on NumPy).
    for _ in range(3):
        with tl.default_backend("boxed", device="box:1"):
            for out in (tnp.add(1, 2.5), tnp.multiply(3, 4), tnp.sin(1.0)):
                assert (out.backend, out.device) == ("boxed", "box:1")
        assert tnp.add(1, 2.5).backend == "numpy"
        assert tnp.sin(1.0).backend == "numpy"


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_dot_general_preferring_float64_agrees_on_every_path(dtype: str) -> None:
    # (NumPy reads None as float64: a preferred float64 is not "no
    # preference".)
    dims = (((1,), (0,)), ((), ()))
    values = np.arange(4.0).reshape(2, 2).astype(dtype)
    if dtype == "complex64":
        values = values * np.complex64(1 + 1j)
    with tl.enable_x64():

        def f(a: Any) -> Any:
            return lax.dot_general(a, a, dims, preferred_element_type="float64")

        x = tnp.asarray(values)
        eager, jitted = f(x), tl.jit(f)(x)
        assert eager.dtype == jitted.dtype == np.dtype("float64")
        assert np.asarray(eager).tobytes() == np.asarray(jitted).tobytes()
        for native in _natives(values):
            got = f(native)
            assert got.dtype == np.dtype("float64")
            assert np.asarray(got).tolist() == np.asarray(eager).tolist()


def test_vmap_refuses_a_numpy_held_array_beside_a_native_one() -> None:
    # As the operation itself and jit refuse it: nothing moves unasked.
    ones = tnp.ones(3, "float32")
    for x in _natives(np.ones(3, "float32")):
        with pytest.raises(TypeError, match="two backends"):
            tnp.add(x, ones)
        with pytest.raises(TypeError, match="two backends"):
            tl.jit(lambda a, b: a + b)(x, ones)
        with pytest.raises(TypeError, match=r"vmap\(.*two backends"):
            tl.vmap(lambda a, b: a + b)(x, ones)
        # Python scalars and 0-d arrays join it, mapped or not.
        got = tl.vmap(lambda a, b: a * b, in_axes=(0, None))(x, tnp.asarray(2.0))
        assert (got.backend, np.asarray(got).tolist()) == (x.backend, [2.0] * 3)
        got = tl.vmap(lambda a, b: a + b, in_axes=(0, None))(x, 1.5)
        assert np.asarray(got).tolist() == [2.5] * 3


def test_at_updates_refuse_a_numpy_held_array_indexed_by_native_indices() -> None:
    # The updated array would move to the indices' backend unasked.
    for index in _natives(np.array([0, 2], "int32")):
        with pytest.raises(TypeError, match="two backends"):
            tnp.zeros(3, "float32").at[index].set(1.0)
        with pytest.raises(TypeError, match="two backends"):
            tnp.zeros((3, 2), "float32").at[index, 0].add(1.0)
        # On the indices' backend, or with NumPy indices, it is an update.
        x = tnp.asarray(
            np.zeros(3, "float32"), backend=index.backend, device=index.device
        )
        got = x.at[index].set(1.0)
        assert (got.backend, np.asarray(got).tolist()) == (x.backend, [1.0, 0.0, 1.0])
        got = x.at[np.array([1])].add(2.0)
        assert np.asarray(got).tolist() == [0.0, 2.0, 0.0]


def test_a_copy_of_an_array_holding_a_callers_tensor_is_its_own() -> None:
    torch = pytest.importorskip("torch")
    tensor = torch.tensor([1.0, 2.0, 3.0])
    x = tnp.asarray(tensor)  # (documented: holds the tensor itself)
    copies = [tnp.asarray(x, copy=True), tnp.array(x), x.copy()]
    tensor.add_(100.0)
    assert np.asarray(x).tolist() == [101.0, 102.0, 103.0]
    for c in copies:
        assert np.asarray(c).tolist() == [1.0, 2.0, 3.0]


@pytest.mark.xfail(
    strict=True,
    reason="jit and grad make Python scalar arguments NumPy-held Arrays "
    "(argument_value), whatever the default_backend scope says",
)
def test_python_scalars_alone_follow_the_scope_under_jit_and_grad() -> None:
    with tl.default_backend("boxed", device="box:1"):
        eager = tnp.add(1, 2.5)
        jitted = tl.jit(lambda a, b: tnp.add(a, b))(1, 2.5)
        grad = tl.grad(lambda a: tnp.sin(a) * 2.0)(1.0)
        assert eager.backend == "boxed"
        assert (jitted.backend, jitted.device) == ("boxed", "box:1")
        assert (grad.backend, grad.device) == ("boxed", "box:1")


def test_a_scalar_first_met_in_inference_mode_does_not_break_autograd() -> None:
    torch = pytest.importorskip("torch")
    from typelattice._tracing import primitive

    primitive._ON_DEVICE.clear()  # (2.0 met here first)  # pyright: ignore[reportPrivateUsage]
    with torch.inference_mode():
        _ = tnp.asarray(torch.ones(3)) * 2.0
    w = torch.ones(3, requires_grad=True)
    out = tnp.asarray(w) * 2.0  # (as it is when the first call is this one)
    out._value.sum().backward()  # pyright: ignore[reportAttributeAccessIssue]
    assert w.grad is not None and w.grad.tolist() == [2.0, 2.0, 2.0]


def test_a_program_made_in_inference_mode_serves_autograd_later() -> None:
    torch = pytest.importorskip("torch")
    step = tl.jit(lambda a: a * 3.0 + tnp.arange(3.0))
    with torch.inference_mode():
        _ = step(tnp.asarray(torch.ones(3)))
    w = torch.ones(3, requires_grad=True)
    out = step(tnp.asarray(w))  # (the program and its constants made above)
    out._value.sum().backward()  # pyright: ignore[reportAttributeAccessIssue]
    assert w.grad is not None and w.grad.tolist() == [3.0, 3.0, 3.0]


def test_a_copy_stays_on_its_backend_and_device_with_its_weak_flag() -> None:
    x = tnp.asarray(np.float32([1.0, 2.0]), backend="boxed", device="box:1")
    weak = tl.device_put(2.5, "box:1", backend="boxed")
    for a in (x, weak):
        for c in (tnp.asarray(a, copy=True), tnp.array(a), a.copy()):
            assert (c.backend, c.device, c.dtype, c.weak_type) == (
                a.backend,
                a.device,
                a.dtype,
                a.weak_type,
            )
            mine, theirs = c._value.value, a._value.value  # pyright: ignore[reportAttributeAccessIssue]
            assert not np.shares_memory(mine, theirs)
            assert mine.tolist() == theirs.tolist()
    assert tnp.asarray(x) is x  # (no copy asked: the Array itself)


def test_a_loops_0d_constants_are_put_on_the_device_once() -> None:
    from typelattice._backends import named

    backend = named("boxed")
    x = tnp.asarray(np.float32([1.0, 2.0, 4.0]), backend="boxed", device="box:0")
    moved: list[Any] = []
    original = backend.from_numpy

    def counted(value: Any, device: Any = None) -> Any:
        moved.append(np.asarray(value).tolist())
        return original(value, device)

    backend.from_numpy = counted
    try:
        means = [float(tnp.mean(x)) for _ in range(3)]  # (a count of 3)
        first = len(moved)
        assert (
            float(tnp.mean(x)) == means[0] == float(np.float32(7.0) / np.float32(3.0))
        )
        assert len(moved) == first  # (the count moved once)
        # Zeros (two signs, one key) and NaN are moved each time.
        for s in (np.float32(0.0), np.float32(-0.0), np.float32("nan")):
            got = np.asarray(lax.mul(x, tnp.asarray(s)))
            assert np.array_equal(got, np.float32([1, 2, 4]) * s, equal_nan=True)
            assert np.array_equal(
                np.signbit(got), np.signbit(np.float32([1, 2, 4]) * s)
            )
    finally:
        backend.from_numpy = original
