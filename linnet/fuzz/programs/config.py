"""What the program generator may use: `GeneratorConfig`.

Why a config of its own: the fuzzer runs the generator in several modes (plain programs,
programs with kernels, programs whose entries `--grad` can differentiate), and a failing
construct is switched off by name while it is being fixed, without editing the generator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GeneratorConfig", "FEATURES", "ALL_DTYPES"]

ALL_DTYPES: tuple[str, ...] = ("bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
                               "f16", "bf16", "f32", "f64")

FEATURES: frozenset[str] = frozenset({
    # expressions
    "broadcast", "cast", "compare", "select", "math", "divide", "bitwise", "shift",
    "minmax", "literal", "wrap",
    # index notation
    "index", "reduce", "contract", "diagonal", "accumulator", "nested_reduce",
    # shape functions and indexing
    "slice", "int_index", "reshape", "broadcast_to", "permute", "concat", "iota", "fill",
    "cumsum", "annotation",
    # control flow
    "if", "for", "scan", "scan_tuple", "while", "static_for", "runtime_index",
    # items
    "fn", "explicit_generics", "dtype_generic", "op", "grad", "where", "tuple_return",
    "second_entry",
    # forms written more than one way: no `-> T` on fns and entries, `...` in an index
    "untyped", "ellipsis",
    # the model layer (docs/models.md)
    "struct", "enum", "optional", "block",
})
"""Every construct the generator can be told to leave out (see docs/fuzz.md)."""

MODEL_LAYER = frozenset({"struct", "enum", "optional", "block"})


@dataclass(frozen=True)
class GeneratorConfig:
    """The knobs of `generate`.

    `kernels`: also generate ops bound to kernels (and the kernels). `grad`: entries return
    one floating scalar, so `--grad` applies, and ops carry `grad` clauses. `block_grad`
    (with `grad`): the first entry becomes a root block's entry whose loss is differentiated
    with respect to the block tree's params too, its cells adding terms with optional
    params and ops with `grad` clauses called from a block's `fn` (off by default, so that
    the programs of a seed stay the same without it). `max_statements`
    bounds the statements of an entry's body (loops and helpers count one each);
    `models` switches the model layer (the features `struct enum optional block`) on or
    off at once. `max_dim` the value bound to a dimension generic (sizes 0, 1 and ragged ones are
    always among the picks); `dtypes` the scalar dtypes that may appear (at least one float
    and one integer dtype are needed for the casts; `bool` for comparisons); `features`
    the constructs that may appear (a subset of `FEATURES`).
    """

    kernels: bool = False
    grad: bool = False
    max_statements: int = 8
    max_dim: int = 17
    dtypes: frozenset[str] = frozenset(ALL_DTYPES)
    features: frozenset[str] = field(default=FEATURES)
    models: bool = True
    block_grad: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.dtypes) - set(ALL_DTYPES)
        if unknown:
            raise ValueError(f"unknown dtypes {sorted(unknown)}")
        bad = set(self.features) - FEATURES
        if bad:
            raise ValueError(f"unknown features {sorted(bad)}")
        if not any(d in ("f16", "bf16", "f32", "f64") for d in self.dtypes):
            raise ValueError("the generator needs at least one float dtype")
        if self.block_grad and not self.grad:
            raise ValueError("block_grad differentiates block entries: it needs grad")
        if self.max_statements < 1 or self.max_dim < 1:
            raise ValueError("max_statements and max_dim must be at least 1")

    def has(self, feature: str) -> bool:
        if feature in MODEL_LAYER and not self.models:
            return False
        return feature in self.features
