"""`linnet.torch.load_function` and `load`: call Linnet entries on torch tensors.

Generics are bound from the inputs at each call (shapes give dims and packs,
tensor dtypes give dtype generics), and each binding is compiled once. With
`compile=True` the program is generated as a PyTorch module and imported from
the generated text (a copy kept in the private cache); with `compile=False` the tensor
IR is evaluated directly by the interpreter, generating no code.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..check.dim_normal_form import Dim
from ..check.signatures import Binding, bind_shape, substitute
from ..check.types import TensorT, TupleT
from ..check.value_types import as_tuples, leaves
from ..emit.torch import function_names
from ..errors import InputError, InputShapeError, LinnetError, suggest
from ..passes.front.bind_generics import choose_entry
from ..pipeline import FRONT, NUMERICS, check_choice, compile_source, passes_for
from ..tuning.records import TuningFileError, tuning_file
from .runtime import import_generated

__all__ = ["EntryFunction", "LoadedModule", "LinnetError", "load", "load_function"]

_MISSING = object()  # an input a call gave neither by position nor by name

TORCH_DTYPES = {"bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
                "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
                "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64"}


@dataclass(eq=False)  # compared and hashed by identity: jax.jit caches functions by hash
class EntryFunction:
    """A callable for one entry; compiles once per binding of its generics.

    `TARGET` is the backend it generates (`linnet.jax` subclasses it for JAX)."""
    TARGET = "torch"

    path: str
    text: str
    name: str
    compile: bool
    numerics: str
    tuning: Any = None  # a TuningFile or KernelTuning (linnet.tune), or None: headers only
    cache: dict[tuple, Callable[..., tuple]] = field(default_factory=dict)
    by_inputs: dict[tuple, Callable[..., tuple]] = field(default_factory=dict)
    _sig: Any = None
    _tuple_result: bool | None = None
    # each generated module this function runs, its op names, and its counters when attached
    _modules: list[tuple[Any, dict[str, str], dict[str, tuple[int, int]]]] = field(
        default_factory=list)

    def __repr__(self) -> str:
        how = "compiled" if self.compile else "interpreted"
        return (f"<linnet.{self.TARGET} entry {self.name} of {self.path} ({how}, "
                f"numerics={self.numerics}, {len(self.cache)} binding(s))>")

    def __call__(self, *inputs: Any, **named: Any) -> Any:
        if named:
            inputs = self.positional(inputs, named)
        try:  # the fast path of a repeated call: its inputs' shape and dtype objects
            run = self.by_inputs[self._input_key(inputs)]
        except (KeyError, TypeError):  # a new key, or one that cannot be hashed
            run = self._run_for(inputs)
        outputs = run(*inputs)
        return outputs if self._tuple_result else outputs[0]

    def param_names(self) -> list[str]:
        """The name of each input, in order: the entry's parameters (a struct parameter's
        fields, one input each, as `p.field`)."""
        sig = self._signature()
        names = [p.name for p in sig.item.params]
        if len(names) == len(sig.params):
            return names
        full = signature_of(checked(self.text, self.path), self.name, flatten=False)
        return [leaf for name, ty in zip(names, full.params) for leaf in _leaf_names(name, ty)]

    def positional(self, inputs: tuple, named: dict[str, Any]) -> tuple:
        """A call's inputs in order, keyword arguments (by parameter name) put in place: a
        name the entry does not have, one given twice, or a gap is an InputError."""
        names = self.param_names()
        slots: list[Any] = list(inputs) + [_MISSING] * max(0, len(names) - len(inputs))
        for key, value in named.items():
            if key not in names:
                raise InputError(f"{self.name}() has no parameter named `{key}`; its "
                                 f"parameters: {', '.join(names)}{suggest(key, names)}")
            k = names.index(key)
            if k < len(inputs):
                raise InputError(f"{self.name}(): `{key}` (input {k}) is given twice, by "
                                 "position and by name")
            slots[k] = value
        missing = [names[k] for k, v in enumerate(slots) if v is _MISSING]
        if missing:
            raise InputError(f"{self.name}(): no value for `{missing[0]}`")
        return tuple(slots)

    def prepare(self, *inputs: Any, **generics: Any) -> None:
        """Compile the binding these inputs select (by their shapes and dtypes, and their
        device where a tuning file is in use) without running it. `torch.compile` cannot
        trace the compilation of a new binding: prepare it before tracing a call.
        `generics` give the values of generics no input determines (a `Dim` only the
        result has), which later calls with inputs like these then use."""
        self._run_for(inputs, generics)

    def _run_for(self, inputs: tuple, given: dict[str, Any] | None = None
                 ) -> Callable[..., tuple]:
        """The compiled binding for these inputs (compiled on first use, the `given`
        generics added to those the inputs determine), remembered under the inputs' key
        for the next call."""
        # raises InputError / InputShapeError: no entry kept
        values = ({**given, **self.binding_for(inputs, complete=False)} if given
                  else self.binding_for(inputs))
        device = self.device_name(inputs) if self.tuning is not None else None
        key = tuple(sorted(values.items())) + (device,)
        run = self.cache.get(key)
        if run is None:
            run = self.cache[key] = self._build(values, device)
        self._tuple_result = self._returns_tuple
        if all(hasattr(x, "shape") or isinstance(x, (bool, int, float)) for x in inputs):
            try:  # (a list's key says nothing of its length: lists are bound at every call)
                self.by_inputs[self._input_key(inputs)] = run
            except TypeError:  # a shape or dtype that cannot be hashed: bound at every call
                pass
        return run

    def _input_key(self, inputs: tuple) -> tuple:
        """The key of a call's binding: the inputs' shapes and dtypes, and with a tuning
        file their device's name (tuned choices are per device)."""
        key = _input_key(inputs)
        return key + (self.device_name(inputs),) if self.tuning is not None else key

    def source(self, **values: Any) -> str:
        """The generated module's text for one binding (`m.source("run", R=5, C=40)`); tuned
        choices are those of the only device the tuning file records, if one."""
        return self._compile(values, target_text=True)

    def device_name(self, inputs: tuple) -> str:
        """The device the inputs are on, named as tuning files name it: the CUDA device's
        name (`torch.cuda.get_device_name`), else the device type ("cpu")."""
        for x in inputs:
            device = getattr(x, "device", None)
            if getattr(device, "type", None) == "cuda":
                return _cuda_name(device.index)
        for x in inputs:
            kind = getattr(getattr(x, "device", None), "type", None)
            if isinstance(kind, str):
                return kind
        return "cpu"

    @property
    def _returns_tuple(self) -> bool:
        if self._tuple_result is None:
            self._tuple_result = isinstance(self._signature().result, TupleT)
        return self._tuple_result

    def _signature(self):
        if self._sig is None:
            self._sig = self._check_signature()
        return self._sig

    def _check_signature(self):
        return signature_of(checked(self.text, self.path), self.name)

    @classmethod
    def checked(cls, path: Any, name: str, *, text: str | None = None, **options: Any
                ) -> "EntryFunction":
        """The callable for entry `name` of the program at path (or in text), with the
        program checked and the entry found now: errors are raised here, not at a call."""
        check_choice("numerics", options.get("numerics", "equivalent"), NUMERICS)
        if text is None:
            text = read_program(path)
        fn = cls(str(path), text, name, options.pop("compile", True),
                 options.pop("numerics", "equivalent"), **options)
        fn._signature()
        return fn

    def binding_for(self, inputs: tuple, *, complete: bool = True) -> dict[str, object]:
        """The values of the entry's generics for these inputs, after checking each input
        against its parameter: its rank and extents (InputShapeError) and, for an input that
        has a dtype, that dtype (InputError: no dtype is converted implicitly; a Python
        number or list takes its parameter's). A generic no input determines (a dtype only
        the result has) is an InputShapeError, unless `complete` is False: then the values
        the inputs do determine are returned, for a caller that binds the rest itself."""
        sig = self._signature()
        if len(inputs) != len(sig.params):
            raise InputError(f"{self.name}() takes {len(sig.params)} inputs, "
                             f"got {len(inputs)}")
        generics = {g.name for g in sig.generics}
        b = Binding()
        origins: dict[str, int] = {}  # each dim generic: the input that bound it
        for k, (param, value) in enumerate(zip(sig.params, inputs)):
            if not _bind_input(param, value, generics, b):
                raise InputShapeError(self._mismatch(k, param, value, "rank"))
            for name in b.dims:
                origins.setdefault(name, k)
        for k, (param, value) in enumerate(zip(sig.params, inputs)):
            try:
                self._check_input(k, substitute(param, b), param, value)
            except InputShapeError as err:
                conflict = self._conflict(k, param, value, b, origins)
                raise (InputShapeError(conflict) if conflict else err) from None
        values = _plain_values(b, sig)
        missing = [g.name for g in sig.generics if g.name not in values and g.default is None]
        if missing and complete:
            raise InputShapeError(f"{self.name}(): the inputs do not determine generic "
                                  f"`{missing[0]}` (it is in no input's shape or dtype)")
        return values

    def _check_input(self, k: int, want: Any, param: Any, value: Any) -> None:
        """Input k against its parameter's type with the generics bound."""
        if not isinstance(want, TensorT):
            return
        shape, dtype = _shape_and_dtype(value)
        dims = [d.as_int() if isinstance(d, Dim) else None for d in want.dims]
        if shape is not None and tuple(dims) != shape:
            raise InputShapeError(self._mismatch(k, param, value, "shape"))
        if dtype is not None and want.dtype != dtype:
            raise InputError(f"{self.name}(): input {k} has dtype {dtype}, expected "
                             f"{want.dtype} ({param}); "
                             + (self.dtype_hint(dtype, want.dtype)
                                or "the language converts no dtype implicitly: cast it first"))

    def dtype_hint(self, got: str, want: str) -> str:
        """What to do about an input of dtype `got` where `want` is expected, when the
        runtime knows more than "cast it" (JAX's 64-bit switch); "" otherwise."""
        return ""

    def _conflict(self, k: int, param: Any, value: Any, b: Binding,
                  origins: dict[str, int]) -> str:
        """"run(): C = 100 from `x` (input 0), but `b` (input 1) has 99 (axis 0 of
        Tensor[C; f32])": the binding an input's extent contradicts, and where it came
        from; "" when the mismatch is not of one generic bound by another input."""
        shape, _ = _shape_and_dtype(value)
        if shape is None or not isinstance(param, TensorT) or len(param.dims) != len(shape):
            return ""
        names = self.param_names()
        for axis, (want, got) in enumerate(zip(param.dims, shape)):
            if not isinstance(want, Dim) or len(want.symbols()) != 1:
                continue
            (name,) = want.symbols()
            source = origins.get(name)
            bound = b.dims.get(name)
            if source is None or source == k or want != Dim.sym(name) or bound is None \
                    or bound.as_int() == got:
                continue
            return (f"{self.name}(): {name} = {bound} from `{names[source]}` (input "
                    f"{source}), but `{names[k]}` (input {k}) has {got} (axis {axis} of "
                    f"{param})")
        return ""

    def _mismatch(self, k: int, param: Any, value: Any, what: str) -> str:
        shape, _ = _shape_and_dtype(value)
        return (f"{self.name}(): input {k} has shape {list(shape or ())}, whose {what} does "
                f"not fit its parameter's type {param}")

    def _build(self, values: dict[str, object], device: str | None = None
               ) -> Callable[..., tuple]:
        if self.compile:
            module = self._compile(values, target_text=False, device=device)
            return module.main
        return self._interpreter(values)

    def _compile(self, values: dict[str, object], target_text: bool,
                 device: str | None = None):
        compiled = self._compiled(values, device)
        if target_text:
            return compiled.text
        return self._import(compiled)

    def _compiled(self, values: dict[str, object], device: str | None = None, **extra: Any):
        """`_compile_source` with this function's numerics, target and tuning, and `extra`
        options of `compile_source` (`linnet.jax.mesh` adds its `shard=`)."""
        return self._compile_source(values, numerics=self.numerics, target=self.TARGET,
                                    tuning=False if self.tuning is None else self.tuning,
                                    device=device, **extra)

    def _import(self, compiled: Any, name: str | None = None):
        """The generated module of `compiled`, imported (under `name`, by default the
        entry's) and remembered for `ran()`."""
        module = import_generated(compiled.text, name or self.name, self.TARGET)
        # the same text imports as the same module, whose counters other callers may have
        # moved already: this function counts from here
        baseline = {fn: tuple(n) for fn, n in getattr(module, "_ln_ran", {}).items()}
        self._modules.append((module, self._op_names(compiled.result.stages[-2].ir),
                              baseline))
        return module

    def _compile_source(self, values: dict[str, object], **options: Any):
        """`compile_source` of the entry for one binding of its generics (a block entry
        adds its root block, the root's generics and the checkpoint's paths)."""
        return compile_source(self.text, path=self.path, entry=self.name, bind=values,
                              **options)

    def _op_names(self, program: Any) -> dict[str, str]:
        """The op name of each function name of the generated module."""
        return {mangled: name for name, mangled in function_names(program).items()}

    def ran(self) -> dict[str, dict[str, int]]:
        """What the calls so far ran, per op with a kernel: `{"softmax__R4_C16": {"kernel":
        3, "body": 0}}` (op instances are named for their binding). A call of an op counts
        once, under autograd too. Ops that have no kernel in a binding (`numerics="exact"`,
        a kernel whose `where` fails) are not listed; with `compile=False` nothing is (the
        interpreter runs bodies only). Under `linnet.jax`, the choice is made when a call is
        traced, so the counts are of traces: a jitted call reuses its trace's choice.

        Generated modules are shared by text (`linnet.torch.import_generated`): counts
        start when this function first runs a module, and another function running the
        same module at the same time adds to them."""
        found: dict[str, dict[str, int]] = {}
        for module, names, baseline in self._modules:
            for fn, (kernel, body) in getattr(module, "_ln_ran", {}).items():
                k0, b0 = baseline.get(fn, (0, 0))
                seen = found.setdefault(names.get(fn, fn), {"kernel": 0, "body": 0})
                seen["kernel"] += kernel - k0
                seen["body"] += body - b0
        return found

    def _interpreter(self, values: dict[str, object]) -> Callable[..., tuple]:
        from .interpreter import run
        passes = [p for p in passes_for("torch") if p.name != "emit-torch"]
        compiled = self._compile_source(values, numerics="exact", passes=passes,  # bodies
                                        tuning=False)
        program = compiled.text
        return lambda *inputs: run(program, *inputs)


