"""PyTorch twin of the task `where_causal_mask_gpt2`.

GPT-2 (124M), transformer.h.0.attn (torch.where(causal_mask, attn_weights, mask_value)): torch.where
(transformers GPT2Attention eager attention (openai-community/gpt2)).
Causal masking of the attention scores of a 512-token prompt, 12 heads: scores above the diagonal (a
key after its query) are replaced by the float32 minimum; the mask is the lower triangle of GPT-2's
boolean bias buffer, built in the graph from two iotas.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, max_positions):
        super().__init__()
        # GPT-2's non-persistent `bias` buffer: the lower triangle of ones, as booleans.
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions
            ),
            persistent=False,
        )

    def forward(self, attn_weights):
        query_length, key_length = attn_weights.size(-2), attn_weights.size(-1)
        causal_mask = self.bias[:, :, key_length - query_length : key_length, :key_length]
        # torch.finfo(attn_weights.dtype).min of the float32 model
        mask_value = torch.finfo(torch.float32).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
        return torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)


def get_inputs():
    return [
        torch.empty(1, 12, 512, 512).uniform_(-3, 3),
    ]


def get_init_inputs():
    return [1024]
