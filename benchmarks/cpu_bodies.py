"""Generated op bodies against the same math written by hand in torch eager, on the CPU.

For softmax, layer norm, matmul and attention at sizes near 1024x1024, this
times the entry of `benchmarks/bodies.linnet` compiled to a PyTorch module
(`linnet.torch.load_function`, compile=True) and a hand-written eager torch
function, checks they agree, and reports the time ratio and the peak memory
each allocates (measured with the CPU allocator's profiler).

    python benchmarks/cpu_bodies.py [--repeat 20] [--threads 2]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

from linnet.torch import load_function

BODIES = Path(__file__).with_name("bodies.linnet")


def hand_softmax(x):
    e = torch.exp(x - x.amax(dim=1, keepdim=True))
    return e / e.sum(dim=1, keepdim=True)


def hand_layer_norm(x, w, b):
    mean = x.sum(dim=1, keepdim=True) / x.shape[1]
    d = x - mean
    inv = torch.rsqrt((d * d).sum(dim=1, keepdim=True) / x.shape[1] + 1e-5)
    return d * inv * w + b


def hand_matmul(a, b):
    return a @ b


def hand_attention(q, k, v):
    scores = (q @ k.T) * 0.125
    e = torch.exp(scores - scores.amax(dim=1, keepdim=True))
    return (e / e.sum(dim=1, keepdim=True)) @ v


CASES = {
    "softmax": (hand_softmax, lambda: (torch.randn(1024, 1024),)),
    "layer_norm": (hand_layer_norm, lambda: (torch.randn(1024, 1024), torch.randn(1024),
                                             torch.randn(1024))),
    "matmul": (hand_matmul, lambda: (torch.randn(1024, 1024), torch.randn(1024, 1024))),
    "attention": (hand_attention, lambda: (torch.randn(1024, 64), torch.randn(1024, 64),
                                           torch.randn(1024, 64))),
}


def timed_pair(ours, theirs, inputs, repeat: int) -> tuple[float, float]:
    """Median seconds per call of each, alternating calls so drift hits both alike."""
    ours(*inputs), theirs(*inputs)
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for fn, out in ((ours, samples[0]), (theirs, samples[1])):
            start = time.perf_counter()
            fn(*inputs)
            out.append(time.perf_counter() - start)
    return statistics.median(samples[0]), statistics.median(samples[1])


def peak_bytes(fn, inputs) -> int:
    """Peak CPU bytes allocated during one call, from the profiler's memory events."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                profile_memory=True) as prof:
        fn(*inputs)
    live = peak = 0
    for event in sorted(prof.events(), key=lambda e: e.time_range.start):
        live += event.self_cpu_memory_usage  # allocations positive, frees negative
        peak = max(peak, live)
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    print(f"{'body':<12} {'linnet ms':>10} {'eager ms':>10} {'ratio':>7} {'max err':>9} "
          f"{'linnet MB':>10} {'eager MB':>9}")
    for name, (hand, make) in CASES.items():
        inputs = make()
        generated = load_function(str(BODIES), name)
        err = (generated(*inputs) - hand(*inputs)).abs().max().item()
        ours, theirs = timed_pair(generated, hand, inputs, args.repeat)
        mem_ours, mem_theirs = peak_bytes(generated, inputs), peak_bytes(hand, inputs)
        print(f"{name:<12} {ours * 1e3:10.2f} {theirs * 1e3:10.2f} {ours / theirs:7.2f} "
              f"{err:9.1e} {mem_ours / 2**20:10.1f} {mem_theirs / 2**20:9.1f}")


if __name__ == "__main__":
    main()
