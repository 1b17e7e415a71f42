"""PyTorch twin of the task `causal_attention_whisper_tiny_decoder`.

Whisper-tiny, model.decoder.layers.0.self_attn: WhisperAttention(384, 6 heads, is_decoder=True,
is_causal=True) (eager attention) (transformers WhisperAttention (openai/whisper-tiny)).
Causal decoder self-attention of Whisper-tiny over 64 text tokens: q_proj (bias, scaled by 1/8),
k_proj (no bias), v_proj (bias), 6 heads of 64, scores plus the causal mask (finfo(float32).min
above the diagonal, from iota, greater and where), softmax, weighted values, out_proj 384 -> 384
with bias.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.k_proj = nn.Linear(384, 384, bias=False)
        self.v_proj = nn.Linear(384, 384)
        self.q_proj = nn.Linear(384, 384)
        self.out_proj = nn.Linear(384, 384)

    def forward(self, hidden_states):
        k_proj = self.k_proj(hidden_states)
        v_proj = self.v_proj(hidden_states)
        q_proj = self.q_proj(hidden_states)
        scaling = 64 ** -0.5
        q_scaled = q_proj * scaling
        query_view = q_scaled.view(1, 64, 6, 64)
        query_states = query_view.transpose(1, 2)
        key_view = k_proj.view(1, 64, 6, 64)
        key_states = key_view.transpose(1, 2)
        value_view = v_proj.view(1, 64, 6, 64)
        value_states = value_view.transpose(1, 2)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3))
        row = torch.arange(64, device=hidden_states.device)[:, None]
        col = torch.arange(64, device=hidden_states.device)[None, :]
        future = col > row
        min_value = torch.finfo(torch.float32).min
        zero = 0.0
        causal_mask = torch.where(future, torch.full((), min_value, device=future.device), torch.full((), zero, device=future.device))
        attn_masked = attn_weights + causal_mask
        attn_softmax = nn.functional.softmax(attn_masked, dim=-1)
        attn_output = torch.matmul(attn_softmax, value_states)
        attn_t = attn_output.transpose(1, 2)
        attn_merge = attn_t.reshape(1, 64, 384)
        out_proj = self.out_proj(attn_merge)
        return out_proj


def get_inputs():
    return [
        torch.empty(1, 64, 384).normal_(0, 1),
    ]


def get_init_inputs():
    return []
