"""Benchmark typelattice against NumPy, JAX and torch: the one-path speed table.

Every row times typelattice and one reference library in the same run, each
on one thread, in interleaved best-of rounds (see ``_timing.py``), and
prints the ratio typelattice's time / the reference's time (below 1:
typelattice is faster), the target ratio, and PASS or MISS:

- eager ``lax.add(x, y)`` on 1K float32 against ``np.add``;
- eager ``x + 2`` on 1K float32 against NumPy and against torch;
- int32 + float32 on 10M elements (a float32 result) against NumPy's
  int32 + float32 (a float64 result);
- ``jit(sum(tanh(1.5 * x + 0.5) * x))`` on 1M float32 against NumPy and
  against ``jax.jit``;
- one training step of an MLP (64-256-256-10, ReLU, batch 256, softmax
  cross-entropy, Adam with learning rate 1e-3), the whole step jitted
  (``value_and_grad``, the optimiser's update), against ``jax.jit`` of the
  same step (Adam written out with optax's formulas) and against torch
  eager (autograd, ``torch.optim.Adam``);
- the eager gradient of the same MLP's loss against torch autograd;
- the first call of the jitted training step (trace, compile, run) against
  ``jax.jit``'s first call: a new function each time, best of a few, after
  one discarded first call on each side (so one-time library set-up is not
  counted); target: typelattice at least 4x faster;
- Flax's ResNet18 (its ImageNet example's model: BatchNorm in training
  mode, SGD with Nesterov momentum), one jitted training step on 8 images
  of 64x64, written once and run with ``flax.linen`` + ``jax.jit`` + optax
  and with ``typelattice.nn`` + ``typelattice.jit`` + ``typelattice.optim``
  from the same initial variables; Flax's WMT Transformer is not ported
  (listed as skipped).

Inputs are made once, outside the timed calls (NumPy arrays, typelattice
arrays, ``jax.numpy`` arrays, torch tensors sharing NumPy's memory); every
JAX call ends with ``block_until_ready``. Before anything is timed, each
row checks that both sides compute the same values (within float32
tolerances; the MLP rows: the loss, the gradients or the parameters after
one step from the same initial parameters). A row whose results disagree
prints WRONG and makes the exit status 1; a missed target does not change
the exit status (it is a report, not a test). A row whose reference library
is not installed is skipped with a note: JAX, torch, Flax and optax are
optional (``pip install -e '.[bench]'``).

One thread each: the script sets ``OPENBLAS_NUM_THREADS``,
``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` and ``XLA_FLAGS`` (single-threaded
XLA CPU) at its top, before NumPy, JAX or torch is imported, since they read
them only when they load; torch gets ``torch.set_num_threads(1)``. A value
already set in the environment for ``OPENBLAS_NUM_THREADS`` and the others
is overridden; ``XLA_FLAGS`` is extended. XLA's CPU runtime does not keep to
one thread for all that, so on Linux the script also holds its process on
one core (``os.sched_setaffinity``), before anything starts a thread: JAX's
thread pool then shares that core, and every side gets one core's time.

Run it with the interpreter that has typelattice installed; words after
the script's name choose the rows whose case or reference contains one::

    python benchmarks/bench_one_path.py
    python benchmarks/bench_one_path.py ResNet18 "first call"
"""

from __future__ import annotations

import os

# Before any library that starts threads is imported (they read these once).
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
).strip()
# XLA's CPU runtime still runs a dot on a pool of one thread per core (JAX
# 0.10 measured: twice the CPU time of the wall time), whatever the flags
# say; a process held on one core gives every thread it starts that core.
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})

import gc
import platform
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from _timing import best_seconds
from typelattice import _promotion, lax, nn, optim, random

ROUNDS = 9
ROUND_SECONDS = 0.05
CALIBRATION_SECONDS = 0.02
FIRST_CALLS = 3  # fresh functions per side for the first-call row

BATCH, FEATURES, HIDDEN, CLASSES = 256, 64, 256, 10
LEARNING_RATE = 1e-3


