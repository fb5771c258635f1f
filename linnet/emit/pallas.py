"""The Pallas half of the JAX printer: kernel Funcs as Pallas kernels, and their launches.

A kernel is printed as a function over refs (`pl.pallas_call` without block specs hands
each kernel whole-array refs). Every tensor reaches the kernel flattened to one axis, so a
load or store at an offsets tile, the tensor IR's flat addressing, is
`pltriton.load(ref.at[offsets], mask=..., other=...)` (a gather of the tile), and atomics
are `pltriton.atomic_add(ref, offsets, value, mask=...)`. A rank-0 parameter that is not
memory is a value read as `ref[0]`. A result written by atomics is an input at its first
contents aliased to the output: the kernel gets a ref for each (`i0_ref`, then `o0_ref`)
and writes the output's. Tile arithmetic is the JAX printer's (`jax_ops`) under the kernel
numerics of `linnet.ir.kernel_numerics`, which the Triton printer follows too: f16/bf16
division, remainder and math computed in f32 and rounded once (the lowering has no half
division); loops are `lax` loops; a tile product is `jnp.dot` with f32 accumulation, at
`lax.Precision.HIGHEST` where its `precision` is full f32 (`kn.full_f32_products`: f32
tiles under `equivalent`), else `DEFAULT` (TF32 for f32 tiles, under `fast`).

The launcher calls `pl.pallas_call` on the kernel's grid with the launch hints as an
explicit `compiler_params` (the default GPU lowering differs between JAX versions), results
written by atomics passed in at their identity and aliased to the outputs, empty tensors
passed as one element (Pallas takes no ref of size 0: `_flat_arg`), and `interpret=True`
under `LINNET_PALLAS_INTERPRET=1`. The chooser runs the kernel there or on
a GPU backend, and the op's body everywhere else.
"""

from __future__ import annotations

from ..ir import tensor as ir
from . import jax_ops as ops
from ..ir import kernel_numerics as kn
from ..ir.walk import all_binds
from .jax_func import JaxFunc, tuple_expr
from .layout import comment
from .triton import initial_fill, is_memory, memory_names, require_written

MEMORY_EFFECTS = ("store", "atomic_add", "atomic_max", "atomic_min")
ATOMICS = frozenset(MEMORY_EFFECTS[1:])
#: Primitives that Pallas's Triton lowering cannot compile (JAX 0.11): a kernel using one
#: runs in Pallas's interpreter only, and its op's body on a GPU.
NOT_ON_GPU = frozenset({"reduce_prod"})


def runs_on_gpu(kernel: ir.Func) -> bool:
    """Can Pallas's Triton lowering compile this kernel correctly? Not with a product
    reduction (no lowering), nor with an integer atomic over a tile (see
    `_integer_tile_atomic`)."""
    return not any(isinstance(b.expr, ir.Prim) and
                   (b.expr.op in NOT_ON_GPU or _integer_tile_atomic(b.expr))
                   for b in all_binds(kernel.body))


def _integer_tile_atomic(e: ir.Prim) -> bool:
    """An atomic on integers at a tile of positions. JAX 0.11's Triton lowering of
    `pltriton.atomic_*` asks whether the value's MLIR type is an integer type, which a tensor
    type never is: a tile of integers is then added as floats (wrong sums, no error) and its
    maximum or minimum fails an assertion. One integer position at a time is lowered right."""
    if e.op not in ATOMICS:
        return False
    _ref, offsets, value, *_mask = e.args
    return not ops.is_float(value.type.dtype) and (offsets.type.rank > 0 or value.type.rank > 0)


PRELUDE = '''import os  # noqa: E402

# Kernels: Pallas (through Triton) on a GPU, or Pallas's interpreter under
# LINNET_PALLAS_INTERPRET=1; anywhere else, and if Pallas cannot be imported, the op's body.
_LP_INTERPRET = os.environ.get("LINNET_PALLAS_INTERPRET") == "1"
try:
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as pltriton
except Exception:  # no Pallas (or a broken one): every op runs its body
    pl = None


def _lp_kernel_ok(gpu=True):
    """Run the kernel? Pallas is there and either interprets, or the backend is a GPU (and
    the kernel compiles there: `gpu`)."""
    return pl is not None and (_LP_INTERPRET or (gpu and jax.default_backend() == "gpu"))


def _lp_params(warps, stages):
    """The Triton compiler parameters of a launch (None in the interpreter)."""
    if _LP_INTERPRET:
        return None
    make = getattr(pltriton, "CompilerParams", None) or getattr(pltriton, "TritonCompilerParams")
    hints = {"num_warps": warps, "num_stages": stages}
    return make(**{k: v for k, v in hints.items() if v is not None})


def _lp_opaque(values):
    """A `while` loop's first values, hidden from XLA's trip counts in the interpreter (see
    the JAX printer's `OPAQUE`); on a GPU the kernel is lowered to Triton, not by XLA."""
    return lax.optimization_barrier(values) if _LP_INTERPRET else values


def _lp_atomic(op, ref, offsets, value, mask):
    """`pltriton.atomic_add/max/min` with a mask. Pallas's interpreter has no masked
    atomics: there the masked-off lanes write one past the end, which is dropped."""
    fn = getattr(pltriton, op)
    if not _LP_INTERPRET:
        return fn(ref, offsets, value, mask=mask)
    return fn(ref, jnp.where(mask, offsets, ref.shape[0]), value)'''


