"""Builds the optional C accelerator; the metadata is in pyproject.toml.

``typelattice._speedups`` (src/typelattice/_speedups.c) needs only a C
compiler and the Python headers. It is optional: when it cannot be built the
installation goes on and typelattice runs its pure-Python code, which gives
the same answers (see typelattice/_promotion.py).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "typelattice._speedups",
            sources=["src/typelattice/_speedups.c"],
            optional=True,
        )
    ]
)