def _load(name: str) -> Any:
    """The module ``name``, or None when it is not installed."""
    try:
        return __import__(name)
    except ImportError:
        return None


jax = _load("jax")
torch = _load("torch")
if torch is not None:
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)


class Skip(Exception):
    """A row that cannot run here; the message says why."""


class Case(NamedTuple):
    """What a row times and how it checks that both sides agree."""

    ours: Callable[[], Any]
    theirs: Callable[[], Any]
    check: Callable[[], None]
    once: bool = False  # time single calls of fresh functions (first calls)


def _numpy(value: Any) -> Any:
    """A NumPy array of a typelattice, JAX or torch value."""
    if hasattr(value, "detach"):
        return value.detach().numpy()
    return np.asarray(value)


def _same(
    ours: Any, theirs: Any, *, rtol: float, atol: float, dtype: bool = True
) -> None:
    """Raise AssertionError unless the flat lists ``ours`` and ``theirs``
    hold the same values (and, with ``dtype``, the same dtypes)."""
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    for a, b in zip(ours, theirs, strict=True):
        a, b = _numpy(a), _numpy(b)
        if dtype:
            assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _compare(ours: Callable[[], Any], theirs: Callable[[], Any], **tol: Any) -> Any:
    """A check that calls both sides and compares their (flat) results."""

    def check() -> None:
        _same(_flat(ours()), _flat(theirs()), **tol)

    return check


