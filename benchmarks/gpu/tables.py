"""Markdown tables from a run's results (the JSON that benchmarks/kernels.py writes).

Both the script's printout and `benchmarks/report.py` (the tables of docs/benchmarks.md)
come from here, so the docs show exactly what was measured.
"""

from __future__ import annotations

from typing import Any

TITLES = {"softmax": "Softmax", "layer_norm": "Layer norm", "attention": "Attention",
          "matmul": "Matmul"}


def render(results: dict[str, Any], level: int = 2) -> str:
    """The whole report: a heading with the machine and versions, then one table per case."""
    env = results.get("environment", {})
    lines = [f"{'#' * level} Kernels on the GPU ({env.get('device', '?')}, "
             f"{str(env.get('date', '?'))[:10]})", "", preamble(results), ""]
    cases = results.get("cases", {})
    names = list(cases) or sorted({r["case"] for r in results.get("rows", [])})
    for case in names:
        lines += case_section(case, cases.get(case, {}), results.get("rows", []), level + 1)
    if results.get("sweep"):
        lines += [f"{'#' * (level + 1)} Matmul tiles (`--sweep`, TFLOP/s at 4096³)", ""]
        lines += sweep_table(results["sweep"]) + [""]
    return "\n".join(lines).rstrip() + "\n"


def preamble(results: dict[str, Any]) -> str:
    env, s = results.get("environment", {}), results.get("settings", {})
    jax = env.get("jax", "?")
    jax_text = f"JAX {jax} (jaxlib {env.get('jaxlib', '?')})" if "jaxlib" in env else f"JAX: {jax}"
    return (
        f"Measured by `python benchmarks/kernels.py` on {env.get('device', '?')} (compute "
        f"capability {env.get('capability', '?')}, CUDA {env.get('cuda', '?')}) on "
        f"{env.get('date', '?')}: torch {env.get('torch', '?')}, Triton {env.get('triton', '?')}, "
        f"{jax_text}, Python {env.get('python', '?')}, Linnet {env.get('linnet_commit', '?')}. "
        f"Times are medians: torch and Triton calls by `triton.testing.do_bench` (warmup "
        f"{s.get('warmup_ms', '?')} ms, {s.get('rep_ms', '?')} ms of calls, L2 flushed before "
        f"each), JAX calls dispatched back to back and synchronized once per round (the median "
        f"of {s.get('jax_rounds', '?')} rounds). \"time / Linnet\" is each time over Linnet's "
        f"(the generated PyTorch module), so above 1 means Linnet is faster; \"time / Linnet "
        f"Pallas\" is a JAX row's time over Linnet's Pallas kernel's. Max error is the largest "
        f"difference from a float64 reference (f32 for attention), relative to the reference's "
        f"largest entry; a result beyond the case's tolerance is marked wrong and not timed.")


def case_section(case: str, info: dict[str, Any], rows: list[dict], level: int) -> list[str]:
    mine = [r for r in rows if r["case"] == case]
    seconds = info.get("seconds")
    lines = [f"{'#' * level} {TITLES.get(case, case)}", ""]
    if info.get("about"):
        lines += [info["about"], ""]
    lines += case_table(mine)
    if seconds is not None:
        lines += ["", f"({len(mine)} rows, {seconds:.0f} s.)"]
    return lines + [""]


def case_table(rows: list[dict]) -> list[str]:
    """One markdown table; the pass and Pallas-ratio columns only where a row uses them."""
    steps = any(r.get("step") for r in rows)
    pallas = any(r.get("vs_pallas") is not None for r in rows)
    unit = next((r["unit"] for r in rows if r.get("unit")), "")
    head = (["config", "dtype"] + (["pass"] if steps else []) + ["implementation", "ms", unit,
            "time / Linnet"] + (["time / Linnet Pallas"] if pallas else []) + ["max error", "note"])
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        cells = [r["config"], r["dtype"]] + ([r.get("step", "")] if steps else []) + [
            r["impl"], _ms(r), _throughput(r), _ratio(r.get("vs_linnet"))]
        cells += ([_ratio(r.get("vs_pallas"))] if pallas else [])
        cells += [_error(r.get("max_error")), _note(r)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def _ms(r: dict) -> str:
    if r.get("status") != "ok" or r.get("ms") is None:
        return r.get("status", "?")
    return f"{r['ms']:.4f}" if r["ms"] < 1 else f"{r['ms']:.3f}"


def _throughput(r: dict) -> str:
    value = r.get("throughput")
    if value is None:
        return ""
    return f"{value:,.0f}" if r.get("unit") == "GB/s" else f"{value:.1f}"


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _error(value: float | None) -> str:
    return "" if value is None else f"{value:.1e}"


def _note(r: dict, limit: int = 140) -> str:
    error = (r.get("error") or "").strip().splitlines()
    text = "; ".join(t for t in (r.get("note", ""), error[0] if error else "") if t)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def sweep_table(records: list[dict]) -> list[str]:
    """`--sweep`'s records: TFLOP/s per tile choice (rows) and precision (columns)."""
    labels = [k for r in records[:1] for k in r if k not in ("tiles", "error")]
    lines = ["| BM, BN, BK, warps, stages | " + " | ".join(labels) + " |",
             "|" + " --- |" * (len(labels) + 1)]
    for r in records:
        cells = [r["error"]] if "error" in r else [
            f"{r[k]:.1f}" if isinstance(r[k], float) else str(r[k]) for k in labels]
        lines.append(f"| {', '.join(map(str, r['tiles']))} | "
                     + " | ".join(_cell(c) for c in cells) + " |")
    return lines
