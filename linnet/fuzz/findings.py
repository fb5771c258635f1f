"""What the fuzzer finds, and the failure class each finding belongs to.

Why classes: one compiler bug shows up in many generated programs. The summary groups
findings by a class key (kind, target, stage and a signature free of values: the exception
type and the compiler function it came from, the diagnostic codes, or how the results
differ), and only the first occurrences of each class are reduced.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass

__all__ = ["Finding", "FAILING", "KINDS", "slug"]

FAILING = ("crash", "late", "hang", "fault", "disagree")
"""Kinds that fail a run (exit status 1): a bug of the compiler or a backend."""
KINDS = FAILING + ("slow", "oracle", "generator")
"""All kinds. `slow`: a run past its time limit (a program may loop long); `oracle`: the
oracle cannot evaluate the case (it lacks a construct); `generator`: the generator raised.
Neither fails a run: they are bugs of the test machinery, counted apart."""


@dataclass(frozen=True)
class Finding:
    """One thing that went wrong with one case on one target.

    `target` names the backend and the mode ("torch", "jax kernels", "onnx --grad",
    "torch autograd", or "oracle"); `stage` is where it happened ("compile", "load",
    "run", "compare", "evaluate", "generate"); `signature` is the value-free part of
    `detail` the class key is made of; `program` labels the program ("seed 17", or a file
    name) and `case` is the case's position in it."""
    kind: str
    target: str
    stage: str
    detail: str
    signature: str
    program: str = ""
    case: int = 0
    entry: str = ""

    @property
    def key(self) -> str:
        """The failure class: findings with one key are taken for one bug."""
        return f"{self.kind} | {self.target} | {self.stage} | {self.signature}"

    def __str__(self) -> str:
        where = f"{self.program} case {self.case} (`{self.entry}`)" if self.program else ""
        return f"{self.kind} in {self.stage} of {self.target}: {self.detail}" + (
            f" [{where}]" if where else "")

    def to_json(self) -> dict:
        return {**asdict(self), "key": self.key}


def slug(key: str) -> str:
    """A folder name for a class key: readable words and a short hash (unique per key)."""
    kind, target, stage, _ = (key.split(" | ", 3) + ["", "", "", ""])[:4]
    words = re.sub(r"[^a-z0-9]+", "-", f"{kind} {target} {stage}".lower()).strip("-")
    return f"{words}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"
