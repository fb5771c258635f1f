"""A reduced case written out for a person: the program, its inputs, its bindings, what each
backend gave, the command lines that reproduce it, and the steps that reduced it.

Files in the directory:

- `case.linnet`: the program; `bind.json`: the generic bindings (what `--bind` takes);
- `inputs.npz`: the inputs by parameter name (bf16 stored as f32, which holds it exactly);
- `outputs/NAME.txt` (and `outputs/NAME.npz` for arrays): what backend NAME gave;
- `run.py`: compiles `case.linnet` for PyTorch and runs it on the inputs;
- `report.md`: all of it in one page.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..case import Case
from .search import Reduction, entry_spec

TARGET_FILES = {"torch": "case_torch.py", "jax": "case_jax.py", "onnx": "case.onnx",
                "stablehlo": "case.mlir"}


def write_report(reduction: Reduction, outputs: Mapping[str, Any],
                 out_dir: str | Path) -> Path:
    """Write the reduced case and `outputs` (backend name to its results: a sequence of
    arrays or tensors, one array, or an exception or message for a backend that failed)
    into `out_dir` (created); returns the path of `report.md`."""
    out = Path(out_dir)
    (out / "outputs").mkdir(parents=True, exist_ok=True)
    case = reduction.case
    names = input_names(case)
    (out / "case.linnet").write_text(case.text, encoding="utf-8")
    (out / "bind.json").write_text(json.dumps(dict(case.generics), indent=2) + "\n")
    (out / "present.json").write_text(json.dumps(sorted(case.present or ())) + "\n")
    np.savez(out / "inputs.npz", **{n: _storable(x) for n, x in zip(names, case.inputs)})
    shown = {}
    for backend, value in outputs.items():
        shown[backend] = _write_output(out / "outputs", _file_name(backend), value)
    (out / "run.py").write_text(_RUN.format(entry=case.entry, names=names), encoding="utf-8")
    report = out / "report.md"
    report.write_text(_report(reduction, names, shown), encoding="utf-8")
    return report


def input_names(case: Case) -> list[str]:
    """The entry's parameter names (`arg0`, ... where the program does not check)."""
    spec = entry_spec(case)
    try:
        inputs = spec.inputs(case.generics) if spec is not None else []
    except Exception:  # noqa: BLE001 - bindings the block's manifest cannot take
        inputs = []
    if spec is not None and len(inputs) == len(case.inputs):
        return [name for name, _ in inputs]
    return [f"arg{k}" for k in range(len(case.inputs))]


def commands(case: Case, file: str = "case.linnet") -> list[str]:
    """The command lines that check the case and compile its entry for each target."""
    bind = "".join(f" --bind {k}={v}" for k, v in case.generics.items())
    bind += "".join(f" --present {p}" for p in sorted(case.present or ()))
    lines = [f"linnet check {file}"]
    for target, output in TARGET_FILES.items():
        lines.append(f"linnet {target} {file} --entry {shlex.quote(case.entry)}{bind} "
                     f"--numerics exact -o {output}")
    lines.append("python run.py            # generated PyTorch, op bodies, on inputs.npz")
    lines.append("python run.py equivalent # the same with kernels where they apply")
    return lines


def _storable(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype.name == "bfloat16" else x


def _numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu()
        x = x.float() if str(x.dtype) == "torch.bfloat16" else x
        return x.numpy()
    return _storable(x)


def _file_name(backend: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in backend) or "output"


def _write_output(folder: Path, name: str, value: Any) -> str:
    """Write one backend's output; its text for the report."""
    if isinstance(value, (BaseException, str)):
        text = f"{type(value).__name__}: {value}" if isinstance(value, BaseException) \
            else value
        (folder / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
        return text
    results = list(value) if isinstance(value, (list, tuple)) else [value]
    arrays = [_numpy(r) for r in results]
    np.savez(folder / f"{name}.npz", **{f"result{k}": a for k, a in enumerate(arrays)})
    text = "\n".join(f"result {k}: {_describe(a)}" for k, a in enumerate(arrays))
    (folder / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
    return text


def _describe(a: np.ndarray) -> str:
    """An array's dtype, shape and values (the first ones of a large array)."""
    body = np.array2string(a, threshold=64, edgeitems=4, max_line_width=90)
    return f"{a.dtype}{list(a.shape)}\n{body}"


def _report(reduction: Reduction, names: list[str], shown: Mapping[str, str]) -> str:
    case, original = reduction.case, reduction.original
    parts = [f"# Reduced case: entry `{case.entry}`", ""]
    lines = lambda text: len(text.strip().splitlines())  # noqa: E731
    parts.append(f"From {lines(original.text)} lines to {lines(case.text)}, in "
                 f"{len(reduction.steps)} steps ({reduction.tries} tries of the predicate, "
                 f"{reduction.checks} candidates checked, {reduction.seconds:.1f} s; "
                 f"stopped at {reduction.stopped}).")
    parts += ["", "## Reproduce", "", "```sh", *commands(case), "```", ""]
    parts += ["## Program (case.linnet)", "", "```linnet", case.text.rstrip(), "```", ""]
    bind = ", ".join(f"{k} = {v}" for k, v in case.generics.items()) or "none"
    parts += ["## Bindings (bind.json)", "", bind, ""]
    if case.present is not None:
        parts += ["## Checkpoint paths (present.json)", "",
                  ", ".join(sorted(case.present)) or "none", ""]
    parts += ["## Inputs (inputs.npz)", ""]
    for name, x in zip(names, case.inputs):
        x = np.asarray(x)
        parts += [f"`{name}`: {x.dtype}{list(x.shape)}", "", "```",
                  np.array2string(_storable(x), threshold=64, edgeitems=4, max_line_width=90),
                  "```", ""]
    parts += ["## Outputs (outputs/)", ""]
    for backend, text in shown.items():
        parts += [f"### {backend}", "", "```", text, "```", ""]
    parts += ["## Steps", ""]
    parts += [f"{k}. {step}" for k, step in enumerate(reduction.steps, 1)] or ["(none)"]
    return "\n".join(parts) + "\n"


_RUN = '''"""Rerun the reduced case: compile case.linnet for PyTorch and run it on inputs.npz.

    python run.py [exact|equivalent]   (op bodies, or kernels where they apply)
"""
import json
import sys
from pathlib import Path

import numpy as np

from linnet.pipeline import compile_source
from linnet.torch.runtime import import_generated

here = Path(__file__).resolve().parent
bind = json.loads((here / "bind.json").read_text())
present = json.loads((here / "present.json").read_text()) or None
saved = np.load(here / "inputs.npz")
inputs = [saved[name] for name in {names!r}]
numerics = sys.argv[1] if len(sys.argv) > 1 else "exact"
path = here / "case.linnet"
compiled = compile_source(path.read_text(), path=str(path), entry={entry!r}, bind=bind,
                          target="torch", numerics=numerics, present=present)
main = import_generated(compiled.text, "reduced_case", "torch").main
for k, result in enumerate(main(*inputs)):
    print(f"result {{k}}:", result)
'''
