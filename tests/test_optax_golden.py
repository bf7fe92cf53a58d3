"""typelattice.optax against optax: transformations, optimisers, wrappers,
schedules and losses, with float32, bfloat16 and float16 parameters.

``golden/optax.json`` was recorded from optax by
``golden/make_optax_golden.py``, which defines the cases; here they run with
``typelattice.optax`` and must give optax's dtypes, and its values within a
tolerance per dtype (a few units in the last place: optax's XLA and NumPy
may round a division or a square root differently). Each optimiser case
also runs with its update under ``typelattice.jit``, which must give the
eager results exactly.
"""

from __future__ import annotations

import json
import types
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
import typelattice.optax as optax
from support import GOLDEN_DIR, recorder
from typelattice._tracing import tree

GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "optax.json").read_text())
REC = recorder("make_optax_golden.py")
NS = types.SimpleNamespace(np=tnp, optax=optax, leaves=tree.leaves)

# Relative tolerance per dtype: float32 results agree to about an ulp per
# operation; 16-bit ones may round once differently (two ulps at 1).
TOL = {
    "float32": 2e-6,
    "bfloat16": 2 * 2.0**-7,
    "float16": 2 * 2.0**-10,
    "int32": 0.0,
    "bool": 0.0,
    "float64": 1e-12,
}


