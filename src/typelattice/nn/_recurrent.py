"""Recurrent layers, as Flax linen's: the cells (one time step, ``cell(carry,
x) -> (carry, y)``), :class:`RNN` that runs a cell over a sequence, and
:class:`Bidirectional`.

Dtypes follow the FLIP as the other layers do: each cell's dense (or
convolution) parts compute in the promotion of their input and parameters
unless ``dtype`` is given, and ``initialize_carry`` makes the carry in
``param_dtype`` (as Flax does). The carry then keeps the dtype the cell's
arithmetic gives it: an LSTM or GRU carry mixes the new values with the old
carry, so it stays float32 under a ``bfloat16`` compute dtype; a
:class:`SimpleCell`'s carry is its output, in the compute dtype. :class:`RNN`
requires the carry to keep its shapes and dtypes from step to step (as a scan
over time does) and says which cell setting to change when it does not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

import typelattice.numpy as tnp
from typelattice import random
from typelattice._tracing import tree
from typelattice.nn import _dtypes, initializers
from typelattice.nn._activation import sigmoid, tanh
from typelattice.nn._conv import Conv
from typelattice.nn._linear import Dense, default_kernel_init
from typelattice.nn._module import Module, compact
from typelattice.nn._transforms import scan
from typelattice.numpy import Array

if TYPE_CHECKING:
    from typelattice.typing import DTypeLike

__all__ = [
    "GRUCell",
    "LSTMCell",
    "MGUCell",
    "OptimizedLSTMCell",
    "RNN",
    "Bidirectional",
    "ConvLSTMCell",
    "RNNCellBase",
    "SimpleCell",
    "flip_sequences",
]

Carry = Any


class RNNCellBase(Module):
    """The base of the recurrent cells: a module called as ``cell(carry,
    inputs) -> (new_carry, outputs)`` for one time step, with
    ``initialize_carry`` to make the first carry.

    Attributes:
      name: as every module's (a subclass declares its own settings).

    >>> from typelattice import nn, random
    >>> cell = nn.GRUCell(features=4)
    >>> isinstance(cell, nn.RNNCellBase), cell.num_feature_axes
    (True, 1)
    """

    def initialize_carry(self, rng: Array, input_shape: tuple[int, ...]) -> Carry:
        """The carry before the first step, for inputs of ``input_shape``
        (one time step: batch axes, then the feature axes).

        Args:
          rng: a key, for a random ``carry_init``.
          input_shape: the shape of one step's input.

        Returns:
          The carry, in ``param_dtype``.

        >>> from typelattice import nn, random
        >>> c, h = nn.LSTMCell(3).initialize_carry(random.key(0), (2, 5))
        >>> c.shape, h.dtype
        ((2, 3), dtype('float32'))
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define initialize_carry(rng, input_shape)"
        )

    @property
    def num_feature_axes(self) -> int:
        """How many trailing axes of one step's input are features (1 for
        the dense cells; for ConvLSTMCell, the spatial axes and the
        channels)."""
        raise NotImplementedError(
            f"{type(self).__name__} must define the property num_feature_axes"
        )


def _feature_carry(
    init: initializers.Initializer,
    rng: Array,
    input_shape: tuple[int, ...],
    features: int,
    dtype: DTypeLike,
) -> Array:
    return init(rng, (*tuple(input_shape)[:-1], features), dtype)


