"""The ops whose kernels the gpt example's training step runs (`examples/gpt/gpt.linnet`),
named once for the tests that check `ran()` after a step: the standard library's forms
over rows that the loss entry calls, and the backward ops of their grad clauses. `ran()`
lists besides them the ops their bodies call (softmax_2d, ...), which run neither."""

LOSS = frozenset({"rms_norm_2d", "linear_product_2d", "attention_causal_lse", "embedding_2d",
                  "linear_token_log_probs_stats"})
BACKWARD = frozenset({"rms_norm_backward", "linear_input_grad", "linear_weight_grad",
                      "attention_delta", "attention_dq", "attention_dkv",
                      "embedding_first_positions", "embedding_sums", "embedding_backward",
                      "linear_token_log_probs_dlogits"})
