"""elaborate on structs, enums and optionals: they disappear into the tensor IR.

What is known at compile time is decided there: an optional passed as `none` or
`some(v)` instantiates the callee for that presence (no flag, no zeros), a `match`
on a constant is just its arm. What is only known at run time becomes a flag and a
value, or a chain of `If`s on an enum's position."""

from __future__ import annotations

from linnet.check.instance import analyze_program, binding_from_values
from linnet.ir import tensor as ir
from linnet.ir.walk import all_binds
from linnet.passes.front.elaborate import elaborate
from linnet.syntax.program import load_program

LINEAR = """module m

fn linear(x: Tensor[2, 4; f32], w: Tensor[3, 4; f32], b: Tensor[3; f32]?) -> Tensor[2, 3; f32] {
    let y[i, o] = sum[k] x[i, k] * w[o, k]
    return match b { some(v) => y + broadcast_to(v, [2, 3])  none => y }
}
"""


def program(text: str, entry: str = "main") -> ir.Program:
    analysis = analyze_program(load_program("m.linnet", text))
    assert analysis.diagnostics == []
    item = analysis.root.globals.items[entry]
    return elaborate(analysis, item, binding_from_values(item, {}, {}, {}))


def kinds(f: ir.Func) -> list[type]:
    return [type(b.expr) for b in all_binds(f.body)]


def callees(p: ir.Program) -> dict[str, ir.Func]:
    return {f.name: f for f in p.funcs if f.kind != "entry"}


def test_none_and_some_instantiate_the_callee_for_their_presence() -> None:
    p = program(LINEAR + """
entry main(x: Tensor[2, 4; f32], w: Tensor[3, 4; f32], b: Tensor[3; f32]) -> Tensor[2, 3; f32] {
    return linear(x, w, none) + linear(x, w, some(b)) + linear(x, w, none)
}
""")
    fns = callees(p)
    assert sorted(len(f.params) for f in fns.values()) == [2, 3]  # two instances, not three
    for f in fns.values():
        assert ir.If not in kinds(f) and ir.MakeTuple not in kinds(f)
        assert all(isinstance(x.type, ir.TType) for x in f.params)


def test_presence_known_only_at_run_time_is_a_flag_and_a_value() -> None:
    p = program(LINEAR + """
entry main(x: Tensor[2, 4; f32], w: Tensor[3, 4; f32], b: Tensor[3; f32], c: bool) -> Tensor[2, 3; f32] {
    let o: Tensor[3; f32]? = if c { some(b) } else { none }
    return linear(x, w, o)
}
""")
    (f,) = callees(p).values()
    assert [x.type for x in f.params][2:] == [ir.TType((), "bool"), ir.TType((3,), "f32")]
    assert ir.If in kinds(f)
    fills = [b for b in all_binds(p.func(p.entry).body)
             if isinstance(b.expr, ir.Prim) and b.expr.op == "fill"]
    assert fills, "an absent value is zeros where presence is decided at run time"


ENUM = """module m

enum Mode { Keep, Double, Negate }
const MODE = Mode.Double

fn apply(x: Tensor[4; f32], m: Mode) -> Tensor[4; f32] {
    return match m { Mode.Keep => x  Mode.Double => x * 2.0  Mode.Negate => -x }
}
"""


def test_a_match_on_a_constant_is_its_arm() -> None:
    p = program(ENUM + """
entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
    return match MODE { Mode.Keep => x  Mode.Double => x * 2.0  Mode.Negate => -x }
}
""")
    assert ir.If not in kinds(p.func(p.entry))


def test_an_enum_parameter_is_an_i64_and_its_match_a_chain_of_ifs() -> None:
    p = program(ENUM + """
entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
    return apply(x, MODE) + apply(x, Mode.Negate)
}
""")
    (f,) = callees(p).values()
    assert f.params[1].type == ir.TType((), "i64")
    assert kinds(f).count(ir.If) == 2  # three variants: two tests
    calls = [b.expr for b in all_binds(p.func(p.entry).body) if isinstance(b.expr, ir.Call)]
    assert [c.args[1] for c in calls] == [ir.Lit(1, ir.TType((), "i64")),
                                          ir.Lit(2, ir.TType((), "i64"))]


STRUCT = """module m

struct Pair { a: Tensor[2; f32]  b: Tensor[3; f32] }
struct Outer { p: Pair  s: f32 }

fn swap(o: Outer) -> Outer {
    return Outer(s = o.s * 2.0, p = Pair(b = o.p.b + o.s, a = o.p.a))
}

entry main(o: Outer) -> Outer {
    return swap(o)
}
"""


def test_an_entry_takes_a_struct_as_its_fields_and_returns_it_as_a_tuple() -> None:
    p = program(STRUCT)
    main = p.func(p.entry)
    assert [x.type for x in main.params] == [ir.TType((2,), "f32"), ir.TType((3,), "f32"),
                                             ir.TType((), "f32")]
    pair = ir.TupleTy((ir.TType((2,), "f32"), ir.TType((3,), "f32")))
    assert main.body.result.type == ir.TupleTy((pair, ir.TType((), "f32")))
    (f,) = callees(p).values()
    assert [x.type for x in f.params] == [main.body.result.type]  # inside: one tuple


def test_a_field_of_a_struct_built_here_is_read_without_getitem() -> None:
    p = program("""module m

struct Pair { a: Tensor[2; f32]  b: Tensor[2; f32] }

entry main(x: Tensor[2; f32]) -> Tensor[2; f32] {
    let p = Pair(b = x * 2.0, a = x)
    return p.a + p.b
}
""")
    assert ir.GetItem not in kinds(p.func(p.entry))


def test_named_arguments_and_defaults_are_passed_in_parameter_order() -> None:
    p = program("""module m

fn f(x: Tensor[2; f32], a: f32 = 1.0, b: f32 = 2.0) -> Tensor[2; f32] {
    return x * a - b
}

entry main(x: Tensor[2; f32]) -> Tensor[2; f32] {
    return f(x, b = 5.0)
}
""")
    (call,) = [b.expr for b in all_binds(p.func(p.entry).body) if isinstance(b.expr, ir.Call)]
    f32 = ir.TType((), "f32")
    assert call.args[1:] == (ir.Lit(1.0, f32), ir.Lit(5.0, f32))


def test_a_const_chosen_by_a_match_is_a_width() -> None:
    p = program("""module m

enum Size { Small, Large }
const SIZE = Size.Large
const W = match SIZE { Size.Small => 2  Size.Large => 4 }

entry main(x: Tensor[W; f32]) -> Tensor[W; f32] {
    return x + fill<f32>([W], 1.0)
}
""")
    assert [x.type for x in p.func(p.entry).params] == [ir.TType((4,), "f32")]