class LSTMCell(RNNCellBase):
    """A long short-term memory cell: carry ``(c, h)``, output ``h``.

    Gates ``i, f, g, o`` each from a bias-free input Dense (``ii``, ``if``,
    ``ig``, ``io``) plus a hidden Dense with bias (``hi``, ``hf``, ``hg``,
    ``ho``); ``c' = f*c + i*g``, ``h' = o*tanh(c')``.

    Attributes:
      features: the size of ``c`` and ``h``.
      gate_fn: the gates' activation (sigmoid).
      activation_fn: the cell's activation (tanh).
      kernel_init: initialiser of the input kernels.
      recurrent_kernel_init: initialiser of the hidden kernels (orthogonal).
      bias_init: initialiser of the hidden biases.
      dtype: the compute dtype (None: the promotion of inputs and params).
      param_dtype: the parameters' dtype, and the initial carry's.
      carry_init: initialiser of the carry.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> cell = nn.LSTMCell(features=4)
    >>> x = tnp.ones((2, 3))
    >>> carry = cell.initialize_carry(random.key(0), x.shape)
    >>> variables = cell.init(random.key(1), carry, x)
    >>> sorted(variables['params'])
    ['hf', 'hg', 'hi', 'ho', 'if', 'ig', 'ii', 'io']
    >>> (c, h), y = cell.apply(variables, carry, x)
    >>> y.shape, y.dtype
    ((2, 4), dtype('float32'))
    """

    features: int
    gate_fn: Callable[..., Any] = sigmoid
    activation_fn: Callable[..., Any] = tanh
    kernel_init: initializers.Initializer = default_kernel_init
    recurrent_kernel_init: initializers.Initializer = initializers.orthogonal()
    bias_init: initializers.Initializer = initializers.zeros
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    carry_init: initializers.Initializer = initializers.zeros

    @compact
    def __call__(
        self, carry: tuple[Array, Array], inputs: Any
    ) -> tuple[tuple[Array, Array], Array]:
        """One step.

        Args:
          carry: ``(c, h)``.
          inputs: ``(*batch, in_features)``.

        Returns:
          ``((c', h'), h')``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> cell = nn.LSTMCell(2)
        >>> carry = cell.initialize_carry(random.key(0), (3,))
        >>> v = cell.init(random.key(0), carry, tnp.ones(3))
        >>> cell.apply(v, carry, tnp.ones(3))[1].shape
        (2,)
        """
        c, h = carry
        hidden = h.shape[-1]
        dense_h = functools.partial(
            Dense,
            features=hidden,
            use_bias=True,
            kernel_init=self.recurrent_kernel_init,
            bias_init=self.bias_init,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
        )
        dense_i = functools.partial(
            Dense,
            features=hidden,
            use_bias=False,
            kernel_init=self.kernel_init,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
        )
        i = self.gate_fn(dense_i(name="ii")(inputs) + dense_h(name="hi")(h))
        f = self.gate_fn(dense_i(name="if")(inputs) + dense_h(name="hf")(h))
        g = self.activation_fn(dense_i(name="ig")(inputs) + dense_h(name="hg")(h))
        o = self.gate_fn(dense_i(name="io")(inputs) + dense_h(name="ho")(h))
        new_c = f * c + i * g
        new_h = o * self.activation_fn(new_c)
        return (new_c, new_h), new_h

    def initialize_carry(
        self, rng: Array, input_shape: tuple[int, ...]
    ) -> tuple[Array, Array]:
        """The first carry ``(c, h)``, zeros by default.

        Args:
          rng: a key (split in two: one for ``c``, one for ``h``).
          input_shape: one step's input shape ``(*batch, in_features)``.

        Returns:
          ``(c, h)`` of shape ``(*batch, features)`` in ``param_dtype``.

        >>> from typelattice import nn, random
        >>> c, h = nn.LSTMCell(3).initialize_carry(random.key(0), (5,))
        >>> c.shape
        (3,)
        """
        key1, key2 = random.split(rng)
        c = _feature_carry(
            self.carry_init, key1, input_shape, self.features, self.param_dtype
        )
        h = _feature_carry(
            self.carry_init, key2, input_shape, self.features, self.param_dtype
        )
        return c, h

    @property
    def num_feature_axes(self) -> int:
        """One: the last axis."""
        return 1


class _DenseParams(Module):
    """A Dense layer's parameters only (kernel, bias), for the fused LSTM.
    Flax's ``DenseParams``."""

    features: int
    use_bias: bool = True
    param_dtype: DTypeLike = tnp.float32
    kernel_init: initializers.Initializer = default_kernel_init
    bias_init: initializers.Initializer = initializers.zeros

    @compact
    def __call__(self, inputs: Array) -> tuple[Array, Array | None]:
        kernel = self.param(
            "kernel",
            self.kernel_init,
            (inputs.shape[-1], self.features),
            self.param_dtype,
        )
        bias = (
            self.param("bias", self.bias_init, (self.features,), self.param_dtype)
            if self.use_bias
            else None
        )
        return kernel, bias


