"""Dynamic loss scaling for gradients computed in float16 (the home of
``typelattice.flax.training.dynamic_scale``, as Flax's)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax
from typelattice._tracing import tree
from typelattice.flax import _struct as struct

__all__ = ["DynamicScale", "DynamicScaleResult"]

_F32 = np.finfo(np.float32)


class DynamicScaleResult(NamedTuple):
    """What :meth:`DynamicScale.value_and_grad`'s function returns.

    Attributes:
      dynamic_scale: the next :class:`DynamicScale`.
      finite: whether every gradient is finite (a boolean Array).
      aux: the unscaled loss, or ``(loss, aux)``.
      grad: the unscaled gradients, in float32.

    >>> DynamicScaleResult._fields
    ('dynamic_scale', 'finite', 'aux', 'grad')
    """

    dynamic_scale: DynamicScale
    finite: Any
    aux: Any
    grad: Any


class DynamicScale(struct.PyTreeNode):
    """A loss scale that grows while gradients stay finite and shrinks when
    one is not, as Flax's ``flax.training.dynamic_scale.DynamicScale``.

    The loss is multiplied by ``scale`` before differentiation, so that
    float16 gradients neither underflow to zero nor overflow; the gradients
    are divided by it again, in float32. After ``growth_interval`` finite
    steps in a row the scale is multiplied by ``growth_factor``; after a
    non-finite gradient it is multiplied by ``backoff_factor`` (never below
    ``minimum_scale``) and the step should be skipped (``finite`` says so).

    Attributes:
      growth_factor: the scale's growth after a run of finite steps.
      backoff_factor: the scale's factor after a non-finite gradient.
      growth_interval: the finite steps in a row before the scale grows.
      fin_steps: the finite steps in a row so far.
      scale: the factor the loss is multiplied by.
      minimum_scale: the smallest scale (float32's smallest normal number
        by default); None for no bound.

    >>> import typelattice as tl
    >>> import typelattice.numpy as tnp
    >>> ds = DynamicScale(growth_interval=1)
    >>> step = tl.jit(lambda ds, p: ds.value_and_grad(lambda p: p ** 2)(p))
    >>> ds, finite, loss, grad = step(ds, tnp.float32(3.0))
    >>> bool(finite), float(loss), float(grad), int(ds.fin_steps)
    (True, 9.0, 6.0, 1)
    >>> ds, finite, loss, grad = step(ds, tnp.float32(3.0))
    >>> float(ds.scale)
    131072.0
    """

    growth_factor: float = struct.field(pytree_node=False, default=2.0)
    backoff_factor: float = struct.field(pytree_node=False, default=0.5)
    growth_interval: int = struct.field(pytree_node=False, default=2000)
    fin_steps: Any = 0
    scale: Any = 65536.0
    minimum_scale: float | None = struct.field(
        pytree_node=False, default=float(_F32.tiny)
    )

    def value_and_grad(
        self,
        fun: Callable[..., Any],
        argnums: int | Sequence[int] = 0,
        has_aux: bool = False,
        axis_name: str | None = None,
    ) -> Callable[..., DynamicScaleResult]:
        """``typelattice.value_and_grad(fun, argnums, has_aux)`` with the
        loss scaled.

        Args:
          fun: the loss (its first result with ``has_aux``).
          argnums: the positions of the arguments to differentiate.
          has_aux: whether ``fun`` returns ``(loss, aux)``.
          axis_name: a named axis (``pmap``, ``vmap``) over which the
            gradients are averaged.

        Returns:
          A function of ``fun``'s arguments returning a
          :class:`DynamicScaleResult`: the next ``DynamicScale``, whether
          every gradient is finite, the loss (or ``(loss, aux)``) unscaled
          and the gradients, in float32, unscaled.

        >>> import typelattice.numpy as tnp
        >>> ds = DynamicScale()
        >>> f = ds.value_and_grad(lambda p: (p * 2.0, p), has_aux=True)
        >>> _, finite, (loss, aux), grad = f(tnp.float32(1.5))
        >>> float(loss), float(aux), float(grad)
        (3.0, 1.5, 2.0)
        """

        @functools.wraps(fun)
        def scaled(*args: Any) -> Any:
            out = fun(*args)
            if has_aux:
                return self.scale * out[0], out[1]
            return self.scale * out

        grad_fn = tl.value_and_grad(scaled, argnums, has_aux)

        def run(*args: Any) -> DynamicScaleResult:
            value, grad = grad_fn(*args)
            if has_aux:
                value = (value[0] / self.scale, value[1])
            else:
                value = value / self.scale
            grad = tree.tree_map(
                lambda g: tnp.asarray(g, tnp.float32) / self.scale, grad
            )
            if axis_name is not None:
                grad = lax.pmean(grad, axis_name)
            finite = tnp.asarray(True)
            for g in tree.leaves(grad):
                finite = finite & tnp.all(tnp.isfinite(g))
            grow = tnp.asarray(self.fin_steps) == self.growth_interval
            grown = tnp.minimum(self.scale * self.growth_factor, _F32.max)
            fin_scale = tnp.where(grow & finite, grown, self.scale)
            inf_scale = self.scale * self.backoff_factor
            if self.minimum_scale is not None:
                inf_scale = tnp.maximum(inf_scale, self.minimum_scale)
            new_scale = tnp.where(finite, fin_scale, inf_scale)
            new_fin_steps = tnp.where(grow | ~finite, 0, self.fin_steps + 1)
            new = self.replace(fin_steps=new_fin_steps, scale=new_scale)
            return DynamicScaleResult(new, finite, value, grad)

        return run
