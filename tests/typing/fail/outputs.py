"""Results have precise types: using them as something else is an error."""

from typing import Any

import typelattice as tl
import typelattice.numpy as tnp
from typelattice.typing import ArrayLike

x = tnp.asarray([1, 2], dtype="int8")

# Operators give Arrays, not Any.
n: int = x + 1  # E: assignment, reportAssignmentType
f: float = x.sum()  # E: assignment, reportAssignmentType
d: str = x.dtype  # E: assignment, reportAssignmentType
s: list[int] = x.shape  # E: assignment, reportAssignmentType
t: tuple[Any, bool] = tl.result_type(x)  # E: assignment, reportAssignmentType
x.fill(0)  # E: attr-defined, reportAttributeAccessIssue, reportUnknownMemberType
x.shape = (2,)  # E: misc, reportAttributeAccessIssue


def is_array_like(v: object) -> bool:
    # The ArrayLike alias is for annotations: at run time this isinstance raises
    # TypeError (the alias holds parameterized generics); use ArrayLikeTypes.
    # mypy lets it through, pyright does not.
    return isinstance(v, ArrayLike)  # E: reportArgumentType


# A jitted function keeps its signature and result type.
wrong: str = tl.jit(tnp.sum)(x)  # E: assignment, reportAssignmentType


def twice(v: tl.Array) -> tl.Array:
    return v * 2


tl.jit(twice)("a")  # E: arg-type, reportArgumentType