def _flat(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _need(module: Any, name: str) -> Any:
    if module is None:
        raise Skip(f"skipped: {name} not installed")
    return module


# -- data -----------------------------------------------------------------------

RNG = np.random.default_rng(0)
X1K = RNG.standard_normal(1024, dtype=np.float32)
Y1K = RNG.standard_normal(1024, dtype=np.float32)
I10M = RNG.integers(-1000, 1000, 10_000_000, dtype=np.int32)
F10M = RNG.standard_normal(10_000_000, dtype=np.float32)
X1M = RNG.standard_normal(1_000_000, dtype=np.float32)
MLP_X = RNG.standard_normal((BATCH, FEATURES), dtype=np.float32)
MLP_LABELS = RNG.integers(0, CLASSES, BATCH)
MLP_Y = np.eye(CLASSES, dtype=np.float32)[MLP_LABELS]
LAYERS = ("Dense_0", "Dense_1", "Dense_2")


# -- elementwise rows ------------------------------------------------------------


def lax_add() -> Case:
    x, y = tnp.asarray(X1K), tnp.asarray(Y1K)

    def ours() -> Any:
        return lax.add(x, y)

    def theirs() -> Any:
        return np.add(X1K, Y1K)

    return Case(ours, theirs, _compare(ours, theirs, rtol=0, atol=0))


def add_scalar_numpy() -> Case:
    x = tnp.asarray(X1K)

    def ours() -> Any:
        return x + 2

    def theirs() -> Any:
        return X1K + 2

    return Case(ours, theirs, _compare(ours, theirs, rtol=0, atol=0))


def add_scalar_torch() -> Case:
    _need(torch, "torch")
    x, xt = tnp.asarray(X1K), torch.from_numpy(X1K)

    def ours() -> Any:
        return x + 2

    def theirs() -> Any:
        return xt + 2

    return Case(ours, theirs, _compare(ours, theirs, rtol=0, atol=0))


def int_plus_float() -> Case:
    i, f = tnp.asarray(I10M), tnp.asarray(F10M)

    def ours() -> Any:
        return i + f

    def theirs() -> Any:
        return I10M + F10M

    def check() -> None:
        got, want = ours(), theirs()
        assert got.dtype == np.float32 and want.dtype == np.float64
        # float32 sums of float32 values (exact below 2**24) and their
        # float64 sums differ by the last rounding only.
        _same([got], [want], rtol=1.2e-7, atol=0, dtype=False)

    return Case(ours, theirs, check)


# -- the jitted reduction ----------------------------------------------------------

# float32 tanh and a sum of 1M terms in different orders: a few ulps each.
REDUCTION_TOLERANCE = {"rtol": 1e-4, "atol": 0.0}


def _reduction(xnp: Any, x: Any) -> Any:
    return xnp.sum(xnp.tanh(1.5 * x + 0.5) * x)


def _jit_reduction() -> Callable[[], Any]:
    jitted = tl.jit(lambda x: _reduction(tnp, x))
    x = tnp.asarray(X1M)
    return lambda: jitted(x)


def reduction_numpy() -> Case:
    ours = _jit_reduction()

    def theirs() -> Any:
        return np.sum(np.tanh(np.float32(1.5) * X1M + np.float32(0.5)) * X1M)

    return Case(ours, theirs, _compare(ours, theirs, **REDUCTION_TOLERANCE))


def reduction_jax() -> Case:
    _need(jax, "jax")
    ours = _jit_reduction()
    jitted = jax.jit(lambda x: _reduction(jax.numpy, x))
    x = jax.numpy.asarray(X1M)

    def theirs() -> Any:
        return jitted(x).block_until_ready()

    return Case(ours, theirs, _compare(ours, theirs, **REDUCTION_TOLERANCE))


# -- the MLP ------------------------------------------------------------------------


class MLP(nn.Module):
    """64 -> 256 -> 256 -> 10, ReLU."""

    @nn.compact
    def __call__(self, x: Any) -> Any:
        x = nn.relu(nn.Dense(HIDDEN)(x))
        x = nn.relu(nn.Dense(HIDDEN)(x))
        return nn.Dense(CLASSES)(x)


MODEL = MLP()
X_TL, Y_TL = tnp.asarray(MLP_X), tnp.asarray(MLP_Y)
PARAMS = MODEL.init(random.key(0), X_TL)["params"]
PARAMS_NP = {
    layer: {k: np.asarray(v) for k, v in PARAMS[layer].items()} for layer in LAYERS
}


def _loss(params: Any) -> Any:
    """Mean softmax cross-entropy on the one-hot labels."""
    logp = nn.log_softmax(MODEL.apply({"params": params}, X_TL))
    return -tnp.sum(Y_TL * logp) / BATCH


def _leaves(params: Any) -> list[Any]:
    """The parameters in one order for every library (kernel as in x @ W)."""
    return [params[layer][k] for layer in LAYERS for k in ("kernel", "bias")]


def _make_step() -> Callable[[Any, Any], Any]:
    """A new jitted training step (a new function: nothing of it is cached)."""
    opt = optim.adam(LEARNING_RATE)

    @tl.jit
    def step(params: Any, state: Any) -> Any:
        loss, grads = tl.value_and_grad(_loss)(params)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, loss

    return step


def _ours_step() -> Callable[[], list[Any]]:
    """The training step's call, returning the loss and the new parameters."""
    step = _make_step()
    state = optim.adam(LEARNING_RATE).init(PARAMS)

    def ours() -> list[Any]:
        params, _, loss = step(PARAMS, state)
        return [loss, *_leaves(params)]

    return ours


# After one Adam step from the same parameters, each parameter moved by
# about the learning rate times the sign of its gradient; gradients that
# differ by rounding move it alike, except where they are within rounding
# of zero (the update then depends on the gradient's size against eps).
STEP_TOLERANCE = {"rtol": 1e-4, "atol": LEARNING_RATE * 1e-2}


def _jax_mlp() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The MLP's loss and a jitted Adam step (optax's formulas) in JAX."""
    jnp = jax.numpy
    b1, b2, eps = 0.9, 0.999, 1e-8

    def loss(params: Any, x: Any, y: Any) -> Any:
        h = x
        for layer in LAYERS:
            h = h @ params[layer]["kernel"] + params[layer]["bias"]
            if layer != LAYERS[-1]:
                h = jax.nn.relu(h)
        return -jnp.sum(y * jax.nn.log_softmax(h)) / BATCH

    def make_step() -> Callable[..., Any]:
        @jax.jit
        def step(params: Any, state: Any, x: Any, y: Any) -> Any:
            mu, nu, count = state
            value, grads = jax.value_and_grad(loss)(params, x, y)
            tree_map = jax.tree_util.tree_map
            mu = tree_map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
            nu = tree_map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
            count = count + 1
            c1 = 1 - b1 ** count.astype(jnp.float32)
            c2 = 1 - b2 ** count.astype(jnp.float32)
            params = tree_map(
                lambda p, m, v: (
                    p - LEARNING_RATE * ((m / c1) / (jnp.sqrt(v / c2) + eps))
                ),
                params,
                mu,
                nu,
            )
            return params, (mu, nu, count), value

        return step

    return loss, make_step


def _jax_inputs() -> tuple[Any, Any, Any, Any]:
    jnp = jax.numpy
    params = jax.tree_util.tree_map(jnp.asarray, PARAMS_NP)
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = (zeros, zeros, jnp.zeros((), jnp.int32))
    return params, state, jnp.asarray(MLP_X), jnp.asarray(MLP_Y)


def mlp_step_jax() -> Case:
    _need(jax, "jax")
    ours = _ours_step()
    step = _jax_mlp()[1]()
    args = _jax_inputs()

    def theirs() -> list[Any]:
        params, _, loss = jax.block_until_ready(step(*args))
        return [loss, *_leaves(params)]

    return Case(ours, theirs, _compare(ours, theirs, **STEP_TOLERANCE))


def _torch_mlp() -> tuple[Any, list[Any]]:
    """The MLP in torch with PARAMS' values, and its parameters in
    _leaves' order."""
    layers: list[Any] = []
    for layer in LAYERS:
        kernel = PARAMS_NP[layer]["kernel"]
        linear = torch.nn.Linear(*kernel.shape)
        with torch.no_grad():
            linear.weight.copy_(torch.tensor(kernel.T))
            linear.bias.copy_(torch.tensor(PARAMS_NP[layer]["bias"]))
        layers += [linear, torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    ordered = [p for linear in layers[::2] for p in (linear.weight, linear.bias)]
    return model, ordered


def _torch_as_ours(values: list[Any]) -> list[Any]:
    """Torch's weights (out, in) as kernels (in, out)."""
    return [v.T if v.ndim == 2 else v for v in values]


def mlp_step_torch() -> Case:
    _need(torch, "torch")
    ours = _ours_step()
    x, labels = torch.from_numpy(MLP_X), torch.from_numpy(MLP_LABELS)

    def make() -> Callable[[], Any]:
        model, ordered = _torch_mlp()
        opt = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)

        def step() -> Any:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), labels)
            loss.backward()
            opt.step()
            return [loss, *_torch_as_ours(ordered)]

        return step

    def check() -> None:
        # One step from PARAMS on both sides (the timed torch model trains on).
        _same(ours(), make()(), **STEP_TOLERANCE)

    return Case(ours, make(), check)