class OptimizedLSTMCell(RNNCellBase):
    """An LSTM cell computing its four gates with one matrix product per
    operand: the same parameters (``ii``... ``ho``, each a kernel, the
    hidden ones with a bias) and the same values as :class:`LSTMCell`.

    Attributes:
      features, gate_fn, activation_fn, kernel_init, recurrent_kernel_init,
      bias_init, dtype, param_dtype, carry_init: as :class:`LSTMCell`.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> cell = nn.OptimizedLSTMCell(features=4)
    >>> carry = cell.initialize_carry(random.key(0), (2, 3))
    >>> v = cell.init(random.key(1), carry, tnp.ones((2, 3)))
    >>> v['params']['hi']['kernel'].shape, v['params']['hi']['bias'].shape
    ((4, 4), (4,))
    """

    features: int
    gate_fn: Callable[..., Any] = sigmoid
    activation_fn: Callable[..., Any] = tanh
    kernel_init: initializers.Initializer = default_kernel_init
    recurrent_kernel_init: initializers.Initializer = initializers.orthogonal()
    bias_init: initializers.Initializer = initializers.zeros
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    carry_init: initializers.Initializer = initializers.zeros

    @compact
    def __call__(
        self, carry: tuple[Array, Array], inputs: Any
    ) -> tuple[tuple[Array, Array], Array]:
        """One step.

        Args:
          carry: ``(c, h)``.
          inputs: ``(*batch, in_features)``.

        Returns:
          ``((c', h'), h')``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> cell = nn.OptimizedLSTMCell(2)
        >>> carry = cell.initialize_carry(random.key(0), (3,))
        >>> v = cell.init(random.key(0), carry, tnp.ones(3))
        >>> cell.apply(v, carry, tnp.ones(3))[1].shape
        (2,)
        """
        c, h = carry
        x = _dtypes.as_input(inputs)
        hidden = h.shape[-1]
        params_i: dict[str, tuple[Array, Array | None]] = {}
        params_h: dict[str, tuple[Array, Array | None]] = {}
        for gate in "ifgo":
            params_i[gate] = _DenseParams(
                features=hidden,
                use_bias=False,
                param_dtype=self.param_dtype,
                kernel_init=self.kernel_init,
                bias_init=self.bias_init,
                name=f"i{gate}",
            )(x)
            params_h[gate] = _DenseParams(
                features=hidden,
                use_bias=True,
                param_dtype=self.param_dtype,
                kernel_init=self.recurrent_kernel_init,
                bias_init=self.bias_init,
                name=f"h{gate}",
            )(h)
        from_h = self._fused(h, params_h)
        from_i = self._fused(x, params_i)
        i = self.gate_fn(from_h["i"] + from_i["i"])
        f = self.gate_fn(from_h["f"] + from_i["f"])
        g = self.activation_fn(from_h["g"] + from_i["g"])
        o = self.gate_fn(from_h["o"] + from_i["o"])
        new_c = f * c + i * g
        new_h = o * self.activation_fn(new_c)
        return (new_c, new_h), new_h

    def _fused(
        self, x: Array, params: dict[str, tuple[Array, Array | None]]
    ) -> dict[str, Array]:
        """The four gates' products as one: kernels (and biases) joined on
        the output axis, one matmul, then split back."""
        kernels = [k for k, _ in params.values()]
        biases = [b for _, b in params.values() if b is not None]
        kernel = tnp.concatenate(kernels, axis=-1)
        bias = tnp.concatenate(biases, axis=-1) if biases else None
        x, kernel, bias = _dtypes.promote(
            x, kernel, bias, dtype=self.dtype, where=type(self).__name__
        )
        y = tnp.matmul(x, kernel)
        if bias is not None:
            y = y + bias
        ends = np.cumsum([k.shape[-1] for k in kernels[:-1]]).tolist()
        return dict(zip(params, tnp.split(y, ends, axis=-1), strict=True))

    def initialize_carry(
        self, rng: Array, input_shape: tuple[int, ...]
    ) -> tuple[Array, Array]:
        """The first carry ``(c, h)``, as :meth:`LSTMCell.initialize_carry`.

        Args:
          rng: a key.
          input_shape: one step's input shape.

        Returns:
          ``(c, h)`` in ``param_dtype``.

        >>> from typelattice import nn, random
        >>> c, h = nn.OptimizedLSTMCell(3).initialize_carry(random.key(0), (4, 5))
        >>> h.shape
        (4, 3)
        """
        key1, key2 = random.split(rng)
        c = _feature_carry(
            self.carry_init, key1, input_shape, self.features, self.param_dtype
        )
        h = _feature_carry(
            self.carry_init, key2, input_shape, self.features, self.param_dtype
        )
        return c, h

    @property
    def num_feature_axes(self) -> int:
        """One: the last axis."""
        return 1


class SimpleCell(RNNCellBase):
    """An Elman cell: ``h' = tanh(Dense_i(x) + Dense_h(h))`` (``i`` with a
    bias, ``h`` without), carry and output ``h'``.

    Attributes:
      features: the size of ``h``.
      activation_fn: the activation (tanh).
      kernel_init, recurrent_kernel_init, bias_init, dtype, param_dtype,
        carry_init: as :class:`LSTMCell` (the bias is the input Dense's).
      residual: add the old carry before the activation.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> cell = nn.SimpleCell(features=4)
    >>> h = cell.initialize_carry(random.key(0), (2, 3))
    >>> v = cell.init(random.key(1), h, tnp.ones((2, 3)))
    >>> sorted(v['params']), cell.apply(v, h, tnp.ones((2, 3)))[1].shape
    (['h', 'i'], (2, 4))
    """

    features: int
    activation_fn: Callable[..., Any] = tanh
    kernel_init: initializers.Initializer = default_kernel_init
    recurrent_kernel_init: initializers.Initializer = initializers.orthogonal()
    bias_init: initializers.Initializer = initializers.zeros
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    carry_init: initializers.Initializer = initializers.zeros
    residual: bool = False

    @compact
    def __call__(self, carry: Array, inputs: Any) -> tuple[Array, Array]:
        """One step.

        Args:
          carry: ``h``.
          inputs: ``(*batch, in_features)``.

        Returns:
          ``(h', h')``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> cell = nn.SimpleCell(2)
        >>> h = cell.initialize_carry(random.key(0), (3,))
        >>> v = cell.init(random.key(0), h, tnp.ones(3))
        >>> cell.apply(v, h, tnp.ones(3))[0].shape
        (2,)
        """
        hidden = carry.shape[-1]
        new = Dense(
            hidden,
            use_bias=True,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
            kernel_init=self.kernel_init,
            bias_init=self.bias_init,
            name="i",
        )(inputs) + Dense(
            hidden,
            use_bias=False,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
            kernel_init=self.recurrent_kernel_init,
            name="h",
        )(carry)
        if self.residual:
            new = new + carry
        new = self.activation_fn(new)
        return new, new

    def initialize_carry(self, rng: Array, input_shape: tuple[int, ...]) -> Array:
        """The first ``h``, zeros by default.

        Args:
          rng: a key.
          input_shape: one step's input shape.

        Returns:
          ``(*batch, features)`` in ``param_dtype``.

        >>> from typelattice import nn, random
        >>> nn.SimpleCell(3).initialize_carry(random.key(0), (2, 5)).shape
        (2, 3)
        """
        return _feature_carry(
            self.carry_init, rng, input_shape, self.features, self.param_dtype
        )

    @property
    def num_feature_axes(self) -> int:
        """One: the last axis."""
        return 1


