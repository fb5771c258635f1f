"""The IR languages: which forms of the tensor IR each stage of the middle end allows.

In the spirit of nanopass's `define-language`: a `Language` is a set of `Form`s (an IR
class where it stands, a group of prims, a kind of function), and every language but the
first is its parent with forms added and removed. Each pass of `linnet.pipeline.MIDDLE`
names the language it takes and the one it returns; the verifier (`linnet.ir.verify`)
checks a program against a language's forms as well as its well-formedness, so under
`--verify-each` a pass moved out of order fails: `cse` before `lower-index-notation` meets
a `Comprehension`, which tensor-core does not allow.

`form_of_func` and `form_of_expr` say which form a node is; `docs/ir.md` lists every form
and language, from `markdown_table` (a test keeps the page equal to it).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import tensor as ir

# ---------------------------------------------------------------------- forms


@dataclass(frozen=True)
class Form:
    """One kind of node a language may allow: `name` as messages and docs say it, the IR
    classes it is made of, and for a form of prims, the ops it covers."""
    name: str
    nodes: tuple[type, ...]
    meaning: str
    prims: frozenset[str] = frozenset()

    def __str__(self) -> str:
        return self.name


def _prims(name: str, ops: frozenset[str], meaning: str) -> Form:
    return Form(name, (ir.Prim,), meaning, ops)


# Functions (each Func is one of the first five; an op Func may carry a KernelChoice).
ENTRY_FUNC = Form("entry Func", (ir.Func,), "an instance of an entry (kind `entry`)")
OP_FUNC = Form("op Func", (ir.Func,), "an instance of an op, or a grad clause made a "
               "function by `differentiate` (kind `op`)")
FN_FUNC = Form("fn Func", (ir.Func,), "an instance of a `fn`, or a block moved out by "
               "`outline-deep-blocks` (kind `fn`)")
GRAD_CLAUSE = Form("grad clause", (ir.Func,), "an op's `grad` clause, as `Func.grad` "
                   "(kind `grad`)")
KERNEL_FUNC = Form("kernel Func", (ir.Func, ir.Launch), "a kernel instance (kind `kernel`): "
                   "memory parameters, `outputs` and a `Launch`")
KERNEL_BINDING = Form("kernel binding", (ir.KernelChoice,), "an op's `KernelChoice` that "
                      "names no kernel Func yet (`func` empty)")
CHOSEN_KERNEL = Form("chosen kernel", (ir.KernelChoice,), "an op's `KernelChoice` naming "
                     "the kernel Func that runs it")

# Expressions in the functions that are not kernels (entries, ops, fns, grad clauses).
ATOM = Form("atom", (ir.Var, ir.Lit), "a binding of a plain `Var` or `Lit` (a copy)")
REDUCTION = _prims("reduction prim", frozenset(
    {f"reduce_{op}" for op in ("sum", "prod", "max", "min", "any", "all")} | {"diagonal"}),
    "reductions over axes, and `diagonal`: what index notation lowers to")
GATHER = _prims("gather prim", frozenset({"gather", "scatter_add"}),
                "a read at integer positions, and its adjoint `scatter_add`: what a gather "
                "in index notation lowers to")
DOT = _prims("dot", frozenset({"dot"}), "a tile or matrix product chosen by the e-graph")
KERNEL_PRIM = _prims("kernel prim", frozenset({"program_id", "load"}) | ir.EFFECTS,
                     "`program_id` and memory: `load`, `store`, the atomics (in kernels)")
PRIM = _prims("Prim", frozenset(ir.PRIMS) - REDUCTION.prims - GATHER.prims - DOT.prims
              - KERNEL_PRIM.prims,
              "elementwise, shape and construction prims (`cumsum` among them)")
EINSUM = Form("Einsum", (ir.Einsum,), "a contraction, in a function that is no kernel")
CALL_OP = Form("Call of an op", (ir.Call,), "a call of an op Func")
CALL_ENTRY = Form("Call of an entry", (ir.Call,), "a call of another entry")
CALL_FN = Form("Call of a fn", (ir.Call,), "a call of a fn Func, outside kernels")
MAKE_TUPLE = Form("MakeTuple", (ir.MakeTuple,), "a tuple of atoms")
GET_ITEM = Form("GetItem", (ir.GetItem,), "an item of a tuple")
IF = Form("If", (ir.If,), "two blocks chosen by a bool scalar")
LOOP = Form("Loop", (ir.Loop,), "a counted loop (`yields == 0`), with run-time bounds in "
            "kernels")
SCAN = Form("scan", (ir.Loop,), "a Loop that stacks what it yields, outside kernels")
WHILE = Form("While", (ir.While,), "a loop on a condition block")
COMPREHENSION = Form("Comprehension", (ir.Comprehension, ir.IxAccess, ir.IxScalar,
                                       ir.IxPrim, ir.IxReduce, ir.IxGather),
                     "index notation, its body an index expression")

# Expressions that stand in kernel Funcs, where they differ from those of other functions.
KERNEL_EINSUM = Form("Einsum in a kernel", (ir.Einsum,), "a contraction in a kernel Func")
KERNEL_CALL = Form("Call in a kernel", (ir.Call,), "a call, in a kernel, of a fn it uses")
KERNEL_SCAN = Form("scan in a kernel", (ir.Loop,), "a Loop with yields in a kernel Func")

FORMS: tuple[Form, ...] = (
    ENTRY_FUNC, OP_FUNC, FN_FUNC, GRAD_CLAUSE, KERNEL_FUNC, KERNEL_BINDING, CHOSEN_KERNEL,
    ATOM, PRIM, REDUCTION, GATHER, DOT, KERNEL_PRIM, EINSUM, KERNEL_EINSUM, CALL_OP, CALL_ENTRY,
    CALL_FN, KERNEL_CALL, MAKE_TUPLE, GET_ITEM, IF, LOOP, SCAN, KERNEL_SCAN, WHILE,
    COMPREHENSION)

_FUNC_KINDS = {"entry": ENTRY_FUNC, "op": OP_FUNC, "fn": FN_FUNC, "grad": GRAD_CLAUSE,
               "kernel": KERNEL_FUNC}
_CALLEE_KINDS = {"op": CALL_OP, "entry": CALL_ENTRY, "fn": CALL_FN}
_PLAIN = {ir.Var: ATOM, ir.Lit: ATOM, ir.MakeTuple: MAKE_TUPLE, ir.GetItem: GET_ITEM,
          ir.If: IF, ir.While: WHILE, ir.Comprehension: COMPREHENSION}


def form_of_func(f: ir.Func) -> tuple[Form, ...]:
    """The forms a Func is: its kind, and its kernel choice if it has one (none for an
    unknown kind, which the verifier reports as such)."""
    kind = _FUNC_KINDS.get(f.kind)
    forms = () if kind is None else (kind,)
    if f.kernel is not None:
        forms += (CHOSEN_KERNEL if f.kernel.func else KERNEL_BINDING,)
    return forms


def form_of_expr(e: ir.Expr, in_kernel: bool, callee_kind: str | None = None) -> Form | None:
    """The form of an expression bound in a kernel Func or in another function; a Call's
    form depends on its callee's kind. None for what is no expression of the IR, or a
    call of an unknown function (the verifier reports both as such)."""
    if isinstance(e, ir.Prim):
        return next((f for f in (REDUCTION, GATHER, DOT, KERNEL_PRIM) if e.op in f.prims),
                    PRIM)
    if isinstance(e, ir.Einsum):
        return KERNEL_EINSUM if in_kernel else EINSUM
    if isinstance(e, ir.Call):
        return KERNEL_CALL if in_kernel else _CALLEE_KINDS.get(callee_kind or "")
    if isinstance(e, ir.Loop):
        return LOOP if not e.yields else KERNEL_SCAN if in_kernel else SCAN
    return _PLAIN.get(type(e))


# ------------------------------------------------------------------ languages


@dataclass(frozen=True)
class Language:
    """An IR language: the forms it allows, the pass that establishes it (its programs are
    that pass's output, and the passes after it keep them so), and what sets it apart."""
    name: str
    forms: frozenset[Form]
    established_by: str
    doc: str
    parent: str = ""
    added: tuple[Form, ...] = ()
    removed: tuple[Form, ...] = ()

    def derive(self, name: str, established_by: str, doc: str, *,
               adding: tuple[Form, ...] = (), removing: tuple[Form, ...] = ()) -> "Language":
        """A child language: these forms and no more, those and no fewer."""
        unknown = [f.name for f in removing if f not in self.forms]
        if unknown:
            raise ValueError(f"{name}: {self.name} has no form {unknown[0]} to remove")
        forms = (self.forms - frozenset(removing)) | frozenset(adding)
        return Language(name, forms, established_by, doc, self.name, adding, removing)

    def allows(self, form: Form) -> bool:
        return form in self.forms


ANY = Language("any", frozenset(FORMS), "", "Every form: what `verify(program)` checks "
               "by default (well-formedness alone). No pass returns it.")

TENSOR = Language("tensor", frozenset({
    ENTRY_FUNC, OP_FUNC, FN_FUNC, GRAD_CLAUSE, KERNEL_BINDING, ATOM, PRIM, CALL_OP,
    CALL_ENTRY, CALL_FN, MAKE_TUPLE, GET_ITEM, IF, LOOP, SCAN, WHILE, COMPREHENSION}),
    "elaborate", "The entry and every op and fn it calls, monomorphic and in A-normal form "
    "(generics bound, structs and `static for` gone, `var`s single-assigned); index "
    "notation as Comprehensions; an op that binds a kernel records it, no kernel is "
    "translated yet. `choose-kernels` keeps it.")

TENSOR_KERNELS = TENSOR.derive(
    "tensor-kernels", "instantiate-kernels", "Each kernel an op runs is a kernel Func "
    "(memory prims, run-time loop bounds, its own scans and the fns it calls), named by "
    "the op's KernelChoice.",
    adding=(KERNEL_FUNC, CHOSEN_KERNEL, KERNEL_PRIM, KERNEL_CALL, KERNEL_SCAN),
    removing=(KERNEL_BINDING,))

TENSOR_INLINED = TENSOR_KERNELS.derive(
    "tensor-inlined", "inline-fns", "No fn is left: each call was replaced by the fn's "
    "body (ops stay functions). `merge-reductions` keeps it.",
    removing=(FN_FUNC, CALL_FN, KERNEL_CALL))

TENSOR_CORE = TENSOR_INLINED.derive(
    "tensor-core", "lower-index-notation", "Index notation lowered to aligned prims, "
    "reductions and einsums. `differentiate`, `fold-constants`, `hoist-loop-invariants`, "
    "`cse`, `dce`, `drop-dead-carries`, `egraph-tiles` and `fold-proved-masks` keep it.",
    adding=(REDUCTION, GATHER, EINSUM, KERNEL_EINSUM), removing=(COMPREHENSION,))

TENSOR_DOTS = TENSOR_CORE.derive(
    "tensor-dots", "egraph-products", "Tile and matrix products chosen as `dot`. "
    "`exact-division` and `fast-math` keep it.",
    adding=(DOT,))

TENSOR_KERNEL_LOOPS = TENSOR_DOTS.derive(
    "tensor-kernel-loops", "lower-kernel-scans", "No scan in a kernel: each is a loop "
    "carrying its stacks (op bodies keep theirs).",
    removing=(KERNEL_SCAN,))

TENSOR_KERNEL_TILES = TENSOR_KERNEL_LOOPS.derive(
    "tensor-kernel-tiles", "lower-kernel-einsums", "No einsum in a kernel: each is a "
    "broadcast product and a sum (op bodies keep theirs), so kernels hold tile prims, "
    "dots and loops.",
    removing=(KERNEL_EINSUM,))

TENSOR_OUTLINED = TENSOR_KERNEL_TILES.derive(
    "tensor-outlined", "outline-deep-blocks", "Control flow nested too deeply moved into "
    "fn Funcs of its own, called where it stood (never in kernels). What the printers take.",
    adding=(FN_FUNC, CALL_FN))

LANGUAGES: dict[str, Language] = {lang.name: lang for lang in (
    ANY, TENSOR, TENSOR_KERNELS, TENSOR_INLINED, TENSOR_CORE, TENSOR_DOTS,
    TENSOR_KERNEL_LOOPS, TENSOR_KERNEL_TILES, TENSOR_OUTLINED)}


def language_named(name: str) -> Language:
    """The language of that name; a ValueError naming the known ones for any other."""
    if name not in LANGUAGES:
        raise ValueError(f"unknown IR language {name!r}; known: {', '.join(LANGUAGES)}")
    return LANGUAGES[name]


def why_not(form: Form, language: Language) -> str:
    """Why `language` lacks `form`, for a verifier's message: the pass of the ancestor
    that removed it, or else the pass of the first language that adds it."""
    lang: Language | None = language
    while lang is not None:
        if form in lang.removed:
            return f"{lang.established_by} removes it"
        lang = LANGUAGES.get(lang.parent)
    adder = next((lang for lang in LANGUAGES.values() if form in lang.added), None)
    return f"{adder.established_by} introduces it" if adder else "no pass makes it"


# ----------------------------------------------------------------------- docs


def markdown_table() -> str:
    """The forms each language allows, as the table of docs/ir.md, then one line per
    language saying which pass establishes it and how it differs from its parent."""
    names = list(LANGUAGES)
    rows = ["| form | IR classes | " + " | ".join(f"`{n}`" for n in names) + " |",
            "| --- | --- | " + " | ".join("---" for _ in names) + " |"]
    for form in FORMS:
        classes = ", ".join(f"`{c.__name__}`" for c in form.nodes)
        if form.prims:
            classes += ": " + " ".join(f"`{p}`" for p in sorted(form.prims))
        marks = " | ".join("✓" if LANGUAGES[n].allows(form) else "" for n in names)
        rows.append(f"| {form.name}: {form.meaning} | {classes} | {marks} |")
    return "\n".join(rows + [""] + [_language_line(lang) for lang in LANGUAGES.values()])


def _language_line(lang: Language) -> str:
    """One line: the language, the pass after which it holds, its parent and the forms
    added (+) and removed (−), then what sets it apart."""
    head = f"- `{lang.name}`" + (f" (after `{lang.established_by}`)" if lang.established_by
                                 else "")
    change = "".join([f" + {f.name}," for f in lang.added] +
                     [f" − {f.name}," for f in lang.removed]).rstrip(",")
    derived = f": `{lang.parent}`{change}." if lang.parent else ":"
    return f"{head}{derived} {lang.doc}"
