"""Every IR pass, callable on a Program (the C++ passes of ``src/transforms``).

Each name is a factory returning a ``Pass``; calling the pass on a Program runs it::

    import pypto.language as pl
    from pypto import ir
    from pypto.ir import passes

    before = pl.parse_program(text)
    after = passes.NormalizeReturnOrder()(before)
    assert ir.structural_equal(after, expected)

A ``Pass`` has a ``name`` and its contract: the IR properties it ``required``,
``produced`` and ``invalidated`` (names of :class:`IRProperty` members). Calling it checks
that the required properties hold on the input and that the produced ones hold on the
output (``InternalError`` otherwise); with ``verify_well_formed=True`` or
``PYPTO_VERIFY_PASSES=1`` in the environment it also runs :func:`verify_well_formed` on the
input and the output.
"""

from __future__ import annotations

from typing import List

from pypto._core import passes as _passes
from pypto._core.passes import IRProperty, Pass  # noqa: F401  (re-exported)

# Every pass factory of the C++ core, re-exported by name (one per pass in src/transforms), so a
# new pass needs no edit here.
_PASS_NAMES = sorted(n for n in dir(_passes) if n[:1].isupper() and n not in ("IRProperty", "Pass"))
globals().update({n: getattr(_passes, n) for n in _PASS_NAMES})

__all__ = ["Pass", "IRProperty", *_PASS_NAMES, "default_pipeline", "kernel_pipeline", "verify_property",
           "verify_well_formed"]


def default_pipeline() -> List[Pass]:
    """The passes the compiler runs on a program, in order.

    >>> [p.name for p in default_pipeline()][:2]
    ['OutlineClusterScopes', 'OutlineIncoreScopes']
    """
    return list(_passes.default_pipeline())


def kernel_pipeline() -> List[Pass]:
    """The kernel pipeline: passes that stamp typed results on kernel / Group functions
    (``Function.core_type``, ``Function.param_slots``, ``Function.group_sync``,
    ``ForStmt.inplace_carries``, ``Call.shares_source_tile`` of each ``tile.move``,
    ``Call.reads_in_place`` of each ``tile.load``, ``ForStmt.lent_inits``, the ``base`` of each
    ``system.import_peer_buffer``, ``ForStmt.counted`` of every loop). It ends :func:`default_pipeline`.

    >>> [p.name for p in kernel_pipeline()]
    ['InferKernelCoreTypes', 'KernelParamSlots', 'KernelGroupSync', 'KernelInPlaceCarries',
     'KernelShareTileMoves', 'KernelInPlaceMatmulLoads', 'KernelLendLoopInits',
     'ResolvePeerBufferBases', 'StampCountedLoops']
    """
    return list(_passes.kernel_pipeline())


def verify_property(prop: IRProperty, program) -> List[str]:
    """One message per place where ``prop`` does not hold on ``program`` (empty: it holds).

    >>> verify_property(IRProperty.CallDirectionsDerived, program)
    []
    """
    return list(_passes.verify_property(prop, program))


def verify_well_formed(program) -> List[str]:
    """One message per well-formedness violation (empty: well formed): a Var defined twice,
    a use not dominated by its definition, a loop or branch whose yield does not match its
    iter_args / return vars, a statement without a source span.

    >>> verify_well_formed(pl.parse_program(text))
    []
    """
    return list(_passes.verify_well_formed(program))
