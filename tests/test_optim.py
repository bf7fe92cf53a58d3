"""typelattice.optim: the optimisers give optax's parameters step by step
(values recorded by tests/golden/make_optim_golden.py), keep their state in
the parameters' dtypes, run under jit, and refuse what they cannot do."""

from __future__ import annotations

import json
import pathlib
from collections import namedtuple
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import optim
from typelattice._tracing import tree

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent / "golden" / "optim.json").read_text()
)
NAMESPACE = {name: getattr(optim, name) for name in optim.__all__}


def _arrays(d: dict[str, Any], dtype: str = "float32") -> dict[str, Any]:
    return {k: tnp.asarray(np.asarray(v, dtype=dtype)) for k, v in d.items()}


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: c["name"])
@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_the_optimisers_follow_optax(case: dict[str, Any], jitted: bool) -> None:
    opt = eval(case["call"], NAMESPACE)  # noqa: S307 - a recorded constructor call
    params = _arrays(GOLDEN["initial"])
    state = opt.init(params)

    def step(p: Any, s: Any, g: Any) -> Any:
        updates, s = opt.update(g, s, p)
        return optim.apply_updates(p, updates), s

    run = tl.jit(step) if jitted else step
    for grads, expected in zip(GOLDEN["grads"], case["params"], strict=True):
        params, state = run(params, state, _arrays(grads))
        for k, v in expected.items():
            assert params[k].dtype == np.float32 and not params[k].weak_type
            np.testing.assert_allclose(np.asarray(params[k]), v, rtol=2e-6, atol=2e-7)


@pytest.mark.parametrize(
    "opt", [optim.sgd(0.1, momentum=0.9), optim.adam(0.1), optim.adamw(0.1)]
)
def test_state_and_updates_keep_the_parameters_dtype(opt: Any) -> None:
    params = {
        "w": tnp.ones((2, 2), dtype="float32"),
        "h": tnp.ones(2, dtype="bfloat16"),
    }
    grads = {"w": tnp.ones((2, 2), dtype="bfloat16"), "h": tnp.ones(2, dtype="float32")}
    state = opt.init(params)
    updates, state = opt.update(grads, state, params)
    for name, dt in (("w", "float32"), ("h", "bfloat16")):
        assert updates[name].dtype == dt and not updates[name].weak_type
        for leaf in tree.leaves(state)[1:]:
            assert leaf.dtype in (np.float32, tnp.bfloat16)
    moments = [s for s in tree.leaves(state) if s.ndim]
    assert sorted(str(m.dtype) for m in moments) == sorted(
        ["float32", "bfloat16"] * (len(moments) // 2)
    )
    assert state.count.dtype == np.int32 and int(state.count) == 1
    new = optim.apply_updates(params, updates)
    assert (new["w"].dtype, new["h"].dtype) == (np.float32, tnp.bfloat16)


def test_complex_parameters_have_real_second_moments() -> None:
    p = tnp.asarray([1 + 1j, 2 - 1j], dtype="complex64")
    opt = optim.adam(0.1)
    updates, state = opt.update(tnp.asarray([1j, 1.0], dtype="complex64"), opt.init(p))
    assert state.mu.dtype == np.complex64 and state.nu.dtype == np.float32
    np.testing.assert_allclose(np.asarray(state.nu), [0.001, 0.001], rtol=1e-6)
    assert updates.dtype == np.complex64


def test_pytrees_of_every_kind() -> None:
    Pair = namedtuple("Pair", "a b")
    params = [
        Pair(tnp.ones(2, dtype="float32"), None),
        {"x": (tnp.zeros(1, dtype="float32"),)},
    ]
    opt = optim.adam(0.1)
    state = opt.init(params)
    grads = tree.tree_map(lambda p: p + 1, params)
    updates, state = opt.update(grads, state)
    new = optim.apply_updates(params, updates)
    assert isinstance(new[0], Pair) and new[0].b is None
    assert tree.flatten(new)[1] == tree.flatten(params)[1]


def test_inputs_are_not_changed() -> None:
    params = {"w": tnp.ones(3, dtype="float32")}
    grads = {"w": tnp.ones(3, dtype="float32")}
    opt = optim.sgd(0.1, momentum=0.9)
    state = opt.init(params)
    before = [np.asarray(x).copy() for x in tree.leaves((params, grads, state))]
    updates, _ = opt.update(grads, state, params)
    optim.apply_updates(params, updates)
    after = [np.asarray(x) for x in tree.leaves((params, grads, state))]
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


def test_integer_parameters_are_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"\['steps'\] has dtype int32"):
        optim.adam(0.1).init({"w": tnp.ones(2), "steps": tnp.zeros(2, dtype="int32")})


def test_mismatched_structures_are_refused() -> None:
    opt = optim.adam(0.1)
    state = opt.init({"w": tnp.ones(2)})
    with pytest.raises(ValueError, match="structure"):
        opt.update({"v": tnp.ones(2)}, state)


def test_adamw_needs_the_parameters_and_takes_a_mask() -> None:
    params = {"w": tnp.ones(2, dtype="float32"), "b": tnp.ones(2, dtype="float32")}
    zero = tree.tree_map(tnp.zeros_like, params)
    opt = optim.adamw(0.1, weight_decay=0.5, mask={"w": True, "b": False})
    with pytest.raises(ValueError, match="update\\(grads, state, params\\)"):
        opt.update(zero, opt.init(params))
    updates, _ = opt.update(zero, opt.init(params), params)
    np.testing.assert_allclose(np.asarray(updates["w"]), [-0.05, -0.05])
    np.testing.assert_array_equal(np.asarray(updates["b"]), [0.0, 0.0])


def test_schedules_check_their_arguments() -> None:
    with pytest.raises(ValueError, match="transition_steps"):
        optim.exponential_decay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="decay_steps"):
        optim.cosine_decay_schedule(0.1, 0)