def checked(text: str, path: str):
    """The program parsed and checked (the `check` stage): errors raise CompileError."""
    return compile_source(text, path=path, passes=FRONT[:2]).text


def signature_of(analysis, name: str, flatten: bool = True):
    """The signature of the entry `name` (a UsageError when there is none), as the compiled
    entry takes and gives values: a struct parameter is its fields, one input each, and a
    struct result the tuple of its fields (unless not `flatten`)."""
    sig = analysis.root.signatures[choose_entry(analysis, name).name]
    if not flatten:
        return sig
    inputs = [leaf for ty in sig.params for leaf in leaves(ty)]
    result = as_tuples(sig.result)
    if inputs == sig.params and result == sig.result:
        return sig
    return dataclasses.replace(sig, params=inputs, result=result)


def _leaf_names(name: str, ty: Any) -> list[str]:
    """`p` for a plain parameter; `p.a`, `p.b.c` for the fields of a struct parameter, one
    input each (as `value_types.leaves` lays them out)."""
    fields = getattr(ty, "fields", None)
    if fields is None:
        return [name]
    return [leaf for field_name, x in fields for leaf in _leaf_names(f"{name}.{field_name}", x)]


def _bind_input(param, value: Any, generics: set[str], b: Binding) -> bool:
    """Bind the generics of param from the input's shape and dtype; False when its rank
    cannot fit the parameter's."""
    if not isinstance(param, TensorT):
        return True
    return bind_shape(param, *_shape_and_dtype(value), generics, b)


