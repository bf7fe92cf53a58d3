"""typelattice.optim against optax, and its dtype rule.

``golden/optim.json`` was recorded from optax by ``golden/make_optim_golden.py``,
which defines the cases, runs them (on either library) and encodes the
results. Here the same cases run with typelattice.optim and must give
optax's values, dtypes and state, eagerly and under jit; then the dtype rule
of mixed precision, the errors, and that nothing given is changed.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import optim
from typelattice._tracing import tree

GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "optim.json").read_text())
REC = recorder("make_optim_golden.py")


def _state(state: Any) -> dict[str, Any]:
    """The state as the recorder names its parts (``ns.state``)."""
    out: dict[str, Any] = {"count": state.count}
    if isinstance(state, optim.AdamState):
        out.update(mu=tree.leaves(state.mu), nu=tree.leaves(state.nu))
    elif state.trace is not None:
        out["trace"] = tree.leaves(state.trace)
    return out


def namespace(jitted: bool = False) -> Any:
    """The recorder's ``ns`` for typelattice; with ``jitted``, optimisers
    whose update (and apply_updates) run under typelattice.jit."""
    opt_module: Any = optim
    if jitted:

        def jitted_optimiser(make: Callable[..., Any]) -> Callable[..., Any]:
            def build(*args: Any, **kwargs: Any) -> Any:
                opt = make(*args, **kwargs)
                return opt._replace(update=tl.jit(opt.update))

            return build

        opt_module = types.SimpleNamespace(
            **{n: getattr(optim, n) for n in optim.__all__},
        )
        for name in ("sgd", "adam", "adamw"):
            setattr(opt_module, name, jitted_optimiser(getattr(optim, name)))
        opt_module.apply_updates = tl.jit(optim.apply_updates)
    return types.SimpleNamespace(
        np=tnp,
        optim=opt_module,
        enable_x64=tl.enable_x64,
        leaves=tree.leaves,
        state=_state,
        grads=lambda g, params: g,  # as they are: the dtype rule converts them
    )


# Tolerances: optax's values are matched to the bit in float32, float64 and
# bfloat16 when recorded, and to 2e-7 in complex64 (XLA's complex square
# root); a few ulps leave room for another XLA's rounding. bfloat16: one ulp.
TOLERANCE = {
    "float32": (1e-6, 1e-9),
    "complex64": (1e-6, 1e-9),
    "float64": (1e-14, 1e-18),
    "bfloat16": (2**-7, 1e-6),
}


def assert_close(got: list[Any], want: list[Any], where: str) -> None:
    """Two encoded arrays: the same dtype and shape, values within the
    tolerance of the dtype."""
    assert got[:2] == want[:2], where
    g, w = REC.decode(got), REC.decode(want)
    rtol, atol = TOLERANCE[want[0]] if want[0] in TOLERANCE else (0, 0)
    np.testing.assert_allclose(
        g.astype(np.complex128), w.astype(np.complex128), rtol, atol, err_msg=where
    )


def compare(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    assert len(got) == len(want)
    for step, (g, w) in enumerate(zip(got, want, strict=True)):
        for part in ("updates", "params"):
            for i, (a, b) in enumerate(zip(g[part], w[part], strict=True)):
                assert_close(a, b, f"step {step}, {part} leaf {i}")
        # optax keeps no count for sgd with a constant learning rate.
        assert set(w["state"]) <= set(g["state"])
        for name, value in w["state"].items():
            mine = g["state"][name]
            if name == "count":
                assert_close(mine, value, f"step {step}, count")
                continue
            for i, (a, b) in enumerate(zip(mine, value, strict=True)):
                assert_close(a, b, f"step {step}, state {name} leaf {i}")


CASES = sorted(GOLDEN["cases"])


def _run(key: str, ns: Any) -> list[dict[str, Any]]:
    name, param_dtype, grad_dtype = key.split("|")
    inputs = GOLDEN["inputs"][f"{param_dtype}|{grad_dtype}"]
    with tl.enable_x64(param_dtype == "float64"):
        steps: list[dict[str, Any]] = REC.run(ns, name, inputs)
    return steps


@pytest.mark.parametrize("key", CASES)
def test_optimisers_match_optax(key: str) -> None:
    """Updates, parameters and state, step by step. Gradients of another
    dtype than the parameters are given as they are; optax was given them
    converted to the parameters' dtype (the dtype rule)."""
    compare(_run(key, namespace()), GOLDEN["cases"][key])