def mlp_grad_torch() -> Case:
    _need(torch, "torch")
    grad = tl.grad(_loss)
    model, ordered = _torch_mlp()
    x, labels = torch.from_numpy(MLP_X), torch.from_numpy(MLP_LABELS)

    def ours() -> list[Any]:
        return _leaves(grad(PARAMS))

    def theirs() -> list[Any]:
        loss = torch.nn.functional.cross_entropy(model(x), labels)
        return _torch_as_ours(list(torch.autograd.grad(loss, ordered)))

    return Case(ours, theirs, _compare(ours, theirs, rtol=1e-4, atol=1e-6))


def first_call_jax() -> Case:
    _need(jax, "jax")
    state = optim.adam(LEARNING_RATE).init(PARAMS)
    make_jax = _jax_mlp()[1]
    args = _jax_inputs()

    def ours() -> list[Any]:
        params, _, loss = _make_step()(PARAMS, state)
        return [loss, *_leaves(params)]

    def theirs() -> list[Any]:
        params, _, loss = jax.block_until_ready(make_jax()(*args))
        return [loss, *_leaves(params)]

    return Case(ours, theirs, _compare(ours, theirs, **STEP_TOLERANCE), once=True)


# -- Flax's ResNet18 -------------------------------------------------------------

RESNET_BATCH, RESNET_SIZE = 8, 64  # 8 RGB images of 64x64, 10 classes
RESNET_X = RNG.standard_normal((RESNET_BATCH, RESNET_SIZE, RESNET_SIZE, 3)).astype(
    np.float32
)
RESNET_Y = np.eye(CLASSES, dtype=np.float32)[RNG.integers(0, CLASSES, RESNET_BATCH)]


