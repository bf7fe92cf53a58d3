"""typelattice.optax as a port of a Flax program uses it: the names, the
dtype rule of mixed precision in the new transformations, the errors for
bad hyperparameters and trees, and that nothing given is changed.
(Values against optax: test_optax_golden.py.)"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
import typelattice.optax as optax
from typelattice import optim
from typelattice._tracing import tree

# Every name of optax that Flax's examples (and their ported train steps)
# use, and the transformations and states they build on.
FLAX_NAMES = [
    "GradientTransformation",
    "OptState",
    "Params",
    "Updates",
    "EmptyState",
    "ScaleByAdamState",
    "TraceState",
    "MultiSteps",
    "adam",
    "adamw",
    "sgd",
    "add_decayed_weights",
    "chain",
    "apply_updates",
    "join_schedules",
    "linear_schedule",
    "cosine_decay_schedule",
    "softmax_cross_entropy",
    "softmax_cross_entropy_with_integer_labels",
    "sigmoid_binary_cross_entropy",
]


# Built as optax builds them, for optax's state structure (same updates).
AS_CHAINS = {"adam", "adamw", "sgd"}


@pytest.mark.parametrize("name", FLAX_NAMES)
def test_the_names_flax_examples_use_are_optims(name: str) -> None:
    if name in AS_CHAINS:
        assert callable(getattr(optax, name))
    else:
        assert getattr(optax, name) is getattr(optim, name)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_optax_adam_adamw_sgd_have_optaxs_states_and_optims_updates(
    dtype: str,
) -> None:
    p = {k: tnp.asarray(v, dtype) for k, v in PARAMS.items()}
    pairs = [
        (optax.adam(0.1), optim.adam(0.1), ["ScaleByAdamState", "EmptyState"]),
        (
            optax.adamw(0.1, weight_decay=0.01),
            optim.adamw(0.1, weight_decay=0.01),
            ["ScaleByAdamState", "EmptyState", "EmptyState"],
        ),
        (optax.sgd(0.1, 0.9), optim.sgd(0.1, 0.9), ["TraceState", "EmptyState"]),
    ]
    for chained, own, names in pairs:
        s1, s2 = chained.init(p), own.init(p)
        assert [type(s).__name__ for s in s1] == names
        for k in (1.0, -2.0):
            g = {key: tnp.asarray(v * k, dtype) for key, v in PARAMS.items()}
            u1, s1 = chained.update(g, s1, p)
            u2, s2 = own.update(g, s2, p)
            for key in p:
                assert u1[key].dtype == u2[key].dtype
                np.testing.assert_array_equal(np.asarray(u1[key]), np.asarray(u2[key]))


def test_optax_lists_what_optim_lists() -> None:
    assert sorted(optax.__all__) == sorted(optim.__all__)


PARAMS = {"b": np.array([0.5, -1.0]), "w": np.array([[1.0, 2.0], [-0.5, 0.25]])}


def params(dtype: str) -> dict[str, Any]:
    return {k: tnp.asarray(v, dtype) for k, v in PARAMS.items()}


def grads(dtype: str, k: float = 1.0) -> dict[str, Any]:
    return {k_: tnp.asarray(v * k + 0.1, dtype) for k_, v in PARAMS.items()}


STATEFUL = {
    "trace": lambda: optim.trace(0.9),
    "scale_by_adam": lambda: optim.scale_by_adam(),
    "scale_by_rms": lambda: optim.scale_by_rms(),
    "scale_by_stddev": lambda: optim.scale_by_stddev(),
    "scale_by_rss": lambda: optim.scale_by_rss(),
    "scale_by_lion": lambda: optim.scale_by_lion(),
    "ema": lambda: optim.ema(0.9),
    "rmsprop": lambda: optim.rmsprop(0.1, momentum=0.9),
    "adagrad": lambda: optim.adagrad(0.1),
    "lamb": lambda: optim.lamb(0.1),
    "lion": lambda: optim.lion(0.1),
    "adafactor": lambda: optim.adafactor(0.1, min_dim_size_to_factor=2),
}


def _float_leaves(state: Any) -> list[Any]:
    return [x for x in tree.leaves(state) if tl.isdtype(x.dtype, "real floating")]


@pytest.mark.parametrize("name", sorted(STATEFUL))
def test_state_keeps_the_parameters_dtype_with_narrower_gradients(name: str) -> None:
    # bfloat16 gradients of float32 parameters: accumulated in float32, and
    # the updates are float32 (as optax, whose promotion gives the same).
    opt = STATEFUL[name]()
    p = params("float32")
    state = opt.init(p)
    for _ in range(2):
        updates, state = opt.update(grads("bfloat16"), state, p)
    assert {u.dtype for u in tree.leaves(updates)} == {np.dtype("float32")}
    assert {s.dtype for s in _float_leaves(state)} == {np.dtype("float32")}
    # The float32 result is the one of float32 gradients of the same values.
    wide = {k: g.astype("float32") for k, g in grads("bfloat16").items()}
    state2 = opt.init(p)
    for _ in range(2):
        updates2, state2 = opt.update(wide, state2, p)
    for a, b in zip(tree.leaves(updates), tree.leaves(updates2), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("name", sorted(STATEFUL))
def test_state_keeps_a_16_bit_dtype_with_float32_gradients(name: str) -> None:
    # optax lets some states follow a float32 gradient up; here a state
    # keeps its parameter's dtype at every step (docs/optim.md).
    opt = STATEFUL[name]()
    p = params("bfloat16")
    state = opt.init(p)
    dtypes = [s.dtype for s in _float_leaves(state)]
    for _ in range(2):
        updates, state = opt.update(grads("float32"), state, p)
    assert [s.dtype for s in _float_leaves(state)] == dtypes
    new = optim.apply_updates(p, updates)
    assert {x.dtype for x in tree.leaves(new)} == {tl.canonicalize_dtype("bfloat16")}


def test_mu_dtype_and_accumulator_dtype_are_kept() -> None:
    p = params("float32")
    t = optim.scale_by_adam(mu_dtype="bfloat16")
    state = t.init(p)
    _, state = t.update(grads("float32"), state)
    assert {m.dtype for m in tree.leaves(state.mu)} == {
        tl.canonicalize_dtype("bfloat16")
    }
    assert {v.dtype for v in tree.leaves(state.nu)} == {np.dtype("float32")}
    t = optim.trace(0.5, accumulator_dtype="float16")
    updates, state = t.update(grads("float32"), t.init(p))
    assert {x.dtype for x in tree.leaves(state.trace)} == {np.dtype("float16")}
    assert {x.dtype for x in tree.leaves(updates)} == {np.dtype("float32")}


def test_state_overflow_raises_instead_of_inf() -> None:
    p = {"w": tnp.zeros(2, "float16")}
    t = optim.trace(0.9)
    with pytest.raises(OverflowError, match=r"trace.*float16"):
        t.update({"w": tnp.asarray([1e6, 1.0])}, t.init(p))


BAD_HYPERPARAMETERS = [
    (lambda: optim.scale(math.nan), "step_size = nan"),
    (lambda: optim.trace(1.5), "decay = 1.5"),
    (lambda: optim.scale_by_adam(b1=-0.1), "b1 = -0.1"),
    (lambda: optim.scale_by_adam(eps=math.inf), "eps = inf"),
    (lambda: optim.clip(-1.0), "max_delta = -1.0"),
    (lambda: optim.clip_by_global_norm(0.0), "max_norm = 0.0"),
    (lambda: optim.add_decayed_weights(-0.01), "weight_decay = -0.01"),
    (lambda: optim.rmsprop(0.1, decay=2.0), "decay = 2.0"),
    (lambda: optim.adam(math.inf), "learning_rate = inf"),
    (lambda: optim.lion(math.nan), "learning_rate = nan"),
    (lambda: optim.piecewise_constant_schedule(1.0, {3: -0.5}), "-0.5"),
    (lambda: optim.join_schedules([optim.constant_schedule(1.0)], [3]), "boundar"),
    (lambda: optim.MultiSteps(optim.sgd(0.1), 0), "every_k_schedule = 0"),
    (lambda: optim.apply_if_finite(optim.sgd(0.1), -1), "-1"),
    (lambda: optim.huber_loss(tnp.ones(1), delta=-1.0), "delta = -1.0"),
]


@pytest.mark.parametrize("make, words", BAD_HYPERPARAMETERS)
def test_bad_hyperparameters_raise_naming_the_value(make: Any, words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        make()


def test_tree_errors_name_the_structures() -> None:
    opt = optim.chain(optim.trace(0.9), optim.scale(-0.1))
    state = opt.init(params("float32"))
    with pytest.raises(ValueError, match="structure"):
        opt.update({"b": tnp.ones(2)}, state)
    with pytest.raises(ValueError, match="tuple of 2 states"):
        opt.update(grads("float32"), state[:1])
    with pytest.raises(TypeError, match="part 1"):
        optim.chain(optim.scale(1.0), 0.1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs the parameters"):
        optim.lamb(0.1).update(
            grads("float32"), optim.lamb(0.1).init(params("float32"))
        )
    with pytest.raises(ValueError, match=r"labels \['x'\] have no transformation"):
        optim.multi_transform({"a": optim.sgd(0.1)}, {"b": "a", "w": "x"}).init(
            params("float32")
        )
    with pytest.raises(TypeError, match=r"mask\['w'\] is 1"):
        optim.masked(optim.sgd(0.1), {"b": True, "w": 1}).init(params("float32"))
    with pytest.raises(TypeError, match="labels must be integers"):
        optim.softmax_cross_entropy_with_integer_labels(tnp.ones((2, 3)), tnp.ones(2))
    with pytest.raises(ValueError, match="labels have shape"):
        optim.softmax_cross_entropy_with_integer_labels(
            tnp.ones((2, 3)), tnp.zeros(3, "int32")
        )
    with pytest.raises(TypeError, match="real floating"):
        optim.l2_loss(tnp.ones(2, "int32"))


def test_masked_with_a_function_and_multi_transform_freezing() -> None:
    p = params("float32")
    opt = optim.masked(optim.scale(0.0), lambda tree_: {"b": True, "w": False})
    updates, _ = opt.update(grads("float32"), opt.init(p), p)
    assert float(tnp.abs(updates["b"]).max()) == 0.0
    np.testing.assert_array_equal(
        np.asarray(updates["w"]), np.asarray(grads("float32")["w"])
    )
    frozen = optim.multi_transform(
        {"train": optim.adam(0.1), "frozen": optim.set_to_zero()},
        lambda tree_: {"b": "frozen", "w": "train"},
    )
    state = frozen.init(p)
    for _ in range(2):
        updates, state = frozen.update(grads("float32"), state, p)
        p2 = optim.apply_updates(p, updates)
    np.testing.assert_array_equal(np.asarray(p2["b"]), np.asarray(p["b"]))
    assert not np.array_equal(np.asarray(p2["w"]), np.asarray(p["w"]))


def test_nothing_given_is_changed() -> None:
    p = params("float32")
    g = grads("float32")
    before = [np.array(x) for x in tree.leaves((p, g))]
    for make in STATEFUL.values():
        opt = make()
        state = opt.init(p)
        state_before = [np.array(x) for x in tree.leaves(state)]
        opt.update(g, state, p)
        for a, b in zip(tree.leaves(state), state_before, strict=True):
            np.testing.assert_array_equal(np.asarray(a), b)
    for a, b in zip(tree.leaves((p, g)), before, strict=True):
        np.testing.assert_array_equal(np.asarray(a), b)


def test_apply_if_finite_applies_after_too_many_non_finite_steps() -> None:
    opt = optim.apply_if_finite(optim.sgd(1.0), max_consecutive_errors=1)
    p = tnp.zeros(1)
    state = opt.init(p)
    bad = tnp.asarray([math.inf])
    u, state = opt.update(bad, state, p)
    assert float(u[0]) == 0.0
    u, state = opt.update(bad, state, p)  # the second in a row: applied
    assert float(u[0]) == -math.inf
    assert int(state.total_notfinite) == 2


def test_inject_hyperparams_changes_under_jit_without_retracing() -> None:
    opt = optim.inject_hyperparams(optim.adam)(learning_rate=0.1)
    p = params("float32")
    step = tl.jit(opt.update)
    state = opt.init(p)
    u1, state = step(grads("float32"), state, p)
    hp = dict(state.hyperparams, learning_rate=tnp.asarray(0.2, "float32"))
    u2, state = step(grads("float32"), state._replace(hyperparams=hp), p)
    assert step.cache_info().misses == 1
    ratio = np.asarray(u2["w"]) / np.asarray(u1["w"])
    assert np.all(np.abs(ratio - 2.0) < 0.1)


def test_a_ported_train_step_with_chain_under_jit() -> None:
    # A Flax-style step: clip, adamw with a warmup schedule joined to a
    # cosine decay, cross entropy on integer labels.
    schedule = optax.join_schedules(
        [optax.linear_schedule(0.0, 0.1, 5), optax.cosine_decay_schedule(0.1, 50)], [5]
    )
    tx = optax.chain(
        optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-4)
    )
    x = tnp.asarray(np.linspace(-1, 1, 12).reshape(4, 3), "float32")
    labels = tnp.asarray([0, 1, 2, 1])
    p = {"w": tnp.zeros((3, 3))}

    def loss(p: Any) -> Any:
        return optax.softmax_cross_entropy_with_integer_labels(
            x @ p["w"], labels
        ).mean()

    @tl.jit
    def step(p: Any, s: Any) -> Any:
        value, g = tl.value_and_grad(loss)(p)
        updates, s = tx.update(g, s, p)
        return optax.apply_updates(p, updates), s, value

    s = tx.init(p)
    first = None
    for _ in range(30):
        p, s, value = step(p, s)
        first = float(value) if first is None else first
    assert float(value) < first
    assert step.cache_info().misses == 1


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_adam_and_sgd_equal_their_chains(dtype: str) -> None:
    # optax builds them as chains; here they keep their own states, with
    # the chains' values exactly.
    pairs = [
        (optim.adam(0.1), optim.chain(optim.scale_by_adam(), optim.scale(-0.1))),
        (
            optim.adamw(0.1, weight_decay=0.01),
            optim.chain(
                optim.scale_by_adam(),
                optim.add_decayed_weights(0.01),
                optim.scale_by_learning_rate(0.1),
            ),
        ),
        (
            optim.sgd(0.1, momentum=0.9, nesterov=True),
            optim.chain(optim.trace(0.9, nesterov=True), optim.scale(-0.1)),
        ),
    ]
    p = params(dtype)
    for own, chained in pairs:
        s1, s2 = own.init(p), chained.init(p)
        for k in (1.0, -2.0, 0.5):
            u1, s1 = own.update(grads(dtype, k), s1, p)
            u2, s2 = chained.update(grads(dtype, k), s2, p)
            for a, b in zip(tree.leaves(u1), tree.leaves(u2), strict=True):
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_inject_hyperparams_checks_and_converts() -> None:
    with pytest.raises(ValueError, match="static_args"):
        optim.inject_hyperparams(optim.sgd, static_args="rate")
    # A float hyperparameter goes to the parameters' highest dtype, checked:
    # a learning rate float16 cannot hold raises instead of becoming inf.
    opt = optim.inject_hyperparams(optim.sgd)(learning_rate=1e6)
    with pytest.raises(OverflowError, match="float16"):
        opt.init({"w": tnp.zeros(2, "float16")})
    state = optim.inject_hyperparams(optim.sgd)(0.5).init(params("bfloat16"))
    assert state.hyperparams["learning_rate"].dtype == tl.canonicalize_dtype("bfloat16")
    fixed = optim.inject_hyperparams(optim.sgd, hyperparam_dtype="float32")(0.5)
    assert fixed.init(params("bfloat16")).hyperparams["learning_rate"].dtype == (
        np.dtype("float32")
    )


def test_multi_steps_sums_with_a_schedule_of_k() -> None:
    opt = optim.MultiSteps(
        optim.sgd(1.0), every_k_schedule=lambda step: 3, use_grad_mean=False
    )
    step = tl.jit(opt.update)
    state = opt.init(tnp.zeros(1))
    outs = []
    for g in (1.0, 2.0, 4.0, 1.0):
        u, state = step(tnp.asarray([g]), state)
        outs.append(float(u[0]))
    assert outs == [0.0, 0.0, -7.0, 0.0]
    assert int(state.gradient_step) == 1 and int(state.mini_step) == 1


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: optim.adam(0.1, b1=1.5), "b1 = 1.5"),
        (lambda: optim.adamw(0.1, b2=math.nan), "b2 = nan"),
        (lambda: optim.adam(0.1, eps=-1e-8), "eps = -1e-08"),
        (lambda: optim.adamw(0.1, weight_decay=-0.1), "weight_decay = -0.1"),
        (lambda: optim.sgd(0.1, momentum=math.inf), "momentum = inf"),
    ],
)
def test_sgd_and_adam_check_their_hyperparameters(make: Any, words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        make()


def test_vmap_of_where_with_an_unbatched_scalar_branch() -> None:
    # (What the optimisers' saturating count needs under vmap.)
    got = tl.vmap(lambda c: tnp.where(c < 3, c + 1, 3))(tnp.arange(5))
    np.testing.assert_array_equal(np.asarray(got), [1, 2, 3, 3, 3])
    which = tnp.asarray([True, False])
    got = tl.vmap(lambda w, c: tnp.where(w, c, 3.0), in_axes=(0, None))(
        which, tnp.asarray([1.0, 2.0])
    )
    np.testing.assert_array_equal(np.asarray(got), [[1.0, 2.0], [3.0, 3.0]])
