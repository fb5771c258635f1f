"""The torch loader names a CUDA device once: a call traced by torch.compile then reads a
dict instead of `torch.cuda.get_device_name` (a str, which fullgraph tracing refuses)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


def test_a_device_name_is_read_once_and_kept(monkeypatch) -> None:
    from linnet.torch import loader
    calls: list = []

    def named(index):
        calls.append(index)
        return "NVIDIA H100 80GB HBM3"
    monkeypatch.setattr(torch.cuda, "get_device_name", named)
    monkeypatch.setattr(loader, "_CUDA_NAMES", {})
    assert loader._cuda_name(0) == loader._cuda_name(0) == "NVIDIA H100 80GB HBM3"
    assert calls == [0]
