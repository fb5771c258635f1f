"""Golden tests: the generated output of every example entry, for every target.

Each case is one compilation, as `linnet <target> FILE --entry NAME --bind ...` runs it
from the repository's root, with `--no-tuning` unless the case says otherwise: the
PyTorch module (Triton kernels included), the JAX module, the StableHLO text and the ONNX
model's text form (`onnx.printer.to_text`). Variants exercise the passes a plain compile
skips: `--grad` for every loss, `--numerics fast` and `exact` for matmul's and softmax's
`main`, a tuning file, present optional members, and an ONNX export with its sizes left symbolic.

A change to the compiler's output shows up here as a diff to review. A golden file that
is missing or differs fails; after reviewing the change, accept the new text with
`LINNET_UPDATE_GOLDEN=1 pytest tests/golden` and commit the files it writes.
"""

from __future__ import annotations

import contextlib
import functools
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from linnet.errors import MissingGeneric
from linnet.pipeline import TARGETS, compile_source

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent
UPDATE = os.environ.get("LINNET_UPDATE_GOLDEN") == "1"
SUFFIX = {"torch": ".py.txt", "jax": ".py.txt", "stablehlo": ".mlir", "onnx": ".onnx.txt"}


@dataclass(frozen=True)
class Case:
    """One compilation of an example's entry: its file (relative to the repository), the
    entry, its `--bind` values and any other `compile_source` options, for `targets`."""
    file: str
    entry: str
    bind: tuple[tuple[str, int], ...] = ()
    variant: str = ""  # names the golden file beside the plain case's: `loss.grad`
    options: tuple[tuple[str, object], ...] = ()
    targets: tuple[str, ...] = TARGETS

    @property
    def name(self) -> str:
        return f"{Path(self.file).stem}/{self.entry}" + (f".{self.variant}" if self.variant
                                                          else "")

    def golden(self, target: str) -> Path:
        return GOLDEN / target / f"{self.name}{SUFFIX[target]}"


def sizes(**values: int) -> tuple[tuple[str, int], ...]:
    return tuple(values.items())


# Small sizes at which a kernel applies, where one does (those `make demo` runs,
# linnet.demo.entries.choose_values); written out so that the goldens depend on no choice.
SMALL_ATTENTION = sizes(B=2, H=3, L=4, S=5, D=16)
SMALL_CAUSAL = sizes(B=2, H=3, L=4, D=16)
SMALL_ROWS = sizes(R=2, C=3)
SMALL_MATMUL = sizes(M=2, N=3, K=4)
SMALL_MLP = sizes(N=2, I=3, H=4, O=5)
SMALL_GPT = sizes(B=2, L=3, NH=4, D=5, V=2, S=16)

ENTRIES: dict[str, dict[str, tuple[tuple[str, int], ...]]] = {
    "examples/attention.linnet": {
        "main": (), "attention_any": SMALL_ATTENTION, "attention_causal_any": SMALL_CAUSAL,
        "attention_bf16_any": SMALL_ATTENTION, "attention_causal_bf16_any": SMALL_CAUSAL},
    "examples/block_model.linnet": {"main": (), "loss": ()},
    "examples/column_stats.linnet": {"main": ()},
    "examples/layer_norm.linnet": {
        "main": (), "layer_norm_any": SMALL_ROWS, "layer_norm_bf16_any": SMALL_ROWS},
    "examples/matmul.linnet": {
        "main": (), "matmul_any": SMALL_MATMUL, "matmul_bf16_any": SMALL_MATMUL,
        "matmul_tf32_any": SMALL_MATMUL, "matmul_bt_any": SMALL_MATMUL},
    "examples/mlp.linnet": {"predict": SMALL_MLP, "loss": SMALL_MLP, "main": ()},
    "examples/optional_model.linnet": {"main": (), "loss": ()},
    "examples/relu.linnet": {"main": ()},
    "examples/row_product.linnet": {"main": ()},
    "examples/row_scan.linnet": {"main": ()},
    "examples/softmax.linnet": {"main": (), "softmax_any": SMALL_ROWS},
    "examples/gpt/gpt.linnet": {
        "prefill": SMALL_GPT + sizes(T=2), "decode": SMALL_GPT, "loss": SMALL_GPT + sizes(T=2)},
}
"""Every entry of every example (`make demo`'s: examples/*.linnet and examples/NAME/
NAME.linnet, module-level entries and the root block's), with its bindings."""

LOSSES = {("examples/block_model.linnet", "loss"), ("examples/mlp.linnet", "loss"),
          ("examples/mlp.linnet", "main"), ("examples/optional_model.linnet", "loss"),
          ("examples/gpt/gpt.linnet", "loss")}
"""The entries that return one floating scalar, which `--grad` differentiates."""

KERNEL_TARGETS = ("torch", "jax")  # the targets with kernels, which numerics choose among
OPTIONAL_MODEL_MEMBERS = ("out_bias", "layers.0.up_bias", "layers.1.up_bias", "head.up",
                          "head.up_bias", "head.down", "head.calls")


