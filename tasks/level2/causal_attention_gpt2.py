"""PyTorch twin of the task `causal_attention_gpt2`.

GPT-2 (124M), transformer.h.0.attn: GPT2Attention (12 heads, head_dim 64): Conv1D c_attn 768 ->
2304, causal torch.where mask, Conv1D c_proj 768 -> 768 (eager attention) (transformers
GPT2Attention (openai-community/gpt2)).
Causal self-attention of a 64-token prefill in GPT-2: the fused c_attn projection (Conv1D,
weight [768, 2304] stored in-out, addmm) split into q, k, v, 12 heads, scores scaled by 1/8, the
causal mask applied with torch.where(causal_mask, scores, finfo(float32).min) (the mask built
from iota and less_equal), softmax, weighted values, merged heads, the c_proj Conv1D 768 -> 768.
Weights are normal(0, 0.02) as GPT-2 initialises them, biases uniform in +-0.02.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn_weight = nn.Parameter(torch.empty(768, 2304))
        self.c_attn_bias = nn.Parameter(torch.empty(2304))
        self.c_proj_weight = nn.Parameter(torch.empty(768, 768))
        self.c_proj_bias = nn.Parameter(torch.empty(768))

    def forward(self, hidden_states):
        c_attn_mm = torch.addmm(self.c_attn_bias, hidden_states.view(-1, 768), self.c_attn_weight).view(1, 64, 2304)  # Conv1D
        c_attn = c_attn_mm
        q = c_attn[:, :, 0:768]
        q_view = q.view(1, 64, 12, 64)
        q_heads = q_view.permute(0, 2, 1, 3)
        k = c_attn[:, :, 768:1536]
        k_view = k.view(1, 64, 12, 64)
        k_heads = k_view.permute(0, 2, 1, 3)
        v = c_attn[:, :, 1536:2304]
        v_view = v.view(1, 64, 12, 64)
        v_heads = v_view.permute(0, 2, 1, 3)
        attn_weights = torch.matmul(q_heads, k_heads.transpose(-1, -2))
        scale = 0.125  # 1 / sqrt(head_dim)
        attn_scaled = attn_weights * scale
        row = torch.arange(64, device=hidden_states.device)[:, None]
        col = torch.arange(64, device=hidden_states.device)[None, :]
        causal_mask = col <= row
        mask_value = torch.finfo(torch.float32).min
        attn_masked = torch.where(causal_mask, attn_scaled, torch.full((), mask_value, device=attn_scaled.device))
        attn_softmax = nn.functional.softmax(attn_masked, dim=-1)
        attn_output = torch.matmul(attn_softmax, v_heads)
        attn_t = attn_output.permute(0, 2, 1, 3)
        attn_merge = attn_t.reshape(1, 64, 768)
        c_proj_mm = torch.addmm(self.c_proj_bias, attn_merge.view(-1, 768), self.c_proj_weight).view(1, 64, 768)  # Conv1D
        c_proj = c_proj_mm
        return c_proj


def get_inputs():
    return [
        torch.empty(1, 64, 768).normal_(0, 1),
    ]


def get_init_inputs():
    return []