def _close(got: Any, want: list[Any], what: str, inputs: str = "float64") -> None:
    """``got`` has optax's dtype and shape, and its values within the
    tolerance of the coarser of its dtype and ``inputs`` (the parameters'
    and gradients' dtype): a float32 accumulator of bfloat16 gradients is
    as close as bfloat16 allows, since optax scales the gradient in
    bfloat16 before adding it where typelattice converts it first."""
    a = np.asarray(got)
    w = REC.decode(want)
    assert str(a.dtype) == str(w.dtype), f"{what}: dtype {a.dtype}, optax {w.dtype}"
    assert a.shape == w.shape, f"{what}: shape {a.shape}, optax {w.shape}"
    tol = max(TOL[str(w.dtype)], TOL[inputs]) if TOL[str(w.dtype)] else 0.0
    a64, w64 = a.astype(np.float64), w.astype(np.float64)
    finite = np.abs(w64[np.isfinite(w64)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    np.testing.assert_allclose(
        a64, w64, rtol=tol, atol=tol * scale * 0.5, equal_nan=True, err_msg=what
    )


CASE_IDS = sorted(GOLDEN["cases"])


@pytest.mark.parametrize("case", CASE_IDS)
def test_optimiser_steps_match_optax(case: str) -> None:
    name, dtype = case.split("|")
    _, compare_state, _ = REC.CASES[name]
    steps = REC.run_case(NS, name, dtype)
    for i, ((ups, state, params), want) in enumerate(
        zip(steps, GOLDEN["cases"][case], strict=True)
    ):
        assert len(ups) == len(want["updates"])
        for j, (u, w) in enumerate(zip(ups, want["updates"], strict=True)):
            _close(u, w, f"{case} step {i} update {j}", dtype)
        for j, (p, w) in enumerate(zip(params, want["params"], strict=True)):
            _close(p, w, f"{case} step {i} params {j}", dtype)
        if compare_state:
            assert len(state) == len(want["state"]), f"{case}: state leaves"
            for j, (s, w) in enumerate(zip(state, want["state"], strict=True)):
                _close(s, w, f"{case} step {i} state leaf {j}", dtype)


JIT_CASES = [
    (name, dtype)
    for name in sorted(REC.CASES)
    for dtype in ("float32", "bfloat16")
    if dtype == "float32" or name not in REC.FLOAT32_ONLY
]


@pytest.mark.parametrize("name, dtype", JIT_CASES)
def test_jit_gives_the_eager_steps(name: str, dtype: str) -> None:
    opt = REC.CASES[name][0](optax)
    eager = REC.run_case(NS, name, dtype)
    jitted = REC.run_case(NS, name, dtype, update=tl.jit(opt.update))
    for (ue, se, pe), (uj, sj, pj) in zip(eager, jitted, strict=True):
        for e, j in zip([*ue, *se, *pe], [*uj, *sj, *pj], strict=True):
            assert np.asarray(e).dtype == np.asarray(j).dtype
            np.testing.assert_array_equal(
                np.asarray(j).astype(np.float64), np.asarray(e).astype(np.float64)
            )


@pytest.mark.parametrize("name", sorted(GOLDEN["schedules"]))
def test_schedules_match_optax(name: str) -> None:
    schedule = REC._schedules(optax)[name]
    for count, want in enumerate(GOLDEN["schedules"][name]):
        got = tnp.asarray(schedule(count))
        np.testing.assert_allclose(
            float(got), float(REC.decode(want)), rtol=2e-6, atol=1e-7
        )
        # The same value from the int32 count an optimiser gives, under jit.
        jitted = tl.jit(schedule)(tnp.asarray(count, "int32"))
        assert float(jitted) == float(got)


@pytest.mark.parametrize("case", sorted(GOLDEN["losses"]))
def test_losses_match_optax(case: str) -> None:
    name, dtype = case.split("|")
    got = REC.losses(NS, dtype)[name]
    _close(got, GOLDEN["losses"][case], case)
    # The same under jit.
    jitted = tl.jit(lambda: REC.losses(NS, dtype)[name])()
    assert jitted.dtype == got.dtype
    np.testing.assert_array_equal(
        np.asarray(jitted).astype(np.float64), np.asarray(got).astype(np.float64)
    )


def test_losses_under_vmap_give_the_batched_values() -> None:
    x = REC._loss_inputs(tnp, "float32")
    pairs = [
        (optax.softmax_cross_entropy, x["logits"], x["probs"]),
        (optax.softmax_cross_entropy_with_integer_labels, x["logits"], x["labels"]),
        (optax.cosine_similarity, x["logits"], x["probs"]),
        (optax.sigmoid_binary_cross_entropy, x["logits"], x["probs"]),
    ]
    for loss, a, b in pairs:
        np.testing.assert_array_equal(
            np.asarray(tl.vmap(loss)(a, b)), np.asarray(loss(a, b))
        )


@pytest.mark.parametrize("name", ["softmax_cross_entropy", "huber_loss", "log_cosh"])
def test_losses_jit_and_grad(name: str) -> None:
    x = REC._loss_inputs(tnp, "float32")

    def loss(p: Any) -> Any:
        if name == "softmax_cross_entropy":
            return optax.softmax_cross_entropy(p, x["probs"]).sum()
        return getattr(optax, name)(p[0], x["logits"][1]).sum()

    eager = loss(x["logits"])
    assert float(tl.jit(loss)(x["logits"])) == float(eager)
    g = tl.grad(loss)(x["logits"])
    assert g.dtype == np.dtype("float32") and g.shape == (2, 3)
    # A central difference agrees with the gradient.
    h = 1e-2
    bump = tnp.zeros((2, 3)).at[0, 1].set(h)
    numeric = (float(loss(x["logits"] + bump)) - float(loss(x["logits"] - bump))) / (
        2 * h
    )
    assert abs(float(g[0, 1]) - numeric) < 1e-2


@pytest.mark.parametrize("name", sorted(REC.CASES))
def test_strict_promotion_gives_the_same_steps(name: str) -> None:
    # The mixed dtypes (a float32 count or schedule with bfloat16 leaves, a
    # mu_dtype) are converted explicitly, so strict mode runs them too.
    dtype = "float32" if name in REC.FLOAT32_ONLY else "bfloat16"
    standard = REC.run_case(NS, name, dtype)
    with tl.dtype_promotion("strict"):
        strict = REC.run_case(NS, name, dtype)
    for a, b in zip(tree.leaves(standard), tree.leaves(strict), strict=True):
        assert a.dtype == b.dtype
        # (In float64: NumPy compares bfloat16 NaNs as unequal.)
        np.testing.assert_array_equal(
            np.asarray(b).astype(np.float64), np.asarray(a).astype(np.float64)
        )


@pytest.mark.parametrize("name", sorted(REC.CASES))
def test_vmap_over_an_ensemble_gives_each_members_step(name: str) -> None:
    make, _, nan = REC.CASES[name]
    opt = make(optax)
    first = REC.params_of(NS, "float32")
    members = [first, {k: v * 2 for k, v in first.items()}]
    grads = [REC.grads_of(NS, "float32", 0, False), REC.grads_of(NS, "float32", 1, nan)]
    states = [opt.init(p) for p in members]

    def stack(trees: list[Any]) -> Any:
        return tree.tree_map(lambda *xs: tnp.stack(xs), *trees)

    batched = tl.vmap(opt.update)(stack(grads), stack(states), stack(members))
    for i in range(2):
        one = opt.update(grads[i], states[i], members[i])
        for a, b in zip(tree.leaves(one), tree.leaves(batched), strict=True):
            np.testing.assert_allclose(
                np.asarray(b)[i].astype(np.float64),
                np.asarray(a).astype(np.float64),
                rtol=1e-6,
                atol=1e-7,
            )
