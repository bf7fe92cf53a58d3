"""One driver per Flax example: its own model and training step, on
synthetic inputs, for a few steps.

A driver takes the example's loaded modules (:mod:`_harness`), the library
(real JAX/Flax/optax for the recording, typelattice for the test), a compute
dtype, a flag for ``jit`` (False runs the steps with ``disable_jit``), and
optionally the initial parameters recorded from the Flax run (the leaves in
flattening order), which replace the freshly initialised ones so that both
runs start equal. It mirrors the example's ``train_and_evaluate`` (the same
calls, smaller configs) and returns a record: the loss of each step and the
dtypes of the parameters, the gradients (seen by the optimiser), the
optimiser state and the step's outputs.

Dropout rates are 0 in the configs: random bits are not the same in
typelattice as in JAX, so only examples whose steps draw no random numbers
can compare losses. ``RANDOM_IN_STEP`` lists those whose step samples
anyway (their losses are recorded, their dtypes compared).
"""

from __future__ import annotations

import contextlib
import functools
import random as pyrandom
import types
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

#: Examples whose training step samples random numbers whatever the config.
RANDOM_IN_STEP = frozenset({"vae", "seq2seq"})

EXAMPLES = ("vae", "seq2seq", "sst2", "ppo", "imagenet", "wmt", "lm1b", "nlp_seq")
#: The compute dtypes each example's config offers.
DTYPES: dict[str, tuple[str, ...]] = {
    "vae": ("float32",),
    "seq2seq": ("float32",),
    "sst2": ("float32",),
    "ppo": ("float32",),
    "imagenet": ("float32", "bfloat16"),
    "wmt": ("float32", "bfloat16"),
    "lm1b": ("float32", "bfloat16"),
    "nlp_seq": ("float32",),
}
#: Example modules replaced by stand-ins (they read datasets with TF).
STUBBED: dict[str, tuple[str, ...]] = {
    "vae": ("input_pipeline",),
    "seq2seq": (),
    "sst2": ("input_pipeline",),
    "ppo": ("env_utils", "test_episodes"),
    "imagenet": ("input_pipeline",),
    "wmt": ("input_pipeline", "decode", "bleu"),
    "lm1b": ("input_pipeline", "temperature_sampler"),
    "nlp_seq": ("input_pipeline",),
}
STEPS = 3


def dtype_tree(tree: Any, prefix: str = "") -> dict[str, str]:
    """``{path: dtype name}`` of a tree's array leaves, built the same way
    for both libraries (dict keys sorted, sequence and named-tuple fields)."""
    out: dict[str, str] = {}
    if tree is None:
        return out
    if isinstance(tree, Mapping):
        for k in sorted(tree, key=str):
            out.update(dtype_tree(tree[k], f"{prefix}/{k}"))
    elif isinstance(tree, tuple) and hasattr(tree, "_fields"):
        for name in tree._fields:
            out.update(dtype_tree(getattr(tree, name), f"{prefix}/{name}"))
    elif isinstance(tree, list | tuple):
        for i, v in enumerate(tree):
            out.update(dtype_tree(v, f"{prefix}/{i}"))
    elif hasattr(tree, "dtype"):
        out[prefix or "/"] = str(tree.dtype)
    elif hasattr(tree, "__dataclass_fields__"):
        for name in tree.__dataclass_fields__:
            out.update(dtype_tree(getattr(tree, name), f"{prefix}/{name}"))
    else:
        out[prefix or "/"] = type(tree).__name__
    return out


