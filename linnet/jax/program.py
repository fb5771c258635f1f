"""`linnet.jax.load_function` and `load_source`: a program's entry, or its root block's
model, on JAX arrays, over a device mesh where one is given.

Apart from `loader.py` because it chooses among the runtimes of a program: the entry
functions (`loader.py`), the block model (`block_model.py`, which builds on them) and both
over a mesh (`mesh.py`, which builds on both), and so sits above all three.
"""

from __future__ import annotations

from typing import Any

from ..checkpoint import check_checkpoint, model_manifest, open_checkpoint
from ..errors import LinnetError
from ..pipeline import NUMERICS, check_choice
from ..torch.block_entry_function import block_entries, block_signature
from ..torch.loader import checked, read_program, read_tuning
from .block_model import JaxBlockEntryFunction, JaxBlockModel, as_jax, zeros
from .loader import JaxEntryFunction
from .mesh import MeshBlockEntryFunction, MeshEntryFunction, shard_plan


def load_function(path: str, name: str, *, numerics: str = "equivalent",
                  tuning: Any = None, mesh: Any = None,
                  shard: dict[str, Any] | None = None) -> JaxEntryFunction:
    """A callable that runs the entry `name` of the Linnet program at `path` on JAX arrays.

    It returns the entry's result: one array, or a tuple of arrays for a tuple result, in
    exactly the declared dtypes and shapes. `numerics` is `"exact"`, `"equivalent"` or
    `"fast"`, as `--numerics` (it sets the precision of contractions; `"exact"` runs no
    kernel). `tuning` is `linnet.torch.load_function`'s: the recorded kernel
    choices of JAX's default device apply where their op and sizes match. Errors are
    `linnet.torch.load_function`'s, raised as early.

    `mesh` (a `jax.sharding.Mesh`) and `shard` ({op name: mesh axis, or a tuple of axes})
    run the kernel of each named op per shard of its batch axis, under `jax.shard_map`
    (`linnet.jax.mesh`; docs/jax.md, "JAX over a mesh"). An op without a batch axis by the
    rule of `linnet.check.batch_rule` raises a LinnetError here.
    """
    return checked_entry(path, name, None, numerics, tuning, mesh, shard)


def checked_entry(path: str, name: str, text: str | None, numerics: str, tuning: Any,
             mesh: Any, shard: Any) -> JaxEntryFunction:
    """The entry function, over a mesh when one is given."""
    tuning = read_tuning(tuning, path)
    if mesh is None and shard is None:
        return JaxEntryFunction.checked(path, name, text=text, numerics=numerics,
                                        tuning=tuning)
    fn = MeshEntryFunction.checked(path, name, text=text, numerics=numerics, tuning=tuning,
                                   plan=shard_plan(mesh, shard))
    fn.check_plan()
    return fn


def load_source(source: Any, name: str | None = None, *, numerics: str = "equivalent",
                path: str | None = None, tuning: Any = None, generics: dict[str, Any] | None = None,
                weights: Any = None, root: str | None = None, mesh: Any = None,
                shard: dict[str, Any] | None = None) -> Any:
    """A program's entry, or its root block's model, on JAX arrays.

    With `name`: `load_function` for the program held in the string `source` (`path`
    names it in diagnostics), its module-level entry `name`; `mesh=` and `shard=` as
    `load_function`'s.

    Without `name`: the program's root block (the only block with entries, or `root`) as a
    model (`linnet.jax.block_model.JaxBlockModel`): `source` is the program's path (a
    `Path`, or a string without a newline), or its text (a string with newlines; `path`
    names it). `generics` gives the root block's generics (ints, dtype names; defaults fill
    the rest), `weights` a `.safetensors` path or a mapping of path -> array, checked
    against the parameter manifest (None: zeros). `model.parameters` is the dict by path of
    the params and buffers; each entry is `model.main(params, state, *inputs) -> (result,
    next_state)`, with `state` a dict by path (`model.initial_state()`: zeros), usable
    under `jax.jit` and `jax.grad`. See docs/models.md, "Loading weights". `mesh=` and
    `shard=` run the named ops' kernels per shard in every entry, as `load_function`'s
    (docs/scale_jax.md, "Block models").
    """
    if name is not None:
        given = [k for k, v in (("generics", generics), ("weights", weights), ("root", root))
                 if v is not None]
        if given:
            raise LinnetError(f"load_source(text, name) loads a module-level entry; {given[0]}= "
                              "is for a root block's model: load_source(path, generics=..., "
                              "weights=...) without a name")
        path = path or "<source>.linnet"
        return checked_entry(path, name, source, numerics, tuning, mesh, shard)
    check_choice("numerics", numerics, NUMERICS)
    if isinstance(source, str) and "\n" in source:
        text, path = source, path or "<source>.linnet"
    else:
        path = str(source)
        text = read_program(path)
    return load_model(path, text, generics=generics, weights=weights, root=root,
                      numerics=numerics, tuning=tuning, mesh=mesh, shard=shard)


def load_model(path: str, text: str, *, generics: Any, weights: Any,
               root: str | None, numerics: str, tuning: Any, mesh: Any = None,
               shard: Any = None) -> JaxBlockModel:
    """The `JaxBlockModel` of a program (see `linnet.jax.load_source`); over a mesh, each
    entry's named ops run their kernels per shard (`linnet.jax.mesh`)."""
    import jax
    analysis = checked(text, path)
    plan = None
    if mesh is not None or shard is not None:
        plan = shard_plan(mesh, shard)
    checkpoint = open_checkpoint(weights)
    present = None if checkpoint is None else checkpoint.keys
    manifest, block_bind = model_manifest(analysis, root, generics, present)
    parameters = zeros(manifest, ("param", "buffer"))  # without weights: zeros
    if checkpoint is not None:
        check_checkpoint(manifest, checkpoint)
        paths = [p.path for p in manifest.parameters
                 if p.input is not None and p.kind != "state"]
        with jax.enable_x64(True):  # an i64 weight stays i64
            found = checkpoint.tensors(paths, "flax")
            parameters = {p: as_jax(found[p]) for p in paths}
    tuning = read_tuning(tuning, path)
    functions = {}
    for name in block_entries(analysis, root):
        fn = _entry_function(plan, analysis, path, text, name, True, numerics, tuning,
                             root=manifest.root, block_bind=block_bind, present=present)
        fn._sig = block_signature(analysis, manifest.root, name, block_bind)
        functions[name] = fn
    return JaxBlockModel(manifest, functions, parameters)


def _entry_function(plan: Any, analysis: Any, *args: Any, **options: Any
                    ) -> JaxBlockEntryFunction:
    """One entry's function: over the mesh of `plan` where there is one."""
    if plan is None:
        return JaxBlockEntryFunction(*args, **options)
    fn = MeshBlockEntryFunction(*args, **options, plan=plan)
    fn.check_plan(analysis)
    return fn
