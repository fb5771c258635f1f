"""The std ops with kernels compile with their kernels at sizes where a tensor holds 2^31
elements or more (docs/kernels.md, "Offsets of large tensors"): no E2133 refuses one, and
the offsets into the large tensors are built in i64. Compile-only: the generated PyTorch
is checked for each op's kernel (its instance's name in the kernel's comment), not run.

The sizes are those of training: activations [65536, 32768], an embedding table
[262144, 8192], rows [300000, 8192], logits [32768, 128000], attention of 64 x 32 x 8192 x
128 (2^31 exactly), a batch of 256 images of 64 x 512 x 512.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from linnet.pipeline import compile_source

STD_TESTS = Path(__file__).resolve().parent
ATTENTION = dict(B=64, H=32, Q=8192, K=8192, D=128)

# (program, entry, sizes, the kernels that must be chosen, forward and backward)
CASES = [
    ("elem_kernels", "mlp", dict(R=65536, H=4096, I=32768),
     ("silu_mul_tiles", "silu_mul_backward_tiles", "linear_tiles")),
    ("elem_kernels", "embed", dict(N=4096, V=262144, H=8192),
     ("embedding_tiles", "embedding_first_tiles", "embedding_sum_tiles",
      "embedding_backward_tiles")),
    ("elem_kernels", "rotary", dict(B=64, H=32, S=8192, D=128),
     ("rope_tiles", "rope_backward_tiles")),
    ("nn_kernels", "rms", dict(R=300000, H=8192), ("rms_norm_tiles", "rms_norm_backward_tiles")),
    ("nn_kernels", "layer", dict(R=300000, H=8192),
     ("layer_norm_tiles", "layer_norm_backward_tiles")),
    ("nn_kernels", "softmax_rows", dict(R=300000, N=8192),
     ("softmax_row_tiles", "softmax_row_backward_tiles")),
    ("nn_kernels", "softmax_rows", dict(R=32768, N=128000),
     ("softmax_wide_tiles", "softmax_wide_backward_tiles")),
    ("nn_kernels", "log_softmax_rows", dict(R=32768, V=128000),
     ("log_softmax_wide_tiles", "log_softmax_wide_backward_tiles")),
    ("nn_kernels", "loss", dict(N=32768, V=128000),
     ("token_log_prob_tiles", "token_log_prob_backward_tiles")),
    ("nn_kernels", "entropies", dict(N=32768, V=128000),
     ("entropy_tiles", "entropy_backward_tiles")),
    ("linear_loss_kernels", "loss", dict(N=32768, H=4096, V=128000),
     ("linear_chunk_stats_tiles", "linear_chunk_dlogits_tiles")),
    ("nn_attention_kernels", "plain", ATTENTION,
     ("attention_tiles", "attention_delta_tiles", "attention_dq_tiles", "attention_dkv_tiles")),
    ("nn_attention_kernels", "causal", ATTENTION, ("attention_tiles", "attention_dkv_tiles")),
    ("nn_attention_kernels", "rows", ATTENTION,
     ("attention_masked_tiles", "attention_delta_tiles", "attention_masked_dq_tiles",
      "attention_masked_dkv_tiles")),
    ("nn_attention_kernels", "sinks", dict(ATTENTION, Hk=8),
     ("attention_sink_tiles", "attention_sink_stats_tiles", "attention_masked_dq_tiles",
      "attention_masked_dkv_tiles")),
    ("conv_kernels", "padded", dict(B=256, Cin=64, Cout=64, H=512, W=512, K=3),
     ("conv2d_tiles", "conv2d_input_grad_tiles", "conv2d_weight_grad_tiles")),
]


@pytest.mark.parametrize("program,entry,sizes,kernels", CASES,
                         ids=[f"{c[0]}.{c[1]}" for c in CASES])
def test_std_kernels_compile_past_2_31_elements(program: str, entry: str, sizes: dict,
                                                kernels: tuple[str, ...]) -> None:
    path = STD_TESTS / f"{program}.linnet"
    text = compile_source(path.read_text(), path=str(path), target="torch", entry=entry,
                          bind=sizes).text
    for kernel in kernels:
        assert f"# kernel {kernel}__" in text, f"{kernel} was not chosen"
    assert "tl.int64" in text, "no offset was built in i64"