class Run:
    """The state a driver shares with its helpers: the library, the record."""

    def __init__(self, lib: Any, dtype: str, jit: bool, saved: list[np.ndarray] | None):
        self.lib = lib
        self.jnp = lib.jnp
        self.dtype = getattr(lib.jnp, dtype)
        self.jit = jit
        self.saved = saved
        self.record: dict[str, Any] = {"losses": [], "dtypes": {}}
        self.initial: list[np.ndarray] = []

    def context(self) -> Any:
        return contextlib.nullcontext() if self.jit else self.lib.jax.disable_jit()

    def spy(self, tx: Any) -> Any:
        """``tx`` that writes the dtypes of the gradients it is given."""
        optax = self.lib.optax

        def update(updates: Any, state: Any, params: Any = None, **kw: Any) -> Any:
            self.record["dtypes"]["grads"] = dtype_tree(updates)
            return tx.update(updates, state, params, **kw)

        return optax.GradientTransformation(tx.init, update)

    def start(self, tree: Any) -> Any:
        """The initial parameters (or variables): recorded, then replaced by
        the saved ones if there are any."""
        tu = self.lib.tree_util
        leaves, treedef = tu.tree_flatten(tree)
        self.record["dtypes"]["init"] = dtype_tree(tree)
        self.initial = [np.asarray(x) for x in leaves]
        if self.saved is None:
            return tree
        if [a.shape for a in self.saved] != [x.shape for x in self.initial]:
            raise AssertionError("the saved parameters have other shapes")
        new = [self.jnp.asarray(a) for a in self.saved]
        return tu.tree_unflatten(treedef, new)

    def loss(self, value: Any) -> None:
        self.record["losses"].append(float(np.asarray(value, dtype=np.float64)))

    def finish(self, state: Any, outputs: Any) -> dict[str, Any]:
        d = self.record["dtypes"]
        d["params"] = dtype_tree(state.params)
        d["opt_state"] = dtype_tree(state.opt_state)
        d["outputs"] = dtype_tree(outputs)
        return self.record


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def vae(ex: Any, run: Run) -> dict[str, Any]:
    jax, jnp, random = run.lib.jax, run.jnp, run.lib.random
    models, train = ex.load("models"), ex.load("train")
    ts = run.lib.load("flax.training.train_state")
    latents, batch_size = 4, 8
    rng = random.key(0)
    rng, key = random.split(rng)
    init_data = jnp.ones((batch_size, 784), jnp.float32)
    params = models.model(latents).init(key, init_data, rng)["params"]
    params = run.start(params)
    state = ts.TrainState.create(
        apply_fn=models.model(latents).apply,
        params=params,
        tx=run.spy(run.lib.optax.adam(1e-3)),
    )
    rng, z_key, eval_rng = random.split(rng, 3)
    z = random.normal(z_key, (4, latents))
    data = _rng().integers(0, 2, (STEPS, batch_size, 784)).astype(np.float32)
    step = jax.jit(train.train_step, static_argnums=3) if run.jit else train.train_step
    metrics: Any = None
    with run.context():
        for i in range(STEPS):
            rng, key = random.split(rng)
            state = step(state, jnp.asarray(data[i]), key, latents)
            metrics, _, _ = train.eval_f(
                state.params, jnp.asarray(data[0]), z, eval_rng, latents
            )
            run.loss(metrics["loss"])
    return run.finish(state, metrics)


def seq2seq(ex: Any, run: Run) -> dict[str, Any]:
    jax = run.lib.jax
    ip, train = ex.load("input_pipeline"), ex.load("train")
    pyrandom.seed(0)
    ctable = ip.CharacterTable("0123456789+= ")
    train.FLAGS.hidden_size = 16
    model = train.get_model(ctable)
    rng = jax.random.key(0)
    params = run.start(train.get_initial_params(model, rng, ctable))
    ts = run.lib.load("flax.training.train_state")
    state = ts.TrainState.create(
        apply_fn=model.apply, params=params, tx=run.spy(run.lib.optax.adam(0.003))
    )
    batches = [ctable.get_batch(8) for _ in range(STEPS)]
    metrics: Any = None
    with run.context():
        for batch in batches:
            state, metrics = train.train_step(state, batch, rng, ctable.eos_id)
            run.loss(metrics["loss"])
    return run.finish(state, metrics)


def _sst2_batch(n: int, vocab: int, length: int) -> dict[str, np.ndarray]:
    g = _rng()
    return {
        "token_ids": g.integers(2, vocab, (n, length)).astype(np.int32),
        "length": g.integers(1, length + 1, (n,)).astype(np.int32),
        "label": g.integers(0, 2, (n,)).astype(np.int32),
    }