def plain_cases() -> list[Case]:
    return [Case(file, entry, bind) for file, entries in ENTRIES.items()
            for entry, bind in entries.items()]


def variant_cases() -> list[Case]:
    grads = [Case(file, entry, ENTRIES[file][entry], "grad", (("grad", True),))
             for file, entry in sorted(LOSSES)]
    numerics = [Case(file, "main", (), mode, (("numerics", mode),), KERNEL_TARGETS)
                for file in ("examples/matmul.linnet", "examples/softmax.linnet")
                for mode in ("fast", "exact")]
    tuned = Case("examples/matmul.linnet", "matmul_any", sizes(M=4096, N=4096, K=4096),
                 "tuned", (("tuning", "examples/linnet.tuning.json"),), KERNEL_TARGETS)
    present = [Case("examples/optional_model.linnet", entry, (), "present",
                    (("present", OPTIONAL_MODEL_MEMBERS),)) for entry in ("main", "loss")]
    symbolic = [Case(file, entry, (), "symbolic", (), ("onnx",))
                for file, entry in (("examples/softmax.linnet", "softmax_any"),
                                    ("examples/mlp.linnet", "predict"))]
    return grads + numerics + [tuned] + present + symbolic


CASES = plain_cases() + variant_cases()
RUNS = [pytest.param(case, target, id=f"{target}:{case.name}")
        for case in CASES for target in case.targets]


@functools.cache
def generated(case: Case, target: str) -> str:
    """The case's output for `target` as text, compiled from the repository's root with
    a relative path, as a user runs the CLI there (once per test session)."""
    options = {"tuning": False, **dict(case.options)}
    bind = dict(case.bind)
    with contextlib.chdir(ROOT):
        text = Path(case.file).read_text(encoding="utf-8")
        try:
            compiled = compile_source(text, path=case.file, target=target, entry=case.entry,
                                      bind=bind, **options)
        except MissingGeneric as missing:  # as `linnet onnx` does: the sizes stay symbolic
            if target != "onnx":
                raise
            from linnet.cli.onnx_symbolic import export_symbolic
            compiled = export_symbolic(text, case.file, missing, entry=case.entry, bind=bind,
                                       **options)
    if target == "onnx":
        import onnx
        return onnx.printer.to_text(compiled.text)
    return compiled.text


@pytest.mark.parametrize(("case", "target"), RUNS)
def test_generated_output_matches_golden(case: Case, target: str) -> None:
    text = generated(case, target)
    golden = case.golden(target)
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.exists(), (
        f"no golden file {golden.relative_to(ROOT)}: run `LINNET_UPDATE_GOLDEN=1 pytest "
        f"tests/golden`, review the files it writes, and commit them")
    assert text == golden.read_text(encoding="utf-8"), (
        f"the generated {target} output of {case.name} changed: review the difference, and "
        f"if it is intended, run `LINNET_UPDATE_GOLDEN=1 pytest tests/golden` and commit "
        f"the updated {golden.relative_to(ROOT)}")


def test_every_example_entry_has_a_case() -> None:
    """A new example or entry fails here until ENTRIES (and LOSSES) name it: the goldens
    cover what `make demo` runs."""
    from linnet.demo import EXAMPLES, example_files
    from linnet.demo.entries import is_loss
    from linnet.fuzz.harness import entries, target_spec
    found = {str(path.relative_to(ROOT)): entries(path) for path in example_files(EXAMPLES)}
    assert found == {file: list(names) for file, names in ENTRIES.items()}
    losses = {(file, name) for file, names in found.items() for name in names
              if is_loss(target_spec(ROOT / file, name))}
    assert losses == LOSSES


def test_every_golden_file_has_a_case() -> None:
    """A renamed or dropped case leaves no golden file behind that nothing compares."""
    expected = {run.values[0].golden(run.values[1]) for run in RUNS}
    stored = {path for target in TARGETS for path in (GOLDEN / target).rglob("*")
              if path.is_file()}
    stray = sorted(str(path.relative_to(ROOT)) for path in stored - expected)
    assert stray == [], "golden files that no case compares: delete them"


def test_matmul_uses_ieee_dot_and_fast_uses_tf32() -> None:
    equivalent, fast = (Case("examples/matmul.linnet", "main", (), variant, options)
                        for variant, options in (("", ()), ("fast", (("numerics", "fast"),))))
    assert 'input_precision="ieee"' in generated(equivalent, "torch")
    assert 'input_precision="tf32"' in generated(fast, "torch")


def test_exact_numerics_has_no_triton() -> None:
    exact = Case("examples/softmax.linnet", "main", (), "exact", (("numerics", "exact"),),
                 KERNEL_TARGETS)
    assert "triton" not in generated(exact, "torch")
    assert "triton" in generated(Case("examples/softmax.linnet", "main"), "torch")