def _resnet18(lib: Any, xnp: Any, max_pool: Callable[[Any], Any]) -> Any:
    """Flax's ResNet18 (its ImageNet example's ``ResNet`` with
    ``stage_sizes=[2, 2, 2, 2]`` and ``ResNetBlock``, in training mode),
    written once for ``lib`` = ``flax.linen`` or ``typelattice.nn`` with
    ``xnp`` = their NumPy namespace; ``max_pool`` is the 3x3, stride 2,
    'SAME' max pool."""

    class ResNetBlock(lib.Module):
        filters: int
        strides: tuple[int, int] = (1, 1)

        @lib.compact
        def __call__(self, x: Any) -> Any:
            def norm(**kwargs: Any) -> Any:
                return lib.BatchNorm(
                    use_running_average=False, momentum=0.9, epsilon=1e-5, **kwargs
                )

            residual = x
            y = lib.Conv(self.filters, (3, 3), self.strides, use_bias=False)(x)
            y = lib.relu(norm()(y))
            y = lib.Conv(self.filters, (3, 3), use_bias=False)(y)
            y = norm(scale_init=lib.initializers.zeros)(y)
            if residual.shape != y.shape:
                residual = lib.Conv(
                    self.filters, (1, 1), self.strides, use_bias=False, name="conv_proj"
                )(residual)
                residual = norm(name="norm_proj")(residual)
            return lib.relu(residual + y)

    class ResNet18(lib.Module):
        @lib.compact
        def __call__(self, x: Any) -> Any:
            x = lib.Conv(
                64, (7, 7), (2, 2), [(3, 3), (3, 3)], use_bias=False, name="conv_init"
            )(x)
            x = lib.BatchNorm(
                use_running_average=False, momentum=0.9, epsilon=1e-5, name="bn_init"
            )(x)
            x = max_pool(lib.relu(x))
            for i, block_size in enumerate((2, 2, 2, 2)):
                for j in range(block_size):
                    strides = (2, 2) if i > 0 and j == 0 else (1, 1)
                    x = ResNetBlock(64 * 2**i, strides=strides)(x)
            x = xnp.mean(x, axis=(1, 2))
            return lib.Dense(CLASSES)(x)

    return ResNet18()