class KernelFunc(JaxFunc):
    """One kernel Func as a Pallas kernel over refs."""

    NAN_GUARD = False  # Triton's max/min reductions give NaN themselves
    KERNEL = True  # tile arithmetic as `kernel_numerics` says
    OPAQUE = "_lp_opaque"  # Pallas's Triton lowering has no optimization_barrier

    def emit(self, as_name: str | None = None) -> str:
        f = self.func
        used = memory_names(f.body)
        env: dict[str, str] = {}
        refs = []
        reads = []
        for k, p in enumerate(f.params):
            ref = f"p{k}_ref"
            refs.append(ref)
            if is_memory(p, used):
                env[p.name] = ref
            else:
                env[p.name] = self.fresh()
                reads.append(f"    {env[p.name]} = {ref}[0]  # {comment(p.name)}: a scalar")
        inits = f.launch.inits if f.launch is not None else ()
        refs += [f"i{k}_ref" for k, init in enumerate(inits) if init != "empty"]  # aliased
        for k, o in enumerate(f.outputs):
            refs.append(f"o{k}_ref")
            env[o.name] = f"o{k}_ref"
        self.block(f.body, env, 1)
        head = [f"def {as_name}({', '.join(refs)}):",
                f"    # kernel {comment(f.name)} over flat refs"]
        return "\n".join(head + reads + self.lines + ["    return None"])

    def bind(self, bind: ir.Bind, env: dict[str, str], depth: int) -> None:
        e = bind.expr
        if not isinstance(e, ir.Prim) or e.op not in ("load", "program_id", "dot") \
                + MEMORY_EFFECTS:
            return super().bind(bind, env, depth)
        note = comment(f"{bind.var.name}: {bind.var.type} = ")
        args = [self.atom(a, env) for a in e.args]
        if e.op in MEMORY_EFFECTS:
            self.line(depth, self.effect(e, args) + f"  # {note}{e.op}")
            env[bind.var.name] = "True"
            return
        target = env[bind.var.name] = self.fresh()
        self.line(depth, f"{target} = {self.value(e, args)}  # {note}{e.op}")

    def value(self, e: ir.Prim, args: list[str]) -> str:
        if e.op == "program_id":
            return f"pl.program_id({int(e.attr('axis'))})"
        if e.op == "dot":
            return self.dot(e, args)
        ref, offsets, *rest = to_tile(e, args)
        if not rest:
            return f"pltriton.load({ref}.at[{offsets}])"
        other = rest[1] if len(rest) > 1 else ops.literal_expr(0, e.type.dtype)
        return f"pltriton.load({ref}.at[{offsets}], mask={rest[0]}, other={other})"

    def effect(self, e: ir.Prim, args: list[str]) -> str:
        ref, offsets, value, *mask = to_tile(e, args)
        where = f", mask={mask[0]}" if mask else ""
        if e.op == "store":
            return f"pltriton.store({ref}.at[{offsets}], {value}{where})"
        if not mask:
            return f"pltriton.{e.op}({ref}, {offsets}, {value})"
        return f"_lp_atomic({e.op!r}, {ref}, {offsets}, {value}, {mask[0]})"

    def dot(self, e: ir.Prim, args: list[str]) -> str:
        """`jnp.dot` with f32 accumulation; f32 tiles at the precision the e-graph chose."""
        full = kn.full_f32_products(e.args[0].type.dtype, str(e.attr("precision") or ""))
        how = "lax.Precision.HIGHEST" if full else "lax.Precision.DEFAULT"
        product = (f"jnp.dot({args[0]}, {args[1]}, preferred_element_type=jnp.float32, "
                   f"precision={how})")
        return f"({args[2]} + {product})" if len(args) == 3 else product


