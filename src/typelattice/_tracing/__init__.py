"""Tracing: running functions on abstract arrays, recording what they do,
and replaying the record (see docs/tracing.md).

The modules, each importing only those above it:

- :mod:`.tree`: the one definition of the containers that are walked
  (pytrees: tuples, lists, dicts, namedtuples, None, OrderedDict,
  defaultdict and registered classes), public as ``typelattice.tree_util``;
- :mod:`.tracer`: :class:`~.tracer.Tracer`, the traces that own tracers,
  placeholders, and the errors of tracing;
- :mod:`.abstract`: the shape rules that evaluate a function on stand-ins;
- :mod:`.trace`: recording (the :func:`~.trace.traced` decorator that
  attaches a function's shape rule at its definition, the equations) and
  the :class:`~.trace.Program` generated from a trace;
- :mod:`.jit`: :func:`~.jit.jit`, :func:`~.jit.eval_shape` and
  :class:`~.jit.ShapeDtypeStruct`, which ``typelattice`` exports;
- :mod:`.transfer`: :func:`~.transfer.device_put` and
  :func:`~.transfer.block_until_ready`.

Nothing here imports the array namespace (``typelattice.numpy``): the
namespace imports this package to register its functions' rules.
"""
