"""Tune the matmul example on a GPU, then check that the loaders use what was recorded.

The cases are the ops of `examples/matmul.linnet` at a square size (M = N = K = 4096) and a
skinny one (M = 16, N = K = 8192): `matmul` (f32 at full precision, and under `--numerics
fast` with TF32 tile products for the skinny size), `matmul_bt` (TF32 over b transposed,
what `matmul_tf32_any` runs at the square size) and `matmul_bf16`. Each case runs `linnet.tune.tune` over a
declared candidate set (the header's choice is always tried too) and records the winner in
the tuning file. Then, for every record of this device in the file (this run's and any
earlier ones), `linnet.torch.load_function` loads the op's generic entry with the file,
and the check asserts that the module it compiled for CUDA inputs of the recorded sizes
says `tuned:`, that the result matches `torch.matmul`, and times it against the header's
choice (`tuning=False`) with `triton.testing.do_bench`.

    python benchmarks/tune_matmul.py --tuning linnet.tuning.json              # all four
    python benchmarks/tune_matmul.py --tuning t.json --case f32-square --case f32-skinny
    python benchmarks/tune_matmul.py --tuning t.json --check-only             # check only
    TRITON_INTERPRET=1 python benchmarks/tune_matmul.py --tuning /tmp/t.json --small

`--small` runs tiny sizes and sets on the CPU in Triton's interpreter: it tests this
script, not the tiles.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MATMUL = ROOT / "examples" / "matmul.linnet"
OP_IDS = {"examples.matmul.matmul": "matmul", "examples.matmul.matmul_bf16": "matmul_bf16",
          "examples.matmul.matmul_bt": "matmul_bt"}
# the generic entry that calls each op (matmul_tf32_any calls matmul_bt when M >= 64)
ENTRIES = {"matmul": "matmul_any", "matmul_bf16": "matmul_bf16_any",
           "matmul_bt": "matmul_tf32_any"}

# name: (op, numerics, sizes, candidates, warps, stages)
CASES = {
    "f32-square": ("matmul", "equivalent", (4096, 4096, 4096),
                   {"BM": [64, 128], "BN": [64, 128], "BK": [32], "G": [8]}, [4, 8], [4]),
    "f32-skinny": ("matmul", "equivalent", (16, 8192, 8192),
                   {"BM": [16], "BN": [32, 64], "BK": [128, 256], "G": [8]}, [4], [3, 4]),
    "tf32-square": ("matmul_bt", "fast", (4096, 4096, 4096),
                    {"BM": [128, 256], "BN": [128, 256], "BK": [32], "G": [8]}, [8], [3]),
    "tf32-skinny": ("matmul", "fast", (16, 8192, 8192),
                    {"BM": [16], "BN": [32, 64], "BK": [64, 128], "G": [8]}, [4], [3, 4]),
    "bf16-square": ("matmul_bf16", "equivalent", (4096, 4096, 4096),
                    {"BM": [128, 256], "BN": [128, 256], "BK": [64], "G": [8]}, [8], [3, 4]),
    "bf16-skinny": ("matmul_bf16", "equivalent", (16, 8192, 8192),
                    {"BM": [16], "BN": [32, 64], "BK": [128, 256], "G": [8]}, [4], [3, 4]),
}
SMALL = {  # the same ops, tiny, for the interpreter
    "f32-square": ("matmul", "equivalent", (40, 48, 32),
                   {"BM": [16, 32], "BN": [16], "BK": [16], "G": [8]}, [4], [2]),
    "bf16-skinny": ("matmul_bf16", "equivalent", (16, 64, 32),
                    {"BM": [16], "BN": [16, 32], "BK": [16], "G": [8]}, [4], [2]),
}


def tune_cases(names: list[str], cases: dict, tuning: str, device: str) -> None:
    from linnet.tune import tune
    from linnet.tune.report import format_result
    for name in names:
        op, numerics, (m, n, k), tries, warps, stages = cases[name]
        print(f"== tuning {name}: {op} at M={m} N={n} K={k}, numerics {numerics}",
              flush=True)
        start = time.perf_counter()

        def progress(i: int, total: int, trial) -> None:
            shown = f"{trial.time_ms:.4g} ms" if trial.time_ms is not None else "-"
            print(f"  [{i}/{total}] {trial.candidate.describe()}: {shown}, "
                  f"{'ok' if trial.ok else trial.problem}", flush=True)

        result = tune(str(MATMUL), op, {"M": m, "N": n, "K": k}, candidates=tries,
                      warps=warps, stages=stages, numerics=numerics, tuning=tuning,
                      device=device, progress=progress)
        print(format_result(result))
        print(f"  ({time.perf_counter() - start:.0f} s)\n", flush=True)


def check_records(tuning: str, device: str) -> int:
    """Load every record of this device through load_function and check it is used."""
    import torch
    from linnet.torch import load_function
    from linnet.tune import TuningFile
    from linnet.tune.tuner import device_name
    name = device_name(device)
    file = TuningFile.load(tuning)
    failures = 0
    rows = []
    for op_id, bindings in file.devices.get(name, {}).items():
        op = OP_IDS.get(op_id)
        if op is None:
            continue
        for binding, by_numerics in bindings.items():
            sizes = dict(part.split("=") for part in binding.split())
            m, n, k = (int(sizes[d]) for d in "MNK")
            for numerics, entry in by_numerics.items():
                ok, row = _check_one(op, numerics, (m, n, k), entry, tuning, device,
                                     load_function, torch)
                failures += not ok
                rows.append(row)
    print(f"== load_function with {tuning} on {name}")
    for row in rows:
        print("  " + row)
    if not rows:
        print("  no records for this device")
        return 1
    return 1 if failures else 0


def _check_one(op, numerics, sizes, entry, tuning, device, load_function, torch):
    m, n, k = sizes
    dtype = torch.bfloat16 if op == "matmul_bf16" else torch.float32
    g = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=g).to(dtype).to(device)
    b = torch.randn(k, n, generator=g).to(dtype).to(device)
    tuned = load_function(str(MATMUL), ENTRIES[op], numerics=numerics, tuning=tuning)
    header = load_function(str(MATMUL), ENTRIES[op], numerics=numerics, tuning=False)
    got = tuned(a, b)
    text = inspect.getsource(sys.modules[next(iter(tuned.by_inputs.values())).__module__])
    used = [line for line in text.splitlines() if line.startswith("# tuning:")]
    want = torch.matmul(a.double(), b.double())
    err = float((got.double() - want).abs().max() / want.abs().max())
    is_tuned = bool(used) and ": tuned: " in used[0]
    ok = is_tuned and err < 5e-2
    t_tuned, t_header = _time(lambda: tuned(a, b), device), _time(lambda: header(a, b), device)
    generics = " ".join(f"{k}={v}" for k, v in entry["generics"].items())
    return ok, (f"{op} M={m} N={n} K={k} {numerics}: {'tuned' if is_tuned else 'NOT TUNED'} "
                f"({generics} warps={entry['warps']} stages={entry['stages']}), max rel err "
                f"{err:.1e}, {t_tuned:.4g} ms against the header's {t_header:.4g} ms "
                f"({t_header / t_tuned:.2f}x){'' if ok else '  FAILED'}")


def _time(run, device: str) -> float:
    """Milliseconds, as `linnet tune` times candidates (do_bench on CUDA)."""
    from linnet.tune.tuner import default_timer
    return default_timer(device)(None, run)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuning", required=True, help="the tuning file to write and check")
    parser.add_argument("--case", action="append", choices=sorted(CASES),
                        help="a case to tune (default: all)")
    parser.add_argument("--check-only", action="store_true", help="tune nothing")
    parser.add_argument("--small", action="store_true",
                        help="tiny sizes on the CPU (Triton's interpreter): tests the script")
    args = parser.parse_args()
    cases = SMALL if args.small else CASES
    device = "cpu" if args.small else "cuda"
    if not args.check_only:
        names = args.case or list(cases)
        tune_cases([n for n in names if n in cases], cases, args.tuning, device)
    return check_records(args.tuning, device)


if __name__ == "__main__":
    sys.exit(main())