def to_tile(e: ir.Prim, args: list[str]) -> list[str]:
    """A memory access's operands with the scalar ones broadcast to the accessed tile.

    docs/language.md, "Kernels" lets `store` and the atomics take a scalar value, and every access
    a scalar mask, for a tile of positions; Triton broadcasts them itself, but Pallas's
    `store`/`swap` and atomics want exactly the tile's shape (`Invalid shape for swap`),
    so the generated code broadcasts them explicitly, which both the GPU lowering and the
    interpreter accept. The operands follow the memory: offsets, then (store, atomics) the
    value, then the mask, then (load) `other`, which `load` broadcasts itself.
    """
    tile = e.args[1].type.shape
    if not tile:
        return list(args)
    fixed = list(args)
    kinds = ("offsets", "mask") if e.op == "load" else ("offsets", "value", "mask")
    for k, (kind, a) in enumerate(zip(kinds, e.args[1:]), start=1):
        if kind != "offsets" and a.type.rank == 0:
            fixed[k] = f"jnp.broadcast_to({args[k]}, {tuple(int(n) for n in tile)!r})"
    return fixed


def launcher_source(op: ir.Func, kernel: ir.Func, name: str, kernel_name: str) -> str:
    """`name(*op params)`: the kernel launched on flat copies of the inputs, its results
    reshaped to the op's result types."""
    launch = kernel.launch
    require_written(kernel, launch)
    params = [f"v{k}" for k in range(len(op.params))]
    lines = [f"def {name}({', '.join(params)}):",
             f"    # launches {kernel_name} (kernel {comment(kernel.name)}) for op "
             f"{comment(op.name)}: grid {launch.grid}"]
    args = [_flat_arg(v, p.type) for v, p in zip(params, op.params)]
    shapes, inits, aliases = [], [], {}
    for k, o in enumerate(kernel.outputs):
        size = max(_size(o.type), 1)  # an empty result is one unread element (`_flat_arg`)
        dtype = ops.jnp_dtype(o.type.dtype)
        shapes.append(f"jax.ShapeDtypeStruct(({size},), {dtype})")
        init = launch.inits[k] if k < len(launch.inits) else "empty"
        fill = initial_fill(init, o.type.dtype)
        if fill != "None":
            aliases[len(args) + len(inits)] = k
            inits.append(f"jnp.full(({size},), {fill}, dtype={dtype})")
        elif not all(int(g) > 0 for g in launch.grid):  # an empty result: nothing to write
            inits.append(f"jnp.zeros(({size},), dtype={dtype})")
    if all(int(g) > 0 for g in launch.grid):
        lines += [f"    outs = pl.pallas_call({kernel_name}, out_shape={tuple_expr(shapes)}, "
                  f"grid={tuple(int(g) for g in launch.grid)!r},",
                  f"                          input_output_aliases={aliases!r}, "
                  f"compiler_params=_lp_params({launch.warps}, {launch.stages}),",
                  "                          interpret=_LP_INTERPRET)("
                  f"{', '.join(args + inits)})"]
    else:  # an empty grid launches nothing: the results keep their first contents
        lines.append(f"    outs = {tuple_expr(inits)}")
    outs = [f"jnp.reshape(outs[{k}]{'[:0]' if _size(o.type) == 0 else ''}, "
            f"{tuple(int(n) for n in o.type.shape)!r})" for k, o in enumerate(kernel.outputs)]
    if isinstance(op.body.result.type, ir.TupleTy):
        lines.append(f"    return {tuple_expr(outs)}")
    else:
        lines.append(f"    return {outs[0]}")
    return "\n".join(lines)


def _size(ty: ir.Ty) -> int:
    """The number of elements of a tensor type (1 for a scalar)."""
    size = 1
    for n in getattr(ty, "shape", ()):
        size *= int(n)
    return size


def _flat_arg(v: str, ty: ir.Ty) -> str:
    """An op's argument as the kernel's flat ref. An empty tensor is passed as one zero
    element: every block of a ref without block specs is the whole array, and Pallas
    cannot take a block of size 0 (its interpreter divides by the block's size, and a
    gather from an empty ref is rejected while tracing). A kernel reads no element of an
    empty tensor (its accesses are masked off), so the element is never read; an empty
    result is likewise written into one element that the launcher drops."""
    if _size(ty) == 0:
        return f"jnp.zeros((1,), dtype={ops.jnp_dtype(ty.dtype)})"
    return f"jnp.reshape({v}, (-1,))"