class GRUCell(RNNCellBase):
    """A gated recurrent unit: reset ``r`` and update ``z`` gates, candidate
    ``n = tanh(Dense_in(x) + r * Dense_hn(h))``, ``h' = (1-z)*n + z*h``.

    Parameters: input Denses with bias ``ir``, ``iz``, ``in``; hidden
    Denses ``hr``, ``hz`` without and ``hn`` with a bias.

    Attributes:
      features, gate_fn, activation_fn, kernel_init, recurrent_kernel_init,
      bias_init, dtype, param_dtype, carry_init: as :class:`LSTMCell`.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> cell = nn.GRUCell(features=4)
    >>> h = cell.initialize_carry(random.key(0), (2, 3))
    >>> v = cell.init(random.key(1), h, tnp.ones((2, 3)))
    >>> sorted(v['params'])
    ['hn', 'hr', 'hz', 'in', 'ir', 'iz']
    """

    features: int
    gate_fn: Callable[..., Any] = sigmoid
    activation_fn: Callable[..., Any] = tanh
    kernel_init: initializers.Initializer = default_kernel_init
    recurrent_kernel_init: initializers.Initializer = initializers.orthogonal()
    bias_init: initializers.Initializer = initializers.zeros
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    carry_init: initializers.Initializer = initializers.zeros

    @compact
    def __call__(self, carry: Array, inputs: Any) -> tuple[Array, Array]:
        """One step.

        Args:
          carry: ``h``.
          inputs: ``(*batch, in_features)``.

        Returns:
          ``(h', h')``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> cell = nn.GRUCell(2)
        >>> h = cell.initialize_carry(random.key(0), (3,))
        >>> v = cell.init(random.key(0), h, tnp.ones(3))
        >>> cell.apply(v, h, tnp.ones(3))[0].shape
        (2,)
        """
        h = carry
        hidden = h.shape[-1]
        dense_h = functools.partial(
            Dense,
            features=hidden,
            use_bias=False,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
            kernel_init=self.recurrent_kernel_init,
            bias_init=self.bias_init,
        )
        dense_i = functools.partial(
            Dense,
            features=hidden,
            use_bias=True,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
            kernel_init=self.kernel_init,
            bias_init=self.bias_init,
        )
        r = self.gate_fn(dense_i(name="ir")(inputs) + dense_h(name="hr")(h))
        z = self.gate_fn(dense_i(name="iz")(inputs) + dense_h(name="hz")(h))
        n = self.activation_fn(
            dense_i(name="in")(inputs) + r * dense_h(name="hn", use_bias=True)(h)
        )
        new_h = (1.0 - z) * n + z * h
        return new_h, new_h

    def initialize_carry(self, rng: Array, input_shape: tuple[int, ...]) -> Array:
        """The first ``h``, zeros by default.

        Args:
          rng: a key.
          input_shape: one step's input shape.

        Returns:
          ``(*batch, features)`` in ``param_dtype``.

        >>> from typelattice import nn, random
        >>> nn.GRUCell(3, param_dtype='bfloat16').initialize_carry(
        ...     random.key(0), (5,)).dtype
        dtype(bfloat16)
        """
        return _feature_carry(
            self.carry_init, rng, input_shape, self.features, self.param_dtype
        )

    @property
    def num_feature_axes(self) -> int:
        """One: the last axis."""
        return 1


