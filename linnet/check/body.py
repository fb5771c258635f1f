"""The checker of one body, assembled from the parts that each handle one concern."""

from __future__ import annotations

from ..diagnostics import DiagnosticBag, Span
from .calls import CallChecker
from .exprs import ExprChecker
from .kernel_rules import KernelRules
from .notation import NotationChecker
from .prelude import PreludeChecker
from .scope import Frame
from .signatures import Binding, Signature
from .stmts import StmtChecker
from .typeexprs import TypeExprChecker
from .value_calls import ValueCallChecker
from .values import ValueChecker
from typing import Callable

from .types import Type, Val


class BodyChecker(ValueChecker, ValueCallChecker, StmtChecker, NotationChecker, CallChecker, PreludeChecker, KernelRules,
                  TypeExprChecker, ExprChecker):
    """Checks the statements and expressions of one `fn`, `op`, `entry`, grad clause or kernel.

    `calls` records the user functions called, for the recursion check;
    `expected_result` is what each `return` must produce.
    """

    def __init__(self, frame: Frame, bag: DiagnosticBag,
                 signatures: dict[str, Signature]) -> None:
        super().__init__(frame, bag)
        self.signatures = signatures
        self.calls: list[tuple[str, Span]] = []
        self.expected_result: Type | None = None
        self.scan_yield = None
        self.returned: Val | None = None
        self.infer_result: Callable[[Signature], None] | None = None
        self.call_bindings: dict[int, Binding] | None = None  # when instantiating

    def body_checker(self, frame: Frame, bag: DiagnosticBag) -> "BodyChecker":
        """A fresh checker over another frame (a struct's declaration, read from a body):
        the parts build one through this, without importing the assembled class."""
        return BodyChecker(frame, bag, self.signatures)