def sst2(ex: Any, run: Run) -> dict[str, Any]:
    jax = run.lib.jax
    train = ex.load("train")
    config = types.SimpleNamespace(
        embedding_size=8, hidden_size=8, vocab_size=20, output_size=1,
        dropout_rate=0.0, word_dropout_rate=0.0, unk_idx=1,
        learning_rate=0.1, momentum=0.9, weight_decay=3e-6,
    )  # fmt: skip
    model = train.model_from_config(config)
    rng = jax.random.key(0)
    state = train.create_train_state(rng, config, model)
    state = state.replace(params=run.start(state.params), tx=run.spy(state.tx))
    step = jax.jit(train.train_step)
    rng, epoch_rng = jax.random.split(rng)
    metrics: Any = None
    with run.context():
        for i in range(STEPS):
            batch = {k: jax.numpy.asarray(v[i * 4 : i * 4 + 4])
                     for k, v in _sst2_batch(4 * STEPS, 20, 6).items()}  # fmt: skip
            state, metrics = step(state, batch, {"dropout": epoch_rng})
            run.loss(metrics.loss / metrics.count)
    return run.finish(state, metrics)


def ppo(ex: Any, run: Run) -> dict[str, Any]:
    jax, jnp = run.lib.jax, run.jnp
    models, ppo_lib = ex.load("models"), ex.load("ppo_lib")
    model = models.ActorCritic(num_outputs=4)
    # The example's get_initial_params uses 84x84 frames; 36x36 keeps the
    # recorded parameters small and runs every layer the same way.
    params = jax.jit(model.init)(jax.random.key(0), jnp.ones((1, 36, 36, 4)))
    params = run.start(params["params"])
    config = types.SimpleNamespace(
        decaying_lr_and_clip_param=True, learning_rate=2.5e-4
    )
    state = ppo_lib.create_train_state(params, model, config, train_steps=10)
    state = state.replace(tx=run.spy(state.tx))
    g, n = _rng(), 8
    trajectories = (
        jnp.asarray(g.random((n, 36, 36, 4), dtype=np.float32)),
        jnp.asarray(g.integers(0, 4, (n,)).astype(np.int32)),
        jnp.asarray(np.log(g.uniform(0.1, 0.5, (n,))).astype(np.float32)),
        jnp.asarray(g.normal(size=(n,)).astype(np.float32)),
        jnp.asarray(g.normal(size=(n,)).astype(np.float32)),
    )
    loss: Any = None
    with run.context():
        for _ in range(STEPS):
            state, loss = ppo_lib.train_step(
                state, trajectories, 4, clip_param=0.1, vf_coeff=0.5, entropy_coeff=0.01
            )
            run.loss(loss)
    return run.finish(state, loss)


def imagenet(ex: Any, run: Run) -> dict[str, Any]:
    jax, jnp = run.lib.jax, run.jnp
    models, train = ex.load("models"), ex.load("train")
    cls = functools.partial(
        models.ResNet, stage_sizes=[1, 1], block_cls=models.ResNetBlock, num_filters=4
    )
    if run.dtype == jnp.float32:
        model = train.create_model(model_cls=cls, half_precision=False)
    else:  # on a CPU the example's half precision is float16; name bfloat16
        model = cls(num_classes=train.NUM_CLASSES, dtype=run.dtype)
    config = types.SimpleNamespace(
        half_precision=False, momentum=0.9, warmup_epochs=1, num_epochs=2
    )
    lr_fn = train.create_learning_rate_fn(config, 0.1, 2)
    state = train.create_train_state(jax.random.key(0), config, model, 16, lr_fn)
    start = run.start({"params": state.params, "batch_stats": state.batch_stats})
    state = state.replace(
        params=start["params"], batch_stats=start["batch_stats"], tx=run.spy(state.tx)
    )
    p_train_step = jax.pmap(
        functools.partial(train.train_step, learning_rate_fn=lr_fn),
        in_axes=(None, 0),
        out_axes=(None, 0),
        axis_name="batch",
    )
    g = _rng()
    metrics: Any = None
    with run.context():
        for _ in range(STEPS):
            batch = {
                "image": jnp.asarray(g.normal(size=(1, 4, 16, 16, 3)), dtype=run.dtype),
                "label": jnp.asarray(g.integers(0, 1000, (1, 4)).astype(np.int32)),
            }
            state, metrics = p_train_step(state, batch)
            run.loss(metrics["loss"][0])
    run.record["dtypes"]["batch_stats"] = dtype_tree(state.batch_stats)
    return run.finish(state, metrics)


