"""The PyTorch twin of `examples/gpt/gpt.linnet`: the same model in plain torch.nn, its
parameters named like Linnet's parameter paths, so that one state_dict (one safetensors
file) serves both. tests/equivalence/test_gpt.py checks the Linnet model against it, and
benchmarks/gpt.py times both.

The caches and the position are non-persistent buffers, as Linnet's states are: they are not
in the state_dict and start at zeros. The cache is static ([B, NH, S, D], written in place at
the current position), so decode steps have one shape and `torch.compile` compiles them once.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

EPS = 1e-5


class Attention(nn.Module):
    def __init__(self, batch: int, heads: int, dim: int, length: int) -> None:
        super().__init__()
        width = heads * dim
        self.heads, self.dim = heads, dim
        self.q, self.k, self.v, self.o = (nn.Linear(width, width, bias=False) for _ in range(4))
        shape = (batch, heads, length, dim)
        self.register_buffer("k_cache", torch.zeros(shape), persistent=False)
        self.register_buffer("v_cache", torch.zeros(shape), persistent=False)

    def split(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.dim).transpose(1, 2)

    def merge(self, x: torch.Tensor) -> torch.Tensor:
        b, _, t, _ = x.shape
        return self.o(x.transpose(1, 2).reshape(b, t, self.heads * self.dim))

    def forward(self, x: torch.Tensor, keep: bool = False) -> torch.Tensor:
        """Causal attention over x's positions from 0; `keep` writes them into the cache."""
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        if keep:
            t = x.shape[1]
            self.k_cache.zero_()[:, :, :t] = k
            self.v_cache.zero_()[:, :, :t] = v
        return self.merge(F.scaled_dot_product_attention(q, k, v, is_causal=True))

    def decode(self, x: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
        """One position `at` (a 1-element tensor) per sequence, against the cache."""
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        self.k_cache.index_copy_(2, at, k)
        self.v_cache.index_copy_(2, at, v)
        seen = (torch.arange(self.k_cache.shape[2], device=x.device) <= at)[None, :]
        out = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=seen)
        return self.merge(out)


class Mlp(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.up = nn.Linear(width, 4 * width, bias=False)
        self.down = nn.Linear(4 * width, width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.up(x)))


class Layer(nn.Module):
    def __init__(self, batch: int, heads: int, dim: int, length: int) -> None:
        super().__init__()
        width = heads * dim
        self.attn_norm = nn.RMSNorm(width, eps=EPS)
        self.attn = Attention(batch, heads, dim, length)
        self.mlp_norm = nn.RMSNorm(width, eps=EPS)
        self.mlp = Mlp(width)

    def forward(self, x: torch.Tensor, keep: bool = False) -> torch.Tensor:
        h = x + self.attn(self.attn_norm(x), keep)
        return h + self.mlp(self.mlp_norm(h))

    def decode(self, x: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
        h = x + self.attn.decode(self.attn_norm(x), at)
        return h + self.mlp(self.mlp_norm(h))


class Gpt(nn.Module):
    """`Gpt<B, L, NH, D, V, S>` of gpt.linnet: the same generics, the same entries."""

    def __init__(self, B: int, L: int, NH: int, D: int, V: int, S: int) -> None:  # noqa: N803
        super().__init__()
        self.embed = nn.Parameter(torch.randn(V, NH * D) * 0.5)
        self.layers = nn.ModuleList(Layer(B, NH, D, S) for _ in range(L))
        self.norm = nn.RMSNorm(NH * D, eps=EPS)
        self.register_buffer("pos", torch.zeros(1, dtype=torch.int64), persistent=False)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x) @ self.embed.T

    def forward(self, tokens: torch.Tensor, keep: bool = False) -> torch.Tensor:
        """The logits of every position of tokens [B, T], attending from position 0."""
        x = F.embedding(tokens, self.embed)
        for layer in self.layers:
            x = layer(x, keep)
        return self.logits(x)

    def prefill(self, tokens: torch.Tensor) -> torch.Tensor:
        logits = self.forward(tokens, keep=True)
        self.pos.fill_(tokens.shape[1])
        return logits

    def decode(self, token: torch.Tensor) -> torch.Tensor:
        """The logits [B, V] of token [B] at position `pos`, which then advances."""
        x = F.embedding(token[:, None], self.embed)
        at = self.pos.clone()
        for layer in self.layers:
            x = layer.decode(x, at)
        self.pos.add_(1)
        return self.logits(x)[:, 0]

    def loss(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = self.forward(tokens)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
