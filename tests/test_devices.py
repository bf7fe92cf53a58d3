"""The devices (one CPU), device_put and block_until_ready, as JAX's.

The expected dtypes and weak flags were checked against JAX 0.10
(``jax.device_put(1.0)`` is ``Array(1., dtype=float32, weak_type=True)``,
``jax.device_put(np.float64(1.0))`` a strong float32, ...).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.lax
import typelattice.numpy as tnp


def test_one_cpu_device() -> None:
    (device,) = tl.devices()
    assert repr(device) == "CpuDevice(id=0)"
    assert (device.id, device.platform, device.device_kind) == (0, "cpu", "cpu")
    assert device.process_index == 0
    assert tl.local_devices() == [device] and tl.devices("cpu") == [device]
    assert tl.device_count() == tl.local_device_count() == 1
    assert tl.default_backend() == "cpu"
    with pytest.raises(RuntimeError, match="unknown backend 'gpu'.*backend='cpu'"):
        tl.devices("gpu")
    with pytest.raises(ValueError, match="process_index=1"):
        tl.local_devices(process_index=1)


def test_arrays_are_on_the_cpu() -> None:
    x = tnp.ones(2)
    assert x.devices() == {tl.devices()[0]} and x.device is tl.devices()[0]
    assert x.block_until_ready() is x
    tree = {"a": x, "b": [1, None]}
    assert tl.block_until_ready(tree) is tree


@pytest.mark.parametrize(
    ("value", "dtype", "weak"),
    [
        (1.0, "float32", True),
        (1, "int32", True),
        (1j, "complex64", True),
        (True, "bool", False),
        (np.float64(1.0), "float32", False),
        (np.arange(3), "int32", False),
        (np.float16(1.0), "float16", False),
        (tnp.asarray(2, dtype="int8"), "int8", False),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, str | bool) else str(v),
)
def test_device_put_dtypes_and_weak_flags_as_jax(
    value: Any, dtype: str, weak: bool
) -> None:
    out = tl.device_put(value)
    assert isinstance(out, tl.Array)
    assert (out.dtype, out.weak_type) == (np.dtype(dtype), weak)
    assert np.asarray(out).tolist() == np.asarray(value).tolist()


def test_device_put_takes_pytrees_and_the_device() -> None:
    out = tl.device_put({"a": [1.5], "b": (np.int8(3), None)}, tl.devices()[0])
    assert repr(out) == (
        "{'a': [Array(1.5, dtype=float32, weak_type=True)], "
        "'b': (Array(3, dtype=int8), None)}"
    )
    with pytest.raises(ValueError, match="device=None"):
        tl.device_put(1.0, "gpu:0")
    with pytest.raises(TypeError, match="'text' of type str is not an array"):
        tl.device_put(["text"])


def test_device_put_in_x64_mode() -> None:
    with tl.enable_x64():
        out = tl.device_put(1.0)
        assert (out.dtype, out.weak_type) == (np.dtype("float64"), True)
        assert tl.device_put(np.float64(1.0)).dtype == np.dtype("float64")


def test_device_put_copies_numpy_arrays() -> None:
    data = np.arange(3.0, dtype=np.float32)
    out = tl.device_put(data)
    data[0] = 99.0
    assert np.asarray(out).tolist() == [0.0, 1.0, 2.0]


def test_device_put_under_jit_and_grad() -> None:
    seen: list[Any] = []

    def f(x: Any) -> Any:
        y = tl.device_put(x)
        seen.append(y is x)
        return y * 2

    assert float(tl.jit(f)(3.0)) == 6.0
    assert float(tl.grad(f)(3.0)) == 2.0
    assert seen == [True, True]  # (the identity on tracers)


def test_stop_gradient_in_lax_is_the_one_function() -> None:
    assert typelattice.lax.stop_gradient is tl.stop_gradient
    g = tl.grad(lambda x: x * typelattice.lax.stop_gradient({"v": x})["v"])(3.0)
    assert float(g) == 3.0
    assert "stop_gradient" in typelattice.lax.__all__
