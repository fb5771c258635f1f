"""Checkpoints of block models, for every runtime: reading a checkpoint's names, shapes and
dtypes, and checking them against the root block's manifest before anything is copied.

A checkpoint is a `.safetensors` file (read with the `safetensors` package, lazily: only
its header is read to check it) or a mapping of path -> tensor (a PyTorch `state_dict`, a
dict of NumPy or JAX arrays). The runtimes (`linnet.torch.block_module`,
`linnet.jax.block_model`) read the tensors themselves, in their own framework; what is
shared is what a checkpoint must hold, and the one error that lists every way it does not:

- every present param and buffer of the manifest, with its shape and dtype;
- no name the manifest does not have (nor one under an optional sub that is absent: the
  checkpoint's names are the compilation's `present`, so an optional param or buffer it
  holds is present, and an optional sub is when it holds all the sub requires);
- a state may be there (a checkpoint written with states is accepted): it is checked like
  a weight, but not loaded, since a state starts at zeros.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import LinnetError, closest
from .parameters import Manifest, Parameter
from .passes.front.block_entry import choose_root, root_manifest

__all__ = ["CheckpointError", "Checkpoint", "open_checkpoint", "check_checkpoint",
           "dtype_name", "model_manifest", "FLOATING"]

FLOATING = ("f16", "bf16", "f32", "f64")

# dtype names as torch, NumPy, JAX (`str(dtype)`, `torch.` removed) and safetensors write them
DTYPE_NAMES = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16",
    "bfloat16": "bf16", "float32": "f32", "float64": "f64", "half": "f16", "float": "f32",
    "double": "f64", "long": "i64", "int": "i32", "short": "i16",
    "BOOL": "bool", "I8": "i8", "I16": "i16", "I32": "i32", "I64": "i64", "U8": "u8",
    "U16": "u16", "U32": "u32", "U64": "u64", "F16": "f16", "BF16": "bf16", "F32": "f32",
    "F64": "f64",
}


class CheckpointError(LinnetError):
    """A checkpoint that does not fit the model: `problems` lists each (one line each,
    naming the path), and `str()` all of them."""

    def __init__(self, problems: list[str], source: str) -> None:
        head = f"the checkpoint {source} does not fit the model ({len(problems)} problem" \
               f"{'' if len(problems) == 1 else 's'}):"
        super().__init__("\n".join([head, *(f"  {p}" for p in problems)]))
        self.problems = problems


def dtype_name(dtype: Any) -> str:
    """The Linnet name of a framework's dtype (`torch.float32`, `np.dtype("int64")`, a JAX
    dtype, "F32"); the text itself when no name is known."""
    text = str(dtype).replace("torch.", "")
    if text.startswith("<class 'numpy."):  # a NumPy scalar type: np.float32
        text = text[len("<class 'numpy."):-2]
    return DTYPE_NAMES.get(text, text)


@dataclass(frozen=True)
class Weight:
    """What a checkpoint holds under one name: its shape and (Linnet) dtype."""
    shape: tuple[int, ...]
    dtype: str

    def text(self) -> str:
        return f"Tensor[{', '.join(map(str, self.shape))}; {self.dtype}]" if self.shape \
            else self.dtype


class Checkpoint:
    """A checkpoint's names, shapes and dtypes (`weights`), and its tensors on demand
    (`tensor(path, framework)`)."""

    def __init__(self, source: str, weights: dict[str, Weight], file: Path | None = None,
                 mapping: Mapping[str, Any] | None = None) -> None:
        self.source = source
        self.weights = weights
        self.file = file
        self.mapping = mapping

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(self.weights)

    def tensors(self, paths: list[str], framework: str) -> dict[str, Any]:
        """The tensors of these paths: a mapping's values as they are; a file's read with
        safetensors for `framework` ("pt", "flax" or "numpy")."""
        if self.mapping is not None:
            return {p: self.mapping[p] for p in paths}
        from safetensors import safe_open
        with safe_open(str(self.file), framework=framework) as f:
            return {p: f.get_tensor(p) for p in paths}


def open_checkpoint(weights: Any) -> Checkpoint | None:
    """The checkpoint `weights` names: a `.safetensors` path, a mapping of path -> tensor,
    or None (no checkpoint). A file that cannot be read is a LinnetError."""
    if weights is None:
        return None
    if isinstance(weights, (str, Path)):
        return _read_file(Path(weights))
    if isinstance(weights, Mapping):
        found = {}
        for path, value in weights.items():
            shape = getattr(value, "shape", None)
            if not isinstance(path, str) or shape is None or not hasattr(value, "dtype"):
                raise LinnetError(f"weights: {path!r} is not a tensor named by its path "
                                  f"(a mapping of path -> tensor is expected)")
            found[path] = Weight(tuple(int(n) for n in shape), dtype_name(value.dtype))
        return Checkpoint("(a mapping of path -> tensor)", found, mapping=weights)
    raise LinnetError(f"weights: expected a .safetensors path or a mapping of path -> tensor, "
                      f"got {type(weights).__name__}")


def _read_file(path: Path) -> Checkpoint:
    """A safetensors file's header: names, shapes, dtypes (no tensor is read)."""
    from safetensors import SafetensorError, safe_open
    try:
        with safe_open(str(path), framework="numpy") as f:
            found = {}
            for key in f.keys():
                piece = f.get_slice(key)
                found[key] = Weight(tuple(piece.get_shape()), dtype_name(piece.get_dtype()))
    except (OSError, SafetensorError) as err:
        raise LinnetError(f"cannot read the checkpoint {str(path)!r}: {err}") from None
    return Checkpoint(repr(str(path)), found, file=path)


