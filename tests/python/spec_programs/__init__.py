"""Every complete DSL program of the two spec documents, filled out with kernels where the
documents show only the orchestration. Each module defines ``PROGRAM`` (an IR Program,
built by ``@pl.program`` at import) and a one-line ``SOURCE`` note naming the spec section.
tests/python/test_spec_programs.py parses, prints and re-parses each of them."""

MODULES = [
    "orch_basic", "for_stmt", "if_stmt", "tuple_softmax", "output_alias", "dynamic_dims", "mixed_kernel",
    "tensor_ops", "mech1_manual_scope", "mech2_explicit_edges", "mech3_at_blocks", "mech4_manual_dep_tensor",
    "predicate_spmd_submit", "moe_skip_empty", "spmd_scoped", "at_scoped", "case1_phase_fence",
    "task_dummy_barrier", "no_dep_args", "cluster_spmd",
]