@pytest.mark.parametrize(
    "key",
    [k for k in CASES if k.split("|")[0] in ("sgd_nesterov", "adam", "adamw_mask")],
)
def test_jit_gives_the_eager_results(key: str) -> None:
    eager = _run(key, namespace())
    jitted = _run(key, namespace(jitted=True))
    compare(jitted, GOLDEN["cases"][key])
    assert jitted == eager


def test_jit_traces_update_once_for_all_steps() -> None:
    """No Python branch on a value: every step reuses the first trace."""
    params = {"w": tnp.ones((2, 3)), "b": tnp.zeros(3)}
    for opt in (
        optim.sgd(optim.cosine_decay_schedule(0.1, 5), momentum=0.9, nesterov=True),
        optim.adamw(optim.exponential_decay(0.1, 2, 0.5, staircase=True)),
    ):
        update = tl.jit(opt.update)
        state = opt.init(params)
        p = params
        for _ in range(4):
            grads = tree.tree_map(lambda x: x * 0.5 + 0.25, p)
            updates, state = update(grads, state, p)
            p = optim.apply_updates(p, updates)
        assert update.cache_info().misses == 1
        assert int(state.count) == 4


# -- schedules ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(GOLDEN["schedules"]))
def test_schedules_match_optax(name: str) -> None:
    want = GOLDEN["schedules"][name]
    got = REC.schedule_values(namespace(), name)
    # A value that cancels to about 0 (the end of a cosine) is known to a few
    # float32 ulps of the schedule's scale: its cos() may be off by one.
    atol = 4 * float(np.finfo(np.float32).eps) * max(abs(v) for v in want)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=atol)
    # Python ints and traced counts give the same values.
    function, kwargs = REC.SCHEDULES[name]
    schedule = getattr(optim, function)(**kwargs)
    jitted = tl.jit(schedule)
    for n in (0, 3, 11):
        assert np.float32(schedule(n)) == np.float32(got[n])
        assert np.float32(jitted(tnp.asarray(n, dtype="int32"))) == np.float32(got[n])