class MGUCell(RNNCellBase):
    """A minimal gated unit: one forget gate ``f``, candidate ``n =
    tanh(Dense_in(x) + f * Dense_hn(h))`` (without ``f *`` when
    ``reset_gate=False``), ``h' = (1-f)*n + f*h``.

    Parameters: input Denses with bias ``if`` (forget_bias_init: ones) and
    ``in`` (activation_bias_init: zeros); hidden Denses ``hf`` without and
    ``hn`` with a bias (when ``reset_gate``).

    Attributes:
      features, gate_fn, activation_fn, kernel_init, recurrent_kernel_init,
      dtype, param_dtype, carry_init: as :class:`LSTMCell`.
      forget_bias_init: initialiser of the forget gate's bias.
      activation_bias_init: initialiser of the candidate's biases.
      reset_gate: whether the forget gate scales the hidden candidate.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> cell = nn.MGUCell(features=4)
    >>> h = cell.initialize_carry(random.key(0), (2, 3))
    >>> v = cell.init(random.key(1), h, tnp.ones((2, 3)))
    >>> sorted(v['params']), v['params']['if']['bias']
    (['hf', 'hn', 'if', 'in'], Array([1., 1., 1., 1.], dtype=float32))
    """

    features: int
    gate_fn: Callable[..., Any] = sigmoid
    activation_fn: Callable[..., Any] = tanh
    kernel_init: initializers.Initializer = default_kernel_init
    recurrent_kernel_init: initializers.Initializer = initializers.orthogonal()
    forget_bias_init: initializers.Initializer = initializers.ones
    activation_bias_init: initializers.Initializer = initializers.zeros
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    carry_init: initializers.Initializer = initializers.zeros
    reset_gate: bool = True

    @compact
    def __call__(self, carry: Array, inputs: Any) -> tuple[Array, Array]:
        """One step.

        Args:
          carry: ``h``.
          inputs: ``(*batch, in_features)``.

        Returns:
          ``(h', h')``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> cell = nn.MGUCell(2)
        >>> h = cell.initialize_carry(random.key(0), (3,))
        >>> v = cell.init(random.key(0), h, tnp.ones(3))
        >>> cell.apply(v, h, tnp.ones(3))[0].shape
        (2,)
        """
        h = carry
        hidden = h.shape[-1]
        dense_h = functools.partial(
            Dense,
            features=hidden,
            use_bias=False,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
            kernel_init=self.recurrent_kernel_init,
            bias_init=self.activation_bias_init,
        )
        dense_i = functools.partial(
            Dense,
            features=hidden,
            use_bias=True,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
            kernel_init=self.kernel_init,
        )
        f = self.gate_fn(
            dense_i(name="if", bias_init=self.forget_bias_init)(inputs)
            + dense_h(name="hf")(h)
        )
        x = dense_h(name="hn", use_bias=self.reset_gate)(h)
        if self.reset_gate:
            x = x * f
        n = self.activation_fn(
            dense_i(name="in", bias_init=self.activation_bias_init)(inputs) + x
        )
        new_h = (1.0 - f) * n + f * h
        return new_h, new_h

    def initialize_carry(self, rng: Array, input_shape: tuple[int, ...]) -> Array:
        """The first ``h``, zeros by default.

        Args:
          rng: a key.
          input_shape: one step's input shape.

        Returns:
          ``(*batch, features)`` in ``param_dtype``.

        >>> from typelattice import nn, random
        >>> nn.MGUCell(3).initialize_carry(random.key(0), (5,)).shape
        (3,)
        """
        return _feature_carry(
            self.carry_init, rng, input_shape, self.features, self.param_dtype
        )

    @property
    def num_feature_axes(self) -> int:
        """One: the last axis."""
        return 1


class ConvLSTMCell(RNNCellBase):
    """A convolutional LSTM cell: the gates from a convolution of the input
    (``ih``) plus one of ``h`` (``hh``), each with ``4 * features`` output
    channels split into ``i, g, f, o``; the forget gate gets ``+1``.

    Attributes:
      features: the channels of ``c`` and ``h``.
      kernel_size: the convolutions' window.
      strides: their strides (None: 1).
      padding: their padding ('SAME').
      use_bias: whether they add a bias.
      dtype: the compute dtype (None: the promotion of inputs and params).
      param_dtype: the parameters' dtype, and the initial carry's.
      carry_init: initialiser of the carry.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> cell = nn.ConvLSTMCell(features=4, kernel_size=(3, 3))
    >>> x = tnp.ones((1, 5, 5, 2))
    >>> carry = cell.initialize_carry(random.key(0), x.shape)
    >>> v = cell.init(random.key(1), carry, x)
    >>> v['params']['ih']['kernel'].shape, cell.apply(v, carry, x)[1].shape
    ((3, 3, 2, 16), (1, 5, 5, 4))
    """

    features: int
    kernel_size: Sequence[int]
    strides: Sequence[int] | None = None
    padding: str | Sequence[tuple[int, int]] = "SAME"
    use_bias: bool = True
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    carry_init: initializers.Initializer = initializers.zeros

    @compact
    def __call__(
        self, carry: tuple[Array, Array], inputs: Any
    ) -> tuple[tuple[Array, Array], Array]:
        """One step.

        Args:
          carry: ``(c, h)``, each ``(*batch, *spatial, features)``.
          inputs: ``(*batch, *spatial, channels)``.

        Returns:
          ``((c', h'), h')``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> cell = nn.ConvLSTMCell(2, kernel_size=(3,))
        >>> carry = cell.initialize_carry(random.key(0), (4, 6, 1))
        >>> v = cell.init(random.key(0), carry, tnp.ones((4, 6, 1)))
        >>> cell.apply(v, carry, tnp.ones((4, 6, 1)))[1].shape
        (4, 6, 2)
        """
        c, h = carry
        conv = functools.partial(
            Conv,
            features=4 * self.features,
            kernel_size=self.kernel_size,
            strides=self.strides,
            padding=self.padding,
            use_bias=self.use_bias,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
        )
        gates = conv(name="ih")(inputs) + conv(name="hh")(h)
        i, g, f, o = tnp.split(gates, 4, axis=-1)
        f = sigmoid(f + 1)
        new_c = f * c + sigmoid(i) * tnp.tanh(g)
        new_h = sigmoid(o) * tnp.tanh(new_c)
        return (new_c, new_h), new_h

    def initialize_carry(
        self, rng: Array, input_shape: tuple[int, ...]
    ) -> tuple[Array, Array]:
        """The first carry ``(c, h)``: the input's batch and spatial axes,
        then ``features`` channels.

        Args:
          rng: a key (split for ``c`` and ``h``).
          input_shape: one step's input shape ``(*batch, *spatial,
            channels)``.

        Returns:
          ``(c, h)`` in ``param_dtype``.

        >>> from typelattice import nn, random
        >>> cell = nn.ConvLSTMCell(3, kernel_size=(2, 2))
        >>> cell.initialize_carry(random.key(0), (8, 5, 5, 1))[0].shape
        (8, 5, 5, 3)
        """
        key1, key2 = random.split(rng)
        shape = (*tuple(input_shape)[:-1], self.features)
        c = self.carry_init(key1, shape, self.param_dtype)
        h = self.carry_init(key2, shape, self.param_dtype)
        return c, h

    @property
    def num_feature_axes(self) -> int:
        """The spatial axes and the channels."""
        return len(self.kernel_size) + 1