def _tokens(n: int, length: int, vocab: int) -> np.ndarray:
    g = _rng()
    x = g.integers(1, vocab, (n, length)).astype(np.int32)
    x[:, length - 2 :] = 0  # padding, as the batches of the input pipeline
    return x


def _pair_batch(inputs: np.ndarray, targets: np.ndarray, i: int) -> dict[str, Any]:
    rows = slice(4 * i, 4 * i + 4)
    return {
        "inputs": inputs[rows],
        "targets": np.ascontiguousarray(targets[rows]),
    }


def _transformer_config(models: Any, nn: Any, dtype: Any, **extra: Any) -> Any:
    return models.TransformerConfig(
        vocab_size=24, output_vocab_size=24, dtype=dtype, emb_dim=16,
        num_heads=2, num_layers=1, qkv_dim=16, mlp_dim=32, max_len=16,
        dropout_rate=0.0, attention_dropout_rate=0.0,
        kernel_init=nn.initializers.xavier_uniform(),
        bias_init=nn.initializers.normal(stddev=1e-6), **extra,
    )  # fmt: skip


def wmt(ex: Any, run: Run) -> dict[str, Any]:
    jax, jnp, optax = run.lib.jax, run.jnp, run.lib.optax
    models, train = ex.load("models"), ex.load("train")
    nn = run.lib.load("flax.linen")
    jax_utils = run.lib.load("flax.jax_utils")
    common_utils = run.lib.load("flax.training.common_utils")
    train_config = _transformer_config(
        models, nn, run.dtype, share_embeddings=True, logits_via_embedding=True,
        deterministic=False, decode=False,
    )  # fmt: skip
    eval_config = train_config.replace(deterministic=True)
    rng = jax.random.key(0)
    rng, init_rng = jax.random.split(rng)
    m = models.Transformer(eval_config)
    ones = jnp.ones((4, 8), jnp.float32)
    variables = jax.jit(m.init)(init_rng, ones, ones)
    lr_fn = train.create_learning_rate_schedule(learning_rate=0.002, warmup_steps=10)
    state = train.TrainState.create(
        apply_fn=m.apply,
        params=run.start(variables["params"]),
        tx=run.spy(optax.adamw(lr_fn, b1=0.9, b2=0.98, eps=1e-9, weight_decay=0.0)),
        dynamic_scale=None,
    )
    state = jax_utils.replicate(state)
    p_train_step = jax.pmap(
        functools.partial(
            train.train_step, config=train_config, learning_rate_fn=lr_fn,
            label_smoothing=0.1,
        ),
        axis_name="batch",
        donate_argnums=(0,),
    )  # fmt: skip
    dropout_rngs = jax.random.split(rng, jax.local_device_count())
    inputs, targets = _tokens(4 * STEPS, 8, 24), _tokens(4 * STEPS, 8, 24)[::-1]
    metrics: Any = None
    with run.context():
        for i in range(STEPS):
            batch = _pair_batch(inputs, targets, i)
            batch = common_utils.shard(jax.tree_util.tree_map(np.asarray, batch))
            state, metrics = p_train_step(state, batch, dropout_rng=dropout_rngs)
            run.loss(metrics["loss"][0] / metrics["denominator"][0])
    return run.finish(jax_utils.unreplicate(state), metrics)


