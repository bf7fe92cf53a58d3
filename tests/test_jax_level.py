"""The ``jax``-level names Flax programs use: ``pmap`` on the one device,
the process and device queries, ``device_get``, ``jit``'s donation
arguments, ``flax.jax_utils``, and the auxiliary data of ``has_aux``
(against ``golden/aux.json``, recorded from JAX by
``golden/make_aux_golden.py``)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import lax
from typelattice.flax import jax_utils

AUX: dict[str, Any] = json.loads((GOLDEN_DIR / "aux.json").read_text())["cases"]
rec = recorder("make_aux_golden.py")


@pytest.mark.parametrize("case", sorted(AUX))
def test_has_aux_leaves_are_jax_s(case: str) -> None:
    transform, _, jit = case.partition("+")
    aux = rec.aux_of(tl, tnp, transform, bool(jit))
    assert rec.describe(aux, tnp.Array) == AUX[case]


def test_has_aux_keeps_untraced_leaves_identical() -> None:
    marker = np.arange(3)

    def f(x: Any) -> Any:
        return tnp.sum(x), {"m": marker, "s": "text"}

    aux = tl.grad(f, has_aux=True)(tnp.ones(2))[1]
    assert aux["m"] is marker and aux["s"] == "text"


# pmap


def test_pmap_is_vmap_over_the_one_device_with_collectives() -> None:
    def step(w: Any, x: Any) -> Any:
        g = lax.pmean(x * w, "batch")
        return w - g, lax.psum(tnp.ones(()), "batch")

    p = tl.pmap(step, axis_name="batch")
    w, x = tnp.asarray([[1.0, 2.0]]), tnp.asarray([[3.0, 4.0]])
    new_w, count = p(w, x)
    np.testing.assert_array_equal(np.asarray(new_w), [[-2.0, -6.0]])
    np.testing.assert_array_equal(np.asarray(count), [1.0])
    assert new_w.dtype == np.float32


def test_pmap_broadcast_arguments_and_outputs() -> None:
    p = tl.pmap(
        lambda s, b: (s * 2, b + s), in_axes=(None, 0), out_axes=(None, 0),
        axis_name="batch",
    )  # fmt: skip
    s, b = p(tnp.asarray(3.0), tnp.zeros((1, 2)))
    assert s.shape == () and float(s) == 6.0
    assert b.shape == (1, 2)


def test_pmap_static_broadcasted_argnums() -> None:
    p = tl.pmap(lambda x, n: x * n, static_broadcasted_argnums=(1,))
    np.testing.assert_array_equal(np.asarray(p(tnp.ones((1, 2)), 3)), [[3.0, 3.0]])
    np.testing.assert_array_equal(np.asarray(p(tnp.ones((1, 2)), 4)), [[4.0, 4.0]])


def test_pmap_refuses_a_mapped_axis_other_than_the_device_count() -> None:
    p = tl.pmap(lambda x: x)
    with pytest.raises(
        ValueError, match=r"size 2, but there is 1 local device.*replicate"
    ):
        p(tnp.ones((2, 3)))


def test_pmap_refuses_other_devices() -> None:
    with pytest.raises(ValueError, match="one device"):
        tl.pmap(lambda x: x, devices=[object()])


def test_pmap_results_equal_vmap_s() -> None:
    f = lambda x: tnp.tanh(x) * lax.psum(x, "i")  # noqa: E731
    x = tnp.asarray([[0.5, -1.0, 2.0]], dtype="bfloat16")
    got = tl.pmap(f, axis_name="i")(x)
    want = tl.vmap(f, axis_name="i")(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# processes, devices, host values


def test_process_and_device_queries() -> None:
    assert tl.process_index() == 0 and tl.process_count() == 1
    assert tl.local_device_count() == 1 and tl.device_count() == 1
    with pytest.raises(RuntimeError, match="unknown backend"):
        tl.process_index("gpu")


def test_device_get_gives_fresh_numpy_arrays() -> None:
    a = tnp.asarray([1, 2], dtype="int16")
    out = tl.device_get({"a": a, "t": "x"})
    assert isinstance(out["a"], np.ndarray) and out["a"].dtype == np.int16
    out["a"][0] = 9
    assert int(a[0]) == 1
    assert out["t"] == "x"


def test_device_get_refuses_traced_values() -> None:
    with pytest.raises(TypeError, match="traced value"):
        tl.jit(tl.device_get)(tnp.ones(2))


def test_jit_accepts_donation_and_keeps_the_argument() -> None:
    f = tl.jit(lambda x: x + 1, donate_argnums=0)
    x = tnp.ones(2)
    y = f(x)
    np.testing.assert_array_equal(np.asarray(x), [1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(y), [2.0, 2.0])
    with pytest.raises(TypeError):
        tl.jit(lambda x: x, donate_argnums="x")  # type: ignore[arg-type]


# flax.jax_utils


def test_replicate_and_unreplicate() -> None:
    tree = {"w": tnp.ones((2, 3), dtype="bfloat16"), "step": 0}
    r = jax_utils.replicate(tree)
    assert r["w"].shape == (1, 2, 3) and r["w"].dtype == tnp.bfloat16
    assert r["step"].shape == (1,)
    u = jax_utils.unreplicate(r)
    assert u["w"].shape == (2, 3)
    with pytest.raises(ValueError, match="one"):
        jax_utils.replicate(tree, devices=[object(), object()])


def test_prefetch_to_device_checks_the_device_axis() -> None:
    items = [{"x": np.full((1, 2), i, dtype=np.float32)} for i in range(3)]
    got = list(jax_utils.prefetch_to_device(iter(items), 2))
    assert [float(g["x"][0, 0]) for g in got] == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="leading device axis"):
        next(jax_utils.prefetch_to_device(iter([{"x": np.zeros((3, 2))}]), 1))


def test_the_jax_submodules_are_attributes() -> None:
    import typelattice.random

    assert tl.random is typelattice.random
    assert tl.lax.psum is lax.psum


# names Flax examples read from jax, jax.numpy and jax.lax


def test_config_update_takes_jax_s_flag_names() -> None:
    tl.config.update("jax_enable_x64", True)
    assert tl.config.enable_x64 is True
    tl.config.update("jax_numpy_rank_promotion", "raise")
    assert tl.config.rank_promotion == "raise"
    with pytest.raises(
        ValueError, match="unknown configuration flag 'jax_log_compiles'"
    ):
        tl.config.update("jax_log_compiles", True)


def test_dynamic_slice_in_dim_is_dynamic_slice_along_one_axis() -> None:
    x = tnp.asarray(np.arange(24, dtype=np.int16).reshape(2, 3, 4))
    got = lax.dynamic_slice_in_dim(x, 1, 2, axis=-1)
    want = lax.dynamic_slice(x, (0, 0, 1), (2, 3, 2))
    assert got.dtype == np.int16
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    jitted = tl.jit(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, 1))(x, 5)
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(x)[:, 1:3])  # clamped
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        lax.dynamic_slice_in_dim(x, 0, 1, axis=3)


def test_jnp_dtype_is_numpy_s() -> None:
    assert tnp.dtype is np.dtype
