"""The checked conversion: ``convert_element_type`` with a ``check``
parameter refuses values the new dtype cannot hold, on every path (eagerly,
in a jitted program when it runs, and on the primal values under grad)."""

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice._lax._elementwise import Check, convert_element_type_p

I8 = np.dtype("int8")
F32 = np.dtype("float32")


def _weak_to_int8(x):
    return convert_element_type_p.bind(
        x, new_dtype=I8, weak_type=False, check=Check("weak", "add", 1)
    )


def test_eager_checked_conversion_keeps_values_that_fit():
    x = tnp.asarray(np.int32([1, -2, 127]))
    out = convert_element_type_p.bind(
        x, new_dtype=I8, weak_type=False, check=Check("operand", "add", 0)
    )
    assert out.dtype == I8
    assert out.tolist() == [1, -2, 127]


@pytest.mark.parametrize("how", ["weak", "operand"])
def test_eager_checked_conversion_refuses_a_value_that_does_not_fit(how):
    x = tnp.asarray(np.int32([1, 300]))
    with pytest.raises(OverflowError, match="add"):
        convert_element_type_p.bind(
            x, new_dtype=I8, weak_type=False, check=Check(how, "add", 1)
        )


def test_unchecked_conversion_wraps_as_lax_does():
    x = tnp.asarray(np.int32([300]))
    out = convert_element_type_p.bind(x, new_dtype=I8, weak_type=False)
    assert out.tolist() == [44]


def test_jitted_program_checks_when_it_runs():
    f = tl.jit(_weak_to_int8)
    assert f(tnp.asarray(np.int32([5]))).tolist() == [5]
    with pytest.raises(OverflowError, match="add"):
        f(tnp.asarray(np.int32([500])))


def test_grad_checks_the_primal_values():
    def f(x):
        y = convert_element_type_p.bind(
            x,
            new_dtype=np.dtype("float16"),
            weak_type=False,
            check=Check("operand", "multiply", 0),
        )
        return tnp.sum(y.astype(F32))

    g = tl.grad(f)(tnp.asarray(np.float32([1.0, 2.0])))
    assert g.tolist() == [1.0, 1.0]
    with pytest.raises(OverflowError, match="multiply"):
        tl.grad(f)(tnp.asarray(np.float32([1.0, 1e6])))
