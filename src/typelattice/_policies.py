"""The policies of :func:`typelattice.checkpoint`: which values computed
inside a checkpointed function are kept for the backward pass (the others
are computed again). A policy is ``policy(prim, *avals, **params) ->
bool``, asked for every primitive the function binds, as in JAX.

>>> import typelattice as tl
>>> sorted(n for n in vars(tl.checkpoint_policies) if n.startswith("dots"))
['dots_saveable', 'dots_with_no_batch_dims_saveable']
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from typelattice._lax._dot import dot_general_p
from typelattice._tracing.remat import everything_saveable, name_p, nothing_saveable

__all__ = [
    "checkpoint_policies",
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "save_any_names_but_these",
    "save_from_both_policies",
    "save_only_these_names",
]


def dots_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Keep the results of matrix products (``dot_general``): the backward
    pass computes the cheap elementwise values again, not the products.

    Args:
      prim: the primitive bound.
      *avals: its operands' abstract values.
      **params: its parameters.

    Returns:
      Whether ``prim`` is ``dot_general``.

    >>> import typelattice as tl
    >>> from typelattice._lax._dot import dot_general_p
    >>> tl.checkpoint_policies.dots_saveable(dot_general_p)
    True
    """
    return prim is dot_general_p


def dots_with_no_batch_dims_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Keep the results of matrix products without batch dimensions (the
    products of a dense layer, not those of attention's batched ones).

    Args:
      prim: the primitive bound.
      *avals: its operands' abstract values.
      **params: its parameters (``dimension_numbers`` for ``dot_general``).

    Returns:
      Whether ``prim`` is ``dot_general`` with no batch dimensions.

    >>> import typelattice as tl
    >>> from typelattice._lax._dot import dot_general_p
    >>> policy = tl.checkpoint_policies.dots_with_no_batch_dims_saveable
    >>> policy(dot_general_p, dimension_numbers=(((1,), (0,)), ((), ())))
    True
    >>> policy(dot_general_p, dimension_numbers=(((2,), (1,)), ((0,), (0,))))
    False
    """
    if prim is not dot_general_p:
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


Policy = Callable[..., bool]


def save_only_these_names(*names: str) -> Policy:
    """A policy keeping the values named (by ``checkpoint_name``) with one
    of ``names``, and nothing else.

    Args:
      *names: the names.

    Returns:
      The policy.

    >>> import typelattice as tl
    >>> from typelattice._tracing.remat import name_p
    >>> policy = tl.checkpoint_policies.save_only_these_names("a")
    >>> policy(name_p, name="a"), policy(name_p, name="b")
    (True, False)
    """
    kept = frozenset(names)

    def policy(prim: Any, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] in kept

    return policy


def save_any_names_but_these(*names: str) -> Policy:
    """A policy keeping every named value (by ``checkpoint_name``) except
    those named with one of ``names``, and nothing else.

    Args:
      *names: the names not kept.

    Returns:
      The policy.

    >>> import typelattice as tl
    >>> from typelattice._tracing.remat import name_p
    >>> policy = tl.checkpoint_policies.save_any_names_but_these("a")
    >>> policy(name_p, name="a"), policy(name_p, name="b")
    (False, True)
    """
    dropped = frozenset(names)

    def policy(prim: Any, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] not in dropped

    return policy


def save_from_both_policies(left: Policy, right: Policy) -> Policy:
    """A policy keeping what either policy keeps.

    Args:
      left: a policy.
      right: another.

    Returns:
      The policy.

    >>> import typelattice as tl
    >>> cp = tl.checkpoint_policies
    >>> named = cp.save_only_these_names("a")
    >>> both = cp.save_from_both_policies(cp.dots_saveable, named)
    >>> from typelattice._tracing.remat import name_p
    >>> both(name_p, name="a")
    True
    """

    def policy(prim: Any, *avals: Any, **params: Any) -> bool:
        return left(prim, *avals, **params) or right(prim, *avals, **params)

    return policy


#: The policies by name, as ``jax.checkpoint_policies``.
checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_from_both_policies=save_from_both_policies,
)
