"""jit keeps the wrapped function's signature; tracers are Arrays."""

from typing import Any, assert_type

import typelattice as tl
import typelattice.numpy as tnp


def scale(x: tl.Array, k: float) -> tl.Array:
    return x * k


fast = tl.jit(scale)
assert_type(fast(tnp.zeros(3), 2.0), tnp.Array)
assert_type(fast.cache_info(), tl.CacheInfo)
assert_type(fast.cache_info().hits, int)


@tl.jit(static_argnums=1)
def head(x: tl.Array, n: int) -> tl.Array:
    return x[:n]


assert_type(head(tnp.zeros(3), 2), tnp.Array)

struct = tl.ShapeDtypeStruct((2, 3), "float32")
assert_type(struct.shape, tuple[int, ...])
assert_type(struct.weak_type, bool)
shapes: Any = tl.eval_shape(scale, struct, 2.0)


def check(t: tl.Array) -> None:
    if isinstance(t, tl.Tracer):
        assert_type(t.shape, tuple[int, ...])
    try:
        bool(t)
    except tl.ConcretizationTypeError:
        pass


@tl.custom_jvp
def soft(x: tl.Array) -> tl.Array:
    return tnp.log1p(tnp.exp(x))


@soft.defjvp
def soft_jvp(primals: Any, tangents: Any) -> Any:
    return soft(*primals), tangents[0]


assert_type(soft(tnp.zeros(3)), tl.Array)


@tl.custom_vjp
def ident(x: tl.Array) -> tl.Array:
    return x


def ident_fwd(x: tl.Array) -> tuple[tl.Array, None]:
    return x, None


def ident_bwd(res: None, g: tl.Array) -> tuple[tl.Array]:
    return (g,)


ident.defvjp(ident_fwd, ident_bwd)
assert_type(ident(tnp.zeros(3)), tl.Array)

record = tl.make_jaxpr(scale)(tnp.zeros(3), 2.0)
assert_type(record.pretty_print(), str)
assert_type(record.consts, list[Any])
both = tl.make_jaxpr(scale, return_shape=True)(tnp.zeros(3), 2.0)
assert_type(str(both[0].jaxpr), str)
