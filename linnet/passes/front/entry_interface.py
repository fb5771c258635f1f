"""The names an entry's inputs and results carry where a runtime names them (ONNX).

Why a record of its own: the tensor IR names an entry's parameters for the IR (a struct
parameter's fields are `p_0, p_1`, a clash gets a suffix) and its results have no name at
all. The user's names are known only while elaborating, so `elaborate` leaves them in
the program's state (`state.interface`, an `Interface` of `linnet/ir/program_state.py`):
each entry input's IR name with its user name (`x`, a struct field's path `p.a`, an
optional's flag `alt.present`), and one name per result leaf (`result`; a tuple's items `result_0, result_1`; a struct result its field paths).
"""

from __future__ import annotations

from ...check.types import TupleT
from ...check.value_types import OptionalT, StructT
from ...ir.program_state import Interface

__all__ = ["Interface", "input_labels", "result_labels"]


def input_labels(name: str, ty: object, count: int) -> list[str]:
    """The user names of the `count` IR inputs one declared parameter became."""
    if isinstance(ty, StructT):
        labels = _field_paths(ty, name)
    elif isinstance(ty, OptionalT) and count == 2:  # presence known at run time
        labels = [f"{name}.present", name]
    else:
        labels = [name]
    return labels if len(labels) == count else [name] * count


def result_labels(ty: object) -> list[str]:
    """`result`; a tuple's leaves `result_0`, `result_1` (`result_0_1` nested); a struct
    result's field paths (`a`, `b.c`), in the order a backend returns them."""
    if isinstance(ty, StructT):
        return _field_paths(ty, "")
    if isinstance(ty, TupleT):
        return [label for k, item in enumerate(ty.items)
                for label in _item_labels(item, f"result_{k}")]
    return ["result"]


def _item_labels(ty: object, prefix: str) -> list[str]:
    if isinstance(ty, StructT):
        return _field_paths(ty, prefix)
    if isinstance(ty, TupleT):
        return [label for k, item in enumerate(ty.items)
                for label in _item_labels(item, f"{prefix}_{k}")]
    return [prefix]


def _field_paths(ty: StructT, prefix: str) -> list[str]:
    out = []
    for field, inner in ty.fields:
        path = f"{prefix}.{field}" if prefix else field
        out += _field_paths(inner, path) if isinstance(inner, StructT) else \
            _item_labels(inner, path) if isinstance(inner, TupleT) else [path]
    return out