def _input_key(inputs: tuple) -> tuple:
    """What the binding of a call depends on, found cheaply: each input's `shape` and
    `dtype` as the input holds them (a `torch.Size` is a tuple; a Python number has
    neither). Inputs with equal keys bind alike, since `_shape_and_dtype` reads only these."""
    key = []
    for x in inputs:  # a plain loop: the cheapest way to this key in CPython 3.11 and 3.12
        key.append(getattr(x, "shape", None))
        key.append(getattr(x, "dtype", None))
    return tuple(key)


def _shape_and_dtype(value: Any) -> tuple[tuple[int, ...] | None, str | None]:
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is None:  # a Python number or nested lists: its dtype from the parameter
        return _list_shape(value), None
    name = str(dtype).replace("torch.", "")
    return tuple(int(n) for n in shape), TORCH_DTYPES.get(name, name)


def _list_shape(value: Any) -> tuple[int, ...]:
    """The shape of nested lists or tuples (a number's is ()), read along the first items."""
    shape = []
    while isinstance(value, (list, tuple)):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def _plain_values(b: Binding, sig) -> dict[str, object]:
    values: dict[str, object] = {}
    for g in sig.generics:
        if g.name in b.dims:
            values[g.name] = b.dims[g.name].as_int()
        elif g.name in b.dtypes:
            values[g.name] = b.dtypes[g.name]
        elif g.name in b.packs:
            values[g.name] = tuple(d.as_int() for d in b.packs[g.name])
    return values


