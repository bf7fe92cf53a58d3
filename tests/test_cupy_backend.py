"""The CuPy backend, on a CUDA GPU (skipped without CuPy and a device): the
lattice's dtypes computed on the device, the NumPy backend's values and
data-safety errors, the dtypes CuPy lacks refused with a fix.

Until Arrays hold CuPy arrays themselves, the backend is driven through the
``use`` scope (operands copied to the device, results back) and by calling
its implementations on CuPy arrays."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

cupy = pytest.importorskip("cupy")
try:
    _DEVICES = int(cupy.cuda.runtime.getDeviceCount())
except Exception:  # (CuPy without a driver or a device)
    _DEVICES = 0
if not _DEVICES:
    pytest.skip("no CUDA device", allow_module_level=True)

import typelattice as tl  # noqa: E402
import typelattice.numpy as tnp  # noqa: E402
from typelattice._backends import cupy as tcupy  # noqa: E402
from typelattice._backends import use  # noqa: E402
from typelattice._lax._elementwise import add_p, convert_element_type_p  # noqa: E402
from typelattice._lax._reductions import reduce_sum_p  # noqa: E402

pytestmark = pytest.mark.gpu


def test_the_module_contract() -> None:
    x = tcupy.from_numpy(np.arange(6, dtype=np.int16).reshape(2, 3), "cuda:0")
    assert tcupy.owns(x) and not tcupy.owns(np.ones(2))
    assert tcupy.dtype_of(x) == np.int16
    assert tcupy.shape_of(x) == (2, 3)
    assert tcupy.device_of(x) == "cuda:0"
    assert tcupy.put(x, "cuda:0") is x
    back = tcupy.to_numpy(x)
    assert type(back) is np.ndarray
    np.testing.assert_array_equal(back, np.arange(6, dtype=np.int16).reshape(2, 3))
    with pytest.raises(ValueError, match="'cuda' or 'cuda:N'"):
        tcupy.from_numpy(np.ones(2), "cpu")


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "int4"])
def test_dtypes_cupy_lacks_are_refused_naming_dtype_backend_device_and_fix(
    dtype: str,
) -> None:
    a = np.zeros(3, getattr(ml_dtypes, dtype))
    with pytest.raises(TypeError, match=f"cupy backend cannot hold {dtype}") as info:
        tcupy.from_numpy(a, "cuda:0")
    message = str(info.value)
    assert "cuda:0" in message and "astype" in message and "backend='numpy'" in message
    assert tcupy.support_table()["add"][dtype].startswith("no: ")


def test_int32_plus_float32_is_float32_on_the_device() -> None:
    i = cupy.arange(1000, dtype=cupy.int32)
    f = cupy.ones(1000, dtype=cupy.float32)
    impl = tcupy.BACKEND.impl
    cast = impl(convert_element_type_p)(
        i, new_dtype=np.dtype(np.float32), weak_type=False
    )
    out = impl(add_p)(cast, f)
    assert isinstance(out, cupy.ndarray) and out.dtype == np.float32
    assert (i + f).dtype == np.float64  # CuPy's own rules
    np.testing.assert_array_equal(out.get(), np.arange(1000, dtype=np.float32) + 1)
    total = impl(reduce_sum_p)(out, axes=(0,))
    assert isinstance(total, cupy.ndarray) and total.dtype == np.float32


def _loss(w: Any) -> Any:
    return tnp.sum(tnp.tanh(w * tnp.arange(4, dtype="int32")) ** 2)


def test_namespace_values_and_gradient_match_the_numpy_backend() -> None:
    x = tnp.asarray(np.arange(5, dtype=np.int32))
    y = tnp.asarray(np.linspace(0, 1, 5, dtype=np.float32))
    w = tnp.asarray(np.array([0.5, -1.0, 2.0, 0.25], np.float32))
    want = (tnp.cumsum(x * y) / tnp.max(x), tnp.sort(-y), tl.grad(_loss)(w))
    with use(tcupy.BACKEND):
        got = (tnp.cumsum(x * y) / tnp.max(x), tnp.sort(-y), tl.grad(_loss)(w))
    for g, e in zip(got, want, strict=True):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-6)


def test_the_same_data_safety_error_as_the_numpy_backend() -> None:
    big = tnp.asarray(np.array([1, 4_000_000_000], np.uint32))
    small = tnp.asarray(np.array([1, 2], np.int32))
    with pytest.raises(OverflowError) as numpy_error:
        _ = big + small
    with use(tcupy.BACKEND), pytest.raises(OverflowError) as cupy_error:
        _ = big + small
    assert str(cupy_error.value) == str(numpy_error.value)
