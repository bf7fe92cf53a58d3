"""typelattice.nn.initializers: variances, fans, dtypes, orthogonality, errors.

Dtypes against JAX's are in test_random_golden.py. The statistical checks
use fixed keys and bounds of many standard errors: deterministic.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import random
from typelattice.nn import initializers as init

KEY = random.key(99)


def values(x: tnp.Array) -> np.ndarray[Any, Any]:
    return np.asarray(x).astype(np.complex128 if x.dtype.kind == "c" else np.float64)


# name -> (factory, scale, mode, distribution)
NAMED = {
    "lecun_normal": (init.lecun_normal, 1.0, "fan_in", "truncated_normal"),
    "lecun_uniform": (init.lecun_uniform, 1.0, "fan_in", "uniform"),
    "glorot_normal": (init.glorot_normal, 1.0, "fan_avg", "truncated_normal"),
    "glorot_uniform": (init.glorot_uniform, 1.0, "fan_avg", "uniform"),
    "he_normal": (init.he_normal, 2.0, "fan_in", "truncated_normal"),
    "he_uniform": (init.he_uniform, 2.0, "fan_in", "uniform"),
}


def test_aliases_are_the_same_initialisers() -> None:
    assert init.xavier_normal is init.glorot_normal
    assert init.xavier_uniform is init.glorot_uniform
    assert init.kaiming_normal is init.he_normal
    assert init.kaiming_uniform is init.he_uniform


@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_initialisers_are_variance_scaling(name: str) -> None:
    factory, scale, mode, distribution = NAMED[name]
    same = init.variance_scaling(scale, mode, distribution)
    shape = (3, 3, 16, 32)
    got = factory()(KEY, shape)
    assert got.dtype == np.dtype("float32")
    assert bool((got == same(KEY, shape)).all())


def _fan(mode: str, fan_in: float, fan_out: float) -> float:
    return {
        "fan_in": fan_in,
        "fan_out": fan_out,
        "fan_avg": (fan_in + fan_out) / 2,
        "fan_geo_avg": math.sqrt(fan_in * fan_out),
    }[mode]


@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"])
def test_variance_is_scale_over_the_fan(mode: str, distribution: str) -> None:
    # A convolution kernel: 3x3 window (receptive field 9), 32 in, 64 out.
    shape = (3, 3, 32, 64)
    w = values(init.variance_scaling(2.0, mode, distribution)(KEY, shape))
    target = 2.0 / _fan(mode, 9 * 32, 9 * 64)
    assert abs(w.mean()) < 0.02 * math.sqrt(target)
    assert abs(w.var() / target - 1) < 0.03  # 18432 values: standard error 1%
    limit = {"truncated_normal": 2 / 0.87962566103423978, "uniform": math.sqrt(3)}
    if distribution in limit:
        assert np.abs(w).max() < limit[distribution] * math.sqrt(target)
        assert np.abs(w).max() > 0.95 * limit[distribution] * math.sqrt(target)


def test_fans_with_explicit_axes() -> None:
    # Axes 0 and 1 are inputs (6), axis 3 outputs (5), axis 2 a batch axis:
    # the receptive field is empty (size 1).
    vs = init.variance_scaling(1.0, "fan_in", "normal", (0, 1), 3, 2)
    w = values(vs(KEY, (2, 3, 400, 5)))
    assert abs(w.var() * 6 - 1) < 0.03
    out = init.variance_scaling(1.0, "fan_out", "normal", in_axis=0, out_axis=1)
    assert abs(values(out(KEY, (500, 40))).var() * 40 - 1) < 0.03


@pytest.mark.parametrize(
    ("distribution", "spread"), [("normal", None), ("uniform", math.sqrt(2))]
)
def test_complex_variance_scaling(distribution: str, spread: float | None) -> None:
    w = values(
        init.variance_scaling(1.0, "fan_in", distribution)(KEY, (100, 300), "complex64")
    )
    assert abs(np.mean(np.abs(w) ** 2) * 100 - 1) < 0.03
    assert abs(np.mean(w)) < 0.01
    if spread is not None:  # a disk
        assert np.abs(w).max() < spread / 10


def test_complex_truncated_normal_has_the_asked_variance() -> None:
    w = values(
        init.variance_scaling(1.0, "fan_in", "truncated_normal")(
            KEY, (100, 1000), "complex64"
        )
    )
    # JAX's constant would leave E|w|**2 at 1.0187 / 100.
    assert abs(np.mean(np.abs(w) ** 2) * 100 - 1) < 0.006
    # Truncated at two (pre-truncation) standard deviations.
    assert np.abs(w).max() * 10 * 0.9619 < 2


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["lecun_normal", "glorot_uniform", "he_normal"])
def test_narrow_parameters_are_the_float32_ones_rounded_once(
    dtype: str, name: str
) -> None:
    make = NAMED[name][0]()
    narrow = make(KEY, (30, 20), dtype)
    assert narrow.dtype == np.dtype(dtype) and not narrow.weak_type
    assert bool((narrow == make(KEY, (30, 20)).astype(dtype)).all())


def test_default_dtype_follows_the_mode() -> None:
    with tl.enable_x64():
        assert init.lecun_normal()(KEY, (3, 2)).dtype == np.dtype("float64")
        assert init.zeros(KEY, (2,)).dtype == np.dtype("float64")
        assert init.lecun_normal(dtype="bfloat16")(KEY, (3, 2)).dtype == np.dtype(
            "bfloat16"
        )
    assert init.ones(KEY, (2,)).dtype == np.dtype("float32")


def test_the_call_dtype_overrides_the_factory_dtype() -> None:
    made = init.normal(dtype="bfloat16")
    assert made(KEY, (2,)).dtype == np.dtype("bfloat16")
    assert made(KEY, (2,), "float16").dtype == np.dtype("float16")


@pytest.mark.parametrize(
    ("factory", "check"),
    [
        (init.normal(0.5), lambda w: abs(w.std() - 0.5) < 0.01),
        (init.uniform(0.5), lambda w: w.min() >= 0 and w.max() < 0.5),
        (init.truncated_normal(0.5), lambda w: np.abs(w).max() < 1.0),
        (init.truncated_normal(0.5, lower=0.0), lambda w: w.min() > 0),
    ],
)
def test_simple_distributions(factory: Any, check: Any) -> None:
    assert check(values(factory(KEY, (100, 100))))


def test_constants() -> None:
    assert np.asarray(init.constant(-7)(KEY, (2,), "int8")).tolist() == [-7, -7]
    rows = init.constant(tnp.asarray([1.0, 2.0]))(KEY, (3, 2))
    assert np.asarray(rows).tolist() == [[1.0, 2.0]] * 3
    with pytest.raises(OverflowError, match="1e\\+300"):
        init.constant(1e300)(KEY, (2,))
    assert np.asarray(init.zeros(KEY, (2,), "int32")).tolist() == [0, 0]


def test_orthogonal_matrices() -> None:
    tall = values(init.orthogonal()(KEY, (50, 20)))
    assert np.allclose(tall.T @ tall, np.eye(20), atol=1e-5)
    wide = values(init.orthogonal(2.0)(KEY, (20, 50)))
    assert np.allclose(wide @ wide.T, 4 * np.eye(20), atol=1e-4)
    # Columns along axis 0: 8 columns of 5 rows, so the rows are orthonormal.
    rows = values(init.orthogonal(column_axis=0)(KEY, (8, 5)))
    assert np.allclose(rows.T @ rows, np.eye(5), atol=1e-5)
    kernel = values(init.orthogonal()(KEY, (3, 3, 4, 16))).reshape(-1, 16)
    assert np.allclose(kernel.T @ kernel, np.eye(16), atol=1e-5)
    unitary = values(init.orthogonal()(KEY, (6, 6), "complex64"))
    assert np.allclose(unitary.conj().T @ unitary, np.eye(6), atol=1e-5)


def test_orthogonal_matrices_are_uniformly_distributed() -> None:
    # The diagonal of a Haar orthogonal 2x2 matrix is cos(theta), theta
    # uniform: E[cos] = 0, E[cos**2] = 1/2 (a QR without the sign fix gives
    # a positive diagonal).
    keys = random.split(KEY, 400)
    diag = np.array([values(init.orthogonal()(k, (2, 2)))[0, 0] for k in keys])
    assert abs(diag.mean()) < 0.1 and abs((diag**2).mean() - 0.5) < 0.06


def test_orthogonal_in_half_precision() -> None:
    w = init.orthogonal()(KEY, (30, 10), "bfloat16")
    assert w.dtype == np.dtype("bfloat16")
    q = values(w)
    assert np.allclose(q.T @ q, np.eye(10), atol=0.03)


def test_delta_orthogonal() -> None:
    w = values(init.delta_orthogonal()(KEY, (3, 3, 4, 6)))
    centre = w[1, 1]
    assert np.allclose(centre @ centre.T, np.eye(4), atol=1e-5)
    w[1, 1] = 0
    assert not w.any()
    assert init.delta_orthogonal()(KEY, (5, 2, 2)).shape == (5, 2, 2)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: init.variance_scaling(1.0, "fan", "normal"), ValueError, "'fan_in'"),
        (
            lambda: init.variance_scaling(1.0, "fan_in", "gauss"),
            ValueError,
            "'uniform'",
        ),
        (
            lambda: init.variance_scaling(-1.0, "fan_in", "normal"),
            ValueError,
            "negative, got -1.0",
        ),
        (lambda: init.lecun_normal()(KEY, (3,)), ValueError, "in_axis explicitly"),
        (lambda: init.lecun_normal()(KEY, (3, 3), "int32"), ValueError, "got int32"),
        (lambda: init.uniform()(KEY, (3,), "complex64"), ValueError, "float dtype"),
        (lambda: init.orthogonal()(KEY, (3,)), ValueError, "at least a 2D"),
        (lambda: init.delta_orthogonal()(KEY, (3, 3)), ValueError, "3D, 4D or 5D"),
        (lambda: init.delta_orthogonal()(KEY, (3, 4, 2)), ValueError, "fan_in"),
        (lambda: init.normal()(KEY, (3,), "int8"), ValueError, "float or complex"),
    ],
)
def test_errors(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_1_d_shapes_with_explicit_axes() -> None:
    # As in JAX: the input and the output axis are the same axis, so the
    # receptive field is 1 / n and the fan is 1.
    w = init.lecun_normal(in_axis=0, out_axis=0)(KEY, (40000,))
    assert abs(values(w).var() - 1) < 0.03


def test_empty_shapes_give_empty_parameters() -> None:
    for made in (init.lecun_normal(), init.orthogonal(), init.normal()):
        assert made(KEY, (0, 3)).shape == (0, 3)


@pytest.mark.parametrize(
    "made",
    [init.lecun_normal(), init.glorot_uniform(), init.orthogonal(), init.constant(2.0)],
    ids=["lecun_normal", "glorot_uniform", "orthogonal", "constant"],
)
def test_under_jit_and_eval_shape(made: Any) -> None:
    shape = (6, 4)
    eager = made(KEY, shape, "bfloat16")
    jitted = tl.jit(lambda k: made(k, shape, "bfloat16"))(KEY)
    assert bool((jitted == eager).all()) and jitted.dtype == eager.dtype
    abstract = tl.eval_shape(lambda k: made(k, shape, "bfloat16"), KEY)
    assert abstract == tl.ShapeDtypeStruct(shape, np.dtype("bfloat16"))


def test_protocol() -> None:
    assert isinstance(init.zeros, init.Initializer)
    assert isinstance(init.he_normal(), init.Initializer)