def load_function(path: str, name: str, *, compile: bool = True,
                  numerics: str = "equivalent", tuning: Any = None) -> EntryFunction:
    """A callable that runs the entry `name` of the Linnet program at `path` on torch tensors.

    At each call the entry's generics are bound from the inputs: dims and shape packs from
    the tensors' shapes, dtype generics from their dtypes (a Python number is accepted for a
    scalar input and takes its parameter's dtype); the `where` clauses must hold for the
    values found. Each binding is compiled once and cached, so later calls with the same
    shapes and dtypes reuse it. The call returns the entry's result: one tensor, or a tuple
    of tensors for a tuple result, in exactly the dtypes and shapes of its declared type.

    `compile=True` generates a PyTorch module (`linnet torch`) and imports it from the
    generated text, keeping a copy in the private cache folder (`$LINNET_CACHE`, else
    `$XDG_CACHE_HOME/linnet`, else `~/.cache/linnet`; see `linnet.torch.runtime`).
    `compile=False` runs the PyTorch interpreter on the tensor IR instead, generating no
    code. `numerics` is `"exact"`, `"equivalent"` or `"fast"`, as `--numerics`.

    The program is parsed and checked here, and `name` must be one of its entries: a
    program with errors, an unknown entry or numerics raise a `linnet.LinnetError` now,
    not at the first call. A call with inputs the entry does not take raises
    `linnet.errors.InputError` (their number, a dtype: a `TypeError` too) or
    `InputShapeError` (a shape: a `ValueError` too).

    `tuning` gives the kernel choices recorded by `linnet tune` (see `linnet.tune`): None
    (the default) reads `$LINNET_TUNING`, else `linnet.tuning.json` beside the program if
    there is one; a path reads that file; False uses the op headers' choices only. At each
    call the choices of the inputs' device (`torch.cuda.get_device_name`, "cpu" for CPU
    tensors) apply where their op and sizes match. A tuning file that cannot be read
    raises `LinnetError` here.
    """
    return EntryFunction.checked(path, name, compile=compile, numerics=numerics,
                                 tuning=read_tuning(tuning, path))


