"""The kernel-only primitives: the program's index, and memory (their operands start
with the memory Var). Only the Triton printer writes them (Pallas reads the same rows
through its own printer); the tensor printers refuse them."""

from __future__ import annotations

from .definition import PrimDef, Via

#: Primitives with an effect: never removed, merged or reordered among themselves.
EFFECTS = frozenset({"store", "atomic_add", "atomic_max", "atomic_min"})

ROWS = (
    PrimDef("program_id", 0, "kernel", ("axis",), prelude="program_id",
            triton=Via("program_id"), doc="i32 scalar"),
    PrimDef("load", None, "memory", prelude="load",
            doc="(mem, offsets[, mask[, other]]) -> tile"),
    PrimDef("store", None, "memory", doc="(mem, offsets, value[, mask]); an effect"),
    PrimDef("atomic_add", None, "memory"),
    PrimDef("atomic_max", None, "memory"),
    PrimDef("atomic_min", None, "memory"),
)