def test_schedule_values_are_the_default_float() -> None:
    schedule = optim.exponential_decay(0.1, 2, 0.5)
    count = tnp.asarray(3, dtype="int32")
    assert (schedule(count).dtype, tl.is_weakly_typed(schedule(count))) == (
        np.dtype("float32"),
        False,
    )
    with tl.enable_x64():
        assert schedule(count).dtype == np.dtype("float64")
    with tl.dtype_promotion("strict"):
        for make in (
            lambda: optim.linear_schedule(1.0, 0.0, 4, 1),
            lambda: optim.cosine_decay_schedule(1.0, 4, alpha=0.1),
            lambda: optim.warmup_cosine_decay_schedule(0.0, 1.0, 2, 6),
        ):
            assert make()(count).dtype == np.dtype("float32")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: optim.exponential_decay(0.1, 0, 0.5), "positive transition_steps"),
        (lambda: optim.exponential_decay(0.1, 5, 0.0), "nonzero decay_rate"),
        (lambda: optim.exponential_decay(0.1, 5, 0.5, -1), "transition_begin of 0"),
        (lambda: optim.linear_schedule(0.1, 0.0, 5, -2), "transition_begin of 0"),
        (lambda: optim.cosine_decay_schedule(0.1, 0), "positive decay_steps"),
        (
            lambda: optim.warmup_cosine_decay_schedule(0.0, 1.0, 5, 5),
            "positive decay_steps",
        ),
    ],
)
def test_schedule_settings_that_cannot_work_raise(
    make: Callable[[], Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        make()


# -- the dtype rule -----------------------------------------------------------------

MIXED = sorted(GOLDEN["dtypes"])


def _code(dtype: Any) -> str:
    return str(REC._code(np.dtype(dtype)))


@pytest.mark.parametrize("key", MIXED)
def test_state_and_updates_have_the_parameters_dtype(key: str) -> None:
    """optax's state and updates follow promotion with the gradients' dtype
    (recorded); here they have the parameters' dtype whatever the
    gradients', and the count is int32."""
    name, param_dtype, grad_dtype = key.split("|")
    got = REC.dtypes_of(namespace(), name, param_dtype, grad_dtype)
    recorded = GOLDEN["dtypes"][key]
    param = _code(tl.dtype(param_dtype))
    want = {k: "i4" if k == "count" else param for k in recorded}
    want["count"] = "i4"  # (optax keeps none for sgd with a constant rate)
    assert got == want


def test_the_recorded_dtypes_differ_from_the_rule() -> None:
    """The rule is not optax's: the recording has the cases that show it
    (optax's momentum follows a float32 gradient of a bfloat16 parameter;
    its plain SGD gives a bfloat16 gradient's dtype to the updates)."""
    assert GOLDEN["dtypes"]["sgd_momentum|bfloat16|float32"]["trace"] == "f4"
    assert GOLDEN["dtypes"]["adam|bfloat16|float32"]["mu"] == "f4"
    assert GOLDEN["dtypes"]["sgd|float32|bfloat16"]["updates"] == "bf"


def _all_strong(value: Any) -> bool:
    return all(not tl.is_weakly_typed(x) for x in tree.leaves(value))


@pytest.mark.parametrize("param_dtype", ["float32", "bfloat16", "float16", "complex64"])
@pytest.mark.parametrize("grad_dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize(
    "make",
    [
        lambda: optim.sgd(0.1),
        lambda: optim.sgd(optim.exponential_decay(0.1, 2, 0.5), momentum=0.9),
        lambda: optim.adam(0.01, nesterov=True),
        lambda: optim.adamw(optim.cosine_decay_schedule(0.01, 3)),
    ],
    ids=["sgd", "sgd_momentum_schedule", "nadam", "adamw_schedule"],
)
def test_dtype_rule(param_dtype: str, grad_dtype: str, make: Any) -> None:
    opt = make()
    params = {"a": tnp.ones((2, 2), param_dtype), "b": [tnp.ones(3, param_dtype)]}
    grads = tree.tree_map(lambda p: tnp.full(p.shape, 0.5, grad_dtype), params)
    state = opt.init(params)
    for _ in range(2):
        updates, state = opt.update(grads, state, params)
        params = optim.apply_updates(params, updates)
    for part in (updates, params, state):
        assert _all_strong(part)
    want = np.dtype(tl.dtype(param_dtype))
    assert {x.dtype for x in tree.leaves(updates)} == {want}
    assert {x.dtype for x in tree.leaves(params)} == {want}
    assert state.count.dtype == np.dtype("int32") and int(state.count) == 2
    moments = tree.leaves(state[1:])  # trace, or mu and nu
    assert {x.dtype for x in moments} <= {want}


def test_a_bfloat16_gradient_is_accumulated_in_float32() -> None:
    """The gradient is converted up before it is squared or summed: the
    same state as with the gradient given in float32 (optax squares it in
    bfloat16)."""
    g32 = tnp.asarray(np.float32([0.30078125, -1.3203125]))  # bfloat16 values
    g16 = g32.astype("bfloat16")
    opt = optim.adam(0.1)
    params = tnp.zeros(2)
    from_bf16 = opt.update(g16, opt.init(params), params)
    from_f32 = opt.update(g32, opt.init(params), params)
    for a, b in zip(tree.leaves(from_bf16), tree.leaves(from_f32), strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # In bfloat16, 0.30078125**2 loses bits that float32 keeps.
    nu = float(np.asarray(from_bf16[1].nu)[0])
    assert nu == pytest.approx(0.001 * 0.30078125**2, rel=1e-6)


def test_float64_parameters_under_x64() -> None:
    with tl.enable_x64():
        params = tnp.ones(2, "float64")
        opt = optim.adam(0.1)
        updates, state = opt.update(tnp.ones(2, "float32"), opt.init(params), params)
        assert updates.dtype == state.mu.dtype == np.dtype("float64")
        assert state.count.dtype == np.dtype("int32")


def test_weak_parameters_give_strong_results() -> None:
    params = {"w": tnp.asarray(1.5)}  # a weak float32
    assert tl.is_weakly_typed(params["w"])
    opt = optim.sgd(0.5, momentum=0.5)
    state = opt.init(params)
    updates, state = opt.update({"w": 1.0}, state, params)
    new = optim.apply_updates(params, updates)
    assert _all_strong((state, updates, new))
    assert float(new["w"]) == 1.0 and new["w"].dtype == np.dtype("float32")


def test_sgd_without_momentum_or_parameters_keeps_the_gradients_dtype() -> None:
    """Nothing tells it the parameters' dtypes: the updates have the
    gradients'; apply_updates converts them."""
    opt = optim.sgd(0.5)
    params = tnp.ones(2)
    updates, state = opt.update(tnp.ones(2, "bfloat16"), opt.init(params))
    assert updates.dtype == np.dtype("bfloat16")
    assert optim.apply_updates(params, updates).dtype == np.dtype("float32")
    updates, _ = opt.update(tnp.ones(2, "bfloat16"), state, params)
    assert updates.dtype == np.dtype("float32")


def test_strict_promotion_gives_the_same_values() -> None:
    params = {"a": tnp.ones(3), "b": tnp.ones(2, "bfloat16")}
    grads = {"a": tnp.full(3, 0.5, "bfloat16"), "b": tnp.full(2, 0.5, "float32")}
    for make in (
        lambda: optim.sgd(optim.linear_schedule(0.1, 0.0, 3), momentum=0.9),
        lambda: optim.adamw(optim.warmup_cosine_decay_schedule(0.0, 0.1, 1, 4)),
    ):
        results = []
        for mode in ("standard", "strict"):
            with tl.dtype_promotion(mode):
                opt = make()
                state = opt.init(params)
                updates, state = opt.update(grads, state, params)
                results.append(
                    tree.leaves((optim.apply_updates(params, updates), state))
                )
        for a, b in zip(*results, strict=True):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_the_count_stops_at_the_largest_int32() -> None:
    opt = optim.adam(0.1)
    params = tnp.ones(2)
    top = tnp.asarray(2**31 - 1, dtype="int32")
    state = opt.init(params)._replace(count=top)
    updates, state = opt.update(tnp.ones(2), state, params)
    assert int(state.count) == 2**31 - 1
    assert np.isfinite(np.asarray(updates)).all()


# -- trees --------------------------------------------------------------------------


class Layer(NamedTuple):
    w: Any
    b: Any


def test_any_pytree_of_parameters() -> None:
    params = (Layer(tnp.ones((2, 2)), None), [tnp.ones(3), {"s": tnp.ones(())}])
    grads = tree.tree_map(lambda p: p * 0.5, params)
    opt = optim.adamw(0.1, mask=lambda p: tree.tree_map(lambda x: x.ndim > 1, p))
    state = opt.init(params)
    updates, state = opt.update(grads, state, params)
    new = optim.apply_updates(params, updates)
    for value in (updates, state.mu, state.nu, new):
        assert tree.flatten(value)[1] == tree.flatten(params)[1]
    assert isinstance(new[0], Layer) and new[0].b is None


def test_a_mask_function_is_the_tree_it_returns() -> None:
    params = {"bias": tnp.ones(2), "kernel": tnp.ones((2, 2))}
    grads = tree.tree_map(lambda p: p * 0.25, params)
    results = []
    for mask in (
        {"bias": False, "kernel": True},
        lambda p: {k: k == "kernel" for k in p},
    ):
        opt = optim.adamw(0.1, weight_decay=0.5, mask=mask)
        results.append(opt.update(grads, opt.init(params), params)[0])
    for a, b in zip(tree.leaves(results[0]), tree.leaves(results[1]), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # Only the kernel decays.
    no_decay = optim.adamw(0.1, weight_decay=0.0)
    plain = no_decay.update(grads, no_decay.init(params), params)[0]
    np.testing.assert_array_equal(np.asarray(results[0]["bias"]), plain["bias"])
    assert not np.array_equal(np.asarray(results[0]["kernel"]), plain["kernel"])


def test_training_converges() -> None:
    """Each optimiser, jitted, brings a quadratic's parameters to its
    minimum."""
    target = {"w": tnp.asarray([[1.0, -2.0], [0.5, 3.0]]), "b": tnp.asarray([-1.0])}
    for opt in (
        optim.sgd(0.1, momentum=0.5),
        optim.adam(optim.exponential_decay(0.3, 50, 0.5)),
        optim.adamw(0.1, weight_decay=0.0),
    ):
        params = tree.tree_map(tnp.zeros_like, target)

        @tl.jit
        def step(p: Any, s: Any) -> Any:
            grads = {k: 2 * (p[k] - target[k]) for k in p}
            updates, s = opt.update(grads, s, p)  # noqa: B023
            return optim.apply_updates(p, updates), s

        state = opt.init(params)
        for _ in range(200):
            params, state = step(params, state)
        for k in target:
            np.testing.assert_allclose(params[k], target[k], atol=2e-2)


# -- errors -------------------------------------------------------------------------


def test_integer_parameters_are_refused_by_path_and_dtype() -> None:
    params = {"layer": {"w": tnp.ones(2), "steps": tnp.zeros(2, "int32")}}
    for opt in (optim.sgd(0.1), optim.adam(0.1), optim.adamw(0.1)):
        with pytest.raises(TypeError, match=r"params\['layer'\]\['steps'\] is int32"):
            opt.init(params)
    with pytest.raises(TypeError, match=r"params\[1\] is bool"):
        optim.sgd(0.1).init([tnp.ones(2), tnp.asarray([True])])
    with pytest.raises(TypeError, match=r"params\['n'\] is int8"):
        optim.apply_updates({"n": tnp.ones(2, "int8")}, {"n": tnp.ones(2)})


def test_other_structures_are_refused_naming_both() -> None:
    params = {"a": tnp.ones(2), "b": tnp.ones(2)}
    for opt in (optim.sgd(0.1), optim.sgd(0.1, momentum=0.9), optim.adam(0.1)):
        state = opt.init(params)
        with pytest.raises(
            ValueError,
            match=(
                r"structure PyTreeDef\(\{'a': \*\}\)"
                r".*PyTreeDef\(\{'a': \*, 'b': \*\}\)"
            ),
        ):
            opt.update({"a": tnp.ones(2)}, state, params)
    opt = optim.adam(0.1)
    state = opt.init(params)
    with pytest.raises(
        ValueError, match=r"parameters have structure PyTreeDef\(\[\*, \*\]\)"
    ):
        opt.update(params, state, [tnp.ones(2), tnp.ones(2)])
    with pytest.raises(
        ValueError, match=r"updates have structure PyTreeDef\(\(\*,\)\)"
    ):
        optim.apply_updates(params, (tnp.ones(2),))


def test_other_shapes_are_refused() -> None:
    opt = optim.adam(0.1)
    params = {"a": tnp.ones(2)}
    with pytest.raises(ValueError, match=r"grads\['a'\] has shape \(1,\).*\(2,\)"):
        opt.update({"a": tnp.ones(1)}, opt.init(params), params)
    with pytest.raises(ValueError, match=r"updates\['a'\] has shape \(3,\)"):
        optim.apply_updates(params, {"a": tnp.ones(3)})


def test_complex_gradients_of_real_parameters_are_refused() -> None:
    opt = optim.sgd(0.1, momentum=0.9)
    params = [tnp.ones(2)]
    with pytest.raises(TypeError, match=r"grads\[0\] is complex64.*numpy.real"):
        opt.update([tnp.ones(2, "complex64")], opt.init(params), params)


def test_adamw_needs_the_parameters() -> None:
    opt = optim.adamw(0.1)
    params = {"w": tnp.ones(2)}
    state = opt.init(params)
    with pytest.raises(ValueError, match=r"opt.update\(grads, state, params\)"):
        opt.update({"w": tnp.ones(2)}, state)


def test_bad_learning_rates_and_masks_are_refused() -> None:
    with pytest.raises(TypeError, match="learning_rate must be a float or a schedule"):
        optim.adam("0.1")  # type: ignore[arg-type]
    params = {"a": tnp.ones(2), "b": tnp.ones(2)}
    opt = optim.adamw(0.1, mask={"a": True})
    with pytest.raises(ValueError, match="mask's leaves have structure"):
        opt.update(params, opt.init(params), params)
    opt = optim.adamw(0.1, mask={"a": True, "b": tnp.asarray(True)})
    with pytest.raises(TypeError, match=r"mask\['b'\] is"):
        opt.update(params, opt.init(params), params)


# -- data safety --------------------------------------------------------------------

# A gradient the parameter's dtype cannot hold (it would become inf): per
# parameter dtype, the gradient's dtype and such a value.
TOO_LARGE = [
    ("float16", "float32", 1e6),
    ("bfloat16", "float32", 3.4e38),
    ("float32", "float64", 1e39),  # under enable_x64
]
OPTIMISERS = {
    "sgd": lambda: optim.sgd(1e-3),
    "sgd_momentum": lambda: optim.sgd(1e-3, momentum=0.9, nesterov=True),
    "adam": lambda: optim.adam(1e-3),
    "adamw": lambda: optim.adamw(1e-3),
}


def _step(opt: optim.GradientTransformation) -> Callable[..., Any]:
    def step(params: Any, state: Any, grads: Any) -> Any:
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state

    return step


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", list(OPTIMISERS))
@pytest.mark.parametrize(
    ("param_dtype", "grad_dtype", "big"), TOO_LARGE, ids=[c[0] for c in TOO_LARGE]
)
def test_a_gradient_the_parameter_cannot_hold_raises(
    param_dtype: str, grad_dtype: str, big: float, name: str, jitted: bool
) -> None:
    """Converting a gradient to its parameter's dtype follows data safety:
    a value that would become inf raises, naming the gradient, the
    parameter and a fix, where optax goes on with -inf or NaN."""
    with tl.enable_x64(grad_dtype == "float64"):
        opt = OPTIMISERS[name]()
        params = {"layer": [tnp.ones(2, param_dtype)]}
        grads = {"layer": [tnp.asarray([big, 1.0], grad_dtype)]}
        step = tl.jit(_step(opt)) if jitted else _step(opt)
        state = opt.init(params)
        step(params, state, {"layer": [tnp.ones(2, grad_dtype)]})  # values that fit
        with pytest.raises(OverflowError) as err:
            step(params, state, grads)
    message = str(err.value)
    assert message.startswith(
        f"{name.split('_')[0]}'s update (grads['layer'][0] converted to the dtype "
        "of params['layer'][0]): value "
    )
    assert f"does not fit in {param_dtype} (it would become inf)" in message
    assert f"Fix: keep params['layer'][0] in {grad_dtype}" in message
    assert "scale the loss down" in message


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_an_update_the_parameter_cannot_hold_raises(jitted: bool) -> None:
    params = {"w": tnp.ones(2, "float16")}
    apply = tl.jit(optim.apply_updates) if jitted else optim.apply_updates
    with pytest.raises(
        OverflowError,
        match=r"apply_updates \(updates\['w'\] converted to the dtype of "
        r"params\['w'\]\): value -100000.0 does not fit in float16 .*Fix: keep "
        r"params\['w'\] in float32.*smaller learning rate",
    ):
        apply(params, {"w": tnp.asarray([-1e5, 1.0])})
    # Only the value that does not fit is refused: rounding is not.
    out = apply(params, {"w": tnp.asarray([-1000.0, 1e-9])})
    np.testing.assert_array_equal(np.asarray(out["w"]), np.float16([-999.0, 1.0]))


def test_gradients_that_round_are_not_refused() -> None:
    """65519 rounds to float16's largest value and 1e-9 to zero: rounding
    is what a conversion does, so neither raises."""
    params = tnp.zeros(2, "float16")
    opt = optim.sgd(1.0, momentum=0.5)
    _, state = opt.update(tnp.asarray([65519.0, 1e-9]), opt.init(params), params)
    np.testing.assert_array_equal(np.asarray(state.trace), np.float16([65504.0, 0]))


def test_a_schedule_value_the_parameter_cannot_hold_raises() -> None:
    params = tnp.ones(2, "float16")
    opt = optim.sgd(lambda count: 1e6 + count)
    with pytest.raises(
        OverflowError,
        match=r"sgd's update \(the learning rate schedule's value\): value "
        r"1000000.0 does not fit in float16",
    ):
        opt.update(tnp.ones(2, "float16"), opt.init(params), params)


# -- nothing given is changed -------------------------------------------------------


def _snapshot(value: Any) -> tuple[Any, list[int], list[Any]]:
    leaves, treedef = tree.flatten(value)
    return treedef, [id(x) for x in leaves], [np.array(x) for x in leaves]


def test_inputs_are_left_as_they_were() -> None:
    params = {"w": tnp.ones((2, 2)), "b": [tnp.zeros(2)]}
    grads = {"w": tnp.full((2, 2), 0.5, "bfloat16"), "b": [tnp.ones(2)]}
    for opt in (optim.sgd(0.1, momentum=0.9), optim.adamw(0.1)):
        state = opt.init(params)
        before = [_snapshot(x) for x in (params, grads, state)]
        updates, new_state = opt.update(grads, state, params)
        new_params = optim.apply_updates(params, updates)
        after = [_snapshot(x) for x in (params, grads, state)]
        for (t1, ids1, v1), (t2, ids2, v2) in zip(before, after, strict=True):
            assert t1 == t2 and ids1 == ids2
            for a, b in zip(v1, v2, strict=True):
                np.testing.assert_array_equal(a, b)
        assert new_state is not state and new_params is not params
        assert not np.array_equal(np.asarray(new_params["w"]), before[0][2][1])