def read_tuning(tuning: Any, path: str):
    """The tuning file (or choices) a loader uses for the program at path, read once."""
    try:
        return tuning_file(tuning, path)
    except TuningFileError as err:
        raise LinnetError(str(err)) from None


_CUDA_NAMES: dict[int | None, str] = {}


def _cuda_name(index: int | None) -> str:
    """The CUDA device's name, read once per device and kept: a call traced by
    `torch.compile` then reads a dict (Dynamo cannot trace `get_device_name`, which returns
    a str: fullgraph compiling failed). `prepare`, or any eager call, reads it first."""
    name = _CUDA_NAMES.get(index)
    if name is None:
        import torch
        name = _CUDA_NAMES[index] = torch.cuda.get_device_name(index)
    return name


class LoadedModule:
    """`load(path)`: one callable per entry (`m.run(x, w)`), and `m.source(...)`.

    Every entry is reachable by item access, `m["run"]`, including one whose name is also
    an attribute of this object (`source`, `entries`) or a Python special name; attribute
    access (`m.run`) finds the entries whose names are not taken."""

    def __init__(self, path: str, compile: bool, numerics: str, tuning: Any = None,
                 text: str | None = None, analysis: Any = None) -> None:
        check_choice("numerics", numerics, NUMERICS)
        text = read_program(path) if text is None else text
        analysis = checked(text, str(path)) if analysis is None else analysis
        tuning = read_tuning(tuning, path)
        self._path = str(path)
        self._entries = {}
        for item in analysis.program.root_module.items:
            if getattr(item, "kind", None) == "entry":
                fn = EntryFunction(str(path), text, item.name, compile, numerics, tuning)
                fn._sig = signature_of(analysis, item.name)
                self._entries[item.name] = fn

    def __repr__(self) -> str:
        return f"<linnet.torch module {self._path}: entries {', '.join(self.entries)}>"

    def __getattr__(self, name: str) -> EntryFunction:
        entries = self.__dict__.get("_entries")  # absent while copying: no recursion
        if entries is None or name not in entries:
            raise AttributeError(f"no entry named {name!r}")
        return entries[name]

    def __getitem__(self, name: str) -> EntryFunction:
        """The entry `name`, whatever it is called (`m["source"]`, `m["entries"]`)."""
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f"no entry named {name!r} (entries: "
                           f"{', '.join(sorted(self._entries)) or 'none'})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def source(self, name: str, **values: Any) -> str:
        return self._entries[name].source(**values)

    @property
    def entries(self) -> list[str]:
        return sorted(self._entries)


def read_program(path: Any) -> str:
    """The program text at path (a LinnetError when it cannot be read)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise LinnetError(f"cannot read the program {str(path)!r}: "
                          f"{err.strerror or err}") from None