# -- running a cell over time --------------------------------------------------------


def _over_time(
    rnn: RNN,
    carry: Carry,
    inputs: Array,
    time_axis: int,
    keep_carries: bool,
) -> tuple[Carry, Any, Any]:
    """Run ``rnn.cell`` along ``time_axis`` of ``inputs`` with :func:`scan`
    (the lifted ``lax.scan``, as Flax's RNN does): the parameters are the
    same at every step (made by the first step under ``init``), the carry
    goes from one step to the next and the outputs are stacked on
    ``time_axis``.

    Returns the last carry, the stacked outputs, and every step's carry
    stacked on axis 0 when ``keep_carries`` (else None).
    """
    if inputs.shape[time_axis] == 0:
        raise ValueError(
            f"RNN: the inputs of shape {tuple(inputs.shape)} have no time "
            f"steps (axis {time_axis} is empty); give at least one step"
        )

    def step(cell: RNNCellBase, carry: Carry, x_t: Any) -> Any:
        carry, y = cast(Callable[..., tuple[Carry, Any]], cell)(carry, x_t)
        return carry, ((y, carry) if keep_carries else (y, None))

    splits = dict(rnn.split_rngs) if rnn.split_rngs is not None else {"params": False}
    scanned = scan(
        step,
        variable_axes=dict(rnn.variable_axes or {}),
        variable_broadcast=rnn.variable_broadcast,
        variable_carry=rnn.variable_carry,
        split_rngs=splits,
        in_axes=time_axis,
        out_axes=0,
        unroll=rnn.unroll,
    )
    try:
        carry, (outputs, carries) = scanned(rnn.cell, carry, inputs)
    except TypeError as error:
        if "carry input and carry output" not in str(error):
            raise
        raise TypeError(
            f"{type(rnn.cell).__name__}'s carry changes its shapes or dtypes in "
            "one step; a recurrent carry keeps them. Fix: give the cell "
            "param_dtype equal to its dtype (the initial carry is made in "
            "param_dtype), or pass initial_carry in the dtype the cell "
            f"computes in.\n{error}"
        ) from None
    if time_axis != 0:
        outputs = tree.tree_map(lambda y: tnp.moveaxis(y, 0, time_axis), outputs)
    return carry, outputs, carries