def lm1b(ex: Any, run: Run) -> dict[str, Any]:
    jax, optax = run.lib.jax, run.lib.optax
    models, train, utils = ex.load("models"), ex.load("train"), ex.load("utils")
    nn = run.lib.load("flax.linen")
    train_config = _transformer_config(
        models, nn, run.dtype, logits_via_embedding=False, deterministic=False,
        decode=False,
    )  # fmt: skip
    eval_config = train_config.replace(deterministic=True)
    config = types.SimpleNamespace(per_device_batch_size=4, max_target_length=8)
    rng = jax.random.PRNGKey(0)
    rng, init_rng = jax.random.split(rng)
    m = models.TransformerLM(eval_config)
    lr_fn = train.create_learning_rate_schedule(learning_rate=0.0016, warmup_steps=10)
    tx = optax.adamw(lr_fn, b1=0.9, b2=0.98, eps=1e-9, weight_decay=0.1)
    state = utils.init_train_state(m, tx, config, init_rng)
    state = utils.unbox_logicallypartioned_trainstate(state)
    state = state.replace(params=run.start(state.params), tx=run.spy(tx))
    step = jax.jit(train.train_step, static_argnums=(2, 3, 4), donate_argnums=0)
    dropout_rngs = rng
    inputs = _tokens(4 * STEPS, 8, 24)
    metrics: Any = None
    with run.context():
        for i in range(STEPS):
            batch = {"inputs": jax.numpy.asarray(inputs[4 * i : 4 * i + 4])}
            state, metrics = step(state, batch, train_config, lr_fn, 0.0, dropout_rngs)
            run.loss(metrics["loss"] / metrics["denominator"])
    return run.finish(state, metrics)


def nlp_seq(ex: Any, run: Run) -> dict[str, Any]:
    jax, jnp, optax = run.lib.jax, run.jnp, run.lib.optax
    models, train = ex.load("models"), ex.load("train")
    nn = run.lib.load("flax.linen")
    jax_utils = run.lib.load("flax.jax_utils")
    common_utils = run.lib.load("flax.training.common_utils")
    ts = run.lib.load("flax.training.train_state")
    config = _transformer_config(models, nn, run.dtype)
    model = models.Transformer(config)
    rng = jax.random.key(0)
    rng, init_rng = jax.random.split(rng)

    @jax.jit
    def initialize_variables(init_rng: Any) -> Any:
        init_batch = jnp.ones((config.max_len, 1), jnp.float32)
        return model.init(init_rng, inputs=init_batch, train=False)

    variables = initialize_variables(init_rng)
    lr_fn = train.create_learning_rate_scheduler(
        base_learning_rate=0.05, warmup_steps=10
    )
    tx = optax.adamw(lr_fn, b1=0.9, b2=0.98, eps=1e-9, weight_decay=1e-1)
    state = ts.TrainState.create(
        apply_fn=model.apply, params=run.start(variables["params"]), tx=run.spy(tx)
    )
    state = jax_utils.replicate(state)
    p_train_step = jax.pmap(
        functools.partial(train.train_step, model=model, learning_rate_fn=lr_fn),
        axis_name="batch",
        donate_argnums=(0,),
    )
    inputs, targets = _tokens(4 * STEPS, 8, 24), _tokens(4 * STEPS, 8, 24)[::-1]
    dropout_rngs = jax.random.split(rng, jax.local_device_count())
    metrics: Any = None
    with run.context():
        for i in range(STEPS):
            batch = _pair_batch(inputs, targets, i)
            batch = common_utils.shard(batch)
            state, metrics = p_train_step(state, batch, dropout_rng=dropout_rngs)
            run.loss(metrics["loss"][0] / metrics["denominator"][0])
    return run.finish(jax_utils.unreplicate(state), metrics)


DRIVERS: dict[str, Callable[[Any, Run], dict[str, Any]]] = {
    "vae": vae,
    "seq2seq": seq2seq,
    "sst2": sst2,
    "ppo": ppo,
    "imagenet": imagenet,
    "wmt": wmt,
    "lm1b": lm1b,
    "nlp_seq": nlp_seq,
}
