"""Markdown tables from a run's results (the JSON that benchmarks/kernels.py writes).

Both the script's printout and `benchmarks/report.py` (the tables of docs/benchmarks.md)
come from here, so the docs show exactly what was measured.
"""

from __future__ import annotations

from typing import Any

TITLES = {"softmax": "Softmax", "layer_norm": "Layer norm", "attention": "Attention",
          "matmul": "Matmul", "std": "The standard library's ops"}
GOAL_SHARE = 0.85  # of the memory bandwidth, for memory-bound kernels


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
    if case == "std":
        lines += goal_table(mine, info.get("bandwidth") or {}) + [""]
    lines += case_table(mine)
    if seconds is not None:
        lines += ["", f"({len(mine)} rows, {seconds:.0f} s.)"]
    return lines + [""]


def case_table(rows: list[dict]) -> list[str]:
    """One markdown table; the pass and Pallas-ratio columns only where a row uses them."""
    steps = any(r.get("step") for r in rows)
    pallas = any(r.get("vs_pallas") is not None for r in rows)
    memory = any(r.get("peak_bytes") is not None for r in rows)
    units = list(dict.fromkeys(r["unit"] for r in rows if r.get("unit")))
    mixed = len(units) > 1  # the unit goes into each cell
    head = (["config", "dtype"] + (["pass"] if steps else []) + [
            "implementation", "ms", "throughput" if mixed else (units or [""])[0],
            "time / Linnet"] + (["time / Linnet Pallas"] if pallas else [])
            + (["peak GiB"] if memory else []) + ["max error", "note"])
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        value = _throughput(r)
        cells = [r["config"], r["dtype"]] + ([r.get("step", "")] if steps else []) + [
            r["impl"], _ms(r), f"{value} {r['unit']}" if mixed and value else value,
            _ratio(r.get("vs_linnet"))]
        cells += ([_ratio(r.get("vs_pallas"))] if pallas else [])
        cells += ([_gib(r.get("peak_bytes"))] if memory else [])
        cells += [_error(r.get("max_error")), _note(r)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def goal_table(rows: list[dict], bandwidth: dict) -> list[str]:
    """The std case's goals, one line per op, size, dtype and pass: Linnet's time and
    throughput (for bytes, in TB/s and as a share of the device's bandwidth), the fastest
    other implementation and its time over Linnet's (at or above 1.00 meets the goal), and
    Linnet's peak memory beside the least of the others' (Liger's fused linear cross entropy
    is the one to meet there)."""
    peak, source = bandwidth_peak(bandwidth)
    lines = [f"Goals: at or above 1.00 in \"fastest / Linnet\" (the fastest other "
             f"implementation's time over Linnet's), and memory-bound kernels at "
             f"{GOAL_SHARE:.0%} of the bandwidth or more; {source}.", "",
             "| op and size | dtype | pass | Linnet ms | Linnet | of bandwidth | fastest other "
             "| its ms | fastest / Linnet | peak GiB, Linnet / leanest other | note |",
             "|" + " --- |" * 11]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["key"] not in ("(setup)", "copy"):
            groups.setdefault((r["config"], r["dtype"], r.get("step", "")), []).append(r)
    for (config, dtype, step), group in groups.items():
        mine = next((r for r in group if r["key"] == "linnet"), None)
        if mine is None:
            continue
        others = [r for r in group if r is not mine and r.get("ms")]
        best = min(others, key=lambda r: r["ms"], default=None)
        share = (mine["throughput"] / peak if peak and mine.get("throughput")
                 and mine.get("unit") == "GB/s" else None)
        cells = [config, dtype, step, _ms(mine), _rate(mine),
                 "" if share is None else f"{share:.0%}", best["impl"] if best else "none",
                 _ms(best) if best else "", _ratio(best["ms"] / mine["ms"])
                 if best and mine.get("ms") else "",
                 _memory(mine, others), _note(mine)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def bandwidth_peak(bandwidth: dict) -> tuple[float | None, str]:
    """The bandwidth shares are of (GB/s), and a sentence saying where it comes from: the
    copy measured in the run, else the device's published peak."""
    measured, published = bandwidth.get("measured_gbs"), bandwidth.get("published_gbs")
    device = bandwidth.get("device", "the device")
    also = f" (the published peak of {device}: {published / 1000:.2f} TB/s)" if published else ""
    if measured:
        return measured, (f"shares of bandwidth are of {measured / 1000:.2f} TB/s, measured in "
                          f"this run by the device-to-device copy row{also}")
    if published:
        return published, (f"shares of bandwidth are of the published peak of {device}, "
                           f"{published / 1000:.2f} TB/s (the copy was not measured)")
    return None, "no bandwidth was measured or is known for this device"


def _rate(r: dict) -> str:
    value = r.get("throughput")
    if value is None:
        return ""
    return f"{value / 1000:.2f} TB/s" if r.get("unit") == "GB/s" else f"{value:.0f} {r['unit']}"


def _memory(mine: dict, others: list[dict]) -> str:
    if mine.get("peak_bytes") is None:
        return ""
    theirs = min((r["peak_bytes"] for r in others if r.get("peak_bytes") is not None),
                 default=None)
    return _gib(mine["peak_bytes"]) + ("" if theirs is None else f" / {_gib(theirs)}")


def _gib(value: float | None) -> str:
    return "" if value is None else f"{value / 2 ** 30:.2f}"


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