def flip_sequences(
    inputs: Array, seq_lengths: Any, num_batch_dims: int, time_major: bool
) -> Array:
    """Reverse each sequence's first ``seq_lengths`` steps (all steps when
    ``seq_lengths`` is None); the padding after them follows, reversed too.

    Args:
      inputs: ``(*batch, time, *features)`` (``(time, *batch, *features)``
        when ``time_major``).
      seq_lengths: ``(*batch,)`` integer lengths, or None.
      num_batch_dims: the number of batch axes.
      time_major: whether time is the first axis.

    Returns:
      The flipped inputs.

    >>> import typelattice.numpy as tnp
    >>> from typelattice.nn import recurrent
    >>> x = tnp.arange(8).reshape(2, 4)
    >>> recurrent.flip_sequences(x, tnp.array([2, 4]), 1, False)
    Array([[1, 0, 3, 2],
           [7, 6, 5, 4]], dtype=int32)
    """
    x = _dtypes.as_input(inputs)
    time_axis = 0 if time_major else num_batch_dims
    steps = x.shape[time_axis]
    if seq_lengths is None:
        return tnp.flip(x, axis=time_axis)
    lengths = tnp.expand_dims(_dtypes.as_input(seq_lengths), axis=time_axis)
    order = tnp.arange(steps - 1, -1, -1)
    if time_major:
        order = tnp.reshape(order, (steps,) + (1,) * num_batch_dims)
    else:
        order = tnp.reshape(order, (1,) * num_batch_dims + (steps,))
    # The steps before each length, reversed, then the padding (reversed).
    index = (order + lengths) % steps
    # Gathered with one index array per leading axis: the batch positions
    # themselves, and the flipped time index.
    lead = num_batch_dims + 1
    picks = tuple(
        index
        if a == time_axis
        else tnp.reshape(
            tnp.arange(x.shape[a]), tuple(-1 if b == a else 1 for b in range(lead))
        )
        for a in range(lead)
    )
    return x[picks]


def _last_carry(carries: Carry, seq_lengths: Any) -> Carry:
    """Each sequence's carry after its last step (``seq_lengths - 1``), from
    every step's carries stacked on axis 0."""
    lengths = _dtypes.as_input(seq_lengths)

    def pick(stacked: Array) -> Array:  # (time, batch, ...)
        return stacked[lengths - 1, tnp.arange(stacked.shape[1])]

    return tree.tree_map(pick, carries)


class RNN(Module):
    """Run a recurrent cell over the time axis of a sequence, as Flax
    linen's ``nn.RNN``.

    The cell's parameters are shared by all steps (``'params'`` under the
    name ``cell``); the carry starts at ``cell.initialize_carry`` unless
    ``initial_carry`` is given.

    Attributes:
      cell: the cell (an :class:`RNNCellBase`).
      time_major: inputs are ``(time, *batch, *features)`` instead of
        ``(*batch, time, *features)``.
      return_carry: also return the final carry.
      reverse: run from the last step to the first.
      keep_order: with ``reverse``, give the outputs in the input's order.
      unroll: steps per loop iteration of the scan (speed only).
      variable_axes: collections with one slice per time step, stacked on
        an axis (``{'params': 0}``: parameters not shared between steps).
      variable_broadcast: the collections shared by all steps ('params').
      variable_carry: collections carried from step to step (mutable
        collections always are here).
      split_rngs: per random stream, whether each step draws its own key
        (default: ``{'params': False}``, the parameters shared).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.RNN(nn.LSTMCell(features=4))
    >>> x = tnp.ones((2, 5, 3))  # (batch, time, features)
    >>> variables = layer.init(random.key(0), x)
    >>> sorted(variables['params']['cell'])
    ['hf', 'hg', 'hi', 'ho', 'if', 'ig', 'ii', 'io']
    >>> layer.apply(variables, x).shape
    (2, 5, 4)
    """

    cell: RNNCellBase
    time_major: bool = False
    return_carry: bool = False
    reverse: bool = False
    keep_order: bool = False
    unroll: int = 1
    variable_axes: Mapping[Any, Any] | None = None
    variable_broadcast: Any = "params"
    variable_carry: Any = False
    split_rngs: Mapping[Any, bool] | None = None

    def __call__(
        self,
        inputs: Any,
        *,
        initial_carry: Carry | None = None,
        init_key: Array | None = None,
        seq_lengths: Any = None,
        return_carry: bool | None = None,
        time_major: bool | None = None,
        reverse: bool | None = None,
        keep_order: bool | None = None,
    ) -> Any:
        """Run the cell over the sequence.

        Args:
          inputs: ``(*batch, time, *features)``, or ``(time, *batch,
            *features)`` when ``time_major``.
          initial_carry: the carry before the first step (default:
            ``cell.initialize_carry(init_key, one step's shape)``).
          init_key: the key for ``initialize_carry`` (default
            ``random.key(0)``).
          seq_lengths: ``(batch,)`` lengths of the sequences: the carry
            returned is each sequence's after its last step, and with
            ``reverse`` each sequence is reversed within its length. The
            outputs after a sequence's end are computed as for any step.
          return_carry, time_major, reverse, keep_order: override the
            module's attributes.

        Returns:
          The outputs stacked on the time axis, or ``(carry, outputs)``
          with ``return_carry``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.RNN(nn.GRUCell(2), return_carry=True)
        >>> x = tnp.ones((3, 4, 1))
        >>> carry, y = layer.apply(layer.init(random.key(0), x), x,
        ...                        seq_lengths=tnp.array([4, 2, 1]))
        >>> carry.shape, y.shape
        ((3, 2), (3, 4, 2))
        """
        if return_carry is None:
            return_carry = self.return_carry
        if time_major is None:
            time_major = self.time_major
        if reverse is None:
            reverse = self.reverse
        if keep_order is None:
            keep_order = self.keep_order
        x = _dtypes.as_input(inputs)
        features = self.cell.num_feature_axes
        time_axis = 0 if time_major else x.ndim - (features + 1)
        if time_axis < 0:
            raise ValueError(
                f"RNN: inputs of shape {tuple(x.shape)} have no time axis; "
                f"{type(self.cell).__name__} takes {features} feature axis(es) "
                "after the time axis, e.g. (batch, time, features)"
            )
        batch_dims = (
            x.shape[1 : x.ndim - features] if time_major else x.shape[:time_axis]
        )
        if reverse:
            x = flip_sequences(x, seq_lengths, len(batch_dims), time_major)
        if initial_carry is None:
            key = random.PRNGKey(0) if init_key is None else init_key
            step_shape = x.shape[:time_axis] + x.shape[time_axis + 1 :]
            carry = self.cell.initialize_carry(key, step_shape)
        else:
            carry = initial_carry
        per_length = seq_lengths is not None and return_carry
        carry, outputs, carries = _over_time(
            self, carry, x, time_axis, keep_carries=per_length
        )
        if per_length:
            carry = _last_carry(carries, seq_lengths)
        if reverse and keep_order:
            outputs = tree.tree_map(
                lambda y: flip_sequences(y, seq_lengths, len(batch_dims), time_major),
                outputs,
            )
        return (carry, outputs) if return_carry else outputs