def _tl_max_pool(x: Any) -> Any:
    """3x3 windows, stride 2, 'SAME' (as flax.linen.max_pool): the input
    padded with -inf, the maximum of the nine strided views."""
    n, h, w, c = x.shape
    oh, ow = -(-h // 2), -(-w // 2)
    pads = [(0, 0, 0)] + [
        (p // 2, p - p // 2, 0) for p in (2 * oh + 1 - h, 2 * ow + 1 - w)
    ]
    x = lax.pad(x, -np.inf, pads + [(0, 0, 0)])
    views = [
        x[:, i : i + 2 * oh : 2, j : j + 2 * ow : 2, :]
        for i in range(3)
        for j in range(3)
    ]
    out = views[0]
    for view in views[1:]:
        out = tnp.maximum(out, view)
    return out


def _resnet_step(
    model: Any, lib: Any, xnp: Any, api: Any, opt: Any, apply_updates: Any
) -> Any:
    """A jitted training step of ``model`` (softmax cross-entropy, SGD with
    Nesterov momentum as Flax's ImageNet example): ``(params, batch_stats,
    opt_state, x, y) -> (params, batch_stats, opt_state, loss)``."""

    def loss(params: Any, stats: Any, x: Any, y: Any) -> Any:
        logits, updates = model.apply(
            {"params": params, "batch_stats": stats}, x, mutable=["batch_stats"]
        )
        value = -xnp.sum(y * lib.log_softmax(logits)) / RESNET_BATCH
        return value, updates["batch_stats"]

    @api.jit
    def step(params: Any, stats: Any, state: Any, x: Any, y: Any) -> Any:
        grad_fn = api.value_and_grad(loss, has_aux=True)
        (value, stats), grads = grad_fn(params, stats, x, y)
        updates, state = opt.update(grads, state, params)
        return apply_updates(params, updates), stats, state, value

    return step


def _tree_leaves(tree: Any) -> list[Any]:
    """The leaves of nested dicts, by sorted keys (the same order for Flax's
    variables and typelattice.nn's, whose names agree)."""
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in _tree_leaves(tree[k])]
    return [tree]


def _tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: _tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def resnet18_jax() -> Case:
    _need(jax, "jax")
    _need(_load("flax"), "flax")
    optax = _need(_load("optax"), "optax")
    import flax.linen as linen

    jnp = jax.numpy

    def flax_pool(x: Any) -> Any:
        return linen.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")

    flax_model = _resnet18(linen, jnp, flax_pool)
    variables = flax_model.init(jax.random.key(0), jnp.asarray(RESNET_X))
    theirs_step = _resnet_step(
        flax_model,
        linen,
        jnp,
        jax,
        optax.sgd(0.1, momentum=0.9, nesterov=True),
        optax.apply_updates,
    )
    theirs_args = (
        variables["params"],
        variables["batch_stats"],
        optax.sgd(0.1, momentum=0.9, nesterov=True).init(variables["params"]),
        jnp.asarray(RESNET_X),
        jnp.asarray(RESNET_Y),
    )

    # typelattice.nn's model, started from Flax's variables (copied).
    tl_model = _resnet18(nn, tnp, _tl_max_pool)
    tl_init = tl_model.init(random.key(0), tnp.asarray(RESNET_X))
    for name in ("params", "batch_stats"):
        shapes = [np.shape(v) for v in _tree_leaves(tl_init[name])]
        assert shapes == [np.shape(v) for v in _tree_leaves(variables[name])]
    copied = _tree_map(lambda v: tnp.asarray(np.array(v)), dict(variables))
    opt = optim.sgd(0.1, momentum=0.9, nesterov=True)
    ours_step = _resnet_step(tl_model, nn, tnp, tl, opt, optim.apply_updates)
    ours_args = (
        copied["params"],
        copied["batch_stats"],
        opt.init(copied["params"]),
        tnp.asarray(RESNET_X),
        tnp.asarray(RESNET_Y),
    )

    def ours() -> list[Any]:
        params, stats, _, loss = ours_step(*ours_args)
        return [loss, *_tree_leaves(stats), *_tree_leaves(params)]

    def theirs() -> list[Any]:
        params, stats, _, loss = jax.block_until_ready(theirs_step(*theirs_args))
        return [loss, *_tree_leaves(stats), *_tree_leaves(params)]

    # Convolutions summed in other orders, through 18 layers and their
    # batch normalisations: float32 agreement to about 1e-5 relative.
    return Case(ours, theirs, _compare(ours, theirs, rtol=1e-3, atol=1e-5))


def wmt_row() -> Case:
    _need(_load("flax"), "flax")
    raise Skip("skipped: Flax's WMT Transformer is not ported to typelattice.nn")


# -- the table ------------------------------------------------------------------

# (case, reference, target ratio of times, the row)
ROWS: list[tuple[str, str, float, Callable[[], Case]]] = [
    ("eager lax.add(x, y), 1K float32", "np.add", 1.5, lax_add),
    ("eager x + 2, 1K float32", "NumPy", 1.3, add_scalar_numpy),
    ("eager x + 2, 1K float32", "torch", 1.0, add_scalar_torch),
    ("int32 + float32, 10M", "NumPy (float64)", 0.6, int_plus_float),
    ("jit(sum(tanh(1.5x + 0.5) * x)), 1M f32", "NumPy", 1.0, reduction_numpy),
    ("jit(sum(tanh(1.5x + 0.5) * x)), 1M f32", "jax.jit", 1.0, reduction_jax),
    ("MLP step, jit(value_and_grad) + Adam", "jax.jit", 1.0, mlp_step_jax),
    ("MLP step, jit(value_and_grad) + Adam", "torch eager", 1.0, mlp_step_torch),
    ("eager grad of the MLP", "torch autograd", 0.8, mlp_grad_torch),
    ("first call of the jitted MLP step", "jax.jit", 0.25, first_call_jax),
    ("Flax ResNet18 jitted step", "JAX", 1.2, resnet18_jax),
    ("Flax WMT Transformer jitted step", "JAX", 1.2, wmt_row),
]


def _first_call_seconds(fn: Callable[[], Any]) -> float:
    """Best of FIRST_CALLS first calls of fresh functions (fn makes one and
    calls it), after one discarded call."""
    fn()
    best = float("inf")
    for _ in range(FIRST_CALLS):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def measure(case: Case) -> tuple[float, float]:
    """Seconds per call of each side."""
    if case.once:
        ours = theirs = float("inf")
        for _ in range(2):  # alternate the sides, keep each one's best
            ours = min(ours, _first_call_seconds(case.ours))
            theirs = min(theirs, _first_call_seconds(case.theirs))
        return ours, theirs
    best = best_seconds(
        {"ours": timeit.Timer(case.ours), "theirs": timeit.Timer(case.theirs)},
        warmup=3,
        rounds=ROUNDS,
        round_seconds=ROUND_SECONDS,
        calibration_seconds=CALIBRATION_SECONDS,
    )
    return best["ours"], best["theirs"]


def _seconds(s: float) -> str:
    if s >= 1.0:
        return f"{s:7.2f} s "
    if s >= 1e-3:
        return f"{s * 1e3:7.2f} ms"
    return f"{s * 1e6:7.2f} us"


def main(words: list[str]) -> int:
    """Run the rows whose case or reference contains one of ``words`` (all
    rows when there are none); 1 when a row's results disagree, else 0."""
    words = words or [""]
    versions = [f"Python {sys.version.split()[0]}", f"NumPy {np.__version__}"]
    for name, module in (("JAX", jax), ("torch", torch)):
        versions.append(f"{name} {module.__version__}" if module else f"no {name}")
    print(", ".join(versions) + f", {platform.machine()}, one thread each")
    print(f"typelattice's fast path: {_promotion.SPEEDUPS}")
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(
        f"{'case':40s} {'vs':16s} {'typelattice':>11s} {'reference':>11s} "
        f"{'ratio':>6s} {'target':>7s}"
    )
    wrong = False
    for case_name, reference, target, row in ROWS:
        head = f"{case_name:40s} {reference:16s}"
        if not any(w.lower() in head.lower() for w in words):
            continue
        try:
            case = row()
        except Skip as skip:
            print(f"{head} {skip}")
            continue
        try:
            case.check()
        except AssertionError as error:
            wrong = True
            print(f"{head} WRONG: the results differ: {str(error).strip()[:400]}")
            continue
        ours, theirs = measure(case)
        ratio = ours / theirs
        verdict = "PASS" if ratio <= target else "MISS"
        print(
            f"{head} {_seconds(ours):>11s} {_seconds(theirs):>11s} "
            f"{ratio:5.2f}x {'<=':>3s}{target:4.2f} {verdict}",
            flush=True,
        )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print(
        "ratio: typelattice's time / the reference's (best of interleaved "
        "rounds); below 1, typelattice is faster"
    )
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