def check_checkpoint(manifest: Manifest, checkpoint: Checkpoint) -> None:
    """Every problem of the checkpoint against the manifest, raised at once
    (CheckpointError), or nothing: missing params and buffers, names the model does not
    have, shapes and dtypes that differ. States may be there or not."""
    problems: list[str] = []
    by_path = manifest.by_path()
    for p in manifest.parameters:
        found = checkpoint.weights.get(p.path)
        if found is None:
            if p.input is not None and p.kind != "state":
                problems.append(f"{p.path}: missing ({p.kind} {p.type_text()})")
        elif p.input is None:
            problems.append(f"{p.path}: unexpected ({_absent_why(p, manifest)})")
        else:
            problems.extend(_mismatches(p, found))
    problems.extend(_unknown(manifest, checkpoint.weights))
    if problems:
        raise CheckpointError(problems, checkpoint.source)


def check_present(manifest: Manifest, paths: Any, source: str = "named by --present") -> None:
    """The paths said to be in a checkpoint (`--present`) against the manifest: a path the
    model has no parameter for (a misspelling) is a CheckpointError, as in a checkpoint."""
    problems = _unknown(manifest, paths)
    if problems:
        raise CheckpointError(problems, source)


def _unknown(manifest: Manifest, paths: Any) -> list[str]:
    """A problem for each of `paths` that names no parameter of the manifest."""
    by_path = manifest.by_path()
    problems = []
    for path in sorted(set(paths) - set(by_path)):
        near = closest(path, sorted(by_path))
        problems.append(f"{path}: unexpected (the model has no such parameter"
                        f"{f'; did you mean {near}?' if near else ''})")
    return problems


def _mismatches(p: Parameter, found: Weight) -> list[str]:
    out = []
    if found.shape != p.shape:
        out.append(f"{p.path}: shape {list(found.shape)}, expected {list(p.shape)} "
                   f"({p.kind} {p.type_text()})")
    if found.dtype != p.dtype:
        out.append(f"{p.path}: dtype {found.dtype}, expected {p.dtype} "
                   f"({p.kind} {p.type_text()}; no dtype is converted implicitly)")
    return out


def _absent_why(p: Parameter, manifest: Manifest) -> str:
    """Why a tensor the checkpoint holds has no place in the model. The checkpoint's names
    decide presence (`present`), so an optional param it holds is present: what remains
    absent lies under an optional sub that lacks a param it requires."""
    if not p.optional:
        return "not in the manifest"
    subs = [path for path in _prefixes(p.path)
            if not any(q.path.startswith(path + ".") and q.input is not None
                       for q in manifest.parameters)]
    if not subs:
        return ("an optional member the model was made without: load the model with a "
                "checkpoint that holds it")
    return (f"under an optional sub `{subs[0]}` that is absent: the checkpoint lacks a "
            f"param or buffer it requires")


def _prefixes(path: str) -> list[str]:
    """`a.b.c` -> `a`, `a.b`: the members above a path, outermost first."""
    parts = path.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def model_manifest(analysis: Any, root: str | None, generics: Mapping[str, Any] | None,
                   present: frozenset[str] | None) -> tuple[Manifest, dict[str, str]]:
    """The root block's manifest for these values of its generics (ints, dtype names or
    dtypes; defaults fill the rest), and the values as `--bind` text. A generic the block
    lacks, or one without a default left out, is a LinnetError naming it."""
    info = choose_root(analysis, root, None)
    values = {name: _generic_text(name, v) for name, v in (generics or {}).items()}
    if info is not None:
        missing = [g for name, g in info.generics.items()
                   if name not in values and g.default is None]
        if missing:
            g = missing[0]
            raise LinnetError(f"generic `{g.name}: {g.kind}` of the root block `{info.name}` "
                              f"needs a value: generics={{{g.name!r}: ...}} (its generics "
                              f"without defaults: {', '.join(m.name for m in missing)})")
    return root_manifest(analysis, root, values, present), values


def _generic_text(name: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str, tuple, list)):
        if hasattr(value, "itemsize") or str(value).startswith("torch."):  # a dtype
            return dtype_name(value)
        raise LinnetError(f"generic {name!r}: expected an int, a dtype name or a tuple of "
                          f"ints, got {value!r}")
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)
    return str(value)