def _concatenate(a: Array, b: Array) -> Array:
    return tnp.concatenate([a, b], axis=-1)


class Bidirectional(Module):
    """Run one RNN forwards and another backwards over a sequence and merge
    their outputs (concatenated on the last axis by default), as Flax
    linen's ``nn.Bidirectional``.

    Attributes:
      forward_rnn: the forward :class:`RNN`.
      backward_rnn: the backward :class:`RNN` (run with ``reverse=True,
        keep_order=True``).
      merge_fn: combines the two outputs.
      time_major: as :class:`RNN`.
      return_carry: also return ``(forward_carry, backward_carry)``.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.Bidirectional(nn.RNN(nn.GRUCell(3)), nn.RNN(nn.GRUCell(3)))
    >>> x = tnp.ones((2, 5, 4))
    >>> variables = layer.init(random.key(0), x)
    >>> sorted(variables['params']), layer.apply(variables, x).shape
    (['backward_rnn', 'forward_rnn'], (2, 5, 6))
    """

    forward_rnn: RNN
    backward_rnn: RNN
    merge_fn: Callable[[Array, Array], Array] = _concatenate
    time_major: bool = False
    return_carry: bool = False

    def __call__(
        self,
        inputs: Any,
        *,
        initial_carry: Carry | None = None,
        init_key: Array | None = None,
        seq_lengths: Any = None,
        return_carry: bool | None = None,
        time_major: bool | None = None,
        reverse: bool | None = None,
        keep_order: bool | None = None,
    ) -> Any:
        """Run both directions and merge.

        Args:
          inputs: as :class:`RNN`.
          initial_carry: ``(forward_carry, backward_carry)``, or None.
          init_key: split in two for the two initial carries.
          seq_lengths: as :class:`RNN`.
          return_carry, time_major: override the module's attributes.
          reverse, keep_order: accepted for the common signature; unused.

        Returns:
          The merged outputs, or ``((forward_carry, backward_carry),
          outputs)`` with ``return_carry``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.Bidirectional(nn.RNN(nn.SimpleCell(2)),
        ...                          nn.RNN(nn.SimpleCell(2)), return_carry=True)
        >>> x = tnp.ones((1, 3, 2))
        >>> (fwd, bwd), y = layer.apply(layer.init(random.key(0), x), x)
        >>> fwd.shape, y.shape
        ((1, 2), (1, 3, 4))
        """
        if time_major is None:
            time_major = self.time_major
        if return_carry is None:
            return_carry = self.return_carry
        key_forward: Array | None = None
        key_backward: Array | None = None
        if init_key is not None:
            key_forward, key_backward = random.split(init_key)
        if initial_carry is not None:
            carry_forward, carry_backward = initial_carry
        else:
            carry_forward = carry_backward = None
        carry_forward, out_forward = self.forward_rnn(
            inputs,
            initial_carry=carry_forward,
            init_key=key_forward,
            seq_lengths=seq_lengths,
            return_carry=True,
            time_major=time_major,
            reverse=False,
        )
        carry_backward, out_backward = self.backward_rnn(
            inputs,
            initial_carry=carry_backward,
            init_key=key_backward,
            seq_lengths=seq_lengths,
            return_carry=True,
            time_major=time_major,
            reverse=True,
            keep_order=True,
        )
        fwd_leaves, treedef = tree.flatten(out_forward)
        bwd_leaves = tree.leaves(out_backward)
        outputs = tree.unflatten(
            treedef,
            [self.merge_fn(a, b) for a, b in zip(fwd_leaves, bwd_leaves, strict=True)],
        )
        carry = (carry_forward, carry_backward)
        return (carry, outputs) if return_carry else outputs
